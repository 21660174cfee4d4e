"""Read-only ``information_schema.COLUMNS`` and ``information_schema.TABLES`` for the sandbox.

MySQL 8 lists every table of the task's database there (reference manual 28.3.8 and 28.3.38).
The engine keeps each as a TEMP table named ``information_schema.<VIEW>`` (a name no agent
can write unquoted), refilled from the live tables just before a statement that reads it;
the authorizer refuses writes to it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

VIEWS: dict[str, tuple[str, ...]] = {
    "COLUMNS": (
        "TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME", "COLUMN_NAME", "ORDINAL_POSITION", "COLUMN_DEFAULT",
        "IS_NULLABLE", "DATA_TYPE", "CHARACTER_MAXIMUM_LENGTH", "CHARACTER_OCTET_LENGTH", "NUMERIC_PRECISION",
        "NUMERIC_SCALE", "DATETIME_PRECISION", "CHARACTER_SET_NAME", "COLLATION_NAME", "COLUMN_TYPE",
        "COLUMN_KEY", "EXTRA", "PRIVILEGES", "COLUMN_COMMENT", "GENERATION_EXPRESSION", "SRS_ID",
    ),
    "TABLES": (
        "TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME", "TABLE_TYPE", "ENGINE", "VERSION", "ROW_FORMAT",
        "TABLE_ROWS", "AVG_ROW_LENGTH", "DATA_LENGTH", "MAX_DATA_LENGTH", "INDEX_LENGTH", "DATA_FREE",
        "AUTO_INCREMENT", "CREATE_TIME", "UPDATE_TIME", "CHECK_TIME", "TABLE_COLLATION", "CHECKSUM",
        "CREATE_OPTIONS", "TABLE_COMMENT",
    ),
}  # fmt: skip
NAMES = frozenset(f"information_schema.{view}" for view in VIEWS)


def table_name(view: str) -> str | None:
    """The sandbox's table for ``information_schema.<view>`` (any case), None for views it lacks."""
    upper = view.upper()
    return f"information_schema.{upper}" if upper in VIEWS else None


def _rows(
    view: str, database: str, collation: str, tables: Sequence[tuple[str, Sequence[str], int]]
) -> list[tuple[Any, ...]]:
    if view == "COLUMNS":
        return [
            ("def", database, table, column, position, None, "YES", "text", 65535, 262140, None, None, None,
             "utf8mb4", collation, "text", "", "", "select,insert,update,references", "", "", None)
            for table, columns, _count in tables
            for position, column in enumerate(columns, start=1)
        ]  # fmt: skip
    return [
        ("def", database, table, "BASE TABLE", "InnoDB", 10, "Dynamic", count, 0, 16384, 0, 0, 0, None, None,
         None, None, collation, None, "", "")
        for table, _columns, count in tables
    ]  # fmt: skip


def refresh(
    connection: sqlite3.Connection,
    sql: str,
    *,
    database: str,
    collation: str,
    tables: Callable[[], Sequence[tuple[str, Sequence[str], int]]],
    authorizer: Callable[..., int],
) -> None:
    """Refill every view ``sql`` reads with the current ``tables`` (name, columns, row count).

    Args:
        connection: the sandbox's connection.
        sql: the SQLite text about to run.
        database: the task's database name (``TABLE_SCHEMA``).
        collation: the collation of the text columns.
        tables: returns the live tables.
        authorizer: the sandbox's authorizer, restored afterwards.
    """
    needed = [view for view in VIEWS if f"information_schema.{view}" in sql]
    if not needed:
        return
    live = tables()
    connection.set_authorizer(None)
    try:
        for view in needed:
            name = '"' + f"information_schema.{view}" + '"'
            columns = ", ".join(f'"{column}" COLLATE {collation}' for column in VIEWS[view])
            connection.execute(f"CREATE TEMP TABLE IF NOT EXISTS {name} ({columns})")
            connection.execute(f"DELETE FROM temp.{name}")
            marks = ", ".join("?" for _ in VIEWS[view])
            connection.executemany(f"INSERT INTO temp.{name} VALUES ({marks})", _rows(view, database, collation, live))
    finally:
        connection.set_authorizer(authorizer)
