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
