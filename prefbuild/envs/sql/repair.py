"""The next statement that brings a mutated table back on course to its target rows.

A mutation item's expert runs the reference statement on a pristine table. When the table
was already changed (a duplicate INSERT, an UPDATE with a loose WHERE, a dropped table),
the oracle still knows the target rows, so it repairs with plain MySQL statements, one per
turn: delete the rows that should not be there (``DELETE ... WHERE`` every column matches),
then insert every missing row in one multi-row INSERT. Each step only removes surplus or
adds what is missing, so the table reaches the target in a few steps.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from prefbuild.envs.sql.generator import ident, literal


def _value(cell: Any) -> str:
    return "NULL" if cell is None else literal(str(cell))


def _condition(column: str, cell: Any) -> str:
    return f"{ident(column)} IS NULL" if cell is None else f"{ident(column)} = {literal(str(cell))}"


def repair_statement(
    table: str,
    columns: Sequence[str],
    current: Sequence[tuple[Any, ...]] | None,
    target: Sequence[tuple[Any, ...]],
    *,
    table_exists: bool,
) -> str | None:
    """One statement moving ``current`` rows toward ``target``; None when it cannot (a column is gone)
    or nothing is left to do."""
    if current is None:
        if table_exists:
            return None
        body = ", ".join(f"{ident(column)} TEXT" for column in columns)
        return f"CREATE TABLE {ident(table)} ({body})"
    surplus = Counter(current) - Counter(target)
    if surplus:
        row = min(surplus, key=repr)
        conditions = " AND ".join(_condition(column, cell) for column, cell in zip(columns, row, strict=True))
        return f"DELETE FROM {ident(table)} WHERE {conditions}"
    missing = list((Counter(target) - Counter(current)).elements())
    if missing:
        values = ", ".join("(" + ", ".join(_value(cell) for cell in row) + ")" for row in sorted(missing, key=repr))
        names = ", ".join(ident(column) for column in columns)
        return f"INSERT INTO {ident(table)} ({names}) VALUES {values}"
    return None
