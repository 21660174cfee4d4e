"""The ``sql`` env's ``mysql`` backend: each episode on its own database of a real MySQL-family server.

``MySqlBackend`` holds one server: either one given by URL (``options.db_url``) or a
throwaway MariaDB started on first use (``prefbuild.envs.sql.mariadb``) and stopped when
the process ends. Backends are shared process-wide (``shared_backend``): the rollout engine
builds a fresh env per episode, and the server must outlive them.

``MySqlBackend.open(item)`` builds a sandbox the way DBBench's harness builds an item: a
database named after the table, the table with every column ``TEXT`` (the column types of
the item are ignored, as the benchmark ignores them), the rows inserted through the client
library's parameter binding. Where that fails (duplicate column names, a row with the wrong
number of values) the sandbox keeps what the server built: no table or an empty one. Each
sandbox gets its own account with read/write rights on that database only.

``MySqlSandbox.execute`` runs the agent's text as the harness does: the session is reset
first (the harness reconnects before every statement), the text is sent whole, the rows are
printed as Python prints the client's list of tuples, capped at 800 characters, and a
successful statement is committed. A block of several statements gets the harness's reply,
``2014 (HY000): Commands out of sync; you can't run this command now``, and its changes are
rolled back. Each statement is bounded by the server's statement time limit and, as a
second line, by a watchdog that kills the query from the administrator connection.
"""

from __future__ import annotations

import contextlib
import itertools
import re
import secrets
import threading
import weakref
from collections.abc import Sequence
from typing import Any

from prefbuild.envs.sql.dialect import quote_identifier
from prefbuild.envs.sql.engine import (
    DDL_KEYWORDS,
    DML_KEYWORDS,
    META_KEYWORDS,
    NOOP_KEYWORDS,
    REPLY_LIMIT,
    ExecResult,
    fetch_printed_rows,
    format_reply,
)
from prefbuild.envs.sql.items import SqlItem
from prefbuild.envs.sql.mariadb import MariaDbServer, ServerAddress
from prefbuild.envs.sql.mysql8_wording import mysql8_text
from prefbuild.envs.sql.mysql_client import connect, parse_db_url

__all__ = ["OUT_OF_SYNC", "MySqlBackend", "MySqlSandbox", "hash_query", "shared_backend", "stop_shared_backends"]

OUT_OF_SYNC = "2014 (HY000): Commands out of sync; you can't run this command now"
MAX_NAME = 64  # MySQL's limit on database and table names
WATCHDOG_GRACE_S = 1.0
DRAIN_ROWS = 20_000  # rows read past the reply cap before the connection is dropped instead
_GRANTS = (
    "SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, ALTER, INDEX, CREATE VIEW, SHOW VIEW, "
    "CREATE TEMPORARY TABLES, LOCK TABLES, REFERENCES, EXECUTE"
)
_FIRST_WORD = re.compile(r"(?:\s+|--[^\n]*|#[^\n]*|/\*.*?\*/)*(\(|[A-Za-z]+)", re.DOTALL)

_SHARED: dict[str, MySqlBackend] = {}
_SHARED_LOCK = threading.Lock()


def hash_query(table_name: str, columns: Sequence[str], database: str | None = None) -> str:
    """DBBench's table-hash query: MD5 of the sorted 5-character row-hash prefixes.

    Args:
        table_name: the item's table.
        columns: its columns in table order (NULLs are skipped by ``CONCAT_WS``).
        database: qualifies the table when given (the harness runs the query after ``USE``).

    Example:
        >>> hash_query("t", ["a", "b"])[:41]
        'select md5(group_concat(rowhash order by '
    """
    column_list = ",".join(quote_identifier(name) for name in columns)
    table = quote_identifier(table_name)
    if database is not None:
        table = f"{quote_identifier(database)}.{table}"
    return (
        "select md5(group_concat(rowhash order by rowhash)) as hash "
        f"from( SELECT substring(MD5(CONCAT_WS(',', {column_list})), 1, 5) AS rowhash FROM {table}) as sub;"
    )


def statement_kind(sql: str) -> str:
    """query, mutation, ddl, meta or noop, from the statement's first word (``query`` when unknown)."""
    match = _FIRST_WORD.match(sql)
    word = match.group(1).upper() if match else ""
    if word in DML_KEYWORDS:
        return "mutation"
    if word in DDL_KEYWORDS:
        return "mutation" if word == "TRUNCATE" else "ddl"
    if word in META_KEYWORDS:
        return "meta"
    if word in NOOP_KEYWORDS:
        return "noop"
    return "query"  # SELECT, WITH, ( and anything the server may still accept


def _client_error_text(error: Exception) -> str:
    """The text DBBench's harness shows for an exception: ``str(error)``."""
    return str(error)


class MySqlBackend:
    """A MySQL-family server that hands out one database and one account per sandbox.

    Args:
        address: the administrator account (CREATE, DROP, CREATE USER, GRANT OPTION).
        server: the MariaDB server this backend started and owns (stopped by ``close``).
        mysql_wording: on MariaDB, reword the few error texts whose words differ from MySQL 8's
            (``prefbuild.envs.sql.mysql8_wording``); the benchmark's agents saw MySQL's texts.

    Example:
        >>> backend = shared_backend(None)  # doctest: +SKIP
        >>> sandbox = backend.open(item)  # doctest: +SKIP
    """

    def __init__(self, address: ServerAddress, *, server: MariaDbServer | None = None, mysql_wording: bool = True):
        self.address = address
        self.server = server
        self.mysql_wording = mysql_wording
        self._lock = threading.Lock()
        self._admin = connect(address)
        self._admin.autocommit = True
        self._counter = itertools.count(1)
        self._databases: set[str] = set()
        version = self.admin_query("SELECT VERSION(), @@collation_server")[0]
        self.version = str(version[0])
        self.is_mariadb = "mariadb" in self.version.lower()
        server_collation = str(version[1])
        self.collation = server_collation if server_collation.startswith("utf8mb4") else None
        self.account_host = "localhost" if address.unix_socket else "%"

    @classmethod
    def start_mariadb(cls, **server_options: Any) -> MySqlBackend:
        """A backend on a throwaway MariaDB server it starts and owns."""
        server = MariaDbServer(**server_options).start()
        try:
            return cls(server.address, server=server)
        except BaseException:
            server.stop()
            raise

    def admin_query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            cursor = self._admin.cursor()
            try:
                cursor.execute(sql, tuple(params))
                return list(cursor.fetchall()) if cursor.with_rows else []
            finally:
                cursor.close()

    def session_settings(self, timeout_s: float) -> str:
        """The ``SET`` run after each session reset: collation and the statement time limit."""
        names = f"SET NAMES utf8mb4 COLLATE {self.collation}" if self.collation else "SET NAMES utf8mb4"
        if self.is_mariadb:
            return f"{names}, SESSION max_statement_time = {timeout_s:.3f}"
        return f"{names}, SESSION max_execution_time = {max(1, round(timeout_s * 1000))}"

    def _database_name(self, table_name: str) -> str:
        """The table's own name (as the benchmark names the database), or a numbered one if taken."""
        with self._lock:
            name = table_name
            if name in self._databases or len(name) > MAX_NAME or name != name.rstrip() or not name:
                name = f"{table_name.strip()[: MAX_NAME - 12]}_{next(self._counter):06d}"
            self._databases.add(name)
            return name

    def open(self, item: SqlItem, *, timeout_s: float = 2.0, reply_limit: int = REPLY_LIMIT) -> MySqlSandbox:
        """A fresh database holding the item's table, with an account limited to it.

        Args:
            item: the DBBench item whose table is built.
            timeout_s: the time bound of one agent statement.
            reply_limit: the reply cap (800 characters in the benchmark).

        Returns:
            The sandbox; ``close`` it to drop the database and the account.
        """
        database = self._database_name(item.table_name)
        user = "pb_" + secrets.token_hex(6)
        password = secrets.token_hex(16)
        try:
            self.admin_query(f"CREATE DATABASE {quote_identifier(database)}")
            self._build_table(database, item)
            host = self.account_host
            self.admin_query(f"CREATE USER '{user}'@'{host}' IDENTIFIED BY '{password}'")
            self.admin_query(f"GRANT {_GRANTS} ON {quote_identifier(database)}.* TO '{user}'@'{host}'")
            account = ServerAddress(self.address.host, self.address.port, user, password, self.address.unix_socket)
            return MySqlSandbox(self, database, item, account, timeout_s=timeout_s, reply_limit=reply_limit)
        except BaseException:
            self.drop(database, user)
            raise

    def _build_table(self, database: str, item: SqlItem) -> None:
        """CREATE TABLE with TEXT columns, then INSERT every row; a failing step leaves what was built."""
        table = f"{quote_identifier(database)}.{quote_identifier(item.table_name)}"
        columns = ",".join(f"{quote_identifier(name)} TEXT" for name in item.columns)
        try:
            self.admin_query(f"CREATE TABLE IF NOT EXISTS {table} ({columns})")
        except Exception:  # handled: boundary (client errors): e.g. duplicate column names
            return  # the benchmark's server has the database and no table either
        if not item.rows:
            return
        names = ",".join(quote_identifier(name) for name in item.columns)
        marks = ",".join("(" + ",".join("%s" for _ in row) + ")" for row in item.rows)
        values = [value for row in item.rows for value in row]
        # handled: boundary (client errors): a row of the wrong length leaves the table empty, as on DBBench's server
        with contextlib.suppress(Exception):
            self.admin_query(f"INSERT INTO {table} ({names}) VALUES {marks}", values)

    def drop(self, database: str, user: str | None) -> None:
        """Remove a sandbox's database and account (both may already be gone)."""
        with contextlib.suppress(Exception):  # handled: boundary (client errors): the database may already be gone
            self.admin_query(f"DROP DATABASE IF EXISTS {quote_identifier(database)}")
        if user is not None:
            with contextlib.suppress(Exception):  # handled: boundary (client errors): the account may already be gone
                self.admin_query(f"DROP USER IF EXISTS '{user}'@'{self.account_host}'")
        with self._lock:
            self._databases.discard(database)

    def kill_query(self, connection_id: int) -> None:
        """Interrupt the statement a sandbox connection is running (the watchdog's move)."""
        # handled: boundary (client errors): the statement may have finished already
        with contextlib.suppress(Exception):
            self.admin_query(f"KILL QUERY {int(connection_id)}")

    def wording(self, text: str) -> str:
        """An error text as the agent sees it (MySQL 8's words on MariaDB, see ``mysql8_wording``)."""
        return mysql8_text(text) if self.mysql_wording and self.is_mariadb else text

    def close(self) -> None:
        """Close the administrator connection and stop the owned server, if any."""
        with contextlib.suppress(Exception):  # handled: boundary (client errors): the connection may already be closed
            self._admin.close()
        if self.server is not None:
            self.server.stop()
            self.server = None


class MySqlSandbox:
    """One episode's database on a MySQL-family server, with the SQLite sandbox's interface."""

    def __init__(
        self,
        backend: MySqlBackend,
        database: str,
        item: SqlItem,
        account: ServerAddress,
        *,
        timeout_s: float = 2.0,
        reply_limit: int = REPLY_LIMIT,
    ) -> None:
        self.backend = backend
        self.database = database
        self.table_name = item.table_name
        self.columns = tuple(item.columns)
        self.account = account
        self.timeout_s = timeout_s
        self.reply_limit = reply_limit
        self._connection: Any = connect(account, database=database)
        # Envs are dropped without close() by the rollout engine: the database goes with the object.
        self._finalizer = weakref.finalize(self, backend.drop, database, account.user)

    # -- execution ------------------------------------------------------------------------

    def _fresh_session(self) -> Any:
        """Reset the session (the harness reconnects before each statement) and apply the settings."""
        connection = self._connection
        try:
            connection.cmd_reset_connection()
        except Exception:
            # handled: boundary (client errors): a connection that cannot be reset is replaced by a new one
            connection = self._connection = connect(self.account, database=self.database)
        cursor = connection.cursor()
        try:
            cursor.execute(self.backend.session_settings(self.timeout_s))
        finally:
            cursor.close()
        return connection

    def execute(self, sql: str) -> ExecResult:
        """Run the agent's SQL as the benchmark's harness does and return the reply the agent sees."""
        connection = self._fresh_session()
        kind = statement_kind(sql)
        watchdog = threading.Timer(
            self.timeout_s + WATCHDOG_GRACE_S, self.backend.kill_query, args=(connection.connection_id,)
        )
        watchdog.daemon = True
        watchdog.start()
        cursor = connection.cursor()
        try:
            cursor.execute(sql)
            rows, text, drained = self._fetch_reply(cursor)
            if not drained:
                self._drop_connection()
                return self._ok(text, rows, kind, affected=0)
            affected = cursor.rowcount if not cursor.description else 0
            if cursor.nextset():
                self._discard_rest(cursor)
                return self._error(OUT_OF_SYNC)
            connection.commit()
            return self._ok(text, rows, kind, affected=affected)
        except Exception as error:  # handled: boundary (client errors): every server error is the agent's observation
            with contextlib.suppress(Exception):  # handled: a lost connection has nothing to roll back
                connection.rollback()
            return self._error(self.backend.wording(_client_error_text(error)))
        finally:
            watchdog.cancel()
            # handled: boundary (client errors): the cursor may belong to a dropped connection
            with contextlib.suppress(Exception):
                cursor.close()

    def _ok(self, text: str, rows: tuple[tuple[Any, ...], ...], kind: str, *, affected: int) -> ExecResult:
        mutated = kind == "ddl" or (kind == "mutation" and affected > 0)
        return ExecResult(reply=format_reply(text, self.reply_limit), error=None, kind=kind, mutated=mutated, rows=rows)

    def _error(self, text: str) -> ExecResult:
        return ExecResult(reply=format_reply(text, self.reply_limit), error=text, kind="error", mutated=False)

    def _fetch_reply(self, cursor: Any) -> tuple[tuple[tuple[Any, ...], ...], str, bool]:
        """Rows until the printed list passes the reply limit; whether the result was read to its end."""
        rows, text, finished = fetch_printed_rows(cursor, self.reply_limit)
        if finished:
            return rows, text, True
        drained = 0
        while drained < DRAIN_ROWS:
            batch = cursor.fetchmany(1000)
            if not batch:
                return rows, text, True
            drained += len(batch)
        return rows, text, False

    def _discard_rest(self, cursor: Any) -> None:
        """Read and drop the later statements' results, then roll back what they did."""
        try:
            # handled: boundary (client errors): a result already read has nothing left to fetch
            with contextlib.suppress(Exception):
                if cursor.with_rows:
                    cursor.fetchall()
            while cursor.nextset():
                if cursor.with_rows:
                    cursor.fetchall()
        except Exception:
            # handled: boundary (client errors): the rest is dropped either way; the rollback below undoes it
            pass
        try:
            self._connection.rollback()
        except Exception:
            # handled: boundary (client errors): a connection that cannot roll back is dropped, so nothing is committed
            self._drop_connection()

    def _drop_connection(self) -> None:
        """Close the connection mid-result (a huge reply) and open a new one; nothing is committed."""
        with contextlib.suppress(Exception):  # handled: boundary (client errors): the connection is replaced either way
            self._connection.close()
        self._connection = connect(self.account, database=self.database)

    # -- state for scoring ----------------------------------------------------------------

    def _admin_rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]] | None:
        try:
            return self.backend.admin_query(sql, params)
        except Exception:
            # handled: boundary (client errors): a missing table or database reads as no rows, as the grader expects
            return None

    def table_rows(self) -> list[tuple[Any, ...]] | None:
        """The item's table in its original columns, or None when the agent dropped or broke it."""
        columns = ", ".join(quote_identifier(column) for column in self.columns)
        table = f"{quote_identifier(self.database)}.{quote_identifier(self.table_name)}"
        return self._admin_rows(f"SELECT {columns} FROM {table}")

    def printed_table_hash(self) -> str | None:
        """The benchmark's hash query run on the server, printed as the harness prints it.

        Returns ``"[('<32 hex>',)]"`` (``"[(None,)]"`` for an empty table), or None when the
        table no longer has its columns (the harness would print an error text, never a match).
        """
        result = self._admin_rows(hash_query(self.table_name, self.columns, self.database))
        return None if result is None else str(result)

    def table_exists(self) -> bool:
        rows = self._admin_rows(
            "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s",
            (self.database, self.table_name),
        )
        return bool(rows and rows[0][0])

    def close(self) -> None:
        """Close the connection, drop the database and the account."""
        with contextlib.suppress(Exception):  # handled: boundary (client errors): the connection may already be closed
            self._connection.close()
        self._finalizer()


def shared_backend(db_url: str | None) -> MySqlBackend:
    """The process-wide backend for ``db_url`` (a throwaway MariaDB when None), made on first use.

    Example:
        >>> backend = shared_backend("mysql://root:secret@127.0.0.1:3306/")  # doctest: +SKIP
    """
    key = db_url or ""
    with _SHARED_LOCK:
        backend = _SHARED.get(key)
        if backend is None:
            backend = MySqlBackend.start_mariadb() if db_url is None else MySqlBackend(parse_db_url(db_url))
            _SHARED[key] = backend
        return backend


def stop_shared_backends() -> None:
    """Close every shared backend (stopping the servers they own)."""
    with _SHARED_LOCK:
        backends = list(_SHARED.values())
        _SHARED.clear()
    for backend in backends:
        backend.close()
