"""Reading household (ALFWorld-style) goals, commands and observations for the labelers.

Labelers only see text, so they recover what they need from it: the goal object and
receptacle types from the task sentence (all twelve ALFWorld goal templates), the entity
names (``cabinet 3``, ``apple 1``) an observation mentions, and what the agent holds from
the env's pick-up and put feedback.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from prefbuild.records import Step, TaskInfo

# "cabinet 3", "alarmclock 2": display names are a lower-case type word and a number.
ENTITY_RE = re.compile(r"\b([a-z]+) (\d+)\b")
_NOT_ENTITIES = frozenset({"loc", "step", "steps", "row", "line", "turn", "round", "and", "to", "at", "is", "of"})
_PICKUP_RE = re.compile(r"you pick up the ([a-z]+ \d+) from the ([a-z]+ \d+)")
_PUT_RE = re.compile(r"you (?:put|move) the ([a-z]+ \d+) (?:in/on|in|on|to) the ([a-z]+ \d+)")
_NOT_CARRYING = "you are not carrying anything"
_CARRYING_RE = re.compile(r"you are carrying: a ([a-z]+ \d+)")
_ARTICLE = r"(?:(?:a|an|some|the|two)\s+)?"
_WORD = r"([a-z]+(?: [a-z]+)?)"

# (kind, regex) in matching order: the specific templates before the plain put.
_GOAL_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern))
    for kind, pattern in (
        ("clean", rf"^put {_ARTICLE}clean {_WORD} (?:in|on|in/on|into|onto) {_ARTICLE}{_WORD}$"),
        ("clean", rf"^clean {_ARTICLE}{_WORD} and put (?:it|them) (?:in|on|in/on|into|onto) {_ARTICLE}{_WORD}$"),
        ("heat", rf"^put {_ARTICLE}hot {_WORD} (?:in|on|in/on|into|onto) {_ARTICLE}{_WORD}$"),
        ("heat", rf"^heat {_ARTICLE}{_WORD} and put (?:it|them) (?:in|on|in/on|into|onto) {_ARTICLE}{_WORD}$"),
        ("cool", rf"^put {_ARTICLE}(?:cool|cold) {_WORD} (?:in|on|in/on|into|onto) {_ARTICLE}{_WORD}$"),
        ("cool", rf"^cool {_ARTICLE}{_WORD} and put (?:it|them) (?:in|on|in/on|into|onto) {_ARTICLE}{_WORD}$"),
        ("puttwo", rf"^put two {_WORD} (?:in|on|in/on|into|onto) {_ARTICLE}{_WORD}$"),
        ("puttwo", rf"^find two {_WORD} and put (?:it|them) (?:in|on|in/on|into|onto) {_ARTICLE}{_WORD}$"),
        ("examine", rf"^look at {_ARTICLE}{_WORD} under {_ARTICLE}{_WORD}$"),
        ("examine", rf"^examine {_ARTICLE}{_WORD} with {_ARTICLE}{_WORD}$"),
        ("put", rf"^put {_ARTICLE}{_WORD} (?:in|on|in/on|into|onto) {_ARTICLE}{_WORD}$"),
    )
)
APPLIANCE_FOR_KIND = {"clean": "sinkbasin", "heat": "microwave", "cool": "fridge"}
_KIND_FROM_TYPE = (
    ("pick_and_place", "put"),
    ("pick_clean", "clean"),
    ("pick_heat", "heat"),
    ("pick_cool", "cool"),
    ("look_at", "examine"),
    ("pick_two", "puttwo"),
)


@dataclass(frozen=True)
class Goal:
    """What a household task asks for; ``receptacle`` is the lamp type for examine tasks."""

    kind: str
    obj: str
    receptacle: str

    @property
    def appliance(self) -> str | None:
        return APPLIANCE_FOR_KIND.get(self.kind)


def _compact(name: str) -> str:
    """Goal words are type names without spaces ("desk lamp" in a paraphrase -> "desklamp")."""
    return name.replace(" ", "")


@lru_cache(maxsize=4096)  # goals repeat across episodes and several labelers parse each one
def parse_goal(text: str) -> Goal | None:
    """The goal of an ALFWorld task sentence, or None when it matches no template.

    Accepts the bare goal ("put a clean knife in drawer."), the intro line
    ("Your task is to: ..."), upper case, a final period, and ``in/on``.
    """
    goal = text.strip().lower()
    marker = goal.rfind("your task is to:")
    if marker >= 0:
        goal = goal[marker + len("your task is to:") :]
    goal = goal.strip().split("\n", 1)[0].strip().rstrip(".!").strip()
    goal = " ".join(goal.split())  # re.sub(r"\s+", " ", goal) of a stripped text: split() cuts at exactly \s
    for kind, pattern in _GOAL_PATTERNS:
        match = pattern.match(goal)
        if match:
            return Goal(kind=kind, obj=_compact(match.group(1)), receptacle=_compact(match.group(2)))
    return None


def task_goal(task: TaskInfo, first_observation: str = "") -> Goal | None:
    """The goal from ``task.goal`` (falling back to the intro text); the kind from ``task.type`` wins."""
    goal = _typed_goal(task.goal, task.type)
    if goal is None and first_observation:
        goal = _typed_goal(first_observation, task.type)
    return goal


@lru_cache(maxsize=4096)
def _typed_goal(text: str, task_type: str) -> Goal | None:
    """``parse_goal(text)`` with the kind that ``task_type`` names, if it names one."""
    goal = parse_goal(text)
    if goal is None:
        return None
    task_type = task_type.lower()
    for prefix, kind in _KIND_FROM_TYPE:
        if task_type.startswith(prefix) and kind != goal.kind:
            return Goal(kind=kind, obj=goal.obj, receptacle=goal.receptacle)
    return goal


_CACHED_TEXT = 256  # short texts (commands, feedback) repeat; long observation turns rarely do


@lru_cache(maxsize=4096)  # several labelers read the same replies of an episode
def entities(text: str) -> frozenset[str]:
    """Every display name (``"cabinet 3"``) mentioned in ``text``."""
    lowered = text.lower()
    if "\n" not in lowered:
        return _entities(lowered)
    # A name never spans a line and a line break is a word boundary, so the names of a text are those of its
    # lines; the lines of long replies (AgentBench's list of available actions) repeat from step to step.
    return frozenset().union(*map(_line_entities, lowered.split("\n")))


@lru_cache(maxsize=16384)
def _line_entities(line: str) -> frozenset[str]:
    return _entities(line)


# A name is a whole word of letters, one space and a whole number; the lookahead leaves out the words in
# _NOT_ENTITIES ("loc 17", "step 3"), exactly as filtering the matches would (names never overlap). The first
# lookahead only fails early where no letter follows (the word's end); the possessive runs match what greedy ones
# would, as giving back a letter leaves a letter where the space must be and giving back a digit leaves no \b.
_NAME = (
    r"\b(?=[a-z])(?!(?:" + "|".join(sorted(_NOT_ENTITIES, key=lambda word: (-len(word), word))) + r") )[a-z]++ \d++\b"
)
_NAME_RE = re.compile(_NAME)
_NAME_ASCII_RE = re.compile(_NAME, re.ASCII)  # the same matches on ASCII text, found faster


def _entities(lowered: str) -> frozenset[str]:
    return frozenset((_NAME_ASCII_RE if lowered.isascii() else _NAME_RE).findall(lowered))


def entity_type(name: str) -> str:
    return name.rsplit(" ", 1)[0]


@lru_cache(maxsize=4096)
def command_target(action: str) -> tuple[str, str] | None:
    """``("go to", "cabinet 3")`` / ``("open", "fridge 1")`` for the exploring commands, else None."""
    text = action.strip().lower()
    for verb in ("go to ", "open ", "examine "):
        if text.startswith(verb):
            target = text[len(verb) :].strip()
            if ENTITY_RE.fullmatch(target):
                return verb.strip(), target
    return None


def held_after(step: Step, holding: str | None) -> str | None:
    """What the agent holds after ``step``, from the env's feedback (unchanged when it says nothing)."""
    feedback = step.feedback
    change = _hand_change(feedback) if len(feedback) <= _CACHED_TEXT else _hand_change.__wrapped__(feedback)
    return holding if change is _UNCHANGED else change


_UNCHANGED = "\0unchanged"


@lru_cache(maxsize=4096)
def _hand_change(feedback: str) -> str | None:
    """The held object after this feedback, None for an empty hand, ``_UNCHANGED`` when it does not say."""
    lowered = feedback.lower()
    if "you pick up the " in lowered:
        match = _PICKUP_RE.search(lowered)
        if match:
            return match.group(1)
    if ("you put the " in lowered or "you move the " in lowered) and _PUT_RE.search(lowered):
        return None
    if _NOT_CARRYING in lowered:
        return None
    match = _CARRYING_RE.search(lowered)
    if match:
        return match.group(1)
    return _UNCHANGED


_CONTENTS_RE = re.compile(r"(?:on the|the) ([a-z]+ \d+)(?:, you see| is open\. in it, you see) ([^.]*)")


def object_locations(text: str) -> tuple[tuple[str, str], ...]:
    """See ``_object_locations``; cached for short texts."""
    return _object_locations_cached(text) if len(text) <= _CACHED_TEXT else _object_locations(text)


@lru_cache(maxsize=4096)
def _object_locations_cached(text: str) -> tuple[tuple[str, str], ...]:
    return _object_locations(text)


def _object_locations(text: str) -> tuple[tuple[str, str], ...]:
    """Objects seen in receptacles: ``"On the countertop 1, you see a apple 1."`` -> ((apple 1, countertop 1),)."""
    found: dict[str, str] = {}
    lowered = text.lower()
    for match in _CONTENTS_RE.finditer(lowered):
        receptacle = match.group(1)
        for item in entities(match.group(2)):
            found[item] = receptacle
    return tuple(found.items())
