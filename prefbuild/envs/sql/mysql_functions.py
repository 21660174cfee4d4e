"""MySQL 8 built-in functions and operators the SQLite engine registers under their MySQL names.

Each function follows the MySQL 8 reference manual (sections 12.x, "Functions and Operators"):
NULL in, NULL out; text read as a number through MySQL's prefix conversion; dates read from
``YYYY-MM-DD[ hh:mm:ss]`` text. Exact-value (DECIMAL) results come back to SQLite as floats and
are remembered in a ``DecimalMarks`` so the reply prints them as the server does
(``Decimal('2.5000')``).
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import random
import re
import unicodedata
from collections.abc import Callable
from decimal import ROUND_CEILING, ROUND_DOWN, ROUND_FLOOR, ROUND_HALF_UP, Context, Decimal
from typing import Any

import regex

SERVER_VERSION = "8.0.36"
COLLATION = "utf8mb4_0900_ai_ci"  # MySQL 8's default collation, on every column and literal
_WIDE = Context(prec=100)  # DECIMAL(65,30) and FORMAT(x, 30) need more than the default 28 digits
DIV_PRECISION_INCREMENT = 4  # MySQL's default scale added by ``/``
GROUP_CONCAT_MAX_LEN = 1024  # bytes, MySQL's default group_concat_max_len
_NUMBER_PREFIX = re.compile(r"\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)")
_DATE = re.compile(r"\s*(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{1,2})(?::(\d{1,2}))?)?")


def text(value: Any) -> str:
    """A value as MySQL text (bytes decoded as UTF-8)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def mysql_number(value: Any) -> int | float | None:
    """MySQL's string-to-number conversion: the longest numeric prefix, else 0 (``'4,567'`` -> 4.0)."""
    if value is None or isinstance(value, int | float):
        return value
    match = _NUMBER_PREFIX.match(text(value))
    if not match:
        return 0.0
    number = float(match.group(1))
    return number if math.isfinite(number) else 0.0


# -- collation -----------------------------------------------------------------------------------


# The DUCET (UCA 9.0) order of ASCII punctuation and symbols, which sort before digits and letters.
_PUNCTUATION_ORDER = "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"
_PUNCTUATION_RANK = {char: chr(0x100 + rank) for rank, char in enumerate(_PUNCTUATION_ORDER)}


def _char_key(char: str) -> str:
    """UCA primary weight stand-in: spaces < punctuation/symbols (DUCET order) < digits < letters."""
    if char in _PUNCTUATION_RANK:
        return "\x01" + _PUNCTUATION_RANK[char]
    category = unicodedata.category(char)
    if category[0] == "Z" or char in "\t\n\r":
        return "\x00" + char
    if category[0] in "PSC":
        return "\x01" + char
    if category[0] == "N":
        return "\x02" + char
    return "\x03" + char


def collation_key(value: str) -> str:
    """Sort key of MySQL's accent- and case-insensitive no-pad collation.

    Example:
        >>> sorted(["b", "1", "-a", "A"], key=collation_key)
        ['-a', '1', 'A', 'b']
    """
    if len(value) <= 256:  # cache only short values: a cache of long texts could hold gigabytes
        return _cached_collation_key(value)
    return _collation_key(value)


def _collation_key(value: str) -> str:
    decomposed = unicodedata.normalize("NFKD", value)
    folded = "".join(char for char in decomposed if not unicodedata.combining(char)).casefold()
    return "".join(_char_key(char) for char in folded)


_cached_collation_key = functools.lru_cache(maxsize=65_536)(_collation_key)


# -- exact values ----------------------------------------------------------------------------


class DecimalMarks:
    """Values of the running statement that stand for MySQL DECIMAL (floats, with their scale) and
    DATE/DATETIME results (text), so the reply prints them as the client does.

    A SQLite value carries no MySQL type, so a float equal to a marked DECIMAL in the same
    statement prints as that DECIMAL too; statements rarely hold both.
    """

    def __init__(self) -> None:
        self.scales: dict[float, int] = {}
        self.dates: set[str] = set()

    def mark(self, value: Decimal, scale: int) -> float:
        number = float(value) + 0.0  # no negative zero: MySQL prints -0.0 as 0.0
        self.scales[number] = scale
        return number

    def mark_date(self, value: str | None) -> str | None:
        if value is not None:
            self.dates.add(value)
        return value

    def clear(self) -> None:
        self.scales.clear()
        self.dates.clear()

    def render(self, value: Any) -> str:
        """``repr`` of one result cell: ``Decimal('1.50')``, ``datetime.date(2019, 5, 4)``."""
        if isinstance(value, float) and value in self.scales:
            scale = self.scales[value]
            quantum = Decimal(1).scaleb(-scale)
            exact = Decimal(repr(value)).quantize(quantum, rounding=ROUND_HALF_UP, context=_WIDE)
            return f"Decimal('{exact}')"
        if isinstance(value, str) and value in self.dates:
            parsed = parse_datetime(value)
            if parsed is not None:
                return repr(parsed.date() if len(value) <= 10 else parsed)
        return repr(value)


def exact_value(value: Any, marks: DecimalMarks) -> Decimal | None:
    """The exact value of an INTEGER or DECIMAL operand, None for doubles and text."""
    return _exact(value, marks)


def _exact(value: Any, marks: DecimalMarks) -> Decimal | None:
    """The exact value of an INTEGER or DECIMAL operand, None for doubles and text."""
    if isinstance(value, bool):
        return Decimal(int(value))
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float) and value in marks.scales:
        return Decimal(repr(value)).quantize(
            Decimal(1).scaleb(-marks.scales[value]), rounding=ROUND_HALF_UP, context=_WIDE
        )
    return None


def _scale(value: Decimal) -> int:
    exponent = value.as_tuple().exponent
    return -exponent if isinstance(exponent, int) and exponent < 0 else 0


def divide(marks: DecimalMarks, left: Any, right: Any) -> float | None:
    """``left / right``: DECIMAL with scale(left) + 4 for exact operands, else a double; NULL for /0.

    Example:
        ``5 / 2`` -> ``Decimal('2.5000')``; ``'5' / 2`` -> ``2.5``; ``1 / 0`` -> NULL.
    """
    if left is None or right is None:
        return None
    exact_left, exact_right = _exact(left, marks), _exact(right, marks)
    if exact_left is not None and exact_right is not None:
        if exact_right == 0:
            return None
        scale = _scale(exact_left) + DIV_PRECISION_INCREMENT
        quotient = (exact_left / exact_right).quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP, context=_WIDE)
        return marks.mark(quotient, scale)
    numerator, denominator = float(mysql_number(left) or 0), float(mysql_number(right) or 0)
    if denominator == 0:
        return None
    return numerator / denominator


def _combine(
    marks: DecimalMarks,
    left: Any,
    right: Any,
    exact: Callable[[Any, Any], Any],
    scale: Callable[[int, int], int],
) -> int | float | None:
    if left is None or right is None:
        return None
    exact_left, exact_right = _exact(left, marks), _exact(right, marks)
    if exact_left is not None and exact_right is not None:
        result = exact(exact_left, exact_right)
        if isinstance(left, int) and isinstance(right, int):
            return int(result)
        return marks.mark(result, scale(_scale(exact_left), _scale(exact_right)))
    return float(exact(float(mysql_number(left) or 0), float(mysql_number(right) or 0)))  # double arithmetic


def add(marks: DecimalMarks, left: Any, right: Any) -> int | float | None:
    """``left + right``: INTEGER + INTEGER is INTEGER, exact values stay DECIMAL, text makes a double.

    Example:
        ``0.1 + 0.2`` -> ``Decimal('0.3')``; ``'10' + 5`` -> ``15.0``.
    """
    if isinstance(right, str) and right.startswith(INTERVAL_MARK):
        return shift_date(marks, left, right)  # type: ignore[return-value]
    if isinstance(left, str) and left.startswith(INTERVAL_MARK):
        return shift_date(marks, right, left)  # type: ignore[return-value]
    return _combine(marks, left, right, lambda a, b: a + b, max)


def subtract(marks: DecimalMarks, left: Any, right: Any) -> int | float | None:
    """``left - right`` with the types of ``add``; ``date - INTERVAL n UNIT`` shifts the date back."""
    if isinstance(right, str) and right.startswith(INTERVAL_MARK):
        return shift_date(marks, left, right, sign=-1)  # type: ignore[return-value]
    return _combine(marks, left, right, lambda a, b: a - b, max)


def negate(marks: DecimalMarks, value: Any) -> int | float | None:
    """``-x``: exact stays exact, text becomes a double."""
    return subtract(marks, 0, value)


def multiply(marks: DecimalMarks, left: Any, right: Any) -> int | float | None:
    """``left * right``: exact scales add up (``2 * 3.5`` -> ``Decimal('7.0')``), text makes a double."""
    return _combine(marks, left, right, lambda a, b: a * b, lambda a, b: a + b)


def _integral(marks: DecimalMarks, value: Any, rounding: str) -> int | float | None:
    if value is None:
        return None
    exact = _exact(value, marks)
    if exact is not None:
        return int(exact.to_integral_value(rounding=rounding))
    number = float(mysql_number(value) or 0)
    return float(Decimal(repr(number)).to_integral_value(rounding=rounding))


def floor(marks: DecimalMarks, value: Any) -> int | float | None:
    """``FLOOR(x)``: an integer for exact ``x``, a double for text and doubles."""
    return _integral(marks, value, ROUND_FLOOR)


def ceiling(marks: DecimalMarks, value: Any) -> int | float | None:
    """``CEIL(x)`` / ``CEILING(x)``."""
    return _integral(marks, value, ROUND_CEILING)


def absolute(marks: DecimalMarks, value: Any) -> int | float | None:
    """``ABS(x)``: exact stays exact, text becomes a double."""
    if value is None:
        return None
    exact = _exact(value, marks)
    if exact is None:
        return abs(float(mysql_number(value) or 0))
    if isinstance(value, int):
        return abs(value)
    return marks.mark(abs(exact), _scale(exact))


def _division_operands(left: Any, right: Any) -> tuple[int | float, int | float] | None:
    """Both operands as numbers; None (MySQL's NULL) when either is NULL or the divisor is 0."""
    if left is None or right is None:
        return None
    numerator, denominator = mysql_number(left) or 0, mysql_number(right) or 0
    return None if denominator == 0 else (numerator, denominator)


def integer_divide(left: Any, right: Any) -> int | None:
    """``left DIV right``: the quotient truncated toward zero; NULL for division by zero."""
    operands = _division_operands(left, right)
    if operands is None:
        return None
    numerator, denominator = operands
    if isinstance(numerator, int) and isinstance(denominator, int):
        quotient = abs(numerator) // abs(denominator)
        return quotient if (numerator >= 0) == (denominator >= 0) else -quotient
    return int(Decimal(repr(float(numerator))) / Decimal(repr(float(denominator))))


def modulo(marks: DecimalMarks, left: Any, right: Any) -> int | float | None:
    """``left MOD right`` / ``left % right``: the remainder with the dividend's sign; NULL for 0."""
    operands = _division_operands(left, right)
    if operands is None:
        return None
    numerator, denominator = operands
    if isinstance(numerator, int) and isinstance(denominator, int):
        remainder = abs(numerator) % abs(denominator)
        return remainder if numerator >= 0 else -remainder
    exact_left, exact_right = _exact(left, marks), _exact(right, marks)
    if exact_left is not None and exact_right is not None:  # DECIMAL MOD DECIMAL stays exact
        remainder_exact = exact_left % exact_right  # Decimal % keeps the dividend's sign
        return marks.mark(remainder_exact, max(_scale(exact_left), _scale(exact_right)))
    return math.fmod(float(numerator), float(denominator))


def decimal_literal(marks: DecimalMarks, literal: str) -> float:
    """A DECIMAL literal such as ``1.50`` (prints ``Decimal('1.50')``)."""
    value = Decimal(literal)
    return marks.mark(value, _scale(value))


def cast_decimal(marks: DecimalMarks, value: Any, precision: Any, scale: Any) -> float | None:
    """``CAST(value AS DECIMAL(precision, scale))``: rounded half up to ``scale``, clipped to the range."""
    if value is None:
        return None
    digits, places = int(precision), int(scale)
    exact = _exact(value, marks)
    if exact is None:
        number = mysql_number(value)
        exact = Decimal(repr(float(number or 0)))
    rounded = exact.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP, context=_WIDE)
    limit = Decimal(10) ** (digits - places) - Decimal(1).scaleb(-places)
    rounded = max(-limit, min(limit, rounded))
    return marks.mark(rounded, places)


def cast_signed(value: Any) -> int | None:
    """``CAST(value AS SIGNED)``: text keeps its integer prefix, numbers round half away from zero."""
    if value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(Decimal(repr(value)).quantize(Decimal(1), rounding=ROUND_HALF_UP, context=_WIDE))
    match = re.match(r"\s*([+-]?\d+)", text(value))
    return int(match.group(1)) if match else 0


def cast_double(value: Any) -> float | None:
    """``CAST(value AS DOUBLE)``."""
    if value is None:
        return None
    return float(mysql_number(value) or 0)


def cast_char(value: Any, length: Any = None) -> str | None:
    """``CAST(value AS CHAR[(n)])``: the value's text, cut to ``n`` characters."""
    if value is None:
        return None
    result = _as_text(value)
    return result if length is None else result[: int(length)]


def _as_text(value: Any) -> str:
    """A number as MySQL prints it in a text context (doubles without a trailing ``.0``)."""
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return repr(value).replace("e+", "e")
    return text(value)


def number_literal_text(literal: str, negative: bool = False) -> str:
    """The text MySQL stores when a number literal is put into a text column (``1.50`` -> ``'1.50'``).

    Example:
        >>> number_literal_text("1e3"), number_literal_text("007"), number_literal_text(".5", True)
        ('1000', '7', '-0.5')
    """
    if literal[:2].lower() == "0x":  # a hex literal is a binary string in a text context: 0x41 -> 'A'
        digits = literal[2:]
        return bytes.fromhex(digits if len(digits) % 2 == 0 else "0" + digits).decode("utf-8", "replace")
    if literal[:2].lower() == "0b":
        return literal
    if "e" in literal.lower():
        value = float(literal)
        return _as_text(-value if negative else value)
    exact = Decimal(literal)
    if negative and exact != 0:
        exact = -exact
    result = format(exact, "f")
    return result


def cast_date(marks: DecimalMarks, value: Any) -> str | None:
    """``CAST(value AS DATE)`` / ``DATE(value)``: a DATE (``YYYY-MM-DD``) or NULL."""
    parsed = parse_datetime(value)
    return None if parsed is None else marks.mark_date(parsed.strftime("%Y-%m-%d"))


# -- strings ---------------------------------------------------------------------------------


def substring_index(value: Any, delimiter: Any, count: Any) -> str | None:
    """``SUBSTRING_INDEX(str, delim, count)``: text before the count-th delimiter (from the right if < 0)."""
    if value is None or delimiter is None or count is None:
        return None
    source, separator, number = text(value), text(delimiter), int(mysql_number(count) or 0)
    if not separator or number == 0:
        return ""
    parts = source.split(separator)
    if number > 0:
        return separator.join(parts[:number])
    return separator.join(parts[number:])


MAX_RESULT_CHARS = 1_000_000  # like max_allowed_packet: longer string results are NULL


def _pad(value: Any, length: Any, padding: Any, left: bool) -> str | None:
    if value is None or length is None or padding is None:
        return None
    source, size, filler = text(value), int(mysql_number(length) or 0), text(padding)
    if size < 0 or size > MAX_RESULT_CHARS:
        return None
    if len(source) >= size:
        return source[:size]
    if not filler:
        return None
    needed = size - len(source)
    fill = (filler * (needed // len(filler) + 1))[:needed]
    return fill + source if left else source + fill


def lpad(value: Any, length: Any, padding: Any) -> str | None:
    """``LPAD(str, len, padstr)``."""
    return _pad(value, length, padding, left=True)


def rpad(value: Any, length: Any, padding: Any) -> str | None:
    """``RPAD(str, len, padstr)``."""
    return _pad(value, length, padding, left=False)


def repeat(value: Any, count: Any, limit: int) -> str | None:
    """``REPEAT(str, count)``; NULL when the result would pass ``limit`` bytes (max_allowed_packet)."""
    if value is None or count is None:
        return None
    source, times = text(value), int(mysql_number(count) or 0)
    if times <= 0:
        return ""
    if len(source.encode("utf-8")) * times > limit:
        return None
    return source * times


def truncate(marks: DecimalMarks, value: Any, places: Any) -> int | float | None:
    """``TRUNCATE(x, d)``: ``x`` cut (toward zero) to ``d`` decimals; DECIMAL in, DECIMAL out."""
    if value is None or places is None:
        return None
    digits = int(mysql_number(places) or 0)
    exact = _exact(value, marks)
    if isinstance(value, int) and digits >= 0:
        return value
    source = exact if exact is not None else Decimal(repr(float(mysql_number(value) or 0)))
    if digits >= 0:
        cut = source.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_DOWN, context=_WIDE)
    else:
        step = Decimal(10) ** (-digits)
        cut = (source / step).to_integral_value(rounding=ROUND_DOWN) * step
    if isinstance(value, int):
        return int(cut)
    if exact is not None:
        return marks.mark(cut, max(digits, 0))
    return float(cut)


def round_number(marks: DecimalMarks, value: Any, places: Any = 0) -> int | float | None:
    """``ROUND(x[, d])``: exact values round half away from zero and stay exact; doubles round
    to nearest (``rint``), text is a double."""
    if value is None or places is None:
        return None
    digits = int(mysql_number(places) or 0)
    exact = _exact(value, marks)
    if exact is None:
        number = float(mysql_number(value) or 0)
        return round(number, digits) if digits > 0 else float(round(number, digits))
    quantum = Decimal(1).scaleb(-digits)
    rounded = exact.quantize(quantum, rounding=ROUND_HALF_UP, context=_WIDE) if digits >= 0 else exact
    if digits < 0:
        step = Decimal(10) ** (-digits)
        rounded = (exact / step).quantize(Decimal(1), rounding=ROUND_HALF_UP, context=_WIDE) * step
    if isinstance(value, int):
        return int(rounded)
    return marks.mark(rounded, max(digits, 0))


def stored_text(marks: DecimalMarks, value: Any) -> Any:
    """A computed value as MySQL stores it in a text column (DECIMAL keeps its scale, doubles
    lose a trailing ``.0``)."""
    if isinstance(value, float):
        exact = _exact(value, marks)
        if exact is not None:
            return format(exact, "f")
        return _as_text(value)
    return value


def strcmp(left: Any, right: Any) -> int | None:
    """``STRCMP(a, b)``: -1, 0 or 1 under the column collation."""
    if left is None or right is None:
        return None
    a, b = collation_key(text(left)), collation_key(text(right))
    return (a > b) - (a < b)


def byte_length(value: Any) -> int | None:
    """``LENGTH(str)``: bytes of the UTF-8 text (``CHAR_LENGTH`` counts characters)."""
    if value is None:
        return None
    data = value if isinstance(value, bytes) else _as_text(value).encode("utf-8")
    return len(data)


def regexp_like(timeout: Callable[[], float], pattern: Any, value: Any) -> int | None:
    """``value REGEXP pattern`` (SQLite calls ``regexp(pattern, value)``): case-insensitive search.

    The match runs under the statement's remaining time, so a pathological pattern cannot hang.
    """
    if pattern is None or value is None:
        return None
    try:
        compiled = regex.compile(text(pattern), regex.IGNORECASE | regex.V0)
    except regex.error as error:
        raise ValueError(f"Got error '{error}' from regexp") from None
    try:
        found = compiled.search(_as_text(value), timeout=max(timeout(), 0.001))
    except TimeoutError:
        raise ValueError("Timeout exceeded in regular expression match.") from None
    return int(found is not None)


# -- dates -----------------------------------------------------------------------------------


def parse_datetime(value: Any) -> dt.datetime | None:
    """A MySQL date/datetime text (``2019-05-01``, ``2019-05-01 10:20:30``), else None."""
    if value is None:
        return None
    match = _DATE.match(text(value))
    if not match:
        return None
    parts = [int(part) if part else 0 for part in match.groups()]
    try:
        return dt.datetime(*parts)
    except ValueError:  # handled: an impossible date is NULL, as in MySQL
        return None


def _date_part(value: Any, part: str) -> int | None:
    parsed = parse_datetime(value)
    return None if parsed is None else int(getattr(parsed, part))


def year(value: Any) -> int | None:
    """``YEAR(date)``; NULL when the text is not a date (``YEAR('2019')`` is NULL)."""
    return _date_part(value, "year")


def month(value: Any) -> int | None:
    """``MONTH(date)``."""
    return _date_part(value, "month")


def day(value: Any) -> int | None:
    """``DAY(date)`` / ``DAYOFMONTH(date)``."""
    return _date_part(value, "day")


_FORMAT_CODES: dict[str, Callable[[dt.datetime], str]] = {
    "Y": lambda d: f"{d.year:04d}",
    "y": lambda d: f"{d.year % 100:02d}",
    "m": lambda d: f"{d.month:02d}",
    "c": lambda d: str(d.month),
    "d": lambda d: f"{d.day:02d}",
    "e": lambda d: str(d.day),
    "M": lambda d: d.strftime("%B"),
    "b": lambda d: d.strftime("%b"),
    "W": lambda d: d.strftime("%A"),
    "a": lambda d: d.strftime("%a"),
    "H": lambda d: f"{d.hour:02d}",
    "k": lambda d: str(d.hour),
    "h": lambda d: f"{(d.hour % 12) or 12:02d}",
    "I": lambda d: f"{(d.hour % 12) or 12:02d}",
    "l": lambda d: str((d.hour % 12) or 12),
    "i": lambda d: f"{d.minute:02d}",
    "s": lambda d: f"{d.second:02d}",
    "S": lambda d: f"{d.second:02d}",
    "p": lambda d: "AM" if d.hour < 12 else "PM",
    "j": lambda d: f"{d.timetuple().tm_yday:03d}",
    "T": lambda d: d.strftime("%H:%M:%S"),
}
_STRPTIME = {
    "Y": "%Y", "y": "%y", "m": "%m", "c": "%m", "d": "%d", "e": "%d", "M": "%B", "b": "%b",
    "H": "%H", "k": "%H", "h": "%I", "I": "%I", "i": "%M", "s": "%S", "S": "%S", "p": "%p", "W": "%A", "a": "%a",
}  # fmt: skip
_TIME_CODES = frozenset("HkhIiSsp")


def date_format(value: Any, fmt: Any) -> str | None:
    """``DATE_FORMAT(date, format)`` with MySQL's ``%`` specifiers."""
    parsed = parse_datetime(value)
    if parsed is None or fmt is None:
        return None
    pattern, out, index = text(fmt), [], 0
    while index < len(pattern):
        char = pattern[index]
        if char == "%" and index + 1 < len(pattern):
            code = pattern[index + 1]
            out.append(_FORMAT_CODES[code](parsed) if code in _FORMAT_CODES else code)
            index += 2
        else:
            out.append(char)
            index += 1
    return "".join(out)


def str_to_date(marks: DecimalMarks, value: Any, fmt: Any) -> str | None:
    """``STR_TO_DATE(str, format)``: ``YYYY-MM-DD`` (plus the time when the format has one), else NULL."""
    if value is None or fmt is None:
        return None
    pattern, out, index, has_time = text(fmt), [], 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "%" and index + 1 < len(pattern):
            code = pattern[index + 1]
            has_time = has_time or code in _TIME_CODES
            out.append(_STRPTIME.get(code, "%%" if code == "%" else code))
            index += 2
        else:
            out.append("%%" if char == "%" else char)
            index += 1
    try:
        parsed = dt.datetime.strptime(text(value).strip(), "".join(out))
    except ValueError:  # handled: a text that does not match the format is NULL, as in MySQL's STR_TO_DATE
        return None
    return marks.mark_date(parsed.strftime("%Y-%m-%d %H:%M:%S" if has_time else "%Y-%m-%d"))


INTERVAL_MARK = "\x01interval:"
_INTERVAL_UNITS = {
    "MICROSECOND": "microseconds", "SECOND": "seconds", "MINUTE": "minutes", "HOUR": "hours", "DAY": "days",
    "WEEK": "weeks", "MONTH": "months", "QUARTER": "quarters", "YEAR": "years",
}  # fmt: skip


def interval(amount: Any, unit: Any) -> str | None:
    """``INTERVAL amount UNIT`` as a marked text the date functions read."""
    if amount is None:
        return None
    return f"{INTERVAL_MARK}{mysql_number(amount) or 0}:{text(unit).upper()}"


def shift_date(marks: DecimalMarks, value: Any, step: Any, sign: int = 1) -> str | None:
    """``DATE_ADD(date, INTERVAL n UNIT)`` (``sign=-1``: ``DATE_SUB``); text in, text out, DATE in, DATE out."""
    parsed = parse_datetime(value)
    if parsed is None or step is None or not text(step).startswith(INTERVAL_MARK):
        return None
    amount_text, unit = text(step)[len(INTERVAL_MARK) :].split(":")
    amount = float(amount_text) * sign
    name = _INTERVAL_UNITS.get(unit)
    if name is None:
        return None
    if name in ("months", "quarters", "years"):
        months = int(amount) * {"months": 1, "quarters": 3, "years": 12}[name]
        total = parsed.year * 12 + parsed.month - 1 + months
        year_, month_ = divmod(total, 12)
        last = (dt.date(year_ + (month_ + 1) // 12, (month_ + 1) % 12 + 1, 1) - dt.timedelta(days=1)).day
        result = parsed.replace(year=year_, month=month_ + 1, day=min(parsed.day, last))
    else:
        result = parsed + dt.timedelta(**{name: amount})
    has_time = len(text(value).strip()) > 10 or name in ("microseconds", "seconds", "minutes", "hours")
    printed = result.strftime("%Y-%m-%d %H:%M:%S" if has_time else "%Y-%m-%d")
    return marks.mark_date(printed) if text(value) in marks.dates else printed


def datediff(left: Any, right: Any) -> int | None:
    """``DATEDIFF(a, b)``: days from ``b`` to ``a`` (dates only)."""
    first, second = parse_datetime(left), parse_datetime(right)
    if first is None or second is None:
        return None
    return (first.date() - second.date()).days


def dayname(value: Any) -> str | None:
    """``DAYNAME(date)``."""
    parsed = parse_datetime(value)
    return None if parsed is None else parsed.strftime("%A")


def monthname(value: Any) -> str | None:
    """``MONTHNAME(date)``."""
    parsed = parse_datetime(value)
    return None if parsed is None else parsed.strftime("%B")


def dayofweek(value: Any) -> int | None:
    """``DAYOFWEEK(date)``: 1 = Sunday ... 7 = Saturday."""
    parsed = parse_datetime(value)
    return None if parsed is None else parsed.isoweekday() % 7 + 1


def format_number(value: Any, places: Any) -> str | None:
    """``FORMAT(x, d)``: ``x`` rounded half up to ``d`` decimals with ``,`` thousands separators."""
    if value is None or places is None:
        return None
    digits = min(30, max(0, int(mysql_number(places) or 0)))  # MySQL allows at most 30 decimals
    exact = Decimal(repr(float(mysql_number(value) or 0))) if not isinstance(value, int) else Decimal(value)
    rounded = exact.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP, context=_WIDE)
    return f"{rounded:,.{digits}f}"


def instr(haystack: Any, needle: Any) -> int | None:
    """``INSTR(str, substr)``: 1-based position under the collation (case/accent-insensitive), 0 if absent."""
    if haystack is None or needle is None:
        return None
    folded = collation_fold(text(haystack))
    return folded.find(collation_fold(text(needle))) + 1


def collation_fold(value: str) -> str:
    """Case and accent folded text, one character per character (positions survive)."""
    out = []
    for char in value:
        base = "".join(c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c)).casefold()
        out.append(base if len(base) == 1 else char.lower())
    return "".join(out)


def substring(value: Any, start: Any, length: Any) -> str | None:
    """``MID(str, pos, len)`` / ``SUBSTRING(str, pos, len)``: 1-based, negative ``pos`` counts from the end."""
    if value is None or start is None or length is None:
        return None
    source, position, size = text(value), int(mysql_number(start) or 0), int(mysql_number(length) or 0)
    if position == 0 or size <= 0:
        return ""
    begin = position - 1 if position > 0 else len(source) + position
    if begin < 0:
        return ""
    return source[begin : begin + size]


def ascii_code(value: Any) -> int | None:
    """``ASCII(str)``: the first byte's value, 0 for ''."""
    if value is None:
        return None
    data = text(value).encode("utf-8")
    return data[0] if data else 0


def to_hex(value: Any) -> str | None:
    """``HEX(x)``: a number's hexadecimal digits, or each byte of a string as two digits."""
    if value is None:
        return None
    if isinstance(value, int):
        return format(value if value >= 0 else value + (1 << 64), "X")
    if isinstance(value, float):
        return format(round(value), "X")
    return text(value).encode("utf-8").hex().upper()


def trim(mode: Any, value: Any, remove: Any) -> str | None:
    """``TRIM([BOTH|LEADING|TRAILING] remstr FROM str)``: whole ``remstr`` repeats removed."""
    if value is None or remove is None:
        return None
    result, piece, how = text(value), text(remove), text(mode)
    if not piece:
        return result
    if how in ("BOTH", "LEADING"):
        while result.startswith(piece):
            result = result[len(piece) :]
    if how in ("BOTH", "TRAILING"):
        while result.endswith(piece):
            result = result[: -len(piece)]
    return result


def char_codes(*codes: Any) -> bytes:
    """``CHAR(n, ...)``: the bytes with those codes (a binary string, printed ``b'A'``)."""
    out = bytearray()
    for code in codes:
        if code is not None:
            number = int(mysql_number(code) or 0) % (1 << 32)
            out += number.to_bytes(max(1, (number.bit_length() + 7) // 8), "big")
    return bytes(out)


def space(count: Any) -> str | None:
    """``SPACE(n)``: ``n`` spaces (NULL past the result-size limit)."""
    if count is None:
        return None
    size = max(0, int(mysql_number(count) or 0))
    return None if size > MAX_RESULT_CHARS else " " * size


def rand(seed: Any = None) -> float:
    """``RAND([seed])``: a float in [0, 1)."""
    return random.Random(seed).random() if seed is not None else random.random()


def reverse(value: Any) -> str | None:
    """``REVERSE(str)``."""
    return None if value is None else text(value)[::-1]


def now() -> str:
    """``NOW()``: the local time as ``YYYY-MM-DD hh:mm:ss``."""
    return dt.datetime.now().strftime("%Y-%m-%d %H:%M:%S")


def curdate() -> str:
    """``CURDATE()``."""
    return dt.date.today().isoformat()


def version() -> str:
    """``VERSION()``."""
    return SERVER_VERSION


# -- GROUP_CONCAT -----------------------------------------------------------------------------


class GroupConcat:
    """``GROUP_CONCAT([DISTINCT] expr[, expr...] [ORDER BY key [ASC|DESC], ...] [SEPARATOR s])``.

    The dialect rewrites a call to ``mysql_group_concat(distinct, separator, n, expr..., key, desc, ...)``.
    A row with a NULL expression is skipped; the result is cut at ``group_concat_max_len`` bytes.
    """

    def __init__(self) -> None:
        self.rows: list[tuple[str, list[tuple[Any, bool]]]] = []
        self.distinct = False
        self.separator = ","

    def step(self, distinct: Any, separator: Any, count: Any, *values: Any) -> None:
        self.distinct, self.separator = bool(distinct), text(separator) if separator is not None else ","
        width = int(count)
        parts = values[:width]
        if any(part is None for part in parts):
            return
        keys = [(values[index], bool(values[index + 1])) for index in range(width, len(values) - 1, 2)]
        self.rows.append(("".join(_as_text(part) for part in parts), keys))

    def finalize(self) -> str | None:
        if not self.rows:
            return None
        rows = self.rows
        if self.distinct:
            seen: set[str] = set()
            unique = []
            for row in rows:
                key = collation_key(row[0])
                if key not in seen:
                    seen.add(key)
                    unique.append(row)
            rows = unique
        if rows and rows[0][1]:
            for position in reversed(range(len(rows[0][1]))):
                descending = rows[0][1][position][1]
                rows = sorted(rows, key=lambda row, p=position: _order_key(row[1][p][0]), reverse=descending)
        joined = self.separator.join(row[0] for row in rows)
        data = joined.encode("utf-8")
        if len(data) > GROUP_CONCAT_MAX_LEN:
            joined = data[:GROUP_CONCAT_MAX_LEN].decode("utf-8", "ignore")
        return joined


def _order_key(value: Any) -> tuple[int, Any]:
    if value is None:
        return (0, 0)
    if isinstance(value, int | float):
        return (1, value)
    return (2, collation_key(text(value)))
