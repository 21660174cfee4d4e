"""MySQL statements rewritten for SQLite, token by token.

The benchmark runs the agent's SQL on MySQL 8; prefbuild runs it on SQLite. Agents write
MySQL, so the differences that change results or error behaviour are translated here
(spec section 10.2):

* several ``;``-separated statements are flagged (``Statement.multiple``): the benchmark's
  client answers "Commands out of sync" and nothing runs;
* ``'...'`` and ``"..."`` are both string literals, with MySQL's backslash escapes, compared
  under the connection collation;
* unquoted identifiers may start with a digit (``1952_British_Grand_Prix_0``);
* ``#`` and ``-- `` comments, ``||``/``&&`` as OR/AND, ``<=>`` as IS, ``INSERT IGNORE``,
  ``LEFT(s, n)``, ``FORMAT``, ``CHAR(n)``, ``UPDATE t alias``, ``FOR UPDATE``;
* the expression rewrites of ``rewrites``: arithmetic types, comparisons with numbers,
  numbers stored into text, casts, INTERVAL, TRIM, GROUP_CONCAT, INSERT ... SET, HAVING
  without GROUP BY (an assignment in SET is never taken for a comparison);
* ``db.table`` where ``db`` is the per-item database, which has the table's name, and
  ``information_schema.COLUMNS``/``TABLES``;
* SQLite-only syntax MySQL rejects (``[col]``, ``==``, ``LIMIT -1``, ``IN ()``, a string where a
  table name belongs, ``printf()``) and MySQL 8 reserved words used as names (``RANK``,
  ``MATCH``, ``RELEASE``...) are syntax errors at the place MySQL reports them.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from prefbuild.envs.sql import information_schema, rewrites
from prefbuild.envs.sql.mysql_errors import MySqlError, empty_query, syntax_error
from prefbuild.envs.sql.mysql_functions import COLLATION

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<comment>(?:--(?=\s|$)|\#)[^\n]*|/\*.*?\*/)
  | (?P<opencomment>/\*)
  | (?P<string>'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*")
  | (?P<quoted>`(?:[^`]|``)*`)
  | (?P<number>(?:0x[0-9A-Fa-f]+|0b[01]+|(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?)(?![\w$]))
  | (?P<word>[\w$]+)
  | (?P<op><=>|<=|>=|<>|!=|\|\||&&|:=|<<|>>|->>|->|.)
    """,
    re.VERBOSE | re.DOTALL,
)

_ESCAPES = {
    "0": "\0",
    "'": "'",
    '"': '"',
    "b": "\b",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "Z": "\x1a",
    "\\": "\\",
    "%": "\\%",  # MySQL keeps the backslash before % and _ so LIKE can see it
    "_": "\\_",
}

COMPARISONS = frozenset({"=", "<>", "!=", "<", ">", "<=", ">=", "<=>"})
# Words that are never a column reference in front of a comparison.
RESERVED = frozenset(
    [
        "ALL",
        "AND",
        "ANY",
        "AS",
        "ASC",
        "BETWEEN",
        "BINARY",
        "BY",
        "CASE",
        "DESC",
        "DISTINCT",
        "DIV",
        "ELSE",
        "END",
        "EXISTS",
        "FALSE",
        "FROM",
        "GROUP",
        "HAVING",
        "IN",
        "INTERVAL",
        "IS",
        "JOIN",
        "LIKE",
        "LIMIT",
        "MOD",
        "NOT",
        "NULL",
        "OFFSET",
        "ON",
        "OR",
        "ORDER",
        "REGEXP",
        "SELECT",
        "SET",
        "SOME",
        "THEN",
        "TRUE",
        "UNION",
        "UNKNOWN",
        "VALUES",
        "WHEN",
        "WHERE",
        "XOR",
        "INTO",
        "UPDATE",
        "DELETE",
        "INSERT",
    ]
)
# MySQL 8 reserved words (reference manual 9.3, "Keywords and Reserved Words") that SQLite takes
# as names. A name that is one of them must be back-quoted on MySQL; unquoted it is a syntax error.
RESERVED_FUNCTION_WORDS = frozenset(
    {
        "RANK", "DENSE_RANK", "ROW_NUMBER", "LEAD", "LAG", "NTILE", "CUME_DIST", "PERCENT_RANK",
        "FIRST_VALUE", "LAST_VALUE", "NTH_VALUE", "MATCH", "GROUPING", "JSON_TABLE", "DATABASE",
    }
)  # fmt: skip
RESERVED_NAME_WORDS = frozenset(
    {
        "RELEASE", "CHANGE", "CONDITION", "RETURN", "USAGE", "SYSTEM", "EMPTY", "LATERAL", "CUBE",
        "READ", "WRITE", "LOOP", "LEAVE", "TRIGGER", "SIGNAL", "OPTION", "LINES", "SCHEMA",
        "STARTING", "SPATIAL", "ACCESSIBLE", "CURSOR", "DECLARE", "ELSEIF", "EXIT", "FETCH", "INOUT",
        "ITERATE", "MAXVALUE", "OUTFILE", "INFILE", "PURGE", "REQUIRE", "RESIGNAL", "SENSITIVE",
        "SPECIFIC", "SQLEXCEPTION", "SQLSTATE", "SQLWARNING", "UNDO", "WHILE", "ZEROFILL", "VARYING",
        "TERMINATED", "OPTIMIZE", "ANALYZE", "GENERATED", "STORED", "VIRTUAL", "MASTER_BIND", "KILL", "LOAD",
        "LOCK", "UNLOCK", "OUT", "RENAME", "REVOKE", "GRANT", "CALL", "CASCADE", "CONTINUE", "DELAYED",
        "PROCEDURE", "SCHEMAS", "DATABASES", "MODIFIES", "READS", "SQL", "SSL", "LINEAR",
    }
)  # fmt: skip
# SQLite built-ins MySQL lacks that could cost seconds in one call (printf width bombs); the
# engine needs them internally (ALTER TABLE), so they are refused here by name.
_SQLITE_ONLY_FUNCTIONS = frozenset({"printf", "glob", "sqlite_version", "load_extension", "zeroblob"})
_NAME_CHECKED_STATEMENTS = frozenset({"SELECT", "WITH", "INSERT", "REPLACE", "UPDATE", "DELETE", "("})
# Keywords after which a table name, never a string literal, must follow.
_TABLE_CONTEXT = frozenset({"FROM", "JOIN", "INTO", "UPDATE", "TABLE", "DESCRIBE", "DESC"})


@dataclass(frozen=True)
class Token:
    kind: str  # ws, comment, string, quoted, number, word, op
    text: str
    start: int
    value: str = ""  # decoded text of strings and quoted identifiers, upper-case text of words

    @property
    def significant(self) -> bool:
        return self.kind not in ("ws", "comment")

    @functools.cached_property
    def upper(self) -> str:
        return self.text.upper() if self.kind == "word" else self.text

    @functools.cached_property
    def identifier(self) -> str | None:
        """The identifier this token names (a bare word or a back-quoted name), else None."""
        if self.kind == "quoted":
            return self.value
        if self.kind == "word":
            return self.text
        return None


@dataclass(frozen=True)
class Statement:
    """The first statement of an agent's SQL, in the original and in the SQLite form."""

    original: str  # the first statement as written, without the trailing ';'
    keyword: str  # upper-case first word ("SELECT", "SHOW"...) or the first symbol
    tokens: tuple[Token, ...]  # significant tokens of the original statement
    sqlite: str  # the statement to run on SQLite
    multiple: bool = False  # more statements followed the first (MySQL: "Commands out of sync")
    origins: tuple[tuple[int, int], ...] = ()  # (offset in ``sqlite``, offset in ``original``) per token


def decode_string(text: str) -> str:
    """The value of a MySQL string literal (quotes included in ``text``), escapes applied."""
    quote, body = text[0], text[1:-1]
    out: list[str] = []
    index = 0
    while index < len(body):
        char = body[index]
        if char == "\\" and index + 1 < len(body):
            out.append(_ESCAPES.get(body[index + 1], body[index + 1]))
            index += 2
        elif char == quote and index + 1 < len(body) and body[index + 1] == quote:
            out.append(quote)
            index += 2
        else:
            out.append(char)
            index += 1
    return "".join(out)


def sqlite_string(value: str) -> str:
    """An SQLite literal for ``value`` (NUL characters cannot appear in SQL text, so hex them)."""
    if "\0" in value:
        return f"CAST(X'{value.encode('utf-8').hex()}' AS TEXT)"
    return "'" + value.replace("'", "''") + "'"


def quote_identifier(name: str) -> str:
    """Back-quote ``name`` the MySQL way (SQLite reads back-quotes the same way)."""
    return "`" + name.replace("`", "``") + "`"


def tokenize(sql: str) -> list[Token]:
    """Every token of ``sql``; unterminated quotes and comments are MySQL syntax errors."""
    tokens: list[Token] = []
    for match in _TOKEN.finditer(sql):
        kind = match.lastgroup or "op"
        text = match.group()
        start = match.start()
        if kind == "opencomment" or (kind == "op" and text in ("'", '"', "`")):
            raise syntax_error(sql, _unterminated_error_at(tokens, start))
        if kind == "string":
            tokens.append(Token(kind, text, start, decode_string(text)))
        elif kind == "quoted":
            tokens.append(Token(kind, text, start, text[1:-1].replace("``", "`")))
        else:
            tokens.append(Token(kind, text, start))
    return tokens


def _unterminated_error_at(tokens: list[Token], start: int) -> int:
    """Where MySQL's parser stops before an unterminated quote: ``= 'It's'`` fails at ``s``, the
    word left after the string ``'It'`` closed early; otherwise at the quote itself."""
    significant = [token for token in tokens if token.significant]
    if len(significant) >= 2 and significant[-1].kind == "word" and significant[-2].kind == "string":
        before = significant[-3].upper if len(significant) >= 3 else ""
        if before not in ("SELECT", ",", "AS") and significant[-1].upper not in RESERVED:
            return significant[-1].start
    return start


def first_statement(sql: str) -> tuple[str, list[Token], bool]:
    """The text and tokens of the first ``;``-separated statement, and whether another one follows."""
    tokens = tokenize(sql)
    for position, token in enumerate(tokens):
        if token.kind == "op" and token.text == ";":
            more = any(later.kind != "ws" and later.text != ";" for later in tokens[position + 1 :])
            return sql[: token.start], tokens[:position], more
    return sql, tokens, False


def translate(sql: str, *, database: str, keywords: frozenset[str] | None = None) -> Statement:
    """Parse the first statement of ``sql`` and rewrite it for SQLite; raises ``MySqlError``.

    ``keywords``: the statement kinds (first word) the caller runs; any other is a syntax error
    at the first word, which is what MySQL says to ``PRAGMA``, ``ATTACH`` or ``VACUUM``.
    ``Statement.multiple`` tells the caller that more statements followed the first.
    """
    if "\0" in sql:
        raise syntax_error(sql, sql.index("\0"))
    original, tokens, multiple = first_statement(sql)
    significant = [token for token in tokens if token.significant]
    if not significant:
        raise empty_query()
    if keywords is not None and significant[0].upper not in keywords:
        raise syntax_error(original, significant[0].start)
    _reject_non_mysql(original, significant)
    for index, token in enumerate(significant[:-1]):
        name = (token.identifier or "").lower()
        if name in _SQLITE_ONLY_FUNCTIONS and significant[index + 1].text == "(" and token.kind != "string":
            raise MySqlError(1305, "42000", f"FUNCTION {database}.{token.identifier} does not exist")
    rewrite = _rewrites(significant, database)
    index_of = {id(token): index for index, token in enumerate(significant)}
    parts: list[str] = []
    origins: list[tuple[int, int]] = []  # (offset in the SQLite text, offset in the original)
    length = 0
    for token in tokens:
        if token.kind == "comment":
            piece = " "
        elif token.kind == "ws":
            piece = token.text
        else:
            index = index_of[id(token)]
            piece = (
                rewrite.before.get(index, "") + rewrite.instead.get(index, _plain(token)) + rewrite.after.get(index, "")
            )
            origins.append((length, token.start))
        parts.append(piece)
        length += len(piece)
    first = significant[0]
    return Statement(
        original=original,
        keyword=first.upper,
        tokens=tuple(significant),
        sqlite="".join(parts),
        multiple=multiple,
        origins=tuple(origins),
    )


def original_offset(statement: Statement, fragment: str) -> int:
    """Where SQLite's ``near "fragment"`` lies in the statement as the agent wrote it.

    The fragment is looked up in the SQLite text and mapped back through the token it was
    written for; a fragment found nowhere means the end of the statement (MySQL's ``near ''``).
    """
    if not fragment:
        return len(statement.original)
    position = statement.original.find(fragment)
    if position >= 0:
        return position
    at = statement.sqlite.find(fragment)
    if at < 0:
        at = statement.sqlite.lower().find(fragment.lower())
    if at < 0:
        return len(statement.original)
    best = len(statement.original)
    for sqlite_offset, original in statement.origins:
        if sqlite_offset > at:
            break
        best = original
    return best


def _plain(token: Token) -> str:
    if token.kind == "string":
        return sqlite_string(token.value)
    if token.kind == "word" and token.text[0].isdigit():
        return quote_identifier(token.text)
    if token.kind == "op":
        return {"||": "OR", "&&": "AND", "<=>": "IS"}.get(token.text, token.text)
    return token.text


def _reject_non_mysql(original: str, tokens: list[Token]) -> None:
    """Raise the syntax error MySQL gives for SQLite/T-SQL-only syntax that SQLite would accept,
    and for MySQL 8 reserved words used unquoted as names."""
    calls: list[str] = []  # the function (or "") each open bracket belongs to
    for position, token in enumerate(tokens):
        if token.kind == "op" and token.text in ("[", "]", "{", "}"):
            raise syntax_error(original, token.start)
        previous = tokens[position - 1] if position else None
        if token.text == "(":
            calls.append(previous.upper if previous is not None and previous.kind == "word" else "")
        elif token.text == ")" and calls:
            calls.pop()
        in_from_function = bool(calls) and calls[-1] in ("TRIM", "SUBSTRING", "SUBSTR", "EXTRACT", "POSITION")
        if (
            token.kind == "string"
            and previous is not None
            and previous.upper in _TABLE_CONTEXT
            and not in_from_function
        ):
            raise syntax_error(original, token.start)
        if token.text == ")" and previous is not None and previous.text == "(" and tokens[position - 2].upper == "IN":
            raise syntax_error(original, token.start)  # IN () is no MySQL syntax
        if (
            token.kind == "op"
            and token.text in ("-", "+", "/", "*", "%")
            and position >= 2
            and tokens[position - 2].upper in ("FROM", "JOIN", "INTO", "UPDATE")
            and previous is not None
            and previous.kind == "word"
        ):
            raise syntax_error(original, token.start)  # an unquoted table name with a dash
        if token.upper == "FOR" and token.kind == "word" and tokens[0].upper in _NAME_CHECKED_STATEMENTS:
            following = tokens[position + 1] if position + 1 < len(tokens) else None
            if following is None or following.upper not in ("UPDATE", "SHARE"):
                raise syntax_error(original, following.start if following is not None else len(original))
        if token.text == "=" and previous is not None and previous.text == "=":
            raise syntax_error(original, token.start)  # SQLite's == is no MySQL operator
        if token.text == "-" and previous is not None and previous.upper in ("LIMIT", "OFFSET"):
            raise syntax_error(original, token.start)
    if tokens[0].upper == "UPDATE" and len(tokens) >= 4 and tokens[1].identifier is not None:
        alias, after = tokens[2], tokens[3]
        if (
            alias.identifier is not None
            and alias.upper not in ("SET", "AS", "LOW_PRIORITY", "IGNORE")
            and (after.upper != "SET" and after.text not in (",", "."))
        ):
            raise syntax_error(original, after.start)  # UPDATE t alias <no SET>
    if tokens[0].upper in _NAME_CHECKED_STATEMENTS:
        for position, token in enumerate(tokens):
            if _reserved_name(tokens, position):
                raise syntax_error(original, token.start)
            if (
                token.upper in ("ORDER", "GROUP")
                and token.kind == "word"
                and 0 < position < len(tokens) - 1
                and tokens[position + 1].upper != "BY"
                and _ends_clause_operand(tokens[position - 1])
            ):
                raise syntax_error(original, tokens[position + 1].start)  # the clause keyword lacks BY


def _reserved_name(tokens: list[Token], position: int) -> bool:
    """Whether ``tokens[position]`` is a MySQL 8 reserved word standing where a name belongs."""
    token = tokens[position]
    if token.kind != "word":
        return False
    word = token.upper
    previous = tokens[position - 1] if position else None
    following = tokens[position + 1] if position + 1 < len(tokens) else None
    if previous is not None and previous.text == ".":
        return False  # MySQL accepts any word after a qualifier: t.rank
    if word in RESERVED_FUNCTION_WORDS:
        return following is None or following.text != "("
    if word in RESERVED_NAME_WORDS:
        return True
    if previous is not None and previous.upper == "AS" and word in RESERVED - {"UNKNOWN", "SOME"}:
        return True  # an alias that is a reserved word
    if word in ("ORDER", "GROUP"):
        return (following is None or following.upper != "BY") and not (
            previous is not None and _ends_clause_operand(previous)
        )
    if word == "KEY":
        return previous is None or previous.upper not in ("PRIMARY", "DUPLICATE", "UNIQUE", "FOREIGN")
    if word in ("ROWS", "RANGE", "GROUPS"):
        return following is None or (
            following.upper not in ("BETWEEN", "UNBOUNDED", "CURRENT") and following.kind != "number"
        )
    if word == "ROW":
        return (previous is None or previous.upper != "CURRENT") and (following is None or following.text != "(")
    return False


def _inside(tokens: list[Token], index: int, function: str) -> bool:
    """Whether ``tokens[index]`` lies directly inside a ``function( ... )`` call."""
    depth = 0
    for position in range(index - 1, -1, -1):
        if tokens[position].text == ")":
            depth += 1
        elif tokens[position].text == "(":
            if depth == 0:
                return position >= 1 and tokens[position - 1].upper == function
            depth -= 1
    return False


def _update_aliases(tokens: list[Token], out: rewrites.Rewrite) -> None:
    """``UPDATE t x SET x.a = 1`` -> ``UPDATE t AS x SET a = 1`` (SQLite needs AS and bare targets);
    a trailing ``FOR UPDATE`` / ``FOR SHARE`` lock clause is dropped (one session, nothing to lock)."""
    if len(tokens) >= 2 and tokens[-2].upper == "FOR" and tokens[-1].upper in ("UPDATE", "SHARE"):
        out.instead[len(tokens) - 2] = out.instead[len(tokens) - 1] = ""
    if tokens[0].upper != "UPDATE":
        return
    if (
        len(tokens) >= 4
        and tokens[2].identifier is not None
        and tokens[2].upper not in ("SET", "AS")
        and (tokens[3].upper == "SET")
    ):
        out.before[2] = "AS "
    for index in rewrites.assignment_equals(tokens):
        if index >= 3 and tokens[index - 2].text == ".":
            out.instead[index - 3] = out.instead[index - 2] = ""


def _ends_clause_operand(token: Token) -> bool:
    """Whether a clause keyword may follow ``token`` (a table name, a value, a closing bracket)."""
    return (
        token.kind in ("quoted", "number", "string")
        or token.text == ")"
        or (token.kind == "word" and token.upper not in RESERVED)
    )


def _rewrites(tokens: list[Token], database: str) -> rewrites.Rewrite:
    """What to write for each significant token of the statement."""
    out = rewrites.Rewrite()
    collate_literals = tokens[0].upper in _NAME_CHECKED_STATEMENTS
    for index, token in enumerate(tokens):
        upper = token.upper
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        previous = tokens[index - 1] if index else None
        if token.kind == "word" and upper in ("LEFT", "RIGHT") and following is not None and following.text == "(":
            out.instead[index] = f"mysql_{upper.lower()}"
        elif token.kind == "word" and upper == "MOD" and following is not None and following.text == "(":
            out.instead[index] = "mysql_mod"
        elif (token.identifier or "").upper() == "FORMAT" and following is not None and following.text == "(":
            out.instead[index] = "mysql_format"
        elif upper == "CHAR" and token.kind == "word" and following is not None and following.text == "(":
            if previous is None or not (
                previous.upper == "AS" or (previous.text == "," and _inside(tokens, index, "CONVERT"))
            ):
                out.instead[index] = "mysql_char_codes"
        elif token.kind == "word" and upper == "RLIKE":
            out.instead[index] = "REGEXP"
        elif token.kind == "word" and upper == "IGNORE" and index == 1 and tokens[0].upper == "INSERT":
            out.instead[index] = "OR IGNORE"
        elif token.kind == "number" and "." in token.text and "e" not in token.text.lower() and token.text[:2] != "0x":
            sign = ""
            if (
                previous is not None
                and previous.text == "-"
                and not (index >= 2 and rewrites.ends_operand(tokens[index - 2], RESERVED))
            ):
                sign, out.instead[index - 1] = "-", ""
            out.instead[index] = f"mysql_dec('{sign}{token.text}')"
        if token.kind == "string" and collate_literals and (previous is None or previous.upper not in ("AS", "ESCAPE")):
            out.after[index] = f" COLLATE {COLLATION}"  # literals compare under the connection collation
        if (
            token.identifier is not None
            and token.identifier.lower() == "information_schema"
            and following is not None
            and following.text == "."
            and index + 2 < len(tokens)
            and information_schema.table_name(tokens[index + 2].identifier or "") is not None
        ):
            out.instead[index], out.instead[index + 1] = "", ""
            out.instead[index + 2] = quote_identifier(
                information_schema.table_name(tokens[index + 2].identifier or "") or ""
            )
        elif (
            token.identifier == database
            and following is not None
            and following.text == "."
            and index + 2 < len(tokens)
            and tokens[index + 2].kind in ("word", "quoted")
            and (previous is None or previous.text != ".")
        ):
            qualified_further = index + 3 < len(tokens) and tokens[index + 3].text == "."
            if qualified_further or (previous is not None and previous.upper in _TABLE_CONTEXT):
                out.instead[index] = "main"
    _update_aliases(tokens, out)
    rewrites.intervals(tokens, out, RESERVED)
    rewrites.casts(tokens, out)
    rewrites.arithmetic(tokens, out, RESERVED)
    rewrites.number_comparisons(tokens, out, RESERVED, COMPARISONS)
    rewrites.insert_set(tokens, out)
    rewrites.having_without_group(tokens, out)
    rewrites.stored_numbers(tokens, out, sqlite_string)  # outermost: wraps whole values

    def render(first: int, last: int) -> str:
        return " ".join(
            out.before.get(i, "") + out.instead.get(i, _plain(tokens[i])) + out.after.get(i, "")
            for i in range(first, last + 1)
        )

    rewrites.trims(tokens, out, render)
    rewrites.group_concat(tokens, out, render)
    return out
