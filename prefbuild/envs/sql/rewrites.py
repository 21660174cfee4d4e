"""Token-level rewrites that give SQLite MySQL 8's semantics, on the significant tokens of one statement.

A rewrite never re-parses: it finds operand spans (a primary expression: literal, column
reference, function call, parenthesised expression, ``CASE ... END``, with unary signs) and
wraps or renames tokens through a ``Rewrite`` (text before, instead of and after each token).
The rules, each from the MySQL 8 reference manual:

* ``/`` gives DECIMAL (scale + 4) for exact operands, ``DIV`` truncates, ``MOD``/``%`` keep the
  dividend's sign (12.6.2); ``RLIKE`` is ``REGEXP`` (12.8.2);
* a comparison with a number converts the other side to a number (12.3, "Type Conversion in
  Expression Evaluation"), but an assignment in ``SET`` / ``ON DUPLICATE KEY UPDATE`` is not a
  comparison;
* a number literal stored into a text column keeps the literal's text (``1.50`` -> ``'1.50'``);
* ``CAST``/``CONVERT`` to SIGNED, DECIMAL(p,s), CHAR, DOUBLE, DATE (12.11);
* ``GROUP_CONCAT(... ORDER BY ... SEPARATOR ...)`` (12.19.1);
* ``INSERT ... SET``, and ``HAVING`` on a query without GROUP BY or aggregates (a row filter).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from prefbuild.envs.sql.mysql_functions import number_literal_text

_MULTIPLICATIVE = frozenset({"*", "/", "%", "DIV", "MOD"})
_OPERAND_WORDS = frozenset({"NULL", "TRUE", "FALSE", "END"})
_CLAUSE_END = frozenset({"WHERE", "ORDER", "LIMIT", "FROM", "ON", "RETURNING"})
_CAST_INT = frozenset({"SIGNED", "UNSIGNED", "INTEGER", "INT"})
_CAST_DECIMAL = frozenset({"DECIMAL", "DEC", "NUMERIC", "FIXED"})
_CAST_CHAR = frozenset({"CHAR", "NCHAR", "CHARACTER", "BINARY"})
_CAST_DOUBLE = frozenset({"DOUBLE", "FLOAT", "REAL"})
_CAST_DATE = frozenset({"DATE"})


class TokenLike(Protocol):
    kind: str
    text: str
    start: int

    @property
    def upper(self) -> str: ...


@dataclass
class Rewrite:
    """What to write before, instead of and after each significant token (keyed by index)."""

    before: dict[int, str] = field(default_factory=dict)
    instead: dict[int, str] = field(default_factory=dict)
    after: dict[int, str] = field(default_factory=dict)

    def wrap(self, first: int, last: int, function: str, *, inner: bool = False) -> None:
        """Wrap tokens ``first..last`` in ``function( ... )``; ``inner`` nests inside earlier wraps."""
        opening = f"{function}("
        self.before[first] = self.before.get(first, "") + opening if inner else opening + self.before.get(first, "")
        self.after[last] = self.after.get(last, "") + ")"

    def blank(self, first: int, last: int) -> None:
        """Write nothing for tokens ``first..last`` (wraps around the whole span stay)."""
        for index in range(first, last + 1):
            self.instead[index] = ""
            if first < index < last:
                self.before.pop(index, None)
                self.after.pop(index, None)


def _is_word(token: TokenLike, *words: str) -> bool:
    return token.kind == "word" and token.upper in words


def _partner(tokens: Sequence[TokenLike], start: int, step: int, same: str, other: str) -> int | None:
    """Index of the bracket-like token (``)``/``(``/``END``/``CASE``) pairing with ``tokens[start]``,
    scanning by ``step``; ``same`` opens a nesting level in that direction, ``other`` closes one."""

    def key(token: TokenLike) -> str:
        return token.upper if token.kind == "word" else token.text

    depth = 0
    index = start
    while 0 <= index < len(tokens):
        if key(tokens[index]) == same:
            depth += 1
        elif key(tokens[index]) == other:
            depth -= 1
            if depth == 0:
                return index
        index += step
    return None


def matching_close(tokens: Sequence[TokenLike], opening: int) -> int | None:
    """Index of the ``)`` closing the ``(`` at ``opening``."""
    return _partner(tokens, opening, 1, "(", ")")


def _matching_open(tokens: Sequence[TokenLike], closing: int) -> int | None:
    return _partner(tokens, closing, -1, ")", "(")


def _matching_case(tokens: Sequence[TokenLike], end: int) -> int | None:
    return _partner(tokens, end, -1, "END", "CASE")


def _matching_end(tokens: Sequence[TokenLike], case: int) -> int | None:
    return _partner(tokens, case, 1, "CASE", "END")


def ends_operand(token: TokenLike, reserved: frozenset[str]) -> bool:
    """Whether an expression can end with ``token`` (so a following ``-`` is binary)."""
    if token.kind in ("number", "string", "quoted"):
        return True
    if token.kind == "word":
        return token.upper in _OPERAND_WORDS or token.upper not in reserved
    return token.text == ")"


def primary_start(tokens: Sequence[TokenLike], end: int, reserved: frozenset[str]) -> int | None:
    """First index of the primary expression (unary signs included) that ends at ``end``."""
    if end < 0:
        return None
    token = tokens[end]
    if token.text == ")":
        start = _matching_open(tokens, end)
        if start is None:
            return None
        if start >= 1 and tokens[start - 1].kind == "word" and tokens[start - 1].upper not in reserved:
            start -= 1
    elif _is_word(token, "END"):
        start = _matching_case(tokens, end)
        if start is None:
            return None
    elif token.kind in ("number", "string") or (token.kind == "word" and token.upper in _OPERAND_WORDS):
        start = end
    elif token.kind == "quoted" or (token.kind == "word" and token.upper not in reserved):
        start = end
        while start >= 2 and tokens[start - 1].text == "." and tokens[start - 2].kind in ("word", "quoted"):
            start -= 2
    else:
        return None
    while start >= 1 and tokens[start - 1].text in ("-", "+", "~", "!"):
        if start >= 2 and ends_operand(tokens[start - 2], reserved):
            break
        start -= 1
    return start


def primary_end(tokens: Sequence[TokenLike], start: int, reserved: frozenset[str]) -> int | None:
    """Last index of the primary expression (leading unary signs allowed) that starts at ``start``."""
    while start < len(tokens) and tokens[start].text in ("-", "+", "~", "!"):
        start += 1
    if start >= len(tokens):
        return None
    token = tokens[start]
    if token.text == "(":
        return matching_close(tokens, start)
    if _is_word(token, "CASE"):
        return _matching_end(tokens, start)
    if _is_word(token, "INTERVAL"):
        amount = primary_end(tokens, start + 1, reserved)
        if amount is None or amount + 1 >= len(tokens) or tokens[amount + 1].kind != "word":
            return None
        return amount + 1
    if token.kind in ("number", "string") or (token.kind == "word" and token.upper in _OPERAND_WORDS - {"END"}):
        return start
    if token.kind == "word" and start + 1 < len(tokens) and tokens[start + 1].text == "(":
        return matching_close(tokens, start + 1)
    if token.kind == "quoted" or (token.kind == "word" and token.upper not in reserved):
        end = start
        while end + 2 < len(tokens) and tokens[end + 1].text == "." and tokens[end + 2].kind in ("word", "quoted"):
            end += 2
        return end
    return None


def _is_mult_operator(token: TokenLike, following: TokenLike | None) -> bool:
    if token.kind == "op":
        return token.text in ("*", "/", "%")
    return _is_word(token, "DIV", "MOD") and not (following is not None and following.text == "(")


def _binary(tokens: Sequence[TokenLike], index: int, reserved: frozenset[str]) -> bool:
    """Whether the operator at ``index`` has a left operand (``-`` after ``(`` or ``,`` is unary,
    ``*`` after ``SELECT`` or ``(`` is a star)."""
    return index >= 1 and ends_operand(tokens[index - 1], reserved)


def _left_operand(
    tokens: Sequence[TokenLike], end: int, reserved: frozenset[str], operators: frozenset[str]
) -> int | None:
    """Start of the left operand ending at ``end``: primaries joined by ``operators`` (left-associative)."""
    left = primary_start(tokens, end, reserved)
    while left is not None and left >= 2:
        operator = tokens[left - 1]
        name = operator.upper if operator.kind == "word" else operator.text
        if name not in operators or not _binary(tokens, left - 1, reserved):
            break
        if operator.kind == "word" and left < len(tokens) and tokens[left].text == "(":
            break
        further = primary_start(tokens, left - 2, reserved)
        if further is None:
            break
        left = further
    return left


def arithmetic(tokens: Sequence[TokenLike], rewrite: Rewrite, reserved: frozenset[str]) -> None:
    """MySQL arithmetic types (12.6.1): ``*``/``+``/``-`` keep INTEGER/DECIMAL exact and make text a
    double; ``/`` gives DECIMAL with 4 more digits; ``DIV`` truncates; ``%``/``MOD`` keep the dividend's sign.
    Each operator becomes a ``mysql_*`` call around its two operand spans."""
    multiplicative = {"*": "mysql_mul", "/": "mysql_div", "%": "mysql_mod", "DIV": "mysql_intdiv", "MOD": "mysql_mod"}
    for index, token in enumerate(tokens):
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        name = multiplicative.get(token.upper if token.kind == "word" else token.text)
        if name is None or not _is_mult_operator(token, following) or not _binary(tokens, index, reserved):
            continue
        left = _left_operand(tokens, index - 1, reserved, _MULTIPLICATIVE)
        right = primary_end(tokens, index + 1, reserved)
        if left is None or right is None:
            continue
        rewrite.wrap(left, right, name)
        rewrite.instead[index] = ","
    for index, token in enumerate(tokens):  # unary minus of a column or expression: -'5' is -5.0
        if token.text == "-" and token.kind == "op" and not _binary(tokens, index, reserved):
            end = primary_end(tokens, index + 1, reserved)
            if end is not None and tokens[index + 1].kind != "number" and tokens[index + 1].text != "-":
                rewrite.wrap(index + 1, end, "mysql_neg")
                rewrite.instead[index] = ""
    additive = _MULTIPLICATIVE | {"+", "-"}
    for index, token in enumerate(tokens):
        if token.kind != "op" or token.text not in ("+", "-") or not _binary(tokens, index, reserved):
            continue
        left = _left_operand(tokens, index - 1, reserved, additive)
        right = primary_end(tokens, index + 1, reserved)
        while right is not None and right + 2 < len(tokens):
            after = tokens[right + 1]
            if not _is_mult_operator(after, tokens[right + 2]):
                break
            right = primary_end(tokens, right + 2, reserved)
        if left is None or right is None:
            continue
        rewrite.wrap(left, right, "mysql_add" if token.text == "+" else "mysql_sub")
        rewrite.instead[index] = ","


_AGGREGATES = frozenset({"COUNT", "SUM", "AVG", "MIN", "MAX", "GROUP_CONCAT", "STD", "STDDEV", "VARIANCE"})


def having_without_group(tokens: Sequence[TokenLike], rewrite: Rewrite) -> None:
    """MySQL takes ``HAVING`` on a query without GROUP BY or aggregates as a filter on the rows
    (select aliases allowed); SQLite refuses it, so it becomes (part of) the WHERE clause."""
    words = [token.upper for token in tokens if token.kind == "word"]
    if "HAVING" not in words or "GROUP" in words or "UNION" in words or words.count("SELECT") != 1:
        return
    if any(
        _is_word(t, *_AGGREGATES) and i + 1 < len(tokens) and tokens[i + 1].text == "(" for i, t in enumerate(tokens)
    ):
        return
    having = next(i for i, token in enumerate(tokens) if _is_word(token, "HAVING"))
    end = next((i for i in range(having + 1, len(tokens)) if _is_word(tokens[i], "ORDER", "LIMIT")), len(tokens))
    where = next((i for i, token in enumerate(tokens[:having]) if _is_word(token, "WHERE")), None)
    if where is None or where + 1 >= having:
        rewrite.instead[having] = "WHERE"
        return
    rewrite.before[where + 1] = "(" + rewrite.before.get(where + 1, "")
    rewrite.instead[having] = ") AND ("
    rewrite.after[end - 1] = rewrite.after.get(end - 1, "") + ")"


def insert_set(tokens: Sequence[TokenLike], rewrite: Rewrite) -> None:
    """``INSERT INTO t SET a = 1, b = 2`` -> ``INSERT INTO t (a, b) VALUES (1, 2)``."""
    if not tokens or tokens[0].upper not in ("INSERT", "REPLACE"):
        return
    start = next((i for i, token in enumerate(tokens) if _is_word(token, "SET")), None)
    if start is None or any(token.text == "(" for token in tokens[:start]):
        return
    end = len(tokens)
    for index in range(start + 1, len(tokens)):
        if _is_word(tokens[index], "ON"):
            end = index
            break
    names: list[str] = []
    for first, last in _split_commas(tokens, start + 1, end - 1):
        if last < first + 2 or tokens[first + 1].text not in ("=", ":="):
            return
        names.append(tokens[first].text)
        rewrite.instead[first] = ""
        rewrite.instead[first + 1] = ""
    rewrite.instead[start] = "(" + ", ".join(names) + ") VALUES ("
    rewrite.after[end - 1] = rewrite.after.get(end - 1, "") + ")"


def intervals(tokens: Sequence[TokenLike], rewrite: Rewrite, reserved: frozenset[str]) -> None:
    """``INTERVAL n UNIT`` -> ``mysql_interval(n, 'UNIT')`` (read by DATE_ADD/DATE_SUB and ``date + INTERVAL``)."""
    for index, token in enumerate(tokens):
        if not _is_word(token, "INTERVAL") or index + 1 >= len(tokens) or tokens[index + 1].text == "(":
            continue
        end = primary_end(tokens, index, reserved)
        if end is None:
            continue
        rewrite.instead[index] = "mysql_interval("
        rewrite.instead[end] = ""
        rewrite.after[end - 1] = rewrite.after.get(end - 1, "") + f", '{tokens[end].upper}')"


def assignment_equals(tokens: Sequence[TokenLike]) -> set[int]:
    """Indices of ``=`` that assign (``UPDATE ... SET a = 1, b = 2``, ``ON DUPLICATE KEY UPDATE``)."""
    found: set[int] = set()
    active, expecting, depth = False, False, 0
    for index, token in enumerate(tokens):
        if token.text == "(":
            depth += 1
        elif token.text == ")":
            depth -= 1
        if depth:
            continue
        if _is_word(token, "SET") or (_is_word(token, "UPDATE") and index >= 1 and _is_word(tokens[index - 1], "KEY")):
            active, expecting = True, True
        elif active and token.kind == "word" and token.upper in _CLAUSE_END:
            active = False
        elif active and token.text == ",":
            expecting = True
        elif active and expecting and token.text in ("=", ":="):
            found.add(index)
            expecting = False
    return found


def _is_number(tokens: Sequence[TokenLike], first: int, last: int) -> bool:
    body = first + 1 if tokens[first].text in ("-", "+") else first
    return body == last and tokens[last].kind == "number"


def number_comparisons(
    tokens: Sequence[TokenLike], rewrite: Rewrite, reserved: frozenset[str], comparisons: frozenset[str]
) -> None:
    """Wrap the non-number side of ``x <op> number`` (``BETWEEN``, ``IN (numbers)``) in ``mysql_number``."""
    assignments = assignment_equals(tokens)
    for index, token in enumerate(tokens):
        if token.kind == "op" and token.text in comparisons and index not in assignments:
            left = primary_start(tokens, index - 1, reserved)
            right = primary_end(tokens, index + 1, reserved)
            if left is None or right is None:
                continue
            left_number = _is_number(tokens, left, index - 1)
            right_number = _is_number(tokens, index + 1, right)
            if right_number and not left_number:
                rewrite.wrap(left, index - 1, "mysql_number", inner=True)
            elif left_number and not right_number:
                before = tokens[left - 1].text if left >= 1 else ""
                after = tokens[right + 1].text if right + 1 < len(tokens) else ""
                arithmetic_next = after in ("*", "/", "%", "+", "-", "^", "|", "&")
                if before not in ("*", "/", "%", "+", "-", ".") and not arithmetic_next:
                    rewrite.wrap(index + 1, right, "mysql_number", inner=True)
        elif token.kind == "word" and token.upper in ("BETWEEN", "IN"):
            column_end = index - 1
            if column_end >= 0 and _is_word(tokens[column_end], "NOT"):
                column_end -= 1
            left = primary_start(tokens, column_end, reserved)
            if left is None or _is_number(tokens, left, column_end):
                continue
            if token.upper == "IN":
                if _numeric_list(tokens, index + 1):
                    rewrite.wrap(left, column_end, "mysql_number", inner=True)
                continue
            low = primary_end(tokens, index + 1, reserved)
            if low is None or low + 1 >= len(tokens) or not _is_word(tokens[low + 1], "AND"):
                continue
            high = primary_end(tokens, low + 2, reserved)
            if high is not None and (_is_number(tokens, index + 1, low) or _is_number(tokens, low + 2, high)):
                rewrite.wrap(left, column_end, "mysql_number", inner=True)


def _numeric_list(tokens: Sequence[TokenLike], start: int) -> bool:
    if start >= len(tokens) or tokens[start].text != "(":
        return False
    close = matching_close(tokens, start)
    if close is None or close == start + 1:
        return False
    items = _split_commas(tokens, start + 1, close - 1)
    return all(_is_number(tokens, first, last) for first, last in items)


def _split_commas(tokens: Sequence[TokenLike], first: int, last: int) -> list[tuple[int, int]]:
    """Top-level comma-separated spans of ``tokens[first..last]``."""
    spans: list[tuple[int, int]] = []
    depth, begin = 0, first
    for index in range(first, last + 1):
        text = tokens[index].text
        if text == "(":
            depth += 1
        elif text == ")":
            depth -= 1
        elif text == "," and depth == 0:
            spans.append((begin, index - 1))
            begin = index + 1
    spans.append((begin, last))
    return [(a, b) for a, b in spans if a <= b]


def stored_numbers(tokens: Sequence[TokenLike], rewrite: Rewrite, quote: Callable[[str], str]) -> None:
    """A value of ``VALUES (...)`` or ``SET col =`` is stored as MySQL's text: a number literal
    keeps its written form, a computed value goes through ``mysql_store``."""

    def as_text(first: int, last: int) -> None:
        if not _is_number(tokens, first, last):
            if first < last or tokens[first].kind not in ("string", "word", "quoted"):
                rewrite.wrap(first, last, "mysql_store")
            return
        negative = tokens[first].text == "-"
        rewrite.blank(first, last)
        rewrite.instead[last] = quote(number_literal_text(tokens[last].text, negative))

    for index, token in enumerate(tokens):
        if _is_word(token, "VALUES", "VALUE"):
            position = index + 1
            while position < len(tokens) and tokens[position].text == "(":
                close = matching_close(tokens, position)
                if close is None:
                    break
                for first, last in _split_commas(tokens, position + 1, close - 1):
                    as_text(first, last)
                position = close + 1
                if position < len(tokens) and tokens[position].text == ",":
                    position += 1
    for index in assignment_equals(tokens):
        end = index + 1
        depth = 0
        while end < len(tokens):
            text = tokens[end].text
            if text == "(":
                depth += 1
            elif text == ")":
                depth -= 1
            if depth < 0 or (
                depth == 0 and (text == "," or (tokens[end].kind == "word" and tokens[end].upper in _CLAUSE_END))
            ):
                break
            end += 1
        if end > index + 1:
            as_text(index + 1, end - 1)


def casts(tokens: Sequence[TokenLike], rewrite: Rewrite) -> None:
    """``CAST(x AS type)`` and ``CONVERT(x, type)`` / ``CONVERT(x USING cs)`` with MySQL's conversions."""
    for index, token in enumerate(tokens):
        if not _is_word(token, "CAST", "CONVERT") or index + 1 >= len(tokens) or tokens[index + 1].text != "(":
            continue
        close = matching_close(tokens, index + 1)
        if close is None:
            continue
        separator = _cast_separator(tokens, index + 2, close, token.upper)
        if separator is None:
            continue
        if _is_word(tokens[separator], "USING"):
            rewrite.instead[index] = ""
            rewrite.blank(separator, close - 1)
            continue
        kind = tokens[separator + 1].upper if separator + 1 < close else ""
        arguments = [
            tokens[position].text for position in range(separator + 2, close) if tokens[position].kind == "number"
        ]
        if kind in _CAST_INT:
            function, extra = "mysql_signed", ""
        elif kind in _CAST_DECIMAL:
            precision = arguments[0] if arguments else "10"
            scale = arguments[1] if len(arguments) > 1 else "0"
            function, extra = "mysql_decimal", f", {precision}, {scale}"
        elif kind in _CAST_CHAR:
            function, extra = "mysql_char", f", {arguments[0]}" if arguments else ""
        elif kind in _CAST_DOUBLE:
            function, extra = "mysql_double", ""
        elif kind in _CAST_DATE:
            function, extra = "mysql_date", ""
        else:
            continue
        rewrite.instead[index] = function
        rewrite.blank(separator, close - 1)
        rewrite.instead[separator] = extra


def _cast_separator(tokens: Sequence[TokenLike], first: int, close: int, function: str) -> int | None:
    depth = 0
    for index in range(first, close):
        text = tokens[index].text
        if text == "(":
            depth += 1
        elif text == ")":
            depth -= 1
        elif depth == 0 and (
            (function == "CAST" and _is_word(tokens[index], "AS"))
            or (function == "CONVERT" and (text == "," or _is_word(tokens[index], "USING")))
        ):
            return index
    return None


def trims(tokens: Sequence[TokenLike], rewrite: Rewrite, render: Callable[[int, int], str]) -> None:
    """``TRIM([BOTH|LEADING|TRAILING] [remstr] FROM str)`` -> ``mysql_trim('MODE', str, remstr)``."""
    for index, token in enumerate(tokens):
        if not _is_word(token, "TRIM") or index + 1 >= len(tokens) or tokens[index + 1].text != "(":
            continue
        close = matching_close(tokens, index + 1)
        if close is None:
            continue
        depth, source = 0, None
        for position in range(index + 2, close):
            if tokens[position].text == "(":
                depth += 1
            elif tokens[position].text == ")":
                depth -= 1
            elif depth == 0 and _is_word(tokens[position], "FROM"):
                source = position
                break
        first, mode = index + 2, "BOTH"
        if _is_word(tokens[first], "BOTH", "LEADING", "TRAILING"):
            mode, first = tokens[first].upper, first + 1
        if source is None:
            if mode == "BOTH" and first == index + 2:
                continue  # TRIM(str): SQLite's trim removes spaces as MySQL does
            source, first = first - 1, first  # TRIM(LEADING FROM str)
        remove = render(first, source - 1) if first < source else "' '"
        value = render(source + 1, close - 1)
        rewrite.blank(index, close)
        rewrite.instead[index] = f"mysql_trim('{mode}', {value}, {remove})"


def group_concat(tokens: Sequence[TokenLike], rewrite: Rewrite, render: Callable[[int, int], str]) -> None:
    """``GROUP_CONCAT([DISTINCT] e, ... [ORDER BY k [ASC|DESC], ...] [SEPARATOR s])`` ->
    ``mysql_group_concat(distinct, s, n, e..., k, desc, ...)``; run it after every other rewrite."""
    for index, token in enumerate(tokens):
        if not _is_word(token, "GROUP_CONCAT") or index + 1 >= len(tokens) or tokens[index + 1].text != "(":
            continue
        close = matching_close(tokens, index + 1)
        if close is None or close == index + 2:
            continue
        first = index + 2
        distinct = _is_word(tokens[first], "DISTINCT")
        if distinct:
            first += 1
        separator, order = "','", None
        depth, end = 0, close
        for position in range(first, close):
            text = tokens[position].text
            if text == "(":
                depth += 1
            elif text == ")":
                depth -= 1
            elif depth == 0 and _is_word(tokens[position], "SEPARATOR"):
                separator = render(position + 1, close - 1)
                end = min(end, position)
            elif (
                depth == 0
                and _is_word(tokens[position], "ORDER")
                and position + 1 < close
                and _is_word(tokens[position + 1], "BY")
            ):
                order = position
                end = min(end, position)
        values = [render(a, b) for a, b in _split_commas(tokens, first, end - 1)]
        keys: list[str] = []
        if order is not None:
            stop = close
            for position in range(order + 2, close):
                if _is_word(tokens[position], "SEPARATOR"):
                    stop = position
                    break
            for a, b in _split_commas(tokens, order + 2, stop - 1):
                descending = _is_word(tokens[b], "DESC")
                if _is_word(tokens[b], "ASC", "DESC"):
                    b -= 1
                keys += [render(a, b), "1" if descending else "0"]
        arguments = ", ".join([("1" if distinct else "0"), separator, str(len(values)), *values, *keys])
        rewrite.blank(index, close)
        rewrite.instead[index] = f"mysql_group_concat({arguments})"
