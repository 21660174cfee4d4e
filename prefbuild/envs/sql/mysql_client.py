"""Connections to a MySQL-family server through ``mysql-connector-python`` (the ``mysql`` extra).

DBBench's harness talks to its server through this library, so its error texts
(``1146 (42S02): Table 'x.y' doesn't exist``) and the Python values of a result row
(``Decimal('2.5000')``, ``datetime.date(2024, 1, 2)``) are what the agent is shown here too.
The pure-Python implementation is used, so no compiled extension is needed.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlsplit

from prefbuild.envs.sql.mariadb import ServerAddress

__all__ = ["MISSING_CLIENT", "client_available", "connect", "parse_db_url"]

MISSING_CLIENT = "the mysql backend needs mysql-connector-python: install `prefbuild[mysql]`"
_SCHEMES = ("mysql", "mariadb", "mysql+mysqlconnector", "mysql+pymysql", "mariadb+mysqlconnector")


def client_available() -> str | None:
    """None when the client library imports, else why not (for skips and error messages)."""
    try:
        import mysql.connector  # noqa: F401
    except ImportError:  # handled: the reason is returned for skips and error messages
        return MISSING_CLIENT
    return None


def parse_db_url(url: str) -> ServerAddress:
    """The address in ``mysql://user:password@host:port/`` (``?unix_socket=/path`` optional).

    Args:
        url: a ``mysql://`` or ``mariadb://`` URL; the account needs CREATE, DROP, CREATE USER
            and GRANT OPTION (prefbuild creates one database and one account per episode).

    Returns:
        The server address with the administrator account.

    Example:
        >>> parse_db_url("mysql://root:s%40cret@127.0.0.1:3307/").password
        's@cret'
    """
    parts = urlsplit(url)
    if parts.scheme not in _SCHEMES:
        raise ValueError(f"db_url: scheme must be one of {', '.join(_SCHEMES)}, got {parts.scheme!r}")
    if not parts.username:
        raise ValueError("db_url: no user name (mysql://USER:PASSWORD@HOST:PORT/)")
    socket_path = None
    for pair in parts.query.split("&") if parts.query else ():
        key, _, value = pair.partition("=")
        if key == "unix_socket":
            socket_path = unquote(value)
        else:
            raise ValueError(f"db_url: unknown query parameter {key!r} (known: unix_socket)")
    try:
        port = parts.port or 3306
    except ValueError as error:
        raise ValueError(f"db_url: {error}") from None
    return ServerAddress(
        host=parts.hostname or "127.0.0.1",
        port=port,
        user=unquote(parts.username),
        password=unquote(parts.password or ""),
        unix_socket=socket_path,
    )


def connect(address: ServerAddress, *, timeout_s: float = 10.0, database: str | None = None) -> Any:
    """An autocommit-off connection that accepts multi-statement text, as the benchmark's does.

    Args:
        address: the server and account.
        timeout_s: the connection timeout.
        database: the default database, if any.

    Returns:
        A ``mysql.connector`` connection (pure-Python implementation).
    """
    try:
        import mysql.connector
        from mysql.connector.constants import ClientFlag
    except ImportError:
        raise RuntimeError(MISSING_CLIENT) from None
    options: dict[str, Any] = {
        "user": address.user,
        "password": address.password,
        "use_pure": True,
        "autocommit": False,
        "connection_timeout": max(1, round(timeout_s)),
        "charset": "utf8mb4",
        "collation": "utf8mb4_general_ci",
        "client_flags": [ClientFlag.MULTI_STATEMENTS],
        "get_warnings": False,
    }
    if address.unix_socket:
        options["unix_socket"] = address.unix_socket
    else:
        options["host"] = address.host
        options["port"] = address.port
    if database is not None:
        options["database"] = database
    return mysql.connector.connect(**options)
