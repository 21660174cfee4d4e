"""Facts a message to a person states that nothing the agent was shown holds: an amount, a number of
four digits or more (a card's last digits), an order id (``#W7284266``), a date, a clock time, or a
quoted content it says it read.

The agent's sources at a step are everything it had seen: the prompt (a policy, the tools), every
observation so far (tool results, the person's own words) and its own earlier turns (their calls'
arguments included), so a figure is flagged once, where it first appears. Agents compute what they
tell, so an amount also counts as found when it is made of money figures (a result's money fields,
an amount written with ``$``): two of them added or subtracted, one times or divided by a small
count (2 to 9: passengers, items), some money figures of one source added up (an order's total, the
payments of a reservation, the refunds an earlier message listed), or other amounts of the same
message combined (a total of the differences it just listed, a difference per passenger times the
passengers). An amount given as an approximation ("about $1,200", "$7.2k") is not read. A date
counts as found on the day after a time or an end date the sources show (the end of a 24-hour
window, the next billing cycle). A quote is found where its words stand close together in one source
(a light paraphrase of a device's status).
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations

_AMOUNT = re.compile(
    r"\$\s?(?P<dollars>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?P<scale>\s?[kKmM]\b)?"
    r"|(?<![\w.,])(?P<plain>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)\s?(?:USD|dollars)\b",
    re.IGNORECASE,
)
# Words that make the amount after them an approximation, which is not checked.
_APPROXIMATE = re.compile(
    r"(?:about|around|roughly|approximately|approx\.?|nearly|almost|close to|just (?:over|under)|over|under|"
    r"more than|less than|up to|some|~)\s*$",
    re.IGNORECASE,
)
# An order id ("#W7284266"): its digits must be an id the agent was shown.
_HASH_ID = re.compile(r"#[A-Za-z]{0,2}(\d{5,})\b")
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
# A date whose next day a message may name: one with a time ("2024-05-04T23:12:06": a 24-hour window
# ends the next day) or an end date ("cycle_end_date": "2025-02-28": the next cycle starts the day after).
_DATE_WITH_NEXT_DAY = re.compile(
    r"\b(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})(?=[T ]\d{2}:\d{2})"
    r"|end(?:_date)?\"\s*:\s*\"(?P<end_year>\d{4})-(?P<end_month>\d{2})-(?P<end_day>\d{2})",
    re.IGNORECASE,
)
# A clock time, 24-hour ("15:00:00") or with AM/PM ("3:00 PM").
_TIME = re.compile(r"(?<![\d:])(?P<hour>\d{1,2}):(?P<minute>\d{2})(?::\d{2})?(?:\s*(?P<half>[AaPp])\.?[Mm]\b\.?)?")
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
# A number standing alone in a source: not a part of an id ("HAT006", "W93001") nor of a date or a time.
_FIGURE = re.compile(r"(?<![\w.:-])\d[\d,]*(?:\.\d+)?(?![\w:-]|\.\w)")
# The money of a JSON result ("price": 153.23, "amount": 296): what a total or a refund adds up.
_MONEY_FIELD = re.compile(
    r"\"[\w ]*(?:price|amount|total|balance|cost|fee|refund|paid|payment|charge|due)[\w ]*\"\s*:\s*(\d+(?:\.\d+)?)",
    re.IGNORECASE,
)
# A prices object ("prices": {"basic_economy": 65, "economy": 114}): every number inside is money.
_PRICES = re.compile(r"\"\w*prices\"\s*:\s*\{([^{}]*)\}", re.IGNORECASE)
_MONEY_FIELDS_SUMMED = 30  # a result with more money fields than this is not summed (its sums match anything)
# The largest sum of money figures looked for, in cents ($100,000): the sums are bits of one integer, so
# a byte count under a "total" key (10**12 cents) would otherwise ask for terabytes.
_SUMMED_CENTS = 10_000_000
_COUNTS = range(2, 10)  # passengers, items: what a price is multiplied or divided by
_DIGITS = re.compile(r"\d+")
# A content the message says it read: 'It contains the line: "..."', 'the note says "..."'.
_READ_QUOTE = re.compile(
    r"\b(?:contains?|containing|says|said|reads|read|shows|showed|returned|returns|displays?)\b[^\"\n]{0,40}?"
    r"\"(?P<quote>[^\"\n]{12,300})\"",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z0-9']+")
# Words a light paraphrase adds or drops; a negation is never one of them.
_LIGHT_WORDS = frozenset(
    {"a", "an", "the", "is", "are", "was", "were", "be", "it", "its", "and", "of", "to", "in", "on", "fine", "now",
     "your", "my", "with", "at", "for", "that", "this", "still", "currently", "just"}
)


@dataclass(frozen=True)
class _Read:
    """What one source text holds for the figure checks."""

    amounts: frozenset[int]  # every number, in cents
    money: tuple[int, ...]  # money fields and amounts written with "$", in cents
    sums: int  # bit k set where some of ``money`` add up to k cents (0: not summed)
    digit_runs: frozenset[str]
    dates: frozenset[tuple[int, int]]  # (month, day)
    times: frozenset[tuple[int, int]]  # (hour, minute), 24-hour
    words: tuple[str, ...]  # lower-cased


@lru_cache(maxsize=256)  # a run's prompts and policies repeat in every episode
def _read(text: str) -> _Read:
    fields = [cents for cents in map(_cents, _MONEY_FIELD.findall(text)) if cents]
    fields += [cents for inner in _PRICES.findall(text) for cents in map(_cents, _NUMBER.findall(inner)) if cents]
    written = (_amount_cents(match) for match in _AMOUNT.finditer(text) if not match.group("scale"))
    fields += [cents for cents in written if cents]
    return _Read(
        amounts=frozenset(cents for cents in map(_cents, _FIGURE.findall(text)) if cents is not None),
        money=tuple(fields),
        sums=_subset_sums(fields) if 1 < len(fields) <= _MONEY_FIELDS_SUMMED else 0,
        digit_runs=frozenset(_DIGITS.findall(text)),
        dates=frozenset(_dates(text)),
        times=frozenset(time for match in _TIME.finditer(text) if (time := _time_of(match)) is not None),
        words=tuple(_WORD.findall(text.lower())),
    )


class Sources:
    """What the agent had been shown so far, read as it grows (``add``) for the figure checks; a text
    is read only once a message needs checking (most turns are calls)."""

    def __init__(self) -> None:
        self._pending: list[str] = []
        self._texts: list[tuple[str, ...]] = []  # each source's words, lower-cased
        self._amounts: set[int] = set()
        self._money: set[int] = set()
        self._sums: list[int] = []  # per source with money figures: bit k set where some of them add up to k cents
        self._digit_runs: set[str] = set()
        self._dates: set[tuple[int, int]] = set()
        self._times: set[tuple[int, int]] = set()

    def add(self, text: str) -> None:
        """One more text the agent was shown (or wrote)."""
        if text:
            self._pending.append(text)

    def _flush(self) -> None:
        for text in self._pending:
            read = _read(text)
            self._amounts |= read.amounts
            self._money.update(read.money)
            if read.sums:
                self._sums.append(read.sums)
            self._digit_runs |= read.digit_runs
            self._dates |= read.dates
            self._times |= read.times
            self._texts.append(read.words)
        self._pending.clear()

    @property
    def amounts(self) -> set[int]:
        """Every number of the sources, in cents."""
        self._flush()
        return self._amounts

    @property
    def money(self) -> set[int]:
        """The money figures: money fields and amounts written with "$", in cents."""
        self._flush()
        return self._money

    @property
    def digit_runs(self) -> set[str]:
        self._flush()
        return self._digit_runs

    @property
    def times(self) -> set[tuple[int, int]]:
        """Every clock time shown, as (hour, minute) on a 24-hour clock."""
        self._flush()
        return self._times

    @property
    def dates(self) -> set[tuple[int, int]]:
        """Every date shown, and the day after a time or an end date, as (month, day)."""
        self._flush()
        return self._dates

    def adds_up_to(self, cents: int) -> bool:
        """Some money figures of one source, each taken once, add up to ``cents`` (an order's total, the
        payments of a reservation, the refunds an earlier message listed)."""
        self._flush()
        return 0 < cents <= _SUMMED_CENTS and any(sums >> cents & 1 for sums in self._sums)

    def holds_quote(self, quote: str) -> bool:
        """``quote``'s words stand together in one source: all its words but light ones (articles, "is",
        "fine") within a stretch of one source at most twice the quote's length."""
        self._flush()
        words = _WORD.findall(quote.lower())
        needed = {word for word in words if word not in _LIGHT_WORDS}
        if not needed:
            return True
        span = 2 * len(words)
        for text in self._texts:
            if not needed.issubset(text):
                continue
            for start, word in enumerate(text):
                if word in needed and needed.issubset(text[start : start + span]):
                    return True
        return False


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
    for match in _TIME.finditer(masked):
        time = _time_of(match)
        masked = masked.replace(match.group(0), " " * len(match.group(0)), 1)
        # without AM/PM ("3:00-5:00 PM", "at 4:00") a time may be either half of the day
        readings = {time}
        if time is not None and not match.group("half"):
            readings |= {(time[0] % 12, time[1]), (time[0] % 12 + 12, time[1])}
        if time is not None and readings.isdisjoint(sources.times):
            return f"the time '{match.group(0).strip()}', which nothing the agent was shown holds"
    unfound = _unfound_amounts(masked, sources)
    if unfound:
        return f"the amount '{unfound[0]}', which no tool returned nor the figures shown make"
    masked = _AMOUNT.sub(lambda match: " " * len(match.group(0)), masked)
    told = {cents for cents in map(_cents, _NUMBER.findall(message)) if cents in sources.amounts}
    for match in _LONG_NUMBER.finditer(masked):
        number = match.group(0)
        cents = int(number) * 100
        if any(run == number or run.endswith(number) for run in sources.digit_runs):
            continue  # an id, a card's last digits
        if _made_from(cents, sources) or _combines(cents, told - {cents}, set()):
            continue  # a total told without its dollar sign; a difference of figures the message names
        return f"'{number}', which nothing the agent was shown holds"
    for match in _HASH_ID.finditer(message):
        if match.group(1) not in sources.digit_runs:
            return f"the id '{match.group(0)}', which nothing the agent was shown holds"
    for match in _READ_QUOTE.finditer(message):
        quote = match.group("quote")
        if len(quote.split()) >= 4 and not sources.holds_quote(quote):
            return f"the quoted content '{quote[:60]}', which no tool returned"
    return None


def _unfound_amounts(message: str, sources: Sources) -> list[str]:
    """The exact amounts of ``message`` (approximations left out) that neither the sources make nor other
    amounts of the message add or subtract to, as written."""
    amounts: list[tuple[str, int]] = []
    for match in _AMOUNT.finditer(message):
        cents = _amount_cents(match)
        before = message[max(0, match.start() - 16) : match.start()]
        if cents is None or match.group("scale") or _APPROXIMATE.search(before):
            continue
        amounts.append((match.group(0).strip(), cents))
    backed = {cents for _, cents in amounts if _made_from(cents, sources)}
    unfound = [(text, cents) for text, cents in amounts if cents not in backed]
    changed = True
    while unfound and changed:  # a total of the message's own figures: each pass may back the next
        changed = False
        for text, cents in list(unfound):
            if _combines(cents, backed, sources.money):
                backed.add(cents)
                unfound.remove((text, cents))
                changed = True
    return [text for text, _ in unfound]


def _combines(cents: int, backed: set[int], money: set[int]) -> bool:
    """``cents`` is two or three of the message's backed amounts added, two subtracted (either times a
    small count), or one of them plus or minus a money figure of the sources, or times or divided by a
    small count."""
    for first, second in combinations(backed, 2):
        made = (first + second, abs(first - second))
        if cents in made or any(cents == value * count for value in made for count in _COUNTS):
            return True  # a total, a difference, or one per passenger times the passengers
    if any(cents == sum(three) for three in combinations(backed, 3)):
        return True
    return any(
        cents - first in money
        or first - cents in money
        or cents + first in money
        or any(cents == first * count or cents * count == first for count in _COUNTS)
        for first in backed
    )


def _made_from(cents: int, sources: Sources) -> bool:
    """``cents`` is a number of the sources, some money fields of one result added up, two money figures
    added or subtracted, or one multiplied or divided by a small count."""
    if cents in sources.amounts or sources.adds_up_to(cents):
        return True
    money = sources.money
    for first in money:
        if cents - first in money or first - cents in money:
            return True
    return any(cents * count in money or (cents % count == 0 and cents // count in money) for count in _COUNTS)


def _subset_sums(values: list[int]) -> int:
    """The sums of ``values``, each taken once, as bits: bit k is set where some of them add up to k
    (k up to ``_SUMMED_CENTS``: every such sum is found, since no value is negative).

    Example:
        >>> bin(_subset_sums([1, 2]))
        '0b1111'
    """
    sums, kept = 1, (1 << (_SUMMED_CENTS + 1)) - 1
    for value in values:
        if value <= _SUMMED_CENTS:
            sums = (sums | sums << value) & kept
    return sums


def _amount_cents(match: re.Match[str]) -> int | None:
    return _cents(match.group("dollars") or match.group("plain"))


def _cents(text: str) -> int | None:
    try:
        return round(float(text.replace(",", "")) * 100)
    except ValueError:  # handled: "1,2,3" and the like are no figure
        return None


def _dates(text: str) -> set[tuple[int, int]]:
    dates: set[tuple[int, int]] = set()
    for pattern in (_NAMED_DATE, _ISO_DATE):
        for match in pattern.finditer(text):
            date = _date_of(match)
            if date is not None:
                dates.add(date)
    for match in _DATE_WITH_NEXT_DAY.finditer(text):
        named = ("year", "month", "day") if match.group("year") else ("end_year", "end_month", "end_day")
        year, month, day = match.group(*named)
        try:
            following = datetime.date(int(year), int(month), int(day)) + datetime.timedelta(days=1)
        except ValueError:  # handled: not a calendar date ("2024-02-31"): no next day to allow
            continue
        dates.add((following.month, following.day))
    return dates


def _date_of(match: re.Match[str]) -> tuple[int, int] | None:
    month_text = match.group("month")
    month = int(month_text) if month_text.isdigit() else _MONTHS.get(month_text[:3].lower())
    day = int(match.group("day"))
    if month is None or not 1 <= month <= 12 or not 1 <= day <= 31:
        return None
    return month, day


def _time_of(match: re.Match[str]) -> tuple[int, int] | None:
    hour, minute, half = int(match.group("hour")), int(match.group("minute")), match.group("half")
    if half is not None:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if half.lower() == "p" else 0)
    if hour > 23 or minute > 59:
        return None
    return hour, minute
