"""MySQL-style error replies for an SQLite engine.

The benchmark shows the agent the client library's error text, ``{errno} ({sqlstate}):
{message}``. Agents learn from these texts (``1054 ... Unknown column``), so SQLite's own
messages are mapped onto the MySQL forms the benchmark produces.
"""

from __future__ import annotations

import functools
import re
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

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


def commands_out_of_sync() -> MySqlError:
    """What the benchmark's client answers to several statements sent as one."""
    return MySqlError(2014, "HY000", "Commands out of sync; you can't run this command now")


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


# Where MySQL resolves names, in order (Query_block::prepare): the select list, then WHERE and
# join conditions, GROUP BY, HAVING, ORDER BY. The first unknown column in this order is reported.
_CLAUSE_ORDER = ("field list", "on clause", "where clause", "group statement", "having clause", "order clause")


def clause_at(tokens: Sequence[Any], position: int) -> str:
    """The clause MySQL names for a column reference at ``tokens[position]``."""
    depth = 0
    for index in range(position - 1, -1, -1):
        token = tokens[index]
        if token.text == ")":
            depth += 1
            continue
        if token.text == "(":
            depth = max(0, depth - 1)
            continue
        if depth or token.kind != "word":
            continue
        word = token.upper
        if word == "WHERE":
            return "where clause"
        if word == "ON":
            return "on clause"
        if word == "HAVING":
            return "having clause"
        if word == "BY" and index >= 1 and tokens[index - 1].upper == "ORDER":
            return "order clause"
        if word == "BY" and index >= 1 and tokens[index - 1].upper == "GROUP":
            return "group statement"
        if word in ("SELECT", "SET", "VALUES", "UPDATE", "INSERT", "INTO", "DISTINCT"):
            return "field list"
    return "field list"


def _clause_of(statement: str, name: str, tokens: Sequence[Any] | None) -> str:
    """Which clause MySQL would name for the unknown column ``name`` (``t.col`` or ``col``)."""
    if not tokens:
        return "field list"
    parts = name.split(".")
    found: list[str] = []
    for index, token in enumerate(tokens):
        identifier = getattr(token, "identifier", None)
        if identifier is None or identifier.casefold() != parts[-1].casefold():
            continue
        if index + 1 < len(tokens) and tokens[index + 1].text == "(":
            continue
        found.append(clause_at(tokens, index))
    if not found:
        return "field list"
    return min(found, key=_CLAUSE_ORDER.index)


def _by_term(tokens: Sequence[Any], keyword: str, number: int) -> str | None:
    """The text of the ``number``-th term after the last ``ORDER BY`` / ``GROUP BY`` (1-based)."""
    for index in range(len(tokens) - 2, -1, -1):
        if tokens[index].upper == keyword and tokens[index + 1].upper == "BY":
            terms, depth, current = [], 0, []
            for token in tokens[index + 2 :]:
                if token.text == "(":
                    depth += 1
                elif token.text == ")":
                    depth -= 1
                if depth == 0 and token.text == ",":
                    terms.append(current)
                    current = []
                elif depth >= 0:
                    current.append(token)
            terms.append(current)
            if 0 < number <= len(terms) and terms[number - 1]:
                return terms[number - 1][0].text
            return None
    return None


def _find_near(statement: str, token: str) -> int:
    """Where SQLite's ``near "X"`` token starts in the original statement (end when not found)."""
    if not token:
        return len(statement)
    position = statement.find(token)
    if position < 0:
        position = statement.lower().find(token.lower())
    return position if position >= 0 else len(statement)


def from_sqlite(
    error: sqlite3.Error,
    *,
    statement: str,
    database: str,
    tokens: Sequence[Any] | None = None,
    near: Callable[[str], int] | None = None,
) -> MySqlError:
    """The MySQL error the benchmark's server would most likely have given for this SQLite error.

    ``tokens``: the statement's significant tokens (for clause attribution); ``near``: maps
    SQLite's ``near "X"`` fragment to its offset in ``statement`` (through the rewrite).
    """
    message = str(error)
    locate = near or functools.partial(_find_near, statement)
    if match := re.fullmatch(r'near "(.*)": syntax error', message, re.DOTALL):
        return syntax_error(statement, locate(match.group(1)))
    if match := re.fullmatch(r'unrecognized token: "(.*)"', message, re.DOTALL):
        return syntax_error(statement, locate(match.group(1)))
    if message == "incomplete input":
        return syntax_error(statement, len(statement))
    if match := re.fullmatch(r"no such table: (?:main\.|temp\.)?(.*)", message, re.DOTALL):
        return unknown_table(database, match.group(1))
    if match := re.fullmatch(r"no such column: (.*)", message, re.DOTALL):
        name = match.group(1)
        return MySqlError(1054, "42S22", f"Unknown column '{name}' in '{_clause_of(statement, name, tokens)}'")
    if match := re.fullmatch(r"(\d+)(?:st|nd|rd|th) (ORDER|GROUP) BY term out of range.*", message, re.DOTALL):
        clause = "order clause" if match.group(2) == "ORDER" else "group statement"
        term = _by_term(tokens or (), match.group(2), int(match.group(1))) or match.group(1)
        return MySqlError(1054, "42S22", f"Unknown column '{term}' in '{clause}'")
    if re.fullmatch(r"sub-select returns \d+ columns - expected 1|row value misused", message):
        return MySqlError(1241, "21000", "Operand should contain 1 column(s)")
    if message == "no tables specified":
        return MySqlError(1096, "HY000", "No tables used")
    if match := re.fullmatch(r"table .* has no column named (.*)", message, re.DOTALL):
        return MySqlError(1054, "42S22", f"Unknown column '{match.group(1)}' in 'field list'")
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
