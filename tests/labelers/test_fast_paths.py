"""The labelers' shortcuts agree with the plain computations they stand in for."""

from __future__ import annotations

import random

import pytest

from prefbuild.labelers.household_text import entities
from prefbuild.labelers.invalid_action import mentions


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("On the cabinet 10, you see a cup 1.", "cabinet 1"),
        ("go to cabinet 1", "cabinet 1"),
        ("go to xcabinet 1", "cabinet 1"),
        ("cabinet 1_ and cabinet 1", "cabinet 1"),
        ("cabinet 1_", "cabinet 1"),
        ("_cabinet 1", "cabinet 1"),
        ("cabinet 1cabinet 1", "cabinet 1"),
        ("a cabinet 1.cabinet 1", "cabinet 1"),
        ("cabinet  1", "cabinet 1"),
        ("Cabinet 1", "cabinet 1"),
        ("cabinet 1\u0663", "cabinet 1"),
        ("\u00e9cabinet 1", "cabinet 1"),
        ("cabinet 1\u00e9", "cabinet 1"),
        ("you see 2 apples and a apple 2", "apple 2"),
        ("see 2 apple 2", "apple 2"),
        ("AVAILABLE ACTIONS: go to desk 1\ntake pen 3 from desk 1\n", "pen 3"),
        ("", "pen 3"),
    ],
)
def test_mentions_is_membership_in_entities(text: str, name: str) -> None:
    assert mentions(text.lower(), name) == (name in entities(text))


def test_mentions_agrees_with_entities_on_random_texts() -> None:
    generator = random.Random(7)
    alphabet = ["a", "b", "ab", " ", "1", "2", "12", ".", ",", "_", "\n", "é", "\u0663", "A"]
    names = ["a 1", "b 2", "ab 12", "a 12", "b 1", "ab 1"]
    for _ in range(20000):
        text = "".join(generator.choice(alphabet) for _ in range(generator.randint(0, 14)))
        for name in names:
            assert mentions(text.lower(), name) == (name in entities(text)), (text, name)


def _parsed_reply_in_full(feedback: str) -> tuple[frozenset[object], tuple[tuple[str, frozenset[str]], ...]]:
    """loop._parsed_reply without its pre-test: every reply scanned for listings."""
    from prefbuild.labelers.loop import _CONTENTS_RE
    from prefbuild.labelers.text import is_nothing_happens, normalize_text

    if is_nothing_happens(feedback):
        return frozenset(), ()
    lowered = feedback.lower()
    keys: set[object] = set(entities(lowered))
    contents = []
    for match in _CONTENTS_RE.finditer(lowered):
        receptacle = match.group(1) or match.group(2)
        items = entities(match.group(3))
        contents.append((receptacle, items))
        keys.add(("contents", receptacle, items))
    if not keys and lowered.strip():
        keys.add(("text", normalize_text(lowered)))
    return frozenset(keys), tuple(contents)


@pytest.mark.parametrize(
    "feedback",
    [
        "You arrive at loc 6. On the coffeetable 1, you see a candle 1, and a creditcard 3.",
        "You open the drawer 1. The drawer 1 is open. In it, you see a pen 2.",
        "You arrive at loc 3. The cabinet 2 is closed.",
        "You are in the middle of a room. Looking quickly around you, you see a bed 1, and a desk 1.",
        "On the desk 1, you see nothing.",
        "the shelf 2 is open. in it, you see a cup 1. On the sinkbasin 1, you see a apple 1",
        "Nothing happens.",
        "OK.",
        "on the desk 1,you see a pen 1",
    ],
)
def test_parsed_reply_pre_test_skips_only_replies_without_listings(feedback: str) -> None:
    from prefbuild.labelers.loop import _parsed_reply

    assert _parsed_reply.__wrapped__(feedback) == _parsed_reply_in_full(feedback)
