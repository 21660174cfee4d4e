"""A sandboxed in-memory SQLite database that answers like the benchmark's MySQL server.

One ``SqlSandbox`` holds one episode's table. The agent's SQL is untrusted, so:

* the first statement only runs, and only statement kinds MySQL has (``PRAGMA``,
  ``ATTACH``, ``VACUUM``... are MySQL syntax errors before SQLite ever sees them);
* an authorizer denies ATTACH/DETACH, PRAGMA, virtual tables and file-touching functions,
  and the attached-database limit is 0, as a second line of defence;
* a progress handler interrupts any statement after ``timeout_s``; Python callbacks
  (collation, LIKE, SUM) stop working and interrupt once the deadline has passed;
* string/blob size, SQL length and the database size are capped, temp storage is memory;
* a reply is built only up to the 800 characters the agent is shown.

MySQL semantics that change results are emulated: utf8mb4_0900_ai_ci (case- and
accent-insensitive, no pad, DUCET order of punctuation) on every column and literal, MySQL
string-to-number conversion, exact DECIMAL vs double arithmetic (replies print
``Decimal('2.5000')`` and ``datetime.date(...)`` as the client does), MySQL LIKE/REGEXP,
the built-ins of ``mysql_functions``, case-sensitive table names, select aliases unknown in
WHERE, ONLY_FULL_GROUP_BY (``group_check``), read-only information_schema, SHOW/DESCRIBE/USE,
several statements refused as "Commands out of sync", and MySQL error texts and positions.
A table MySQL cannot create (duplicate or empty column names) is not built; rows of the wrong
width leave it empty, as the benchmark's one multi-row INSERT does.
"""

from __future__ import annotations

import functools
import hashlib
import math
import sqlite3
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from prefbuild.envs.sql import information_schema
from prefbuild.envs.sql import mysql_functions as fn
from prefbuild.envs.sql.dialect import RESERVED, Statement, original_offset, quote_identifier, translate
from prefbuild.envs.sql.group_check import AGGREGATES, check_only_full_group_by
from prefbuild.envs.sql.mysql_errors import (
    MySqlError,
    access_denied,
    commands_out_of_sync,
    from_sqlite,
    syntax_error,
    timeout_error,
    unknown_table,
)
from prefbuild.envs.sql.mysql_functions import collation_key, mysql_number

REPLY_LIMIT = 800
TRUNCATED = "[TRUNCATED]"
COLLATION = fn.COLLATION
MAX_VALUE_BYTES = 1_000_000
MAX_SQL_CHARS = 100_000
MAX_PAGES = 4096  # 16 MiB of table data at SQLite's default 4 KiB page size
LIKE_WORK_LIMIT = 2_000_000  # pattern length x text length one LIKE call may cost

_DENIED_ACTIONS = frozenset(
    {
        sqlite3.SQLITE_ATTACH,
        sqlite3.SQLITE_DETACH,
        sqlite3.SQLITE_PRAGMA,
        sqlite3.SQLITE_CREATE_VTABLE,
        sqlite3.SQLITE_DROP_VTABLE,
    }
)
# File access, plus functions whose single call can run for seconds without reaching the
# progress handler (GLOB backtracking). MySQL has none of them. SQLite's printf/format (width
# bombs) are refused by the dialect by name, since ALTER TABLE needs them internally.
_DENIED_FUNCTIONS = frozenset(
    {"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer", "sqlite_dbpage", "glob"}
)

QUERY_KEYWORDS = frozenset({"SELECT", "WITH", "("})
DML_KEYWORDS = frozenset({"INSERT", "REPLACE", "UPDATE", "DELETE"})
DDL_KEYWORDS = frozenset({"CREATE", "DROP", "ALTER", "TRUNCATE"})
NOOP_KEYWORDS = frozenset({"BEGIN", "START", "COMMIT", "ROLLBACK", "SET"})
META_KEYWORDS = frozenset({"SHOW", "DESCRIBE", "DESC", "EXPLAIN", "USE"})
ALL_KEYWORDS = QUERY_KEYWORDS | DML_KEYWORDS | DDL_KEYWORDS | NOOP_KEYWORDS | META_KEYWORDS
_SYSTEM_DATABASES = ("information_schema", "mysql", "performance_schema", "sys")
_WRITES = frozenset(
    {sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE, sqlite3.SQLITE_DELETE, sqlite3.SQLITE_DROP_TEMP_TABLE}
)
_TABLE_CONTEXT = frozenset({"FROM", "JOIN", "INTO", "UPDATE", "TABLE"})


@dataclass(frozen=True)
class ExecResult:
    """The outcome of one agent statement."""

    reply: str  # exactly what the agent is shown (truncated to 800 characters + [TRUNCATED])
    error: str | None  # the MySQL-style error text, or None when the statement ran
    kind: str  # query, mutation, ddl, meta, noop, error
    mutated: bool  # the statement changed data or schema
    rows: tuple[tuple[Any, ...], ...] | None = None  # rows fetched for the reply (capped), None for errors


def fold(text: str) -> str:
    """The comparison key of MySQL's accent- and case-insensitive collation."""
    if len(text) <= 256:
        return _fold_cached(text)
    return _fold(text)


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(char for char in decomposed if not unicodedata.combining(char)).casefold()


_fold_cached = functools.lru_cache(maxsize=65_536)(_fold)


def format_reply(text: str, limit: int = REPLY_LIMIT) -> str:
    """The benchmark's cap: a reply longer than ``limit`` characters is cut and marked."""
    return text if len(text) <= limit else text[:limit] + TRUNCATED


def fetch_printed_rows(
    cursor: Any, limit: int, render: Callable[[tuple[Any, ...]], str] = repr
) -> tuple[tuple[tuple[Any, ...], ...], str, bool]:
    """Rows of a DB-API cursor only until their printed list passes ``limit`` characters.

    Args:
        cursor: an executed cursor (SQLite or the MySQL client); one without a result prints ``[]``.
        limit: the reply cap; rows past it are not fetched (the caller cuts the text).
        render: how one row is printed (``repr`` of the tuple, as the MySQL client prints it).

    Returns:
        ``(rows, printed list, read to its end)``; the last is False when rows were left unread.

    Example:
        >>> import sqlite3
        >>> fetch_printed_rows(sqlite3.connect(":memory:").execute("SELECT 1, 'a'"), 100)
        (((1, 'a'),), "[(1, 'a')]", True)
    """
    if not cursor.description:
        return (), "[]", True
    rows: list[tuple[Any, ...]] = []
    parts: list[str] = []
    length = 2
    while length <= limit:
        batch = cursor.fetchmany(64)
        if not batch:
            return tuple(rows), "[" + ", ".join(parts) + "]", True
        for row in batch:
            rows.append(tuple(row))
            text = render(tuple(row))
            parts.append(text)
            length += len(text) + 2
    return tuple(rows), "[" + ", ".join(parts) + "]", False


def _compile_like(pattern: str, escape: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == escape and index + 1 < len(pattern):
            tokens.extend(("lit", folded) for folded in fold(pattern[index + 1]))
            index += 2
            continue
        if char == "%":
            if not tokens or tokens[-1][0] != "many":
                tokens.append(("many", ""))
        elif char == "_":
            tokens.append(("one", ""))
        else:
            tokens.extend(("lit", folded) for folded in fold(char))
        index += 1
    return tokens


def _like_match(tokens: list[tuple[str, str]], text: str) -> bool:
    """Wildcard matching without backtracking blow-up (greedy with one resume point)."""
    t_index = p_index = 0
    star, mark = -1, 0
    while t_index < len(text):
        if p_index < len(tokens) and (
            tokens[p_index][0] == "one" or (tokens[p_index][0] == "lit" and tokens[p_index][1] == text[t_index])
        ):
            t_index += 1
            p_index += 1
        elif p_index < len(tokens) and tokens[p_index][0] == "many":
            star, mark = p_index, t_index
            p_index += 1
        elif star >= 0:
            p_index = star + 1
            mark += 1
            t_index = mark
        else:
            return False
    while p_index < len(tokens) and tokens[p_index][0] == "many":
        p_index += 1
    return p_index == len(tokens)


class _Sum:
    """MySQL SUM: text is converted to a number and any text or double input makes a double;
    integers and DECIMALs sum exactly to a DECIMAL (``SUM(1)`` prints ``Decimal('1')``)."""

    marks: fn.DecimalMarks = fn.DecimalMarks()

    def __init__(self) -> None:
        self.total: Decimal = Decimal(0)
        self.double = 0.0
        self.count = 0
        self.floating = False
        self.scale = 0

    def _number(self, value: Any) -> Decimal | float | None:
        if value is None:
            return None
        exact = fn.exact_value(value, self.marks)
        if exact is not None and not self.floating:
            exponent = exact.as_tuple().exponent
            self.scale = max(self.scale, -exponent if isinstance(exponent, int) and exponent < 0 else 0)
            return exact
        self.floating = True
        return float(mysql_number(value) or 0)

    def step(self, value: Any) -> None:
        number = self._number(value)
        if number is not None:
            self.double += float(number)
            if isinstance(number, Decimal):
                self.total += number
            self.count += 1

    def inverse(self, value: Any) -> None:
        number = self._number(value)
        if number is not None:
            self.double -= float(number)
            if isinstance(number, Decimal):
                self.total -= number
            self.count -= 1

    def value(self) -> int | float | None:
        if self.count == 0:
            return None
        if self.floating:
            return self.double
        return self.marks.mark(self.total, self.scale)

    def finalize(self) -> int | float | None:
        return self.value()


class _Avg(_Sum):
    """MySQL AVG: a double over text and doubles, a DECIMAL with 4 more digits over exact values."""

    def value(self) -> float | None:
        if self.count == 0:
            return None
        if self.floating:
            return self.double / self.count
        scale = self.scale + fn.DIV_PRECISION_INCREMENT
        average = (self.total / self.count).quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP)
        return self.marks.mark(average, scale)


def _concat(marks: fn.DecimalMarks, *values: Any) -> str | None:
    if any(value is None for value in values):
        return None
    return "".join(str(fn.stored_text(marks, value)) for value in values)


def _concat_ws(separator: Any, *values: Any) -> str | None:
    if separator is None:
        return None
    return _text(separator).join(_text(value) for value in values if value is not None)


_text = fn.text


def _md5(value: Any) -> str | None:
    if value is None:
        return None
    data = value if isinstance(value, bytes) else _text(value).encode("utf-8")
    return hashlib.md5(data).hexdigest()


def _left(value: Any, count: Any) -> str | None:
    if value is None or count is None:
        return None
    return _text(value)[: max(0, int(mysql_number(count) or 0))]


def _right(value: Any, count: Any) -> str | None:
    if value is None or count is None:
        return None
    size = max(0, int(mysql_number(count) or 0))
    text = _text(value)
    return text[len(text) - size :] if size else ""


def _change_case(case: Any, value: Any) -> str | None:
    """MySQL UPPER/LOWER: one character for one (``'straße'`` -> ``'STRAßE'``)."""
    if value is None:
        return None
    return "".join(changed if len(changed := case(char)) == 1 else char for char in str(fn.cast_char(value)))


def _if(condition: Any, then: Any, otherwise: Any) -> Any:
    return then if condition is not None and mysql_number(condition) != 0 else otherwise


def _locate(needle: Any, haystack: Any, start: Any = 1) -> int | None:
    if needle is None or haystack is None:
        return None
    begin = max(1, int(mysql_number(start) or 1))
    return fold(_text(haystack)).find(fold(_text(needle)), begin - 1) + 1


class SqlSandbox:
    """One episode's database: the item's table, reachable only through ``execute``."""

    def __init__(
        self,
        table_name: str,
        columns: Sequence[str],
        rows: Sequence[Sequence[Any]],
        *,
        timeout_s: float = 2.0,
        reply_limit: int = REPLY_LIMIT,
        database: str | None = None,
    ) -> None:
        self.table_name = table_name
        self.columns = tuple(columns)
        self.database = table_name if database is None else database
        self.timeout_s = timeout_s
        self.reply_limit = reply_limit
        self._deadline = math.inf
        self._marks = fn.DecimalMarks()
        self._connection = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        self._setup(rows)

    # -- set-up ---------------------------------------------------------------------------

    def _setup(self, rows: Sequence[Sequence[Any]]) -> None:
        connection = self._connection
        connection.execute("PRAGMA temp_store = MEMORY")
        connection.execute(f"PRAGMA main.max_page_count = {MAX_PAGES}")
        connection.execute(f"PRAGMA temp.max_page_count = {MAX_PAGES}")
        connection.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
        connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
        connection.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, MAX_SQL_CHARS * 4)
        connection.setlimit(sqlite3.SQLITE_LIMIT_TRIGGER_DEPTH, 10)
        connection.create_collation(COLLATION, self._collate)
        connection.create_function("mysql_number", 1, self._guard(mysql_number), deterministic=True)
        connection.create_function("like", 2, self._like)
        connection.create_function("like", 3, self._like)
        connection.create_window_function("sum", 1, type("Sum", (_Sum,), {"marks": self._marks}))
        connection.create_window_function("avg", 1, type("Avg", (_Avg,), {"marks": self._marks}))
        connection.create_function("md5", 1, self._guard(_md5), deterministic=True)
        connection.create_function(
            "concat", -1, self._guard(functools.partial(_concat, self._marks)), deterministic=True
        )
        connection.create_function("concat_ws", -1, self._guard(_concat_ws), deterministic=True)
        connection.create_function("if", 3, _if, deterministic=True)
        connection.create_function("mysql_left", 2, self._guard(_left), deterministic=True)
        connection.create_function("mysql_right", 2, self._guard(_right), deterministic=True)
        for name, case in (("lcase", str.lower), ("lower", str.lower), ("ucase", str.upper), ("upper", str.upper)):
            connection.create_function(
                name, 1, functools.partial(_change_case, case), deterministic=True
            )  # Unicode-aware, unlike SQLite's ASCII-only upper()/lower()
        connection.create_function("char_length", 1, lambda v: None if v is None else len(_text(v)))
        connection.create_function("locate", 2, self._guard(_locate), deterministic=True)
        connection.create_function("locate", 3, self._guard(_locate), deterministic=True)
        self._register_mysql_functions()
        if builds_table(self.columns):
            column_sql = ", ".join(f"{quote_identifier(name)} TEXT COLLATE {COLLATION}" for name in self.columns)
            connection.execute(f"CREATE TABLE {quote_identifier(self.table_name)} ({column_sql})")
        if rows and builds_table(self.columns) and all(len(row) == len(self.columns) for row in rows):
            marks = ", ".join("?" for _ in self.columns)
            connection.executemany(
                f"INSERT INTO {quote_identifier(self.table_name)} VALUES ({marks})",
                [[_cell(value) for value in row] for row in rows],
            )
        connection.set_authorizer(_authorize)
        connection.set_progress_handler(self._progress, 1000)

    def _register_mysql_functions(self) -> None:
        """MySQL built-ins under their MySQL names (or the ``mysql_*`` names the dialect writes)."""
        marks, guard = self._marks, self._guard
        deterministic: dict[str, tuple[int, Any]] = {
            "mysql_div": (2, functools.partial(fn.divide, marks)),
            "mysql_add": (2, functools.partial(fn.add, marks)),
            "mysql_sub": (2, functools.partial(fn.subtract, marks)),
            "mysql_mul": (2, functools.partial(fn.multiply, marks)),
            "mysql_neg": (1, functools.partial(fn.negate, marks)),
            "floor": (1, functools.partial(fn.floor, marks)),
            "ceil": (1, functools.partial(fn.ceiling, marks)),
            "ceiling": (1, functools.partial(fn.ceiling, marks)),
            "abs": (1, functools.partial(fn.absolute, marks)),
            "mysql_intdiv": (2, fn.integer_divide),
            "mysql_mod": (2, functools.partial(fn.modulo, marks)),
            "mysql_dec": (1, functools.partial(fn.decimal_literal, marks)),
            "mysql_decimal": (3, functools.partial(fn.cast_decimal, marks)),
            "mysql_signed": (1, fn.cast_signed),
            "mysql_double": (1, fn.cast_double),
            "mysql_date": (1, functools.partial(fn.cast_date, marks)),
            "date": (1, functools.partial(fn.cast_date, marks)),
            "mysql_interval": (2, fn.interval),
            "date_add": (2, functools.partial(fn.shift_date, marks)),
            "adddate": (2, functools.partial(fn.shift_date, marks)),
            "date_sub": (2, functools.partial(fn.shift_date, marks, sign=-1)),
            "subdate": (2, functools.partial(fn.shift_date, marks, sign=-1)),
            "datediff": (2, fn.datediff),
            "dayname": (1, fn.dayname),
            "monthname": (1, fn.monthname),
            "dayofweek": (1, fn.dayofweek),
            "mysql_format": (2, fn.format_number),
            "reverse": (1, fn.reverse),
            "instr": (2, fn.instr),
            "mid": (3, fn.substring),
            "ascii": (1, fn.ascii_code),
            "space": (1, fn.space),
            "hex": (1, fn.to_hex),
            "mysql_trim": (3, fn.trim),
            "mysql_char_codes": (-1, fn.char_codes),
            "substring_index": (3, fn.substring_index),
            "lpad": (3, fn.lpad),
            "rpad": (3, fn.rpad),
            "repeat": (2, lambda value, count: fn.repeat(value, count, MAX_VALUE_BYTES)),
            "truncate": (2, functools.partial(fn.truncate, marks)),
            "mysql_store": (1, functools.partial(fn.stored_text, marks)),
            "year": (1, fn.year),
            "month": (1, fn.month),
            "day": (1, fn.day),
            "dayofmonth": (1, fn.day),
            "str_to_date": (2, functools.partial(fn.str_to_date, marks)),
            "date_format": (2, fn.date_format),
            "strcmp": (2, fn.strcmp),
            "length": (1, fn.byte_length),
            "octet_length": (1, fn.byte_length),
            "version": (0, fn.version),
        }
        for name, (count, function) in deterministic.items():
            self._connection.create_function(name, count, guard(function), deterministic=True)
        self._connection.create_function("round", 1, guard(functools.partial(fn.round_number, marks)))
        self._connection.create_function("round", 2, guard(functools.partial(fn.round_number, marks)))
        self._connection.create_function("mysql_char", 1, guard(fn.cast_char), deterministic=True)
        self._connection.create_function("mysql_char", 2, guard(fn.cast_char), deterministic=True)
        for name, function in (("now", fn.now), ("curdate", fn.curdate), ("current_timestamp", fn.now)):
            self._connection.create_function(name, 0, self._dated(function))
        for name in ("database", "schema"):
            self._connection.create_function(name, 0, lambda: self.database)
        self._connection.create_function("sysdate", 0, fn.now)
        self._connection.create_function("rand", 0, fn.rand)
        self._connection.create_function("rand", 1, fn.rand)
        remaining = functools.partial(self._remaining)
        self._connection.create_function("regexp", 2, guard(functools.partial(fn.regexp_like, remaining)))
        self._connection.create_aggregate("mysql_group_concat", -1, fn.GroupConcat)

    def _dated(self, function: Any) -> Any:
        """A date-returning function whose result prints as ``datetime.date``/``datetime.datetime``."""
        return lambda *args: self._marks.mark_date(function(*args))

    def _remaining(self) -> float:
        return self._deadline - time.monotonic()

    def _expired(self) -> bool:
        if time.monotonic() > self._deadline:
            self._connection.interrupt()
            return True
        return False

    def _progress(self) -> int:
        return 1 if time.monotonic() > self._deadline else 0

    def _collate(self, left: str, right: str) -> int:
        if self._expired():
            return 0
        a, b = collation_key(left), collation_key(right)
        return (a > b) - (a < b)

    def _guard(self, function: Any) -> Any:
        """Wrap a Python SQL function so it does no work after the deadline."""

        def guarded(*args: Any) -> Any:
            if self._expired():
                return None
            return function(*args)

        return guarded

    def _like(self, pattern: Any, value: Any, escape: Any = "\\") -> int | None:
        if pattern is None or value is None or escape is None or self._expired():
            return None
        pattern_text, value_text = _text(pattern), fold(_text(value))
        if len(pattern_text) * max(1, len(value_text)) > LIKE_WORK_LIMIT:
            raise ValueError("LIKE pattern too complex")
        tokens = _compile_like(pattern_text, _text(escape)[:1] or "\\")
        return int(_like_match(tokens, value_text))

    # -- execution ------------------------------------------------------------------------

    def execute(self, sql: str) -> ExecResult:
        """Run the agent's SQL (first statement only) and return the reply the agent sees."""
        if len(sql) > MAX_SQL_CHARS:
            return self._error(MySqlError(1153, "08S01", "Got a packet bigger than 'max_allowed_packet' bytes"))
        try:
            statement = translate(sql, database=self.database, keywords=ALL_KEYWORDS)
            self._check_table_names(statement)
            self._check_where_aliases(statement)
            if statement.multiple:
                return self._out_of_sync(statement)
            return self._dispatch(statement)
        except MySqlError as error:
            return self._error(error)
        except RecursionError:
            # handled: a statement nested too deep for the parser is a syntax error, as MySQL reports it
            return self._error(syntax_error(sql, 0))

    def _out_of_sync(self, statement: Statement) -> ExecResult:
        """Several statements at once: the first one's error if it fails, else "Commands out of sync";
        nothing the first statement did is kept (the harness never reads past the first result)."""
        connection = self._connection
        connection.execute("SAVEPOINT multi_statement")
        try:
            self._dispatch(statement)
        finally:
            connection.execute("ROLLBACK TO multi_statement")
            connection.execute("RELEASE multi_statement")
        raise commands_out_of_sync()

    def _check_table_names(self, statement: Statement) -> None:
        """Table names are case-sensitive on MySQL/Linux: ``FROM Players`` misses table ``players``."""
        names = self._table_names()
        exact = set(names)
        folded = {name.casefold() for name in names}
        tokens = statement.tokens
        for index, token in enumerate(tokens):
            name = token.identifier
            if (
                name is not None
                and index >= 1
                and tokens[index - 1].upper in _TABLE_CONTEXT
                and index + 2 < len(tokens)
                and tokens[index + 1].text == "."
                and name != self.database
                and tokens[index + 2].identifier is not None
            ):
                view = tokens[index + 2].identifier or ""
                if name.lower() == "information_schema":
                    if information_schema.table_name(view) is not None:
                        continue
                    raise MySqlError(1109, "42S02", f"Unknown table '{view}' in information_schema")
                raise unknown_table(name, tokens[index + 2].identifier or "")  # another database
            if name is None or index == 0 or name in exact or name.casefold() not in folded:
                continue
            previous = tokens[index - 1]
            qualified = previous.text == "." and index >= 2 and tokens[index - 2].identifier == self.database
            if previous.upper in _TABLE_CONTEXT or qualified:
                following = tokens[index + 1] if index + 1 < len(tokens) else None
                if following is not None and following.text == ".":
                    continue
                raise unknown_table(self.database, name)

    def _check_grouping(self, statement: Statement) -> None:
        tokens = statement.tokens
        if statement.keyword != "SELECT" or not any(t.upper in AGGREGATES or t.upper == "GROUP" for t in tokens):
            return
        deadline = self._deadline  # _columns_of resets the statement's time bound; keep it
        try:
            table_columns = {name: self._columns_of(name) for name in self._table_names()}
        finally:
            self._deadline = deadline
        check_only_full_group_by(tokens, database=self.database, table_columns=table_columns)

    def _check_where_aliases(self, statement: Statement) -> None:
        """MySQL resolves WHERE before the select list: ``SELECT x AS n ... WHERE n = 1`` is an
        unknown column there (SQLite would accept the alias)."""
        tokens = statement.tokens
        if statement.keyword != "SELECT" or not any(token.upper == "WHERE" for token in tokens):
            return
        aliases, where, end, depth = {}, None, len(tokens), 0
        for index, token in enumerate(tokens):
            if token.text == "(":
                depth += 1
            elif token.text == ")":
                depth -= 1
            elif depth == 0 and token.upper == "AS" and where is None and index + 1 < len(tokens):
                name = tokens[index + 1].identifier
                if name is not None:
                    aliases[name.casefold()] = name
            elif depth == 0 and token.upper == "WHERE" and token.kind == "word":
                where = index
            elif depth == 0 and where is not None and token.upper in ("GROUP", "ORDER", "LIMIT", "HAVING", "UNION"):
                end = index
                break
        if where is None or not aliases:
            return
        columns = {column.casefold() for table in self._table_names() for column in self._columns_of(table)}
        for index in range(where + 1, end):
            token = tokens[index]
            name = token.identifier
            if name is None or name.casefold() not in aliases or name.casefold() in columns:
                continue
            if tokens[index - 1].text == "." or tokens[index - 1].upper == "AS":
                continue
            if index + 1 < len(tokens) and tokens[index + 1].text in (".", "("):
                continue
            if token.kind == "word" and token.upper in RESERVED:
                continue
            raise MySqlError(1054, "42S22", f"Unknown column '{name}' in 'where clause'")

    def _error(self, error: MySqlError) -> ExecResult:
        return ExecResult(
            reply=format_reply(error.text, self.reply_limit), error=error.text, kind="error", mutated=False
        )

    def _dispatch(self, statement: Statement) -> ExecResult:
        keyword = statement.keyword
        if keyword in QUERY_KEYWORDS:
            return self._run(statement, statement.sqlite, "query")
        if keyword in DML_KEYWORDS:
            return self._run(statement, statement.sqlite, "mutation")
        if keyword == "TRUNCATE":
            return self._truncate(statement)
        if keyword in DDL_KEYWORDS:
            return self._run(statement, statement.sqlite, "ddl")
        if keyword in NOOP_KEYWORDS:
            return self._rows_reply([], kind="noop")
        if keyword in META_KEYWORDS:
            return self._meta(statement)
        raise syntax_error(statement.original, statement.tokens[0].start)

    def _run(self, statement: Statement, sql: str, kind: str) -> ExecResult:
        connection = self._connection
        information_schema.refresh(
            connection,
            sql,
            database=self.database,
            collation=COLLATION,
            tables=self._live_tables,
            authorizer=_authorize,
        )
        changes_before = connection.total_changes
        self._marks.clear()
        self._deadline = time.monotonic() + self.timeout_s
        try:
            cursor = connection.execute(sql)
            try:
                if kind == "query":  # names resolved (1054 first, as MySQL): now ONLY_FULL_GROUP_BY
                    self._check_grouping(statement)
                rows, text, _ = fetch_printed_rows(cursor, self.reply_limit, self._row_text)
            finally:
                cursor.close()
        except sqlite3.Error as error:
            if time.monotonic() > self._deadline:
                raise timeout_error() from None
            if "information_schema." in sql and str(error).startswith("not authorized"):
                raise MySqlError(
                    1044, "42000", "Access denied for user 'root'@'%' to database 'information_schema'"
                ) from None
            raise from_sqlite(
                error,
                statement=statement.original,
                database=self.database,
                tokens=statement.tokens,
                near=functools.partial(original_offset, statement),
            ) from None
        except (ValueError, OverflowError, MemoryError) as error:
            raise MySqlError(1105, "HY000", str(error) or type(error).__name__) from None
        finally:
            self._deadline = math.inf
        mutated = connection.total_changes != changes_before or kind == "ddl"
        return ExecResult(reply=format_reply(text, self.reply_limit), error=None, kind=kind, mutated=mutated, rows=rows)

    def _row_text(self, row: tuple[Any, ...]) -> str:
        """A row printed the way the client prints it (DECIMAL results as ``Decimal('...')``)."""
        if not self._marks.scales and not self._marks.dates:
            return repr(row)
        cells = [self._marks.render(value) for value in row]
        return "(" + ", ".join(cells) + ("," if len(cells) == 1 else "") + ")"

    def _live_tables(self) -> list[tuple[str, list[str], int]]:
        """Every table with its columns and row count (for information_schema)."""
        out = []
        for table in self._table_names():
            count = self._connection.execute(f"SELECT COUNT(*) FROM {quote_identifier(table)}").fetchone()[0]
            out.append((table, self._columns_of(table), int(count)))
        return out

    def _rows_reply(self, rows: list[tuple[Any, ...]], *, kind: str) -> ExecResult:
        text = "[" + ", ".join(repr(row) for row in rows) + "]"
        return ExecResult(
            reply=format_reply(text, self.reply_limit), error=None, kind=kind, mutated=False, rows=tuple(rows)
        )

    def _truncate(self, statement: Statement) -> ExecResult:
        tokens = list(statement.tokens[1:])
        if tokens and tokens[0].upper == "TABLE":
            tokens = tokens[1:]
        if len(tokens) != 1 or tokens[0].identifier is None:
            raise syntax_error(statement.original, tokens[0].start if tokens else len(statement.original))
        name = tokens[0].identifier
        self._columns_of(name)
        return self._run(statement, f"DELETE FROM {quote_identifier(name)}", "mutation")

    # -- SHOW / DESCRIBE / USE ------------------------------------------------------------

    def _meta(self, statement: Statement) -> ExecResult:
        tokens = statement.tokens
        words = [token.upper for token in tokens]
        original = statement.original
        if words[0] == "USE":
            if len(tokens) != 2 or tokens[1].identifier is None:
                raise syntax_error(original, tokens[1].start if len(tokens) > 1 else len(original))
            if tokens[1].identifier != self.database:
                raise MySqlError(1049, "42000", f"Unknown database '{tokens[1].identifier}'")
            return self._rows_reply([], kind="noop")
        if words[0] in ("DESCRIBE", "DESC", "EXPLAIN"):
            if len(tokens) == 2 and tokens[1].identifier is not None:
                return self._describe(tokens[1].identifier)
            if words[0] == "EXPLAIN":
                raise MySqlError(1235, "42000", "This version of MySQL doesn't yet support 'EXPLAIN of this statement'")
            raise syntax_error(original, tokens[1].start if len(tokens) > 1 else len(original))
        rest = words[1:]
        full = bool(rest) and rest[0] == "FULL"
        if full:
            rest = rest[1:]
        if rest[:1] == ["TABLES"] and (len(rest) == 1 or (len(rest) == 3 and rest[1] == "LIKE")):
            names = self._table_names()
            if len(rest) == 3:
                pattern = tokens[-1]
                if pattern.kind != "string":
                    raise syntax_error(original, pattern.start)
                names = [name for name in names if self._like(pattern.value, name)]
            return self._rows_reply([(name, "BASE TABLE") if full else (name,) for name in names], kind="meta")
        if rest in (["DATABASES"], ["SCHEMAS"]):
            names = sorted({*_SYSTEM_DATABASES, self.database})
            return self._rows_reply([(name,) for name in names], kind="meta")
        if len(rest) >= 3 and rest[0] in ("COLUMNS", "FIELDS") and rest[1] in ("FROM", "IN"):
            name = tokens[len(tokens) - len(rest) + 2].identifier
            if name is not None and len(rest) in (3, 5):
                return self._describe(name)
        if len(rest) == 3 and rest[:2] == ["CREATE", "TABLE"] and tokens[-1].identifier is not None:
            name = tokens[-1].identifier
            columns = self._columns_of(name)
            body = ",\n".join(f"  {quote_identifier(column)} text" for column in columns)
            create = (
                f"CREATE TABLE {quote_identifier(name)} (\n{body}\n) "
                f"ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE={COLLATION}"
            )
            return self._rows_reply([(name, create)], kind="meta")
        if len(rest) == 3 and rest[0] in ("INDEX", "INDEXES", "KEYS") and rest[1] in ("FROM", "IN"):
            self._columns_of(tokens[-1].identifier or "")
            return self._rows_reply([], kind="meta")
        raise syntax_error(original, tokens[1].start if len(tokens) > 1 else len(original))

    def _describe(self, name: str) -> ExecResult:
        rows = [(column, "text", "YES", "", None, "") for column in self._columns_of(name)]
        return self._rows_reply(rows, kind="meta")

    def _table_names(self) -> list[str]:
        cursor = self._connection.execute(
            "SELECT name FROM main.sqlite_master WHERE type IN ('table', 'view') "
            "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
        )
        return sorted(row[0] for row in cursor.fetchall())

    def _columns_of(self, name: str) -> list[str]:
        if name not in self._table_names():
            raise unknown_table(self.database, name)
        self._deadline = time.monotonic() + self.timeout_s
        try:
            cursor = self._connection.execute(f"SELECT * FROM {quote_identifier(name)} LIMIT 0")
            return [column[0] for column in cursor.description or ()]
        except sqlite3.Error as error:
            raise from_sqlite(error, statement=name, database=self.database) from None
        finally:
            self._deadline = math.inf

    # -- state for scoring ----------------------------------------------------------------

    def table_rows(self) -> list[tuple[Any, ...]] | None:
        """The item's table in its original columns, or None when the agent dropped or broke it."""
        columns = ", ".join(quote_identifier(column) for column in self.columns)
        self._deadline = time.monotonic() + max(self.timeout_s, 5.0)
        try:
            cursor = self._connection.execute(f"SELECT {columns} FROM {quote_identifier(self.table_name)}")
            return [tuple(row) for row in cursor.fetchall()]
        except sqlite3.Error:  # handled: a table that cannot be read (dropped by the agent) has no rows to grade
            return None
        finally:
            self._deadline = math.inf

    def table_exists(self) -> bool:
        return self.table_name in self._table_names()

    def close(self) -> None:
        self._connection.close()


def builds_table(columns: Sequence[str]) -> bool:
    """Whether MySQL's ``CREATE TABLE`` accepts these column names (none empty, no duplicates
    ignoring case). The benchmark builds a table it cannot create as no table at all, and a row
    list with a wrong-width row as an empty table (the one multi-row INSERT fails whole).

    Example:
        >>> builds_table(["a", "b"]), builds_table(["a", "A"]), builds_table([""])
        (True, False, False)
    """
    folded = [name.casefold() for name in columns]
    return bool(columns) and all(name.strip() for name in columns) and len(set(folded)) == len(folded)


def _cell(value: Any) -> Any:
    """A cell as the benchmark stores it in a TEXT column (numbers become their text)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return str(int(value))
    return str(value)


def _authorize(action: int, arg1: str | None, arg2: str | None, database: str | None, source: str | None) -> int:
    if action in _WRITES and arg1 in information_schema.NAMES:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_ALTER_TABLE and arg2 in information_schema.NAMES:
        return sqlite3.SQLITE_DENY
    if action in _DENIED_ACTIONS:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in _DENIED_FUNCTIONS:
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


__all__ = ["ExecResult", "MySqlError", "SqlSandbox", "access_denied", "fold", "format_reply", "mysql_number"]
