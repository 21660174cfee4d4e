"""Loops: the agent repeats itself and learns nothing.

Real agent loops are stagnation more than exact periodic replays: sweeps of a dozen places
replayed, laps where one slot varies (go to cabinet N, try to put the mug in cabinet N),
re-sweeps in another order, an immediate repeat with an identical reply, revisits at any
distance, and identical thoughts (``think: ...`` turns answered ``OK.``). So a step is a
loop when it repeats an earlier step and nothing came of either:

* **repeat**: the same *executed* command in canonical form (``move X to Y`` = ``put X in/on
  Y``; AgentBench's snapped command, not the written one), or the same thought (case and
  punctuation ignored); or, for laps, a block of up to ``max_cycle`` steps that replays the
  block before it with one entity swapped for another throughout;
* **stagnation**: the env's reply brings nothing new (no entity or receptacle content the
  agent had not seen), and the confirmed state is the one of the earlier occurrence (same
  object in hand, nothing moved, heated, cooled, cleaned or switched on since).

Returning to a place and then successfully doing something there (fetching the object seen
there) is purposeful, not a loop. The first occurrence is never labelled, only repeats,
from the first repeated element on.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterator, Sequence
from functools import lru_cache
from itertools import pairwise
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from prefbuild.envs.household.catalog import RECEPTACLE_TYPES
from prefbuild.labelers.base import Labeler
from prefbuild.labelers.household_state import HAND, HouseState, effect_matches, reports_effect
from prefbuild.labelers.household_text import _NAME_ASCII_RE, _NAME_RE, entities
from prefbuild.labelers.invalid_action import mentions
from prefbuild.labelers.text import (
    canonical_command,
    executed_command,
    format_steps,
    is_nothing_happens,
    normalize_text,
    short,
    task_observation,
)
from prefbuild.records import FailureMode, Label, Step, Trajectory

_CONTENTS_RE = re.compile(r"(?:on the ([a-z]+ \d+), you see|the ([a-z]+ \d+) is open\. in it, you see) ([^.]*)")
_PUNCTUATION = re.compile(r"[^\w\s/]+")
_ENTITY = re.compile(r"\b[a-z]+ \d+\b")


def info_keys(feedback: str, state: HouseState | None = None) -> frozenset[Hashable]:
    """What a reply tells the agent: entity names and the contents it shows of each receptacle.

    Text without any entity (SQL results, tool output, ``OK.``) is its own piece of
    information; "Nothing happens." tells nothing. With ``state``, what the agent moved itself
    is not news: a receptacle's contents count the objects taken from it as still there and
    those the agent put there as absent.

    Example:
        >>> sorted(map(str, info_keys("On the desk 1, you see a pen 2.")))[:2]
        ["('contents', 'desk 1', frozenset({'pen 2'}))", 'desk 1']
    """
    plain, contents = _parsed_reply(feedback)
    if not contents or state is None or not (state.origin or state.where):
        return plain
    return _Adjust(state)(plain, contents)


class _Adjust:
    """Replies' information keys as ``info_keys`` adjusts them for one state: per receptacle, the
    objects the agent put there (absent) and those it took from there (still there)."""

    def __init__(self, state: HouseState) -> None:
        self._moved_in: dict[str, set[str]] = {}
        self._taken: dict[str, set[str]] = {}
        for obj, place in state.where.items():
            self._moved_in.setdefault(place, set()).add(obj)
        for obj, origin in state.origin.items():
            if obj in state.where:
                self._taken.setdefault(origin, set()).add(obj)

    def __call__(
        self, plain: frozenset[Hashable], contents: tuple[tuple[str, frozenset[str]], ...]
    ) -> frozenset[Hashable]:
        keys: set[Hashable] | None = None
        for receptacle, items in contents:
            moved_in, taken = self._moved_in.get(receptacle), self._taken.get(receptacle)
            if moved_in is None and taken is None:
                continue  # nothing moved to or from it: the listing stands
            adjusted = frozenset((items - (moved_in or set())) | (taken or set()))
            if adjusted != items:
                if keys is None:
                    keys = set(plain)
                keys.discard(("contents", receptacle, items))
                keys.add(("contents", receptacle, adjusted))
        return plain if keys is None else frozenset(keys)


class _Novelty:
    """Whether each step brought something new, worked out only as far as asked: most episodes with a
    repeated command are settled by the state alone (the walk back with the object in hand)."""

    def __init__(self, values: Iterator[bool]) -> None:
        self._pending = values  # one value per step, in order
        self._values: list[bool] = []

    def __getitem__(self, index: int) -> bool:
        """Whether step ``index`` (>= 0) brought something new."""
        values = self._values
        while len(values) <= index:
            values.append(next(self._pending))
        return values[index]


@lru_cache(maxsize=4096)
def _parsed_reply(feedback: str) -> tuple[frozenset[Hashable], tuple[tuple[str, frozenset[str]], ...]]:
    """The information keys of a reply and the receptacle contents it shows (cached: replies repeat)."""
    if is_nothing_happens(feedback):
        return frozenset(), ()
    lowered = feedback.lower()
    contents: list[tuple[str, frozenset[str]]] = []
    if not _may_list(lowered):
        keys: set[Hashable] = set(entities(lowered))
    elif "\n" in lowered:
        keys = set(entities(lowered))
        for match in _CONTENTS_RE.finditer(lowered):
            receptacle = match.group(1) or match.group(2)
            items = entities(match.group(3))
            contents.append((receptacle, items))
            keys.add(("contents", receptacle, items))
    else:
        # One pass finds the names and where they stand (``entities`` reads a one-line text in one findall);
        # a listing's items are the names inside its list, as ``entities`` of the list finds them: the list
        # follows "you see " and ends at a period or the text's end, so no name found in the text crosses its
        # end, and one crossing its start ("see 2") leaves only digits there, where no name can start.
        named = [
            (found.start(), found.end(), found.group())
            for found in (_NAME_ASCII_RE if lowered.isascii() else _NAME_RE).finditer(lowered)
        ]
        keys = {name for _, _, name in named}
        for match in _CONTENTS_RE.finditer(lowered):
            receptacle = match.group(1) or match.group(2)
            start, end = match.span(3)
            items = frozenset(name for first, last, name in named if first >= start and last <= end)
            contents.append((receptacle, items))
            keys.add(("contents", receptacle, items))
    if not keys and lowered.strip():
        keys.add(("text", normalize_text(lowered)))
    return frozenset(keys), tuple(contents)


def _may_list(lowered: str) -> bool:
    """Whether a lower-case text may show a receptacle's contents: a listing says "on the X, you see ..." or
    "the X is open. in it, you see ...", and without those words there is none (the room's description,
    "around you, you see ...", lists no receptacle's contents)."""
    return ("on the " in lowered and ", you see " in lowered) or " is open. in it, you see " in lowered


class _Shown:
    """Membership in ``info_keys(text)`` (what a text told, no state), read from the text only as far as
    asked: an entity name is looked up in the text itself, the text is parsed in full only for other keys."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._lowered = text.lower()
        self._none = is_nothing_happens(text)  # "Nothing happens." tells nothing
        self._keys: frozenset[Hashable] | None = None

    def holds(self, keys: frozenset[Hashable] | set[Hashable]) -> bool:
        """Whether every one of ``keys`` is among the text's keys."""
        if self._none:
            return not keys
        lowered = self._lowered
        others = False
        for key in keys:
            if isinstance(key, str):  # a name: in the text's keys exactly when the text mentions it
                if not mentions(lowered, key):
                    return False
            elif key[0] == "contents" and not _may_list(lowered):  # type: ignore[index]
                return False  # the text shows no receptacle's contents
            else:
                others = True
        if not others:
            return True
        if self._keys is None:
            self._keys = info_keys(self._text)
        return all(key in self._keys for key in keys)


def step_key(step: Step) -> str | None:
    """What a step did, comparable across steps: the executed command, or ``think: <thought>``."""
    command = executed_command(step)
    if command is not None:
        return command
    return _thought_key(step.thought) if step.thought else None


@lru_cache(maxsize=4096)
def _thought_key(thought: str) -> str | None:
    words = normalize_text(_PUNCTUATION.sub(" ", thought))
    return f"think: {words}" if words else None


def _slot_swap(earlier: list[str | None], later: list[str | None]) -> tuple[str, str] | None:
    """The one entity swap (``cabinet 1`` -> ``cabinet 2``) that turns ``earlier`` into ``later``."""
    swap: tuple[str, str] | None = None
    for old, new in zip(earlier, later, strict=True):
        if old is None or new is None:
            return None
        if old == new:
            continue
        old_names, new_names = _ENTITY.findall(old), _ENTITY.findall(new)
        if len(old_names) != len(new_names) or _masked(old) != _masked(new):
            return None
        for a, b in zip(old_names, new_names, strict=True):
            if a == b:
                continue
            if swap is None and a.rsplit(" ", 1)[0] == b.rsplit(" ", 1)[0]:
                swap = (a, b)
            elif swap != (a, b):
                return None
    return swap


@lru_cache(maxsize=4096)
def _masked(key: str) -> str:
    """The key with every entity name masked (``go to cabinet 3`` -> ``go to #``)."""
    return _ENTITY.sub("#", key)


def _may_repeat(keys: list[str | None], masked: list[str | None]) -> bool:
    """Cheap pre-check: some key occurs twice, or two consecutive keys recur with names masked
    (``masked`` holds the keys with names masked)."""
    if None not in keys:  # every step has a key (the common case): no None to leave out
        return len(set(keys)) < len(keys) or len(set(pairwise(masked))) < len(masked) - 1
    present = [key for key in keys if key is not None]
    if len(set(present)) < len(present):
        return True
    pairs = [(a, b) for a, b in pairwise(masked) if a is not None and b is not None]
    return len(set(pairs)) < len(pairs)


def _well_formed(step: Step, key: str) -> bool:
    """The command ran as the canonical spelling: its failure is about the world, not its spelling
    (``go to cabinet 2.`` in a ReAct run fails for its period)."""
    if step.facts.problems or step.normalized:
        return False  # the parser had to read it (a tag dropped, markdown, a period): a spelling problem
    ran = step.facts.executed_action if step.facts.executed_action is not None else step.action
    return ran is not None and ran.strip().lower() == key


def _failed_variants(steps: list[Step], keys: list[str | None], masked: list[str | None]) -> list[tuple[int, int]]:
    """(earlier, later) well-formed command steps, thoughts aside, that both did nothing and differ
    in one slot (``take apple 1 from countertop 1`` then ``take apple 2 from countertop 1``); ``masked``
    holds the keys with names masked."""
    found: list[tuple[int, int]] = []
    previous: int | None = None
    for index, key in enumerate(keys):
        if key is None or key.startswith("think: "):
            continue
        if (
            previous is not None
            # cheap pre-check for the slot swap or the put elsewhere: the commands differ, and with names
            # masked they are the same (a slot swapped), or both are puts
            and (earlier := keys[previous] or "") != key
            and (masked[previous] == masked[index] or (earlier.startswith("put ") and key.startswith("put ")))
            and is_nothing_happens(steps[index].feedback)
            and is_nothing_happens(steps[previous].feedback)
            and (swap := _slot_swap([keys[previous]], [key]) or _put_elsewhere(keys[previous], key)) is not None
            and _well_formed(steps[index], key)
            and _well_formed(steps[previous], keys[previous] or "")
            and not _listed_object(swap, steps, index)
        ):
            found.append((previous, index))
        previous = index
    return found


def _accidents(
    steps: list[Step], states: list[frozenset[tuple[str, str]]], after: list[frozenset[tuple[str, str]]]
) -> list[tuple[int, frozenset[str], str]]:
    """Steps where the harness ran another command than the one written and it changed the state (a put
    snapped onto the place the agent stood at), with the names that command touched and the object it moved."""
    found: list[tuple[int, frozenset[str], str]] = []
    for index, step in enumerate(steps):
        ran = step.facts.executed_action
        if ran is not None and states[index] != after[index] and not _as_written(step):
            executed = canonical_command(ran) or ""
            moved = _MOVED.match(executed)
            found.append((index, entities(executed), moved.group(1) if moved else ""))
    return found


def _redoes(step: Step, key: str, since: int, accidents: list[tuple[int, frozenset[str], str]]) -> bool:
    """The step fetches back what a snapped command moved by accident after ``since``: as written, a command
    on the names it touched (``go to desk 2``, ``take pencil 2 from desk 2``); snapped itself, a written
    command on the very object it moved (``take vase 2 from coffeetable 1`` run as ``go to coffeetable 1``)."""
    if not accidents:
        return False  # nothing moved by accident (most episodes)
    written = _as_written(step)
    named = entities(canonical_command(step.action) or "") if not written else frozenset()
    for moved_at, names, obj in accidents:
        if since < moved_at < step.index and ((names & entities(key)) if written else (obj and obj in named)):
            return True
    return False


def _as_written(step: Step) -> bool:
    """The harness ran the command the agent wrote (no snap onto another one)."""
    ran = step.facts.executed_action
    return ran is None or canonical_command(ran) == canonical_command(step.action)


_PUT_INTO = re.compile(r"^put ([a-z]+ \d+) in/on ([a-z]+ \d+)$")


def _put_elsewhere(earlier: str | None, later: str) -> tuple[str, str] | None:
    """The same object put into another receptacle of any type (``put apple 2 in/on diningtable 1``, then
    ``... in/on shelf 1``): after a put that did nothing, a string of places tried from where the agent
    stands."""
    first, second = _PUT_INTO.match(earlier or ""), _PUT_INTO.match(later)
    if first is None or second is None or first.group(1) != second.group(1) or first.group(2) == second.group(2):
        return None
    return first.group(2), second.group(2)


def _listed_object(swap: tuple[str, str], steps: list[Step], index: int) -> bool:
    """The swap tries another object of the same type that the episode showed before step ``index``
    (``cool bread 1`` did nothing, then ``cool bread 2``, listed on the table): a new hypothesis, not a
    refuted guess."""
    old, new = swap
    kind = new.rsplit(" ", 1)[0]
    if kind != old.rsplit(" ", 1)[0] or kind in RECEPTACLE_TYPES:
        return False
    if new in entities(task_observation(steps[0].observation).lower()):
        return True
    return any(new in entities(step.feedback.lower()) for step in steps[:index])


# is_nothing_happens() reads "nothing happens" or "nothing happened" (any case) in a reply: both hold this.
_NOTHING_PHRASE = "nothing happen"
_ERRAND = re.compile(r"^(?:put|heat|cool|clean|slice) ")
_MOVED = re.compile(r"^(?:put|take|heat|cool|clean|slice) ([a-z]+ \d+)")
# Commands that report where the agent is or what it holds: a repeat is a loop only with the same reply.
_SITUATION = frozenset({"look", "inventory"})
_WRITTEN_TAKE = re.compile(r"^take ([a-z]+) (\d+) from ([a-z]+ \d+)$")


def _refuted_guesses(steps: list[Step], written: list[str | None]) -> list[tuple[int, int]]:
    """(earlier, later) consecutive written takes of one object type from one receptacle with another
    number, neither of which got that object, where the later one names an object the receptacle's last
    listing did not show (``take saltshaker 1``, snapped onto ``take spoon 1``, then ``take saltshaker 2``
    where the countertop listed only the spoon): guessing numbers the episode has already ruled out, also
    when the harness snapped each guess onto some other command; ``written`` holds each step's
    canonical written command."""
    # Every written take puts a "\0take " in this text (other commands may add more): a candidate needs two.
    if ("\0" + "\0".join(filter(None, written))).count("\0take ") < 2:
        return []
    candidates: list[tuple[int, int, re.Match[str]]] = []
    last = -1  # the last step with a command, and its written take
    guess: re.Match[str] | None = None
    for index, (step, command) in enumerate(zip(steps, written, strict=True)):
        if step.action is None:
            continue
        # the pattern is anchored on "take ": other commands cannot match it
        take = _WRITTEN_TAKE.match(command) if command and command.startswith("take ") else None
        if (
            take is not None
            and guess is not None
            and (guess.group(1), guess.group(3)) == (take.group(1), take.group(3))
            and guess.group(2) != take.group(2)
        ):
            candidates.append((last, index, take))
        last, guess = index, take
    found: list[tuple[int, int]] = []
    for earlier, later, take in candidates:
        kind, receptacle = take.group(1), take.group(3)
        shown = next(
            (items for i in range(later - 1, -1, -1) for place, items in _parsed_reply(steps[i].feedback)[1]
             if place == receptacle),
            None,
        )
        got = any(f"you pick up the {kind}" in steps[i].feedback.lower() for i in (earlier, later))
        if shown is not None and f"{kind} {take.group(2)}" not in shown and not got:
            found.append((earlier, later))
    return found


def _reporting(steps: list[Step], replies: str) -> list[int]:
    """The steps whose reply reports a state change (``HouseState.apply`` changes nothing on the others),
    found in one search of ``replies``, the replies lower-case and joined by "\\0"."""
    if replies.count("\0") != len(steps) - 1:  # a reply holds a "\0" itself: ask each reply
        return [index for index, step in enumerate(steps) if reports_effect(step.feedback.lower())]
    found: list[int] = []
    index, position = 0, 0
    for match in effect_matches(replies):  # no match spans a "\0": each lies in one reply
        index += replies.count("\0", position, match.start())
        position = match.start()
        if not found or found[-1] != index:
            found.append(index)
    return found


def _progress(state: HouseState) -> frozenset[tuple[str, str]]:
    """The confirmed state that matters for a repeat: what is held, moved and processed. A lamp switched
    on changes nothing at the places already searched (a re-sweep after ``use desklamp 1`` is a loop)."""
    key = state.key()
    if not state.done:
        return key  # no flag, so no lamp switched on
    switched = {flag for flag in state.done if flag[0] == "on"}
    return key - switched if switched else key


# What the agent moved: (object, where it is now, where it was first taken from).
Moves = frozenset[tuple[str, str, str]]


def _moves(state: HouseState) -> Moves:
    return frozenset((obj, place, state.origin.get(obj, "")) for obj, place in state.where.items())


def _bearing(moves: Moves, place: str) -> Moves:
    """The moves that bear on a walk to ``place``: what is in hand, and what was taken from or put there."""
    return frozenset(move for move in moves if move[1] == HAND or place in (move[1], move[2]))


def _same_reply(first: Step, second: Step) -> bool:
    return first.feedback == second.feedback or normalize_text(first.feedback) == normalize_text(second.feedback)


def _tool_result_changed(first: Step, second: Step) -> bool:
    """The same tool call answered with another JSON result: what it reads changed in between (the
    order looked up again after its cancel), which the household state does not track."""
    return second.feedback.lstrip()[:1] in ("{", "[") and not _same_reply(first, second)


_MARKER = re.compile(r"^[\s>]+|[\s.]+$")
_MARKUP = re.compile(r"[*`'\"<>{}\[\]]")


def _written(step: Step) -> str:
    """The command line as the agent wrote it, only a ``> `` marker, case, spaces and a final period
    ignored (markup, tags and prefixes kept: ``**go to cabinet 1**`` and ```go to cabinet 1``` differ),
    dialect spellings merged."""
    line = " ".join(_MARKER.sub("", step.raw_output.strip().split("\n", 1)[0]).lower().split())
    return line if _MARKUP.search(line) else canonical_command(line) or ""


def _respelled(steps: list[Step], earlier: list[int], index: int) -> bool:
    """The step did nothing, like every earlier occurrence of its command, and the agent wrote it in a
    new way (tool-call tags, then a prefix, then markdown): it is trying to get the format right, not
    repeating itself. Played as written (no harness snap) and read by the parser as the same command."""
    step = steps[index]
    if step.facts.executed_action is not None or not is_nothing_happens(step.feedback):
        return False
    if not all(is_nothing_happens(steps[i].feedback) and steps[i].facts.executed_action is None for i in earlier):
        return False
    return _written(step) not in {_written(steps[i]) for i in earlier}


def _is_command(key: str | None) -> bool:
    return key is not None and not key.startswith("think: ")


def _next_command(keys: list[str | None], index: int) -> int | None:
    return next((later for later in range(index + 1, len(keys)) if _is_command(keys[later])), None)


def _reacts_to_news(keys: list[str | None], novel: _Novelty, since: int, index: int) -> bool:
    """The thought at ``index``, a repeat of the one at ``since``, reacts to something new: the last
    command before it came after ``since`` and brought news, and the thought does not lead into a
    replay. A thought about the place just seen ("The pen is not here.") leads into a replay only when
    its next command is the one that followed ``since`` again; a thought about nothing here ("I need to
    find a cup.") as soon as its next command is any command run before, bringing nothing new."""
    last = next((earlier for earlier in range(index - 1, since, -1) if _is_command(keys[earlier])), None)
    if last is None or not novel[last]:
        return False
    after = _next_command(keys, index)
    if after is None or novel[after]:
        return True
    if _ABOUT_HERE.search(keys[index] or "") or _names_place((keys[index] or ""), keys[last] or ""):
        after_earlier = _next_command(keys, since)
        return after_earlier is None or keys[after] != keys[after_earlier]
    return keys[after] not in keys[:index]


_ABOUT_HERE = re.compile(r"\b(?:here|this|there)\b")


def _names_place(thought_key: str, command_key: str) -> bool:
    """The thought names the place the last command went to or opened."""
    return any(name in thought_key for name in _ENTITY.findall(command_key))


class LoopLabeler(Labeler):
    """Labels steps that repeat an earlier command or thought (or replay a lap with one slot
    varied) while nothing new was seen and nothing changed."""

    name: ClassVar[str] = "loop"
    mode: ClassVar[str] = FailureMode.loop.value
    version: ClassVar[int] = 5
    defaults: ClassVar[dict[str, object]] = {
        "k": 2,  # occurrence from which a stagnant repeat is labelled (2 = the first repeat)
        "max_cycle": 10,  # longest script / lap (in steps) compared for replays
        "thoughts": True,  # identical thoughts are repeats too
    }

    class Params(BaseModel):
        """Loop parameters with their bounds (``loop.k=-3`` is refused, not read as 2)."""

        model_config = ConfigDict(extra="forbid")
        k: int = Field(default=2, ge=2, description="Occurrence from which a stagnant repeat is labelled (2 = the "
                       "first repeat).")
        max_cycle: int = Field(
            default=10, ge=1, description="Longest script / lap (in steps) compared for replays; 1 = no block replays."
        )
        thoughts: bool = Field(default=True, description="Identical thoughts are repeats too.")

    def label(self, trajectory: Trajectory) -> list[Label]:
        steps = trajectory.steps
        if not steps:
            return []
        written = [canonical_command(step.action) for step in steps]
        keys = [
            command if (executed := step.facts.executed_action) is None else canonical_command(executed)
            for step, command in zip(steps, written, strict=True)
        ]
        if None in keys:
            for index, key in enumerate(keys):  # step_key: a turn without a command is its thought
                if key is None and (thought := steps[index].thought):
                    keys[index] = _thought_key(thought)
        if not self.config["thoughts"]:
            keys = [None if key is not None and key.startswith("think: ") else key for key in keys]
        masked = [_masked(key) if key is not None else None for key in keys] if None in keys else [*map(_masked, keys)]
        # The replies of the episode, lower-case, one per segment ("\0" cannot occur in a pattern searched here).
        replies = "\0".join([step.feedback for step in steps]).lower()
        # Each reply that is "Nothing happens." holds the phrase: a failed variant needs two of them.
        guesses = _failed_variants(steps, keys, masked) if replies.count(_NOTHING_PHRASE) >= 2 else []
        refuted = _refuted_guesses(steps, written)
        if not guesses and not refuted and not _may_repeat(keys, masked):
            return []
        states, novel, final, moves = self._replay(steps, replies)
        found: dict[int, Label] = {}
        self._exact(trajectory, keys, [*states[1:], final], states, novel, moves, found)
        if int(self.config["k"]) <= 2:  # a replayed script or lap is two occurrences
            self._replays(keys, novel, found)
            self._laps(keys, masked, states, novel, found)
            self._guesses(guesses, keys, states, novel, found)
            self._refuted(refuted, steps, novel, found)
        return [found[index] for index in sorted(found)]

    @staticmethod
    def _replay(
        steps: list[Step], replies: str
    ) -> tuple[list[frozenset[tuple[str, str]]], _Novelty, frozenset[tuple[str, str]], list[Moves]]:
        """The confirmed state before each step, whether each step brought something new (a reply
        showing what the agent had not seen, or a state never reached before; worked out only when
        first asked), and the moves made before each step (``replies``: the steps' replies, lower-case,
        joined by "\\0")."""
        state = HouseState()
        states: list[frozenset[tuple[str, str]]] = []
        moves: list[Moves] = []
        reached: list[frozenset[tuple[str, str]]] = []  # the state's key after each step
        adjusts: list[_Adjust | None] = []  # how each step's reply is read in the state it left
        snapshot = state.key()
        progress, moved, adjust = _progress(state), _moves(state), None
        start = 0  # the first step not in the lists yet
        for index in _reporting(steps, replies):  # the others' replies leave the state as it is
            if not state.apply(steps[index].feedback):
                continue
            run = index - start  # steps start..index-1 changed nothing
            states += [progress] * (run + 1)
            moves += [moved] * (run + 1)
            reached += [snapshot] * run
            adjusts += [adjust] * run
            snapshot = state.key()
            progress, moved = _progress(state), _moves(state)
            adjust = _Adjust(state) if state.origin or state.where else None
            reached.append(snapshot)
            adjusts.append(adjust)
            start = index + 1
        run = len(steps) - start
        states += [progress] * run
        moves += [moved] * run
        reached += [snapshot] * run
        adjusts += [adjust] * run

        def novelty() -> Iterator[bool]:
            # What was seen: what the task's observation told, and ``seen``, the keys of the replies that
            # brought news and those found in the observation, asked of ``shown`` only when not in ``seen``.
            shown = _Shown(task_observation(steps[0].observation))
            seen: set[Hashable] = set()
            visited = {HouseState().key()}
            for step, key, reading in zip(steps, reached, adjusts, strict=True):
                plain, contents = _parsed_reply(step.feedback)
                keys = reading(plain, contents) if contents and reading is not None else plain
                if keys <= seen:
                    news = False
                elif shown.holds(unseen := keys - seen):
                    news = False
                    seen |= unseen  # the observation told them
                else:
                    news = True
                    seen |= keys
                # a state never reached is news (switching the lamp on, though it changes nothing elsewhere)
                yield news or key not in visited
                visited.add(key)

        return states, _Novelty(novelty()), progress, moves

    @staticmethod
    def _purposeful(
        steps: list[Step], keys: list[str | None], novel: _Novelty, changed: list[bool], index: int
    ) -> bool:
        """A ``go to`` whose next command there (thoughts aside) brought something new or changed the
        confirmed state: fetching the object seen there, opening it, putting something in."""
        key = keys[index]
        if key is None or not key.startswith("go to ") or is_nothing_happens(steps[index].feedback):
            return False
        place = key[len("go to ") :]
        for later in range(index + 1, len(steps)):
            if steps[later].action is None:
                continue
            following = keys[later] or ""
            # An errand there with an object in hand, or believed in hand, tried for the first time
            # ("put egg 1 in/on countertop 1" after the walk back) is a purpose even when it fails.
            errand = _ERRAND.match(following) is not None and place in following and following not in keys[:later]
            return errand or (not following.startswith("go to ") and (changed[later] or novel[later]))
        return False

    def _exact(
        self,
        trajectory: Trajectory,
        keys: list[str | None],
        after: list[frozenset[tuple[str, str]]],
        states: list[frozenset[tuple[str, str]]],
        novel: _Novelty,
        moves: list[Moves],
        found: dict[int, Label],
    ) -> None:
        """Stagnant repeats of one command or thought from one state; with ``k`` occurrences or more,
        every repeat is labelled. A walk also repeats an earlier one when only things elsewhere changed
        in between (the first creditcard put on the dresser, then drawer 1 and drawer 2 visited again)."""
        steps = trajectory.steps
        needed = max(2, int(self.config["k"]))
        accidents = _accidents(steps, states, after)
        changed = [before != done for before, done in zip(states, after, strict=True)]
        groups: dict[tuple[str, frozenset[tuple[str, str]]], list[int]] = {}
        repeats: dict[tuple[str, frozenset[tuple[str, str]]], list[int]] = {}
        positions: dict[str, list[int]] = {}
        group_of: dict[int, tuple[str, frozenset[tuple[str, str]]]] = {}
        for index, key in enumerate(keys):
            if key is None:
                continue
            group = (key, states[index])
            occurrences = positions.get(key)
            if occurrences is None:  # the first occurrence: a group of its own, nothing to compare
                group_of[index] = group
                positions[key] = [index]
                groups[group] = [index]
                continue
            if group not in groups:
                # Nothing changed since an earlier occurrence ended: it joins that one's group.
                group = next(
                    (group_of[i] for i in occurrences if after[i] == states[index]),
                    group,
                )
            if group not in groups and key.startswith("go to "):
                # Nothing changed at the place (or in hand) since an earlier walk there: the same walk.
                place = key[len("go to ") :]
                moved = moves[index]
                bearing = _bearing(moved, place)
                group = next(
                    (
                        group_of[i]
                        for i in reversed(occurrences)
                        if moves[i] is moved or _bearing(moves[i], place) == bearing  # the same moves: the same bearing
                    ),
                    group,
                )
            group_of[index] = group
            occurrences.append(index)
            earlier = groups.setdefault(group, [])
            # A repeat is stagnant unless one of these holds (each read only while the others leave it open;
            # whether the step brought something new is asked last, as working it out is the costliest).
            if earlier and not (
                # A command that once changed the state and now does something else (the put that worked,
                # tried again with nothing in hand) is a failed errand, not a repeat of the same thing.
                (states[earlier[-1]] != after[earlier[-1]] and not _same_reply(steps[earlier[-1]], steps[index]))
                # "look" somewhere else, or "inventory" with another hand, reports something else.
                or (key in _SITUATION and not _same_reply(steps[earlier[-1]], steps[index]))
                or _tool_result_changed(steps[earlier[-1]], steps[index])
                # The first time the command ran as meant after spellings that did nothing ("Go to drawer 1"
                # then "go to drawer 1" in a ReAct run) is its first execution.
                or (
                    not is_nothing_happens(steps[index].feedback)
                    and all(is_nothing_happens(steps[i].feedback) for i in earlier)
                )
                # A command that did nothing, written anew in another format, is an attempt at the format.
                or (not key.startswith("think: ") and _respelled(steps, earlier, index))
                # Fetching back, as written, what a snapped command moved by accident (the put ran at the desk,
                # not at the shelf) redoes the lost work: it is not a repeat.
                or _redoes(steps[index], key, earlier[-1], accidents)
                or self._purposeful(steps, keys, novel, changed, index)
                or novel[index]
                # A thought reacts to the turn before it: repeated right after something new was seen, it is
                # a new reaction (the same "not here" at each new place), not a loop.
                or (key.startswith("think: ") and _reacts_to_news(keys, novel, earlier[-1], index))
            ):
                repeats.setdefault(group, []).append(index)
            earlier.append(index)
        for (key, _), indices in repeats.items():
            first = groups[(key, _)][0]
            if 1 + len(indices) < needed:
                continue
            what = "thought" if key.startswith("think: ") else "command"
            for index in indices:
                before = [i for i in groups[(key, _)] if i < index]
                same_reply = _same_reply(steps[before[-1]], steps[index])
                shown = steps[index].thought if what == "thought" else key
                if states[index] == states[first]:
                    where = (
                        f"in the state of step {first} (the same object in hand, the same objects moved or "
                        "processed as then)"
                    )
                else:  # joined as the same walk: things changed elsewhere only
                    where = (
                        f"with the same object in hand as at step {before[-1]} and nothing moved to or from "
                        f"{key[len('go to ') :]} since (only objects elsewhere moved)"
                    )
                evidence = (
                    f"{what} '{short(shown or key, 60)}' repeats step(s) {format_steps(before)} with "
                    f"{'the same reply' if same_reply else 'nothing new seen'}, {where}"
                )
                found[index] = self.make_label(index, 0.95 if same_reply else 0.9, evidence)

    def _blocks(
        self,
        keys: list[str | None],
        novel: _Novelty,
        found: dict[int, Label],
        confidence: float,
        evidence_of: Callable[[int, int], str | None],
        heads: Sequence[Hashable | None],
    ) -> None:
        """Label every block ``[start, start + size)`` (size 2..``max_cycle``) for which
        ``evidence_of(start, size)`` explains how it replays the block right before it; a thought
        in it that reacts to news since its counterpart (the "not here" after a new place) is not.
        ``evidence_of`` is asked only where ``heads[start]`` is not None and equals ``heads[start - size]``,
        which it must require."""
        total = len(keys)
        longest = int(self.config["max_cycle"])
        # The starts whose head equals the one ``size`` steps before, by size, in increasing order.
        starts: dict[int, list[int]] = {}
        positions: dict[Hashable, list[int]] = {}
        for start, head in enumerate(heads):
            if head is None:
                continue
            earlier = positions.setdefault(head, [])
            for before in reversed(earlier):
                size = start - before
                if size > longest:
                    break
                if size >= 2 and start + size <= total:
                    starts.setdefault(size, []).append(start)
            earlier.append(start)
        for size in sorted(starts):  # max_cycle 1: no blocks
            free = size  # the first start not inside a block already labelled at this size
            for start in starts[size]:
                if start < free:
                    continue
                evidence = evidence_of(start, size)
                if evidence is None:
                    continue
                for index in range(start, start + size):
                    key = keys[index] or ""
                    if key.startswith("think: ") and _reacts_to_news(keys, novel, index - size, index):
                        continue
                    found.setdefault(index, self.make_label(index, confidence, evidence))
                free = start + size

    def _replays(self, keys: list[str | None], novel: _Novelty, found: dict[int, Label]) -> None:
        """A block replayed in full right after itself with nothing new in the replay: a memorised
        script, even where the first run had changed the state."""

        def evidence_of(start: int, size: int) -> str | None:
            block = range(start, start + size)
            if any(keys[i] is None or keys[i] != keys[i - size] for i in block):
                return None
            if len(set(keys[start - size : start])) < 2 or any(novel[i] for i in block):
                return None
            script = " -> ".join(f"'{short(keys[i] or '', 30)}'" for i in range(start - size, start)[:3])
            return (
                f"steps {format_steps(list(block))} replay the script of steps "
                f"{format_steps(list(range(start - size, start)))} ({script}{' -> ...' if size > 3 else ''}) "
                "with nothing new seen"
            )

        # a replay starts with its block's first command again
        self._blocks(keys, novel, found, 0.9, evidence_of, keys)

    def _laps(
        self,
        keys: list[str | None],
        masked: list[str | None],
        states: list[frozenset[tuple[str, str]]],
        novel: _Novelty,
        found: dict[int, Label],
    ) -> None:
        """A block that replays the one before it with one entity swapped throughout, from the same
        state and with nothing new: a lap of a search that learns nothing (``masked``: the keys with
        names masked)."""

        def evidence_of(start: int, size: int) -> str | None:
            block = range(start, start + size)
            if states[start] != states[start - size]:
                return None
            varied = [i for i in block if keys[i] != keys[i - size]]
            if all((keys[i] or "").startswith(("go to ", "think: ")) and keys[i] not in keys[:i] for i in varied):
                return None  # only a first visit, or a new thought naming it, varies: it explores
            swap = _slot_swap(keys[start - size : start], keys[start : start + size])
            if swap is None or any(novel[i] for i in block):
                return None
            return (
                f"steps {format_steps(list(block))} replay steps {format_steps(list(range(start - size, start)))} "
                f"with only '{swap[0]}' changed to '{swap[1]}', nothing new seen and nothing changed"
            )

        # a lap starts from the same state with its first command again, or with one name in it changed
        heads: list[Hashable | None] = [
            (state, name) if name is not None else None for state, name in zip(states, masked, strict=True)
        ]
        self._blocks(keys, novel, found, 0.85, evidence_of, heads)

    def _refuted(
        self, refuted: list[tuple[int, int]], steps: list[Step], novel: _Novelty, found: dict[int, Label]
    ) -> None:
        """A take guessed with another number where the listing already showed there is no such object."""
        for earlier, later in refuted:
            if novel[later]:
                continue
            written = canonical_command(steps[later].action) or ""
            before = short(steps[earlier].action or "", 60)
            evidence = (
                f"'{short(written, 60)}' guesses again after step {earlier} ('{before}') "
                "for an object the receptacle's listing did not show; nothing new was seen"
            )
            found.setdefault(later, self.make_label(later, 0.85, evidence))

    def _guesses(
        self,
        guesses: list[tuple[int, int]],
        keys: list[str | None],
        states: list[frozenset[tuple[str, str]]],
        novel: _Novelty,
        found: dict[int, Label],
    ) -> None:
        """A command that did nothing tried again with one slot changed, from the same state and with
        nothing new seen: guessing object numbers or places the episode has already ruled out."""
        for earlier, later in guesses:
            if states[earlier] != states[later] or novel[later]:
                continue
            old, new = _slot_swap([keys[earlier]], [keys[later]]) or ("", "")
            evidence = (
                f"command '{short(keys[later] or '', 60)}' retries step {earlier} ('{short(keys[earlier] or '', 60)}') "
                f"with only '{old}' changed to '{new}'; both did nothing and nothing changed in between"
            )
            found.setdefault(later, self.make_label(later, 0.85, evidence))
