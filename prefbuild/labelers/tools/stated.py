"""Facts a message to a person states that nothing the agent was shown holds: an amount, a number of
four digits or more (an id, a card's last digits), a date, or a quoted content it says it read.

The agent's sources at a step are everything it had seen: the prompt (a policy, the tools), every
observation so far (tool results, the person's own words) and its own earlier turns (their calls'
arguments included), so a figure is flagged once, where it first appears. An amount also counts as
found when two figures of the sources make it (a sum, a difference, a product: a fare difference,
two tickets) or some of the results' money fields add up to it (a refund of several payments, an
order's total), since agents compute what they tell.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_AMOUNT = re.compile(
    r"\$\s?(?P<dollars>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"|(?<![\w.,])(?P<plain>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)\s?(?:USD|dollars)\b",
    re.IGNORECASE,
)
# A whole number of four digits or more standing alone (not in "#W93001", "HAT006", "555-123-2002", "1.5").
_LONG_NUMBER = re.compile(r"(?<![\w#.,/-])\d{4,}(?![\w.,/-]\d|[\w-])")
_MONTHS = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10,
    "nov": 11, "dec": 12,
}
_NAMED_DATE = re.compile(
    r"\b(?P<month>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
    r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(?P<year>\d{4}))?",
    re.IGNORECASE,
)
_ISO_DATE = re.compile(r"\b(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})")
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
# The money of a JSON result ("price": 153.23, "amount": 296): what a total or a refund adds up.
_MONEY_FIELD = re.compile(
    r"\"[\w ]*(?:price|amount|total|balance|cost|fee|refund|paid|payment|charge)[\w ]*\"\s*:\s*(\d+(?:\.\d+)?)",
    re.IGNORECASE,
)
_MAX_SUM_CENTS = 10_000_000  # subset sums are read up to $100,000
_DIGITS = re.compile(r"\d+")
# A content the message says it read: 'It contains the line: "..."', 'the note says "..."'.
_READ_QUOTE = re.compile(
    r"\b(?:contains?|containing|says|said|reads|read|shows|showed|returned|returns|displays?)\b[^\"\n]{0,40}?"
    r"\"(?P<quote>[^\"\n]{12,300})\"",
    re.IGNORECASE,
)


class Sources:
    """What the agent had been shown so far, read as it grows (``add``) for the figure checks."""

    def __init__(self) -> None:
        self._texts: list[str] = []  # lower-cased, whitespace collapsed
        self.amounts: set[int] = set()  # every number of the sources, in cents
        self.digit_runs: set[str] = set()
        self.dates: set[tuple[int, int]] = set()  # (month, day)
        self.money: list[int] = []  # the money fields of the results, in cents (subset sums)
        self._sums: int | None = None  # bit k set: some of ``money`` add up to k cents
        self._joined: str | None = None

    def add(self, text: str) -> None:
        """Read one more text the agent was shown (or wrote)."""
        if not text:
            return
        numbers = tuple(cents for cents in map(_cents, _NUMBER.findall(text)) if cents is not None)
        self.amounts.update(numbers)
        self.digit_runs.update(_DIGITS.findall(text))
        self.dates.update(_dates(text))
        self._texts.append(" ".join(text.lower().split()))
        self._joined = None
        money = [cents for cents in map(_cents, _MONEY_FIELD.findall(text)) if cents and cents < _MAX_SUM_CENTS]
        if money:
            self.money.extend(money)
            self._sums = None

    def adds_up_to(self, cents: int) -> bool:
        """Some of the results' money fields, each taken once, add up to ``cents`` (a refund of several
        payments, an order's total)."""
        if not 0 < cents < _MAX_SUM_CENTS or not self.money:
            return False
        if self._sums is None:
            sums = 1
            bounded = sum(self.money) >= _MAX_SUM_CENTS  # else the bits stay within the total
            mask = (1 << _MAX_SUM_CENTS) - 1 if bounded else 0
            for value in self.money:
                sums |= sums << value
                if bounded:
                    sums &= mask
            self._sums = sums
        return bool(self._sums >> cents & 1)

    @property
    def text(self) -> str:
        """Every text read, lower-cased with its whitespace collapsed, one after the other."""
        if self._joined is None:
            self._joined = " ".join(self._texts)
        return self._joined


def read_sources(texts: Iterable[str]) -> Sources:
    """The figures, digit runs and dates of ``texts`` (the prompt, the observations, earlier turns)."""
    sources = Sources()
    for text in texts:
        sources.add(text)
    return sources


def unsupported_statement(message: str, sources: Sources) -> str | None:
    """The first figure, date or read quote of ``message`` that ``sources`` do not hold, described.

    Example:
        >>> sources = read_sources(['{"balance": 10000.0, "binding_card": 1974202140965533}'])
        >>> unsupported_statement("Your balance is $10,000.00 and your card ends in 5533.", sources) is None
        True
        >>> unsupported_statement("There is also a card ending in 8842.", sources)
        "'8842', which nothing the agent was shown holds"
    """
    masked = message
    for match in list(_NAMED_DATE.finditer(message)) + list(_ISO_DATE.finditer(message)):
        date = _date_of(match)
        masked = masked.replace(match.group(0), " " * len(match.group(0)), 1)
        if date is not None and date not in sources.dates:
            return f"the date '{match.group(0)}', which nothing the agent was shown holds"
    for match in _AMOUNT.finditer(masked):
        cents = _cents(match.group("dollars") or match.group("plain"))
        if cents is not None and not _made_from(cents, sources):
            return f"the amount '{match.group(0).strip()}', which no tool returned nor the sources make"
    masked = _AMOUNT.sub(lambda match: " " * len(match.group(0)), masked)
    for match in _LONG_NUMBER.finditer(masked):
        number = match.group(0)
        if not any(run == number or run.endswith(number) for run in sources.digit_runs) and not _made_from(
            int(number) * 100, sources
        ):  # an id, a card's last digits, or a total told without its dollar sign
            return f"'{number}', which nothing the agent was shown holds"
    for match in _READ_QUOTE.finditer(message):
        quote = " ".join(match.group("quote").lower().split()).strip(" .!?,;:")
        if len(quote.split()) >= 4 and quote not in sources.text:
            return f"the quoted content '{match.group('quote')[:60]}', which no tool returned"
    return None


def _cents(text: str) -> int | None:
    try:
        return round(float(text.replace(",", "")) * 100)
    except ValueError:  # handled: "1,2,3" and the like are no figure
        return None


def _made_from(cents: int, sources: Sources) -> bool:
    """``cents`` is a figure of the sources, two of them added, subtracted or multiplied, or a sum of
    the results' money fields."""
    found = sources.amounts
    if cents in found or sources.adds_up_to(cents):
        return True
    for first in found:
        if cents - first in found or first - cents in found:
            return True
        if first and cents * 100 % first == 0 and cents * 100 // first in found:
            return True  # a product of two figures in cents: cents = first * second / 100
    return False


def _dates(text: str) -> set[tuple[int, int]]:
    dates: set[tuple[int, int]] = set()
    for pattern in (_NAMED_DATE, _ISO_DATE):
        for match in pattern.finditer(text):
            date = _date_of(match)
            if date is not None:
                dates.add(date)
    return dates


def _date_of(match: re.Match[str]) -> tuple[int, int] | None:
    month_text = match.group("month")
    month = int(month_text) if month_text.isdigit() else _MONTHS.get(month_text[:3].lower())
    day = int(match.group("day"))
    if month is None or not 1 <= month <= 12 or not 1 <= day <= 31:
        return None
    return month, day
