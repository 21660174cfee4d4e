"""``entities`` finds exactly the names the plain definition does: every ``[a-z]+ \\d+`` whole-word match whose
word is not in ``_NOT_ENTITIES``, on ASCII and other text."""

from __future__ import annotations

import random
import re

from prefbuild.labelers.household_text import _NOT_ENTITIES, entities

_PLAIN = re.compile(r"\b([a-z]+ \d+)\b")


def _reference(text: str) -> frozenset[str]:
    return frozenset(name for name in _PLAIN.findall(text.lower()) if name.split(" ", 1)[0] not in _NOT_ENTITIES)


def test_entities_match_the_plain_definition() -> None:
    pieces = ["cabinet", "apple", " ", "1", "12", "step", "loc", "and", "a", "x9", " 3", "é", "\u0663", "_", "\n", ".",
              "Fridge", "İ", "\u212a", "steps", "tostep"]
    rng = random.Random(7)
    texts = ["On the cabinet 12, you see a apple 3 and a step 2.", "loc 17 cabinet 12a cabinet 4_ mug 1\u0663 pan 2"]
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 14))) for _ in range(20000)]
    for text in texts:
        assert entities(text) == _reference(text), text
