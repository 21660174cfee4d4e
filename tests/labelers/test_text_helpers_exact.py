"""The fast household text helpers give exactly what their plain regex definitions give.

``entities`` reads texts line by line with a lookahead for the left-out words, ``normalize_text``
and ``token_count`` use ``str.split``, ``is_nothing_happens`` and ``claimed_take`` skip texts by a
cheap pre-test, ``placement`` and goal parsing are cached: each is compared here with the
straightforward definition on hand-picked edge cases and on seeded random texts.
"""

from __future__ import annotations

import random
import re

import pytest

from prefbuild.labelers.household_text import entities, parse_goal, task_goal
from prefbuild.labelers.phantom_object import _THOUGHT_TAKE, claimed_take
from prefbuild.labelers.text import is_nothing_happens, normalize_text, short, task_observation, token_count
from prefbuild.records import TaskInfo

_LEFT_OUT = {"loc", "step", "steps", "row", "line", "turn", "round", "and", "to", "at", "is", "of"}
_NAME = re.compile(r"\b[a-z]+ \d+\b")
_SPACES = re.compile(r"\s+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
_WORD = re.compile(r"[^\s\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]+")


def _plain_entities(text: str) -> frozenset[str]:
    names = set(_NAME.findall(text.lower()))
    return frozenset(name for name in names if name[: name.index(" ")] not in _LEFT_OUT)


def _plain_nothing(feedback: str) -> bool:
    head = feedback[:40].lstrip().lower()
    return bool(feedback) and (head.startswith("nothing happens") or head.startswith("nothing happened"))


def _plain_claimed(thought: str) -> str | None:
    match = _THOUGHT_TAKE.search(thought) if thought else None
    if match is None:
        return None
    name, number = (match.group(1), match.group(2)) if match.group(1) else (match.group(3), match.group(4))
    return f"{name.lower()} {number}"


def _random_texts(alphabet: list[str], count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24))) for _ in range(count)]


@pytest.mark.parametrize(
    "text",
    [
        "On the cabinet 3, you see a apple 1, and a mug 2.",
        "You arrive at loc 17. On the countertop 1, you see nothing.",
        "go to drawer 1\ngo to drawer 2\ntake pen 3 from desk 1\nstep 4 of 9",
        "Cabinet 3\nCABINET 3\ncabinet 3a cabinet 3_ x1cabinet 4 éab 5 ab 5é",
        "to 1 2, at 3; steps 4 step 5 tos 6 and 7 island 8",
        "drawer \u0661 and drawer 1\u0662 İab 3 \u212aey 1",
        "",
        "\n\n",
    ],
)
def test_entities_match_the_plain_definition(text: str) -> None:
    assert entities(text) == _plain_entities(text)


def test_entities_match_the_plain_definition_on_random_texts() -> None:
    alphabet = [*"abtolsepn 0129\n.,_-", "to ", "loc ", "steps ", "Cabinet 1", "é", "\u0661", "\u212a", "İ"]
    for text in _random_texts(alphabet, 4000, seed=11):
        assert entities(text) == _plain_entities(text), text


def test_space_helpers_match_the_regex_forms() -> None:
    alphabet = [*" \t\n\r\x0b\x0c\x1c\x1f\x85\xa0\u2028\u3000abcN.1", "\u4e00", "\uff01", "İ", "Nothing happens"]
    for text in _random_texts(alphabet, 4000, seed=12):
        flat = _SPACES.sub(" ", text).strip()
        assert normalize_text(text) == flat.lower(), text
        assert short(text, 12) == (flat if len(flat) <= 12 else flat[:11] + "…"), text
        assert token_count(text) == len(_WORD.findall(text)) + len(_CJK.findall(text)), text


@pytest.mark.parametrize(
    "feedback",
    ["Nothing happens.", "  nothing happened", "NOTHING HAPPENS", "\xa0Nothing happens.", "Nothing here", "ok", ""],
)
def test_nothing_happens_matches_the_plain_test(feedback: str) -> None:
    assert is_nothing_happens(feedback) == _plain_nothing(feedback)
    assert is_nothing_happens(" " * 41 + feedback) == _plain_nothing(" " * 41 + feedback)


@pytest.mark.parametrize(
    "thought",
    [
        "Now I take a mug (1).",
        "I TAKE THE MUG 1",
        "I ta\u212ae the mug 1",  # the Kelvin sign folds to k: not ASCII, so the regex decides
        "I p\u0131ck up the egg 2",  # a dotless i folds to i as well
        "i'm now holding the soapbar 4",
        "I'VE GOT an apple 3",
        "I have to take the tomato 3 first.",
        "I need to go to fridge 1 now.",
        "",
    ],
)
def test_claimed_take_matches_the_plain_regex(thought: str) -> None:
    assert claimed_take(thought) == _plain_claimed(thought)


def test_claimed_take_matches_the_plain_regex_on_random_thoughts() -> None:
    rng = random.Random(13)
    parts = [
        ["", "so ", "Now ", "now "],
        ["I", "i", ""],
        [" ", "", "\t"],
        ["take", "TOOK", "picked up", "pick up", "grab", "have", "'ve got", "am holding", "'m now carrying", "see"],
        [" "],
        ["the", "a", "An", ""],
        [" ", ""],
        ["mug", "Egg"],
        [" ", " (", ""],
        ["1", "23", ""],
        [")", "."],
    ]
    for _ in range(4000):
        thought = "".join(rng.choice(options) for options in parts)
        assert claimed_take(thought) == _plain_claimed(thought), thought


def test_goals_are_parsed_once_and_typed_by_the_task() -> None:
    assert parse_goal("Your task is to:  put a clean   knife in drawer.") == parse_goal("put a clean knife in drawer")
    task = TaskInfo(id="t", type="pick_heat_then_place_in_recep", goal="juggle", split="train")
    intro = "You are in the middle of a room.\nYour task is to: put an egg in countertop."
    goal = task_goal(task, intro)
    assert goal is not None and (goal.kind, goal.obj, goal.receptacle) == ("heat", "egg", "countertop")
    assert task_goal(task) is None
    assert task_observation("Intro. You are in the middle of a room. B. AVAILABLE ACTIONS: go to x 1") == (
        "You are in the middle of a room. B. "
    )
