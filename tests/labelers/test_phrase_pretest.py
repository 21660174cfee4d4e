"""PhraseMatcher's word pre-test only skips texts the phrase regex finds nothing in."""

from __future__ import annotations

import random
import re
import string

from prefbuild.labelers.phrases import PhraseMatcher, ascii_words, bundled_lists, read_phrase_file

_EXTRA = ["ich gehe", "(sigh)", "don't", "a_b", "x1 y2 z3", "naïve idea", " spaced ", "ß", "ok"]


def _texts(phrases: list[str], count: int, seed: int) -> list[str]:
    rnd = random.Random(seed)
    pieces = [*phrases, "I", "To", "as", "the", " ", "\n", ",", "!", ".", "'", "_", "1", "É", "K", "İ", "Σ", "(", "喜"]
    texts = []
    for _ in range(count):
        parts = [rnd.choice(pieces) for _ in range(rnd.randint(1, 7))]
        parts = [part.upper() if rnd.random() < 0.2 else part for part in parts]
        texts.append(("" if rnd.random() < 0.5 else " ").join(parts))
    return texts


def test_the_pretest_never_hides_a_match() -> None:
    for files, extra in ((bundled_lists("filler_"), ()), (bundled_lists("polite_"), ()), ((), _EXTRA)):
        matcher = PhraseMatcher(files, extra=extra)
        reference = PhraseMatcher(files, extra=extra)
        reference._keys = None  # the regex alone
        phrases = [phrase for name in files for phrase in read_phrase_file(name)] + list(extra)
        texts = _texts(phrases, 3000, seed=len(phrases))
        assert any(reference.find(text) for text in texts)
        assert [matcher.find(text) for text in texts] == [reference.find(text) for text in texts]


def test_no_pretest_for_a_phrase_without_a_word() -> None:
    assert PhraseMatcher([], extra=["...", "please"])._keys is None
    assert PhraseMatcher([], extra=["...", "please"]).find("Wait ... please!") == ["...", "please"]


def test_ascii_words_are_the_regex_words() -> None:
    rnd = random.Random(3)
    alphabet = string.printable
    for _ in range(2000):
        text = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 30)))
        assert ascii_words(text) == re.findall(r"\w+", text)
