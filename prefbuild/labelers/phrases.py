"""Phrase lists kept as data files, compiled into one case-insensitive matcher each.

Lists live in ``prefbuild/labelers/data/`` (``filler_*.txt``: one hit is filler;
``polite_*.txt``: weak markers that count only in numbers) so users and translators can
extend them without touching code; a recipe can add phrases or whole files.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from importlib.resources import files
from itertools import pairwise
from pathlib import Path

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
_WORD_RUN = re.compile(r"\w+")
# Bytes that are not ASCII ``\w`` become spaces (see ascii_words).
_NON_WORD_BYTES = bytes(code if code < 128 and (chr(code).isalnum() or chr(code) == "_") else 32 for code in range(256))


def ascii_words(text: str) -> list[str]:
    """``re.findall(r"\\w+", text)`` of an ASCII ``text``, without the regex engine.

    Example:
        >>> ascii_words("I'd go to shelf_2, then 3.")
        ['I', 'd', 'go', 'to', 'shelf_2', 'then', '3']
    """
    return text.encode().translate(_NON_WORD_BYTES).decode().split()


def read_phrase_file(path: str | Path) -> list[str]:
    """Phrases of one list file: one per line, blank lines and ``#`` comments skipped.

    ``path`` is a file path, or the bare name of a bundled list (``"filler_en.txt"``).
    """
    candidate = Path(path)
    if candidate.is_file():
        text = candidate.read_text(encoding="utf-8")
    else:
        bundled = files("prefbuild.labelers").joinpath("data", str(path))
        if not bundled.is_file():
            raise FileNotFoundError(f"phrase list {str(path)!r} is neither a file nor a bundled list")
        text = bundled.read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def bundled_lists(prefix: str) -> list[str]:
    """Names of the bundled lists starting with ``prefix`` (``"filler_"`` -> filler_en.txt, filler_ja.txt)."""
    folder = files("prefbuild.labelers").joinpath("data")
    return sorted(
        entry.name for entry in folder.iterdir() if entry.name.startswith(prefix) and entry.name.endswith(".txt")
    )


def _trie(phrases: list[str]) -> dict[str, dict]:
    trie: dict[str, dict] = {}
    for phrase in phrases:
        node = trie
        for char in phrase:
            node = node.setdefault(char, {})
        node[""] = {}
    return trie


def _render(node: dict[str, dict], last: str, word_ends: bool) -> str:
    alternatives = [re.escape(char) + _render(child, char, word_ends) for char, child in sorted(node.items()) if char]
    if "" in node:
        alternatives.append(r"(?!\w)" if word_ends and (last.isalnum() or last == "_") else "")
    if len(alternatives) == 1:
        return alternatives[0]
    return "(?:" + "|".join(alternatives) + ")"


def _trie_pattern(phrases: list[str], *, word_ends: bool) -> str:
    """One regex alternation shaped as a prefix tree: matching costs one pass over the text
    instead of one attempt per phrase at every position. Longer phrases are tried first;
    with ``word_ends`` a phrase ending in a letter must end a word ("sure" is not "surely")."""
    return _render(_trie(phrases), "", word_ends)


def _first_branches(phrases: list[str], *, word_ends: bool, word_start: bool) -> list[str]:
    """The root alternatives of ``_trie_pattern(phrases)``, one per first character, in its order; with
    ``word_start`` that character must start a word: ``c(?<!\\wc)`` is ``(?<!\\w)c``, the test written after
    the character so that every alternative opens with a literal (the regex engine then skips the positions
    that hold none of the first characters instead of trying each)."""
    branches = []
    for char, child in sorted(_trie(phrases).items()):  # phrases are not empty: no "" at the root
        first = re.escape(char)
        branches.append(first + (rf"(?<!\w{first})" if word_start else "") + _render(child, char, word_ends))
    return branches


@lru_cache(maxsize=32)
def _compile(phrases: tuple[str, ...]) -> re.Pattern[str] | None:
    """Latin-script phrases must match whole words; CJK phrases match anywhere (no spaces there).

    The regex is ``(?:(?<!\\w)LATIN)|(?:CJK)`` (each a ``_trie_pattern``), written as the alternatives of
    their first characters: at a position only those of its character can match, Latin ones before CJK ones.
    """
    unique = sorted({phrase.lower() for phrase in phrases if phrase.strip()})
    if not unique:
        return None
    latin = [phrase for phrase in unique if not _CJK.search(phrase)]
    cjk = [phrase for phrase in unique if _CJK.search(phrase)]
    branches = _first_branches(latin, word_ends=True, word_start=True)
    branches += _first_branches(cjk, word_ends=False, word_start=False)
    return re.compile("|".join(branches))


@lru_cache(maxsize=32)
def _word_keys(phrases: tuple[str, ...]) -> tuple[frozenset[str], frozenset[tuple[str, str]]] | None:
    """What an ASCII text must hold for one of ``phrases`` to match in it: the word of a one-word phrase,
    or two neighbouring words of a longer one (the pair of longest words, a guess at the rarest),
    as whole consecutive words of the text (words as ``\\w+`` finds them): one-word keys, two-word keys.

    A Latin phrase matches from a word start to a word end (its first and last words cannot run on into
    the text's) and its inner separators match literally, so its words are whole consecutive words of
    the text. CJK phrases never match an ASCII text. None when some Latin phrase has no word character
    (no such test then).
    """
    singles: set[str] = set()
    pairs: set[tuple[str, str]] = set()
    for phrase in {phrase.lower() for phrase in phrases if phrase.strip()}:
        if _CJK.search(phrase):
            continue
        words = _WORD_RUN.findall(phrase)
        if not words:
            return None
        if len(words) == 1:
            singles.add(words[0])
        else:
            pairs.add(max(pairwise(words), key=lambda pair: (min(map(len, pair)), len(pair[0]) + len(pair[1]))))
    return frozenset(singles), frozenset(pairs)


@lru_cache(maxsize=32)
def _first_words(phrases: tuple[str, ...]) -> frozenset[str] | None:
    """The first words (``\\w+`` runs) of the Latin ``phrases``; None when some Latin phrase does not start
    with a word character (then a match need not start at a word of the text).

    A Latin phrase starting with a word character matches where the text's word equal to its first word
    starts: ``(?<!\\w)`` makes it a word start, and the phrase's first word ends the text's word (a non-word
    character follows it in the phrase, or ``(?!\\w)`` ends the phrase). CJK phrases never match an ASCII text.
    """
    firsts: set[str] = set()
    for phrase in {phrase.lower() for phrase in phrases if phrase.strip()}:
        if _CJK.search(phrase):
            continue
        if not (phrase[0].isalnum() or phrase[0] == "_"):  # \w is exactly these characters
            return None
        firsts.add(_WORD_RUN.match(phrase).group(0))  # type: ignore[union-attr]
    return frozenset(firsts)


@lru_cache(maxsize=4)  # the filler and the politeness lists read the same text one after the other
def _words_of(lowered: str) -> tuple[str, tuple[str, ...]]:
    """An ASCII ``lowered`` with every non-word character made a space (same length), and its words."""
    spaced = lowered.encode().translate(_NON_WORD_BYTES).decode()
    return spaced, tuple(spaced.split())


_Keys = tuple[frozenset[str], frozenset[tuple[str, str]]]


def _leads(keys: _Keys | None) -> frozenset[str]:
    """The one-word keys and the first words of the two-word keys: a text holding none holds no key."""
    return frozenset() if keys is None else keys[0].union(pair[0] for pair in keys[1])


def _may_match(keys: _Keys, leads: frozenset[str], lowered: str) -> bool:
    """Exact pre-test (see _word_keys): False when ``lowered`` is ASCII and none of the key words are among
    its words, so that no phrase matches it."""
    if not lowered.isascii():
        return True
    words = _words_of(lowered)[1]
    if leads.isdisjoint(words):
        return False  # no key word alone, and no first word of a key pair
    return not (keys[0].isdisjoint(words) and keys[1].isdisjoint(pairwise(words)))


class PhraseMatcher:
    """Finds the phrases of some lists in a text."""

    def __init__(self, list_files: Sequence[str | Path], extra: Iterable[str] = ()) -> None:
        phrases: list[str] = []
        for path in list_files:
            phrases.extend(read_phrase_file(path))
        phrases.extend(extra)
        self._regex = _compile(tuple(phrases))
        self._keys = _word_keys(tuple(phrases))
        self._leads = _leads(self._keys)
        self._firsts = _first_words(tuple(phrases))

    def find(self, text: str) -> list[str]:
        """Every phrase occurrence in ``text``, as written there."""
        regex = self._regex
        if regex is None or not text:
            return []
        lowered = text.lower()
        if self._keys is not None:
            if not _may_match(self._keys, self._leads, lowered):
                return []
            if self._firsts is not None and lowered.isascii():
                # Every match starts at a word that is a phrase's first word (see _first_words): the regex is
                # tried there only, in order, and not inside a match, as finditer would.
                return self._find_at(text, lowered, self._starts(*_words_of(lowered)))
        if len(lowered) != len(text):  # a few characters change length when lower-cased
            return [match.group(0) for match in regex.finditer(lowered)]
        return [text[match.start() : match.end()] for match in regex.finditer(lowered)]

    def _starts(self, spaced: str, words: tuple[str, ...]) -> list[int]:
        """Where the words of ``spaced`` that are first words of phrases start, in order."""
        starts: list[int] = []
        padded = f" {spaced} "  # a word is the text between two spaces here; padded[i] is spaced[i - 1]
        for word in self._firsts.intersection(words):  # type: ignore[union-attr]
            needle = f" {word} "
            at = padded.find(needle)
            while at >= 0:
                starts.append(at)  # the word starts at padded[at + 1], spaced[at]
                at = padded.find(needle, at + len(word) + 1)
        starts.sort()
        return starts

    def _find_at(self, text: str, lowered: str, starts: list[int]) -> list[str]:
        """The regex's matches in ``lowered`` that start at ``starts``, as finditer finds them."""
        found: list[str] = []
        end = 0
        match_at = self._regex.match  # type: ignore[union-attr]
        same_length = len(lowered) == len(text)
        for start in starts:
            if start < end:
                continue  # inside the previous match
            match = match_at(lowered, start)
            if match is not None:
                end = match.end()
                found.append(text[start:end] if same_length else match.group(0))
        return found


class PhraseMatchers:
    """Several matchers that read the same texts, with one shared pre-test: most texts hold no phrase of any."""

    def __init__(self, *matchers: PhraseMatcher) -> None:
        self._matchers = matchers
        keys = [matcher._keys for matcher in matchers]
        self._keys: _Keys | None = None
        if all(key is not None for key in keys):
            # A text without the key words of every list holds no phrase of any (see _may_match).
            self._keys = (
                frozenset().union(*(key[0] for key in keys if key is not None)),
                frozenset().union(*(key[1] for key in keys if key is not None)),
            )
        self._leads = _leads(self._keys)

    def find(self, text: str) -> tuple[list[str], ...]:
        """``matcher.find(text)`` of each matcher."""
        if text and self._keys is not None and not _may_match(self._keys, self._leads, text.lower()):
            return tuple([[] for _ in self._matchers])
        return tuple(matcher.find(text) for matcher in self._matchers)
