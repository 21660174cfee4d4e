"""What the household env confirmed so far: where moved objects are, what was heated, what is held.

Labelers that judge progress (loops, success claims, phantom objects) need the state the
*environment* confirmed, not what the agent wrote. It is read from the env's replies only:
``You pick up the X from the Y``, ``You put the X in/on the Y`` / ``You move the X to the Y``,
``You heat/cool/clean the X using the Y``, ``You slice ...``, ``You turn on the Z``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache

_NAME = r"([a-z]+ \d+)"
# One pass over a reply finds every kind of state change it reports.
_EFFECT = re.compile(
    rf"you pick up the {_NAME} from the {_NAME}"
    rf"|you (?:put|move) the {_NAME} (?:in/on|in|on|to) the {_NAME}"
    rf"|you (heat|cool|clean|slice) the {_NAME}"
    rf"|you turn on the {_NAME}"
)
HAND = "hand"
# Replies that show the agent where it stands: arriving at, examining or opening a receptacle.
_AT = re.compile(
    r"(?:^|\. )(?:on the ([a-z]+ \d+), you see|the ([a-z]+ \d+) is (?:closed|open)|you open the ([a-z]+ \d+))"
)
# Heating clears the cold flag and cooling the hot one (ALFWorld: heat -> isHot on, isCool off);
# cleaning and slicing stay.
_CLEARS = {"heat": "cool", "cool": "heat"}


@dataclass(frozen=True)
class Effect:
    """One state change the env reported: ``kind`` is pick, put, heat, cool, clean, slice or on."""

    kind: str
    obj: str
    place: str | None = None


@lru_cache(maxsize=4096)
def effects(feedback: str) -> tuple[Effect, ...]:
    """The state changes an env reply confirms, in order.

    Example:
        >>> effects("You pick up the mug 1 from the countertop 1.")
        (Effect(kind='pick', obj='mug 1', place='countertop 1'),)
    """
    lowered = feedback.lower()
    if "you " not in lowered:
        return ()
    found: list[Effect] = []
    for match in _EFFECT.finditer(lowered):
        picked, source, moved, place, verb, processed, switched = match.groups()
        if picked:
            found.append(Effect("pick", picked, source))
        elif moved:
            found.append(Effect("put", moved, place))
        elif verb:
            found.append(Effect(verb, processed))
        else:
            found.append(Effect("on", switched))
    return tuple(found)


def reports_effect(lowered: str) -> bool:
    """Whether a lower-case reply reports a state change (``effects`` finds one in it)."""
    return _EFFECT.search(lowered) is not None


def effect_matches(lowered: str) -> Iterator[re.Match[str]]:
    """The state changes a lower-case text reports, one match each, in order; the pattern matches no
    line break and no "\\0", so in replies joined by either each match lies within one reply."""
    return _EFFECT.finditer(lowered)


@dataclass
class HouseState:
    """The confirmed state of the objects the agent changed (others are where the game put them).

    An object put back where it was first picked up counts as untouched, so toggling an
    object between the hand and its place returns to the same ``key()``. ``done`` holds the
    processing flags the env confirmed along the episode, ``(kind, object)`` with kind heat,
    cool, clean, slice or on: a cleaned object stays cleaned, heating clears a cool flag and
    cooling a hot one.
    """

    where: dict[str, str] = field(default_factory=dict)
    origin: dict[str, str] = field(default_factory=dict)
    done: set[tuple[str, str]] = field(default_factory=set)
    puts: list[tuple[str, str]] = field(default_factory=list)
    # Where each object was last put and still lies (also when that is where it was first found).
    placed: dict[str, str] = field(default_factory=dict)
    # Where the agent stands (the receptacle of its last arrival, pick or put) and where each lamp it
    # switched on stands; not part of ``key()``.
    at: str | None = None
    lit: dict[str, str | None] = field(default_factory=dict)
    track_location: bool = False  # read ``at`` from arrivals too (costs a regex per reply; look goals need it)
    _key: frozenset[tuple[str, str]] | None = field(default=None, repr=False, compare=False)

    @property
    def hand(self) -> str | None:
        return next((obj for obj, place in self.where.items() if place == HAND), None)

    def key(self) -> frozenset[tuple[str, str]]:
        """A hashable snapshot: equal snapshots mean nothing the agent did has changed since."""
        if self._key is None:
            self._key = frozenset((*self.where.items(), *self.done))
        return self._key

    def apply(self, feedback: str) -> bool:
        """Update from one env reply; returns whether it changed anything."""
        lowered = feedback.lower()
        if _EFFECT.search(lowered) is None:
            found: tuple[Effect, ...] = ()  # exact: effects() finds what _EFFECT finds (most replies: none)
        else:
            found = effects(feedback) if len(feedback) <= 512 else effects.__wrapped__(feedback)
        if self.track_location:
            arrived = _AT.search(lowered)
            if arrived:
                self.at = next(name for name in arrived.groups() if name)
        if not found:
            return False
        before = self.key()
        self._key = None
        where = self.where
        for effect in found:
            kind, moved, place = effect.kind, effect.obj, effect.place
            if kind == "pick":
                self.at = place or self.at
                self.origin.setdefault(moved, place or "")
                self.placed.pop(moved, None)
                for obj, held in list(where.items()):
                    if held == HAND and obj != moved:
                        del where[obj]
                where[moved] = HAND
            elif kind == "put":
                self.at = place or self.at
                self.puts.append((moved, place or ""))
                self.placed[moved] = place or ""
                if self.origin.get(moved) == place:
                    where.pop(moved, None)
                else:
                    where[moved] = place or ""
            else:
                if kind == "on":
                    self.lit[moved] = self.at
                self.done.add((kind, moved))
                cleared = _CLEARS.get(kind)
                if cleared is not None:
                    self.done.discard((cleared, moved))
        return self.key() != before

    def processed(self, kind: str, obj: str) -> bool:
        """The env confirmed ``obj`` heated / cooled / cleaned (``kind``) and nothing undid it since.

        Example:
            >>> state = HouseState()
            >>> _ = state.apply("You heat the egg 1 using the microwave 1.")
            >>> state.processed("heat", "egg 1"), state.processed("cool", "egg 1")
            (True, False)
        """
        return (kind, obj) in self.done
