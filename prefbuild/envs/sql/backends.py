"""Where an episode's table lives: ``sqlite`` (embedded emulation) or ``mysql`` (a real server).

Both backends hand out sandboxes with one interface (``Sandbox``): ``execute`` the agent's
text and get the reply it is shown, read the table back, hash it for mutation grading,
``close``. The ``mysql`` backend hashes on the server with DBBench's own query; the
``sqlite`` backend computes the same hash in Python (``grader.table_hash``).
"""

from __future__ import annotations

from typing import Any, Protocol

from prefbuild.envs.sql.engine import ExecResult, SqlSandbox
from prefbuild.envs.sql.grader import printed_hash, table_hash
from prefbuild.envs.sql.items import SqlItem
from prefbuild.envs.sql.mariadb import mariadb_available
from prefbuild.envs.sql.mysql_client import client_available

__all__ = ["BACKENDS", "Sandbox", "check_backend", "open_sandbox", "printed_table_hash"]

BACKENDS: tuple[str, ...] = ("sqlite", "mysql")


class Sandbox(Protocol):
    """One episode's database, whichever engine holds it."""

    table_name: str
    columns: tuple[str, ...]

    def execute(self, sql: str) -> ExecResult: ...

    def table_rows(self) -> list[tuple[Any, ...]] | None: ...

    def table_exists(self) -> bool: ...

    def close(self) -> None: ...


def check_backend(backend: str, db_url: str | None) -> None:
    """Reject unknown backends, a ``db_url`` given to the embedded one, and a ``mysql`` backend
    whose client library (or, without ``db_url``, whose MariaDB server) is not installed."""
    if backend not in BACKENDS:
        raise ValueError(f"sql env: unknown backend {backend!r}; known: {', '.join(BACKENDS)}")
    if db_url is not None and backend != "mysql":
        raise ValueError("sql env: db_url is only read by backend: mysql")
    if backend == "mysql":
        reason = client_available() or (mariadb_available() if db_url is None else None)
        if reason is not None:
            raise ValueError(f"sql env: backend mysql: {reason}")


def open_sandbox(
    item: SqlItem, *, backend: str, db_url: str | None, timeout_s: float, reply_limit: int
) -> SqlSandbox | Any:
    """A fresh sandbox holding ``item``'s table.

    Args:
        item: the DBBench item.
        backend: ``sqlite`` or ``mysql``.
        db_url: the MySQL server (``mysql://user:password@host:port/``); None starts a private
            MariaDB on first use (``mysql`` backend only).
        timeout_s: the time bound of one statement.
        reply_limit: the reply cap.

    Returns:
        A ``SqlSandbox`` or a ``MySqlSandbox``.

    Example:
        >>> from prefbuild.envs.sql.items import SqlItem
        >>> item = SqlItem("q", "t", ("a",), (("1",),), "other", ("1",))
        >>> sandbox = open_sandbox(item, backend="sqlite", db_url=None, timeout_s=2.0, reply_limit=800)
        >>> sandbox.execute("SELECT a FROM t").reply
        "[('1',)]"
    """
    if backend == "mysql":
        from prefbuild.envs.sql.mysql_backend import shared_backend

        return shared_backend(db_url).open(item, timeout_s=timeout_s, reply_limit=reply_limit)
    return SqlSandbox(item.table_name, item.columns, item.rows, timeout_s=timeout_s, reply_limit=reply_limit)


def printed_table_hash(sandbox: Sandbox) -> str | None:
    """The final-table hash as the benchmark stores it (``[('<hex>',)]``), None when the table is gone."""
    on_server = getattr(sandbox, "printed_table_hash", None)
    if on_server is not None:
        return on_server()
    rows = sandbox.table_rows()
    return None if rows is None else printed_hash(table_hash(rows))
