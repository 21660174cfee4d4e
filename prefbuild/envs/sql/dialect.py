"""MySQL statements rewritten for SQLite, token by token.

The benchmark runs the agent's SQL on MySQL 8; prefbuild runs it on SQLite. Agents write
MySQL, so the differences that change results or error behaviour are translated here
(spec section 10.2):

* only the first of several ``;``-separated statements runs (spec section 4);
* ``'...'`` and ``"..."`` are both string literals, with MySQL's backslash escapes;
* unquoted identifiers may start with a digit (``1952_British_Grand_Prix_0``);
* ``#`` and ``-- `` comments, ``||``/``&&`` as OR/AND, ``<=>`` as IS,
  ``GROUP_CONCAT(x SEPARATOR ', ')``, ``CAST(x AS SIGNED)``, ``INSERT IGNORE``, ``LEFT(s, n)``;
* a text column compared with a number compares numerically (``Grid = 27``,
  ``Year < 2008``, ``BETWEEN``, ``IN (1, 2)``) through ``mysql_number()``;
* ``db.table`` where ``db`` is the per-item database, which has the table's name;
* SQLite-only syntax MySQL rejects (``[col]``, a string where a table name belongs)
  is a syntax error, as on the real server.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from prefbuild.envs.sql.mysql_errors import empty_query, syntax_error

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

    @property
    def upper(self) -> str:
        return self.text.upper() if self.kind == "word" else self.text

    @property
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
            raise syntax_error(sql, start)
        if kind == "string":
            tokens.append(Token(kind, text, start, decode_string(text)))
        elif kind == "quoted":
            tokens.append(Token(kind, text, start, text[1:-1].replace("``", "`")))
        else:
            tokens.append(Token(kind, text, start))
    return tokens


def first_statement(sql: str) -> tuple[str, list[Token]]:
    """The text and tokens of the first ``;``-separated statement (the only one that runs)."""
    tokens = tokenize(sql)
    for position, token in enumerate(tokens):
        if token.kind == "op" and token.text == ";":
            return sql[: token.start], tokens[:position]
    return sql, tokens


def translate(sql: str, *, database: str, keywords: frozenset[str] | None = None) -> Statement:
    """Parse the first statement of ``sql`` and rewrite it for SQLite; raises ``MySqlError``.

    ``keywords``: the statement kinds (first word) the caller runs; any other is a syntax error
    at the first word, which is what MySQL says to ``PRAGMA``, ``ATTACH`` or ``VACUUM``.
    """
    if "\0" in sql:
        raise syntax_error(sql, sql.index("\0"))
    original, tokens = first_statement(sql)
    significant = [token for token in tokens if token.significant]
    if not significant:
        raise empty_query()
    if keywords is not None and significant[0].upper not in keywords:
        raise syntax_error(original, significant[0].start)
    _reject_non_mysql(original, significant)
    replacements = _rewrites(significant, database)
    parts: list[str] = []
    for token in tokens:
        if token.kind == "comment":
            parts.append(" ")
        elif token.kind == "ws":
            parts.append(token.text)
        else:
            parts.append(replacements.get(id(token), _plain(token)))
    first = significant[0]
    return Statement(original=original, keyword=first.upper, tokens=tuple(significant), sqlite="".join(parts))


def _plain(token: Token) -> str:
    if token.kind == "string":
        return sqlite_string(token.value)
    if token.kind == "word" and token.text[0].isdigit():
        return quote_identifier(token.text)
    if token.kind == "op":
        return {"||": "OR", "&&": "AND", "<=>": "IS"}.get(token.text, token.text)
    return token.text


def _reject_non_mysql(original: str, tokens: list[Token]) -> None:
    """Raise the syntax error MySQL gives for SQLite/T-SQL-only syntax that SQLite would accept."""
    for position, token in enumerate(tokens):
        if token.kind == "op" and token.text in ("[", "]", "{", "}"):
            raise syntax_error(original, token.start)
        previous = tokens[position - 1] if position else None
        if token.kind == "string" and previous is not None and previous.upper in _TABLE_CONTEXT:
            raise syntax_error(original, token.start)


def _is_column_word(tokens: list[Token], index: int) -> bool:
    token = tokens[index]
    if token.kind == "quoted":
        return True
    if token.kind != "word" or token.upper in RESERVED:
        return False
    following = tokens[index + 1] if index + 1 < len(tokens) else None
    return not (following is not None and following.text == "(")


def _column_ref_before(tokens: list[Token], end: int) -> int | None:
    """Start index of a (qualified) column reference ending at ``end``, else None."""
    if end < 0 or not _is_column_word(tokens, end):
        return None
    start = end
    while start >= 2 and tokens[start - 1].text == "." and tokens[start - 2].kind in ("word", "quoted"):
        start -= 2
    if start >= 1 and tokens[start - 1].text == ".":
        return None
    return start


def _column_ref_after(tokens: list[Token], start: int) -> int | None:
    """End index of a (qualified) column reference starting at ``start``, else None."""
    if start >= len(tokens) or tokens[start].kind not in ("word", "quoted"):
        return None
    end = start
    while end + 2 < len(tokens) and tokens[end + 1].text == "." and tokens[end + 2].kind in ("word", "quoted"):
        end += 2
    if not _is_column_word(tokens, end):
        return None
    if tokens[start].kind == "word" and tokens[start].upper in RESERVED:
        return None
    return end


def _number_end(tokens: list[Token], start: int) -> int | None:
    """End index of a numeric literal (optionally signed) starting at ``start``, else None."""
    if start < len(tokens) and tokens[start].text in ("+", "-"):
        start += 1
    if start < len(tokens) and tokens[start].kind == "number":
        return start
    return None


def _numeric_list_end(tokens: list[Token], start: int) -> int | None:
    """End index (the ')') of ``(n1, n2, ...)`` starting at ``start``, else None."""
    if start >= len(tokens) or tokens[start].text != "(":
        return None
    index = start + 1
    while True:
        end = _number_end(tokens, index)
        if end is None:
            return None
        index = end + 1
        if index < len(tokens) and tokens[index].text == ",":
            index += 1
            continue
        return index if index < len(tokens) and tokens[index].text == ")" else None


def numeric_comparisons(tokens: list[Token]) -> list[tuple[int, int]]:
    """Spans (first, last token index) of column references compared with number literals."""
    spans: list[tuple[int, int]] = []
    for index, token in enumerate(tokens):
        upper = token.upper
        if token.kind == "op" and upper in COMPARISONS:
            left = _column_ref_before(tokens, index - 1)
            if left is not None and _number_end(tokens, index + 1) is not None:
                spans.append((left, index - 1))
            right_end = _column_ref_after(tokens, index + 1)
            if right_end is not None and index >= 1 and tokens[index - 1].kind == "number":
                before = tokens[index - 2].text if index >= 2 else ""
                if before not in ("*", "/", "%", "+", "-", "."):
                    spans.append((index + 1, right_end))
        elif token.kind == "word" and upper in ("BETWEEN", "IN"):
            column_end = index - 1
            if column_end >= 0 and tokens[column_end].upper == "NOT":
                column_end -= 1
            left = _column_ref_before(tokens, column_end)
            if left is None:
                continue
            if upper == "IN":
                if _numeric_list_end(tokens, index + 1) is not None:
                    spans.append((left, column_end))
                continue
            low = _number_end(tokens, index + 1)
            has_and = low is not None and low + 1 < len(tokens) and tokens[low + 1].upper == "AND"
            if has_and and low is not None and _number_end(tokens, low + 2) is not None:
                spans.append((left, column_end))
    return spans


def _rewrites(tokens: list[Token], database: str) -> dict[int, str]:
    """Replacement SQLite text per token (keyed by ``id(token)``)."""
    out: dict[int, str] = {}
    for index, token in enumerate(tokens):
        upper = token.upper
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        previous = tokens[index - 1] if index else None
        if token.kind == "word" and upper == "SEPARATOR":
            out[id(token)] = ","
        elif token.kind == "word" and upper in ("LEFT", "RIGHT") and following is not None and following.text == "(":
            out[id(token)] = f"mysql_{upper.lower()}"
        elif (
            token.kind == "word" and upper in ("SIGNED", "UNSIGNED") and previous is not None and previous.upper == "AS"
        ):
            out[id(token)] = "INTEGER"
        elif token.kind == "word" and upper == "IGNORE" and index == 1 and tokens[0].upper == "INSERT":
            out[id(token)] = "OR IGNORE"
        elif token.kind == "word" and upper == "TRUNCATE" and index == 0:
            pass  # handled by the engine
        if (
            token.identifier == database
            and following is not None
            and following.text == "."
            and index + 2 < len(tokens)
            and tokens[index + 2].kind in ("word", "quoted")
            and (previous is None or previous.text != ".")
        ):
            qualified_further = index + 3 < len(tokens) and tokens[index + 3].text == "."
            if qualified_further or (previous is not None and previous.upper in _TABLE_CONTEXT):
                out[id(token)] = "main"
    for first, last in numeric_comparisons(tokens):
        start, end = tokens[first], tokens[last]
        out[id(start)] = "mysql_number(" + out.get(id(start), _plain(start))
        if first == last:
            out[id(start)] += ")"
        else:
            out[id(end)] = out.get(id(end), _plain(end)) + ")"
    return out
