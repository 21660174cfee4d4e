"""MySQL-style error replies for an SQLite engine.

The benchmark shows the agent the client library's error text, ``{errno} ({sqlstate}):
{message}``. Agents learn from these texts (``1054 ... Unknown column``), so SQLite's own
messages are mapped onto the MySQL forms the benchmark produces.
"""

from __future__ import annotations

import re
import sqlite3

# MySQL prints at most 80 characters of the statement after the point of the syntax error.
_NEAR_LIMIT = 80


class MySqlError(Exception):
    """An error the agent sees as ``{errno} ({sqlstate}): {message}``."""

    def __init__(self, errno: int, sqlstate: str, message: str) -> None:
        super().__init__(f"{errno} ({sqlstate}): {message}")
        self.errno = errno
        self.sqlstate = sqlstate
        self.message = message

    @property
    def text(self) -> str:
        return str(self)


def syntax_error(statement: str, offset: int) -> MySqlError:
    """``1064``: the statement text from ``offset`` on, as MySQL quotes it."""
    offset = max(0, min(offset, len(statement)))
    near = statement[offset : offset + _NEAR_LIMIT]
    line = statement.count("\n", 0, offset) + 1
    return MySqlError(
        1064,
        "42000",
        "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version "
        f"for the right syntax to use near '{near}' at line {line}",
    )


def empty_query() -> MySqlError:
    return MySqlError(1065, "42000", "Query was empty")


def unknown_table(database: str, table: str) -> MySqlError:
    return MySqlError(1146, "42S02", f"Table '{database}.{table}' doesn't exist")


def timeout_error() -> MySqlError:
    return MySqlError(3024, "HY000", "Query execution was interrupted, maximum statement execution time exceeded")


def access_denied() -> MySqlError:
    return MySqlError(
        1227, "42000", "Access denied; you need (at least one of) the SUPER privilege(s) for this operation"
    )


_CLAUSES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bwhere\b", re.IGNORECASE), "where clause"),
    (re.compile(r"\border\s+by\b", re.IGNORECASE), "order clause"),
    (re.compile(r"\bgroup\s+by\b", re.IGNORECASE), "group statement"),
    (re.compile(r"\bhaving\b", re.IGNORECASE), "having clause"),
    (re.compile(r"\bon\b", re.IGNORECASE), "on clause"),
    (re.compile(r"\b(?:select|set|into|values)\b", re.IGNORECASE), "field list"),
)


def _clause_of(statement: str, name: str) -> str:
    """Which clause MySQL would name for an unknown column: the last clause keyword before it."""
    bare = name.split(".")[-1]
    position = statement.lower().find(bare.lower())
    if position < 0:
        return "field list"
    head = statement[:position]
    best, best_at = "field list", -1
    for pattern, clause in _CLAUSES:
        for match in pattern.finditer(head):
            if match.start() > best_at:
                best, best_at = clause, match.start()
    return best


def _find_near(statement: str, token: str) -> int:
    """Where SQLite's ``near "X"`` token starts in the original statement (end when not found)."""
    if not token:
        return len(statement)
    position = statement.find(token)
    if position < 0:
        position = statement.lower().find(token.lower())
    return position if position >= 0 else len(statement)


def from_sqlite(error: sqlite3.Error, *, statement: str, database: str) -> MySqlError:
    """The MySQL error the benchmark's server would most likely have given for this SQLite error."""
    message = str(error)
    if match := re.fullmatch(r'near "(.*)": syntax error', message, re.DOTALL):
        return syntax_error(statement, _find_near(statement, match.group(1)))
    if match := re.fullmatch(r'unrecognized token: "(.*)"', message, re.DOTALL):
        return syntax_error(statement, _find_near(statement, match.group(1)))
    if message == "incomplete input":
        return syntax_error(statement, len(statement))
    if match := re.fullmatch(r"no such table: (?:main\.|temp\.)?(.*)", message, re.DOTALL):
        return unknown_table(database, match.group(1))
    if match := re.fullmatch(r"no such column: (.*)", message, re.DOTALL):
        name = match.group(1)
        return MySqlError(1054, "42S22", f"Unknown column '{name}' in '{_clause_of(statement, name)}'")
    if re.search(r"has \d+ columns but \d+ values were supplied|\d+ values for \d+ columns", message):
        return MySqlError(1136, "21S01", "Column count doesn't match value count at row 1")
    if re.search(r"SELECTs to the left and right of \w+ do not have the same number of result columns", message):
        return MySqlError(1222, "21000", "The used SELECT statements have a different number of columns")
    if match := re.fullmatch(r"no such function: (.*)", message, re.DOTALL):
        return MySqlError(1305, "42000", f"FUNCTION {database}.{match.group(1)} does not exist")
    if match := re.fullmatch(r"wrong number of arguments to function (\w+)\(\)", message):
        return MySqlError(1582, "42000", f"Incorrect parameter count in the call to native function '{match.group(1)}'")
    if match := re.fullmatch(r"ambiguous column name: (.*)", message, re.DOTALL):
        return MySqlError(1052, "23000", f"Column '{match.group(1)}' in field list is ambiguous")
    if match := re.fullmatch(r"(?:table|view) (.*) already exists", message, re.DOTALL):
        return MySqlError(1050, "42S01", f"Table '{match.group(1)}' already exists")
    if match := re.fullmatch(r"no such (?:view|index|trigger): (.*)", message, re.DOTALL):
        return unknown_table(database, match.group(1))
    if message.startswith("misuse of aggregate"):
        return MySqlError(1111, "HY000", "Invalid use of group function")
    if message == "interrupted":
        return timeout_error()
    if match := re.fullmatch(r"not authorized to use function: (\w+)", message):
        return MySqlError(1305, "42000", f"FUNCTION {database}.{match.group(1)} does not exist")
    if message.startswith("not authorized") or "prohibited" in message:
        return access_denied()
    if message == "string or blob too big":
        return MySqlError(1301, "HY000", "Result of a string function was larger than max_allowed_packet - truncated")
    if message in ("database or disk is full", "database is full"):
        return MySqlError(1114, "HY000", f"The table '{database}' is full")
    if message.startswith("UNIQUE constraint failed"):
        return MySqlError(1062, "23000", "Duplicate entry for key 'PRIMARY'")
    return _generic(message)


def _generic(message: str) -> MySqlError:
    """``1105 ER_UNKNOWN_ERROR`` with the engine's own words, for everything without a MySQL twin."""
    return MySqlError(1105, "HY000", message)
