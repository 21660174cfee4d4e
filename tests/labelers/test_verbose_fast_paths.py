"""verbose_filler's and the phrase matchers' second round of shortcuts give what the plain versions give."""

from __future__ import annotations

import random
import re
from re import _constants, _parser  # type: ignore[attr-defined]

from prefbuild.labelers.phrases import PhraseMatcher, PhraseMatchers, bundled_lists, read_phrase_file
from prefbuild.labelers.verbose_filler import (
    _CONTENT_WORD,
    _INTERJECTION,
    _INTERJECTION_INITIALS,
    _NAMED,
    _ORDER,
    _REASONING,
    _STOP_WORDS,
    narrates,
    opening_interjection,
    repeated_sentence,
    restates,
)
from tests.labelers.test_verbose_filler_shortcuts import _plain_repeated_sentence

_EXTRA = ["ich gehe", "(sigh)", "don't", "a_b", "x1 y2 z3", "naïve idea", " spaced ", "ß", "ok", "ok then", "to do"]


def _texts(phrases: list[str], count: int, seed: int) -> list[str]:
    rnd = random.Random(seed)
    pieces = [*phrases, "I", "To", "as", "the", "ok", " ", "\n", ",", "!", ".", "'", "_", "1", "É", "K", "İ", "Σ", "(",
              "喜", "ſ"]
    texts = []
    for _ in range(count):
        parts = [rnd.choice(pieces) for _ in range(rnd.randint(1, 9))]
        parts = [part.upper() if rnd.random() < 0.2 else part for part in parts]
        texts.append(("" if rnd.random() < 0.5 else " ").join(parts))
    return texts


def _plain_find(matcher: PhraseMatcher, text: str) -> list[str]:
    """PhraseMatcher.find with its regex alone (no pre-test, no start positions)."""
    if matcher._regex is None or not text:
        return []
    lowered = text.lower()
    if len(lowered) != len(text):
        return [match.group(0) for match in matcher._regex.finditer(lowered)]
    return [text[match.start() : match.end()] for match in matcher._regex.finditer(lowered)]


def test_matches_tried_at_first_words_are_the_regex_matches() -> None:
    for files, extra in ((bundled_lists("filler_"), ()), (bundled_lists("polite_"), ()), ((), _EXTRA),
                         (bundled_lists("filler_"), _EXTRA)):
        matcher = PhraseMatcher(files, extra=extra)
        phrases = [phrase for name in files for phrase in read_phrase_file(name)] + list(extra)
        texts = _texts(phrases, 3000, seed=len(phrases))
        found = [_plain_find(matcher, text) for text in texts]
        assert sum(len(hits) > 1 for hits in found) > 100  # several matches in one text, some overlapping tries
        assert [matcher.find(text) for text in texts] == found


def test_a_phrase_starting_without_a_word_character_has_no_start_positions() -> None:
    matcher = PhraseMatcher([], extra=["(sigh)", "please"])
    assert matcher._firsts is None
    assert matcher.find("(Sigh) please (sigh)") == ["(Sigh)", "please", "(sigh)"]


def test_several_matchers_find_what_each_finds() -> None:
    strong = PhraseMatcher(bundled_lists("filler_"), extra=["ok then"])
    weak = PhraseMatcher(bundled_lists("polite_"))
    both = PhraseMatchers(strong, weak)
    phrases = [phrase for prefix in ("filler_", "polite_") for name in bundled_lists(prefix)
               for phrase in read_phrase_file(name)]
    for text in _texts(phrases, 3000, seed=5):
        assert both.find(text) == (strong.find(text), weak.find(text)), text
    without_keys = PhraseMatchers(strong, PhraseMatcher([], extra=["..."]))
    assert without_keys._keys is None
    assert without_keys.find("Sure! ...") == (["Sure!"], ["..."])


def _initials(items: list) -> set[str]:  # type: ignore[type-arg]
    """The characters a parsed regex sequence can start with (literals, branches and groups only)."""
    op, av = items[0]
    if op is _constants.LITERAL:
        return {chr(av)}
    if op is _constants.BRANCH:
        return set().union(*(_initials(list(branch)) for branch in av[1]))
    assert op is _constants.SUBPATTERN, op
    return _initials(list(av[3]))


def test_every_interjection_starts_with_one_of_the_initials() -> None:
    items = list(_parser.parse(_INTERJECTION.pattern, _INTERJECTION.flags))
    assert items[0] == (_constants.AT, _constants.AT_BEGINNING) and items[1][0] is _constants.MAX_REPEAT  # ^\W*
    assert _initials(items[2:]) <= set(_INTERJECTION_INITIALS.lower())
    rnd = random.Random(8)
    openers = ["Great", "great!", "THANKS for the update.", "Sure,", "Well done!", "Got it.", "Nice work!", "ok.",
               "Alright, fine.", "Perfect!", "(Great!)", " ...Cool.", "_great!", "1 Great!", "Good job.", "Thank you!"]
    tails = ["", " ", "!", ".", " let me go.", ", I have it.", "\n", " The mug 1 is here.", ", let's begin"]
    for _ in range(3000):
        text = rnd.choice(["", " ", "- ", "**", "\t"]) + rnd.choice(openers) + rnd.choice(tails)
        match = _INTERJECTION.match(text)
        assert opening_interjection(text) == (match.group(0).strip() if match else None), text


def _plain_restates(thought: str, observation: str, min_words: int, coverage: float) -> bool:
    """restates without the substring pre-test."""
    if len(thought) < 4 * min_words or len(thought.split()) < min_words:
        return False

    def content(text: str) -> frozenset[str]:
        return frozenset(word for word in _CONTENT_WORD.findall(text.lower()) if word not in _STOP_WORDS)

    shown = content(observation)
    if len(shown) < 3:
        return False
    covered = len(shown & content(thought))
    if covered < (len(shown) if len(shown) < 5 else coverage * len(shown)):
        return False
    return restates(thought, observation, min_words, coverage)


def _plain_narrates(thought: str, shown: str, min_words: int) -> bool:
    """narrates in its first order of tests."""
    if len(thought) < 4 * min_words or len(thought.split()) < min_words or _REASONING.search(thought):
        return False
    if _ORDER.search(thought):
        return False
    named = {f"{name} {number}" for name, number in _NAMED.findall(thought.lower())}
    lowered = shown.lower()
    return len(named) >= 2 and all(name in lowered for name in named)


def test_restates_and_narrates_as_plainly_tested() -> None:
    rnd = random.Random(21)
    words = ["On", "the", "sidetable", "1", "you", "see", "a", "creditcard", "1,", "watch", "1", "and", "mug", "2.",
             "I", "will", "take", "it.", "Maybe", "SIDETABLE", "Mug", "then", "cabinet", "3", "can't", "nothing.",
             "fork", "spoon", "knife", "bowl", "plate", "21", "+", "17", "=", "38", "(1,", "2)", "[(", "Peru", "3"]
    for _ in range(3000):
        observation = " ".join(rnd.choice(words) for _ in range(rnd.randint(0, 16)))
        thought = " ".join(rnd.choice(words) for _ in range(rnd.randint(0, 30)))
        if rnd.random() < 0.3:
            thought = observation + " " + thought
        for min_words, coverage in ((15, 0.8), (4, 0.5)):
            assert restates(thought, observation, min_words, coverage) == _plain_restates(
                thought, observation, min_words, coverage
            )
            assert narrates(thought, observation, min_words) == _plain_narrates(thought, observation, min_words)


def test_repeated_words_without_sentence_ends_as_plainly_counted() -> None:
    rnd = random.Random(13)
    vocabulary = ["go", "to", "shelf", "1", "then", "the", "mug", "and", "x", "Go"]
    for _ in range(3000):
        text = " ".join(rnd.choice(vocabulary[: rnd.randint(2, len(vocabulary))]) for _ in range(rnd.randint(0, 60)))
        if rnd.random() < 0.3:
            block = text.split()[:8]
            text = " ".join(block * rnd.randint(1, 4)) + " " + text
        for minimum in (2, 3):
            if len(text) >= 6 * minimum:
                assert repeated_sentence(text, minimum) == _plain_repeated_sentence(text, minimum), (text, minimum)


def _first_regex(phrases: list[str]) -> re.Pattern[str] | None:
    """The phrase regex as first written: a word-start test, then one prefix tree each for Latin and CJK."""
    from prefbuild.labelers.phrases import _CJK, _trie_pattern

    unique = sorted({phrase.lower() for phrase in phrases if phrase.strip()})
    if not unique:
        return None
    latin = [phrase for phrase in unique if not _CJK.search(phrase)]
    cjk = [phrase for phrase in unique if _CJK.search(phrase)]
    parts = []
    if latin:
        parts.append(r"(?<!\w)" + _trie_pattern(latin, word_ends=True))
    if cjk:
        parts.append(_trie_pattern(cjk, word_ends=False))
    return re.compile("|".join(f"(?:{part})" for part in parts))


def test_the_regex_by_first_characters_matches_as_the_prefix_trees() -> None:
    cjk_latin = ["aiとして", "ok です", "as", "(sigh)", "\\d", "a.b", "[x]"]
    for files, extra in ((bundled_lists("filler_"), ()), (bundled_lists("polite_"), ()), ((), _EXTRA),
                         (bundled_lists("filler_"), [*_EXTRA, *cjk_latin]), ((), cjk_latin)):
        phrases = [phrase for name in files for phrase in read_phrase_file(name)] + list(extra)
        regex, first = PhraseMatcher(files, extra=extra)._regex, _first_regex(phrases)
        assert regex is not None and first is not None
        for text in _texts([*phrases, "AI", "とし", "です", "ok"], 3000, seed=len(phrases) + 1):
            lowered = text.lower()
            assert [m.span() for m in regex.finditer(lowered)] == [m.span() for m in first.finditer(lowered)], text
            for start in range(len(lowered)):
                got, want = regex.match(lowered, start), first.match(lowered, start)
                assert (got and got.span()) == (want and want.span()), (text, start)
