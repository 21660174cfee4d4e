"""verbose_filler's cheap pre-tests and counts give what the plain regex versions give."""

from __future__ import annotations

import random
import re
import string
from collections import Counter

from prefbuild.labelers.text import normalize_text, token_count
from prefbuild.labelers.verbose_filler import _HEDGE, _hedge_bound, _spread, _token_count, repeated_sentence

_SENTENCES = re.compile(r"[^.!?。！？\n]+")


def _plain_repeated_sentence(text: str, minimum: int) -> tuple[str, int] | None:
    """repeated_sentence with only its first length test."""
    if len(text) < 6 * minimum or (text.isascii() and text.count(" ") < 3 * minimum - 1):
        return None
    counts: Counter[str] = Counter()
    for raw in _SENTENCES.findall(text):
        sentence = normalize_text(raw)
        if len(sentence.split()) >= 3 or (len(sentence) >= 6 and not sentence.isascii()):
            counts[sentence] += 1
    if counts:
        sentence, count = counts.most_common(1)[0]
        if count >= minimum:
            return sentence, count
    words = re.findall(r"\w+", text.lower())
    if len(words) >= 8 * minimum:
        grams = Counter(tuple(words[i : i + 8]) for i in range(len(words) - 7))
        gram, count = grams.most_common(1)[0]
        if count >= minimum * 2 or (count >= minimum and _spread(words, gram) >= minimum):
            return " ".join(gram), count
    return None


def test_repeated_sentence_as_plainly_counted() -> None:
    rnd = random.Random(11)
    sentences = ["Let me think.", "I go to shelf 1.", "The mug is here!", "もちろんです！", "a b c", "one two  three",
                 "\n", "?", " ", "İstanbul is big.", "x"]
    for _ in range(3000):
        text = rnd.choice(["", " ", "\n"]).join(rnd.choice(sentences) for _ in range(rnd.randint(1, 14)))
        for minimum in (2, 3):
            assert repeated_sentence(text, minimum) == _plain_repeated_sentence(text, minimum), (text, minimum)


def test_token_count_and_hedge_bound() -> None:
    rnd = random.Random(12)
    alphabet = string.printable + "\x1c\x1f\x85é喜"
    words = ["maybe", "Could", "MIGHT", "not sure", "hard to say", "anywhere", "couldn't", " ", "x", ","]
    for _ in range(3000):
        text = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 30)))
        assert _token_count(text) == token_count(text)
        text = " ".join(rnd.choice(words) for _ in range(rnd.randint(0, 12)))
        assert _hedge_bound(text) >= len(_HEDGE.findall(text))
