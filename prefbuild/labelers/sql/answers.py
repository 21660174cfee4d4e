"""What a DBBench final answer can be derived from: the MySQL replies seen in the episode.

AgentBench ``runs.jsonl`` does not record whether an answer was right, so ``wrong_answer``
judges an answer on evidence only. The replies are read as the client prints them
(``[('Lakers',), (3,)]``, ``Decimal('2.50')``, ``datetime.date(2020, 1, 5)``, ``None``) and an
answer is checked two ways:

* **loosely** against the last relevant SELECT result: every answer value is a cell (case
  and spacing aside, or a word-bounded part of a text cell), a number printed in it (compared
  exactly, as the benchmark compares floats: 17 is not an observed 17.25), or a number the agent
  computed from it, possibly rounded to the digits it wrote: the row count, a column's sum,
  average, minimum or maximum over several rows, or the difference, sum, ratio or percentage of
  two of the episode's single-value results (what two targeted SELECTs returned) or of the
  numbers of one small result (two or three rows compared side by side);
* **wholly** against every other result: the answer *is* that result (its single value,
  a column's whole set of values) or one of its aggregates.

An answer that appears in no reply and is computed from none was never observed. One that
passes neither check contradicts the last relevant result; by default it is still not judged
when each of its values was copied from a row of another result or computed from one (the
evaluation sets' reading: "a value copied from an observed row, even the wrong column, is not
labelled"), ``copied_values=True`` judges those too. Whatever cannot be read (a reply cut at 800 characters, an
answer of yes / no) is never judged.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations

Cell = str | float | None
Rows = tuple[tuple[Cell, ...], ...]

YES_NO = frozenset({"yes", "no", "true", "false"})
NONE_LIKE = frozenset({"none", "null", "n/a", "nothing", "no result", "no results", "0", "[]", ""})
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_NUMERIC_TEXT = re.compile(r"^\s*[-+]?[$€£]?\s*(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?\s*%?\s*$")
_DECIMAL = re.compile(r"Decimal\('([^']*)'\)")
_DATE = re.compile(r"datetime\.date\((\d+),\s*(\d+),\s*(\d+)\)")
_DATETIME = re.compile(r"datetime\.datetime\(([\d,\s]+)\)")
_ROW_TEXT = re.compile(r"\((?:[^()']|'[^']*')*\)")
_SELECT = re.compile(r"^\W*(?:select|with|\()", re.IGNORECASE)
_SPACES = re.compile(r"\s+")
# Pairwise arithmetic is tried on at most this many numbers (the pool grows quadratically).
_ARITHMETIC_POOL = 16
# A result with at most this many numbers is read side by side (a comparison of two or three rows).
_SMALL_RESULT = 4


@dataclass(frozen=True)
class Observed:
    """One successful statement: its step, SQL, reply text and the rows read from it (None when unreadable)."""

    step: int
    sql: str
    text: str
    rows: Rows | None

    @property
    def is_select(self) -> bool:
        return bool(_SELECT.match(self.sql))


def answer_values(answer: str) -> list[str]:
    """The values of a DBBench final answer (``["a", "b"]``, or the bare text as one value).

    Example:
        >>> answer_values(' ["Women +60kg Bronze", 3]')
        ['Women +60kg Bronze', '3']
        >>> answer_values("[('Stavanger',)]")
        ['Stavanger']
    """
    text = answer.strip()
    try:
        parsed = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        # handled: not a Python literal, so the answer is its text
        return [text] if text else []
    if isinstance(parsed, list | tuple):
        # the MySQL client's rows copied as they print ("[('Stavanger',)]"): the values inside them
        flat = [item for value in parsed for item in (value if isinstance(value, list | tuple) else (value,))]
        return [str(value).strip() for value in flat]
    return [str(parsed).strip()]


def _date(match: re.Match[str]) -> str:
    year, month, day = (int(part) for part in match.groups())
    return f"'{year:04d}-{month:02d}-{day:02d}'"


def _datetime(match: re.Match[str]) -> str:
    parts = [int(part) for part in match.group(1).split(",") if part.strip()]
    parts += [0] * (6 - len(parts))
    return "'{:04d}-{:02d}-{:02d} {:02d}:{:02d}:{:02d}'".format(*parts[:6])


@lru_cache(maxsize=2048)
def parse_result(text: str) -> Rows | None:
    """The rows of a MySQL reply as the client prints it, or None when it is not a readable result.

    Example:
        >>> parse_result("[('Lakers', Decimal('2.50')), (None, 3)]")
        (('Lakers', '2.50'), (None, 3.0))
    """
    stripped = text.strip()
    if not stripped.startswith("["):
        return None
    if "Decimal(" in stripped:
        stripped = _DECIMAL.sub(r"'\1'", stripped)
    if "datetime." in stripped:
        stripped = _DATETIME.sub(_datetime, _DATE.sub(_date, stripped))
    try:
        parsed = ast.literal_eval(stripped)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        # handled: an unreadable reply is never judged
        return None
    if not isinstance(parsed, list) or not all(isinstance(row, tuple) for row in parsed):
        return None
    rows: list[tuple[Cell, ...]] = []
    for row in parsed:
        cells: list[Cell] = []
        for cell in row:
            if cell is None or isinstance(cell, str):
                cells.append(cell)
            elif isinstance(cell, int | float):  # bool is an int too
                cells.append(float(cell))
            else:
                cells.append(str(cell))
        rows.append(tuple(cells))
    return tuple(rows)


def number_of(value: Cell) -> float | None:
    """A cell or answer value as a number ("30,720", "25%", "$3.5" included), else None.

    Example:
        >>> number_of("30,720"), number_of("Lakers")
        (30720.0, None)
    """
    if value is None:
        return None
    if isinstance(value, float):
        return value
    if not _NUMERIC_TEXT.match(value) or not re.search(r"\d", value):
        return None
    try:
        number = float(re.sub(r"[\s,$€£%+]", "", value))
    except ValueError:  # handled: text that is not a number is compared as text
        return None
    return number if math.isfinite(number) else None


def _decimals(answer: str) -> int:
    """Digits after the point in a numeric answer ("3.33" -> 2, "12" -> 0)."""
    text = answer.replace(",", "").strip().rstrip("%")
    return len(text.split(".", 1)[1]) if "." in text else 0


def same_number(answer: str, number: float, *, rounded: bool = False) -> bool:
    """The numeric answer equals ``number``: exactly (as the benchmark compares floats), or, for a
    number the agent computed itself (``rounded``), rounded to the digits the answer shows.

    Example:
        >>> same_number("17.25", 17.25), same_number("17", 17.25), same_number("22.67", 68 / 3, rounded=True)
        (True, False, True)
    """
    value = number_of(answer)
    if value is None:
        return False
    if math.isclose(value, number, rel_tol=1e-9, abs_tol=1e-9):
        return True
    return rounded and round(number, _decimals(answer)) == value


def _normal(text: str) -> str:
    return _SPACES.sub(" ", text.strip().lower())


def _text_in(value: str, cells: Iterable[Cell]) -> bool:
    """The text answer is a cell, or a word-bounded part of one (case and spacing aside)."""
    wanted = _normal(value)
    if not wanted:
        return False
    bounded = re.compile(r"(?<![\w.])" + re.escape(wanted) + r"(?![\w.])")
    for cell in cells:
        if cell is None:
            continue
        text = _normal(cell if isinstance(cell, str) else _float_text(cell))
        if text == wanted or bounded.search(text):
            return True
    return False


def _float_text(number: float) -> str:
    return str(int(number)) if number.is_integer() else repr(number)


def _cells(rows: Rows) -> list[Cell]:
    return [cell for row in rows for cell in row]


def _numbers(rows: Rows) -> list[float]:
    """Numeric cells and numbers written inside text cells."""
    found: list[float] = []
    for cell in _cells(rows):
        number = number_of(cell)
        if number is not None:
            found.append(number)
        elif isinstance(cell, str):
            found.extend(float(text) for text in _NUMBER.findall(cell.replace(",", "")))
    return found


def _years(numbers: Sequence[float]) -> bool:
    """Every number is a whole year (1800-2100): a column nobody sums or averages."""
    return all(number.is_integer() and 1800 <= number <= 2100 for number in numbers)


def aggregates(rows: Rows) -> list[float]:
    """Numbers an agent computes from a result: the row count; for a small result (two to four
    numbers) their pairwise differences, sums and ratios; and for several rows per column the sum,
    average, minimum and maximum of its numeric cells (only the earliest and latest of a column of
    years: the average of 1974 and 1978 is no answer to "in which year").

    Example:
        >>> aggregates((("a", 3.0), ("b", 4.0), ("c", 5.0), ("d", 6.0), ("e", 7.0)))
        [5.0, 25.0, 5.0, 3.0, 7.0]
        >>> 1.0 in aggregates((("Labour", 364.0), ("Conservative", 363.0)))  # side by side: one more
        True
        >>> aggregates((("1974", "x"), ("1978", "y")))  # four years apart, never their average
        [2.0, 4.0, 1974.0, 1978.0]
    """
    found = [float(len(rows))]
    numbers = [number for number in map(number_of, _cells(rows)) if number is not None]
    if 2 <= len(numbers) <= _SMALL_RESULT:
        found += _arithmetic(numbers)  # side by side: "Labour 364, Conservative 253": how many more?
    if len(rows) < 2:
        return found
    for column in zip(*rows, strict=False):
        numbers = [number for number in map(number_of, column) if number is not None]
        if numbers and _years(numbers):
            found += [min(numbers), max(numbers)]
        elif numbers:
            found += [sum(numbers), sum(numbers) / len(numbers), min(numbers), max(numbers)]
    return found


def _arithmetic(numbers: Sequence[float]) -> list[float]:
    """Differences, sums, ratios and percentages of two different numbers of a small pool (of two
    years, and only when the pool holds just those two, only the difference)."""
    pool = list(dict.fromkeys(numbers))[:_ARITHMETIC_POOL]
    # Two years compared side by side are years apart; among three or more years (a list of films by
    # year) a difference is no answer, and would excuse any small miscount.
    two_years = sum(1 for number in pool if _years([number])) == 2
    found: list[float] = []
    for a, b in combinations(pool, 2):
        years = _years([a]), _years([b])
        if any(years):
            if all(years) and two_years:
                found.append(abs(a - b))  # years apart; a year plus a count or a ratio of years is no answer
            continue
        found += [a + b, abs(a - b)]
        if b:
            found += [a / b, 100 * a / b]
        if a:
            found += [b / a, 100 * b / a]
    return found


def loosely_derivable(values: Sequence[str], rows: Rows, single_values: Sequence[float] = ()) -> bool:
    """Every answer value is read from, or computed from, ``rows`` (see the module docstring).

    Args:
        values: the answer's values.
        rows: the last relevant result.
        single_values: the numbers of the episode's single-value results (two of them may be added,
            subtracted or divided: "how many more ... than ...").

    Example:
        >>> loosely_derivable(["3"], (("Ryan Smyth",), ("Jason Arnott",), ("Kevin Lowe",)))
        True
    """
    cells = _cells(rows)
    numbers: list[float] | None = None
    computed: list[float] = []
    for value in values:
        if number_of(value) is None:
            if not _text_in(value, cells):
                return False
            continue
        if numbers is None:
            numbers = _numbers(rows)
            computed = [*aggregates(rows), *_arithmetic(single_values)]
        if (
            not any(same_number(value, number) for number in numbers)
            and not any(same_number(value, number, rounded=True) for number in computed)
            and not _text_in(value, cells)
        ):
            return False
    return True


def wholly_derivable(values: Sequence[str], rows: Rows) -> bool:
    """The answer *is* this result: its single value, one column's (or all) values as a set, or
    for one number an aggregate of it.

    Example:
        >>> wholly_derivable(["Bob"], (("Bob",),)), wholly_derivable(["Bob"], (("Bob",), ("Ann",)))
        (True, False)
    """
    if not rows or not values:
        return False
    cells = _cells(rows)
    if len(values) == 1:
        value = values[0]
        if len(cells) == 1 and _matches(value, cells[0]):
            return True
        return number_of(value) is not None and any(same_number(value, number) for number in aggregates(rows))
    wanted = {_normal(value) for value in values}
    columns = [*zip(*rows, strict=False), tuple(cells)]
    return any(wanted == {_normal(_cell_text(cell)) for cell in column if cell is not None} for column in columns)


def _cell_text(cell: Cell) -> str:
    return _float_text(cell) if isinstance(cell, float) else str(cell)


def _matches(value: str, cell: Cell) -> bool:
    if cell is None:
        return False
    number = number_of(cell)
    if number is not None and number_of(value) is not None:
        return same_number(value, number)
    return _normal(value) == _normal(_cell_text(cell))


def relevant_result(values: Sequence[str], observed: Sequence[Observed]) -> Observed | None:
    """The last SELECT before the answer whose result could hold it: readable, not empty, and for a
    text answer holding text (a trailing ``COUNT(*)`` check does not answer "who")."""
    wants_text = any(number_of(value) is None for value in values)
    for item in reversed(observed):
        if not item.is_select:
            continue
        if item.rows is None:
            return None  # the last result cannot be read: nothing to judge against
        cells = [cell for cell in _cells(item.rows) if cell is not None]
        if not cells:
            continue
        if wants_text and not any(isinstance(cell, str) and number_of(cell) is None for cell in cells):
            continue
        return item
    return None


def appears_anywhere(value: str, texts: Iterable[str]) -> bool:
    """``value`` occurs in a reply text, equals a number in one, or counts a result's rows
    (the check for an answer never observed at all).

    Example:
        >>> appears_anywhere("3", ["[('a',), ('b',), ('c',)]"]), appears_anywhere("5", ["[(3.0,)]"])
        (True, False)
    """
    texts = list(texts)
    lowered = value.lower()
    whole = re.compile(r"(?<![\w.])" + re.escape(lowered) + r"(?![\w.])") if lowered else None
    if whole is not None and any(whole.search(text.lower()) for text in texts):
        return True
    number = number_of(value)
    if number is None:
        return False
    for text in texts:
        if any(same_number(value, float(found)) for found in _NUMBER.findall(text.replace(",", ""))):
            return True
        if text.startswith("[") and len(_ROW_TEXT.findall(text)) == number:
            return True
    return False


@dataclass(frozen=True)
class Verdict:
    """Why an answer is judged wrong: ``kind`` is ``unobserved`` or ``contradicts``."""

    kind: str
    values: tuple[str, ...]
    against: Observed | None = None


def judge_answer(values: Sequence[str], observed: Sequence[Observed], *, copied_values: bool = False) -> Verdict | None:
    """A verdict when the observed results show the answer wrong, None when they do not (or cannot).

    Args:
        values: the final answer's values.
        observed: the successful statements before the answer, in order.
        copied_values: also judge an answer whose values were copied from rows of results other
            than the last relevant one (off by default: such an answer counts as observed).

    Returns:
        ``Verdict("unobserved", ...)`` when no value can be found in or computed from any reply,
        ``Verdict("contradicts", ..., against=result)`` when the last relevant SELECT result
        rules the answer out and no other result is the answer (nor, unless ``copied_values``,
        holds its values); None otherwise.

    Example:
        >>> rows = Observed(0, "SELECT x FROM t", "[(40.0,), (2.0,), (45.0,)]", ((40.0,), (2.0,), (45.0,)))
        >>> sums = [rows, Observed(1, "SELECT SUM(x) FROM t WHERE x < 41", "[(42.0,)]", ((42.0,),))]
        >>> judge_answer(["40"], sums) is None, judge_answer(["40"], sums, copied_values=True).kind
        (True, 'contradicts')
        >>> judge_answer(["41"], sums).kind
        'unobserved'
    """
    texts = [item.text for item in observed]
    if not values:
        empty = any(item.rows is not None and not item.rows for item in observed)
        return None if empty else Verdict("unobserved", ())
    if any(value.lower() in YES_NO for value in values):
        if not observed:
            return Verdict("unobserved", tuple(values))
        values = [value for value in values if value.lower() not in YES_NO]  # "Yes" is judged by no result
        if not values:
            return None
    if all(value.lower() in NONE_LIKE for value in values) and any(
        item.rows is not None and (not item.rows or None in _cells(item.rows)) for item in observed
    ):
        return None
    singles = [
        number
        for item in observed
        if item.rows is not None and len(item.rows) == 1 and len(item.rows[0]) == 1
        for number in [number_of(item.rows[0][0])]
        if number is not None
    ]
    readable = [item.rows for item in observed if item.rows]
    unseen = tuple(
        value
        for value in values
        if not appears_anywhere(value, texts)
        and not any(loosely_derivable([value], rows, singles) for rows in readable)
    )
    if unseen:
        return Verdict("unobserved", unseen)
    relevant = relevant_result(values, observed)
    if relevant is None or relevant.rows is None:
        return None
    if loosely_derivable(values, relevant.rows, singles):
        return None
    others = [item.rows for item in observed if item is not relevant and item.rows]
    if any(wholly_derivable(values, rows) for rows in others):
        return None
    if not copied_values and all(any(loosely_derivable([value], rows) for rows in others) for value in values):
        return None  # each value was copied from (or computed from) another observed result
    return Verdict("contradicts", tuple(values), relevant)


_LITERAL = re.compile(r"'((?:[^'\\]|\\.)*)'")
_POSITION_QUESTION = re.compile(r"\b(?:position|rank|ranked|place|placed|finish(?:ed)?)\b", re.IGNORECASE)


def looked_up(value: str, question: str, observed: Sequence[Observed]) -> bool:
    """A candidate the question names that a successful query looked up on its own (its result not
    empty), or that a result shows."""
    if not _named_in(value, question):
        return False
    for item in observed:
        sql = _first_statement(item.sql)  # several statements in one block: only the first ran
        if not item.rows or not (_named_in(value, sql) or _condition_in(value, sql)):
            continue
        candidates = [literal for literal in _LITERAL.findall(sql) if _named_in(literal, question)]
        if len(candidates) <= 1 or _named_in(value, item.text):
            return True
    return False


def is_position(values: Sequence[str], question: str, observed: Sequence[Observed]) -> bool:
    """A rank answer ("2") to a position question, within the rows of an observed result; where a row
    names what the question asks about ("the Falcons" in the fourth row), the answer is that row's place."""
    if len(values) != 1 or not _POSITION_QUESTION.search(question):
        return False
    written = values[0].strip().rstrip(".").lower()
    position = number_of(re.sub(r"(?<=\d)(?:st|nd|rd|th)$", "", written))
    if position is None or not position.is_integer():
        return False
    for item in observed:
        if not item.rows or not 1 <= position <= len(item.rows):
            continue
        places = [place for place, row in enumerate(item.rows, start=1) if any(
            isinstance(cell, str) and _named_in(cell, question) for cell in row
        )]
        if not places or position in places:
            return True
    return False


def _first_statement(sql: str) -> str:
    """The text of ``sql`` up to its first ``;`` outside quotes."""
    quote = ""
    for position, char in enumerate(sql):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"`":
            quote = char
        elif char == ";":
            return sql[:position]
    return sql


def _condition_in(value: str, sql: str) -> bool:
    """A candidate "<column> <value>" ("week 5") that the query selected on as ``Week = '5'``."""
    head, _, tail = value.strip().lower().rpartition(" ")
    if not head or not tail:
        return False
    pattern = rf"(?<![\w`]){re.escape(head)}`?\s*=\s*['\"]?{re.escape(tail)}(?![\w.])"
    return re.search(pattern, sql.lower()) is not None


def _named_in(value: str, text: str) -> bool:
    """A text answer value ``text`` names as a whole word (a comparison's candidate in the question, and
    in the query that looked it up)."""
    value = value.strip().lower()
    if len(value) < 2 or number_of(value) is not None:
        return False
    return re.search(r"(?<!\w)" + re.escape(value) + r"(?!\w)", text.lower()) is not None


__all__ = [
    "Observed",
    "Verdict",
    "aggregates",
    "answer_values",
    "appears_anywhere",
    "is_position",
    "judge_answer",
    "looked_up",
    "loosely_derivable",
    "number_of",
    "parse_result",
    "relevant_result",
    "same_number",
    "wholly_derivable",
]
