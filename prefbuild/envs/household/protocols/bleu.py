"""Sentence BLEU as AgentBench uses it to snap a near-miss command to an admissible one.

AgentBench calls ``nltk.translate.bleu_score.sentence_bleu([ref.split()], cand.split(),
smoothing_function=SmoothingFunction().method4)`` against every admissible command and
keeps the best one when its score is above 0.01. NLTK is a heavy dependency for ~60 lines,
so this module reproduces that exact computation (NLTK 3.8 semantics: default weights
(0.25, 0.25, 0.25, 0.25), modified n-gram precision with raw counts, closest-reference
brevity penalty, Chen & Cherry smoothing method 4 with k=5, zero precisions skipped in the
geometric mean). The float operations follow NLTK's order so scores match bit for bit.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

WEIGHTS = (0.25, 0.25, 0.25, 0.25)
SMOOTHING_K = 5
SNAP_THRESHOLD = 0.01


# (token count, n-gram counts for n = 1..4) of a whitespace-tokenised text.
_Profile = tuple[int, tuple["Counter[tuple[str, ...]]", ...]]


def _ngrams(tokens: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def _profile(tokens: Sequence[str]) -> _Profile:
    return len(tokens), tuple(_ngrams(tokens, n) for n in range(1, len(WEIGHTS) + 1))


@lru_cache(maxsize=2048)
def _text_profile(text: str) -> _Profile:
    """The profile of a command, cached: every turn scores against the same admissible commands
    again. Callers only read the returned Counters. The cache holds the commands of the scenes
    in flight (about 30 each), not of every scene a run saw, so memory stays flat."""
    return _profile(text.split())


def _bleu(reference: _Profile, hypothesis: _Profile) -> float:
    """NLTK's sentence BLEU (smoothing method 4) from two profiles, in NLTK's order of float operations."""
    ref_len, reference_counts = reference
    hyp_len, hypothesis_counts = hypothesis
    # (clipped matches, max(1, hypothesis n-grams)), unreduced like NLTK's ``Fraction(_normalize=False)``.
    precisions: list[tuple[int, int]] = []
    for counts, clip in zip(hypothesis_counts, reference_counts, strict=True):
        numerator = sum(min(count, clip[gram]) for gram, count in counts.items()) if clip else 0
        precisions.append((numerator, max(1, sum(counts.values()))))
        if numerator == 0 and len(precisions) == 1:
            return 0.0  # no unigram in common
    if hyp_len > ref_len:
        brevity = 1.0
    elif hyp_len == 0:
        brevity = 0.0
    else:
        brevity = math.exp(1 - ref_len / hyp_len)
    smoothed: list[float] = []
    increment = 1
    for numerator, denominator in precisions:
        if numerator == 0 and hyp_len > 1:
            smoothed_numerator = 1 / (2**increment * SMOOTHING_K / math.log(hyp_len))
            smoothed.append(smoothed_numerator / denominator)
            increment += 1
        else:
            smoothed.append(numerator / denominator)
    total = math.fsum(weight * math.log(p) for weight, p in zip(WEIGHTS, smoothed, strict=True) if p > 0)
    return brevity * math.exp(total)


def sentence_bleu(reference: Sequence[str], hypothesis: Sequence[str]) -> float:
    """BLEU of ``hypothesis`` against one ``reference`` (token lists), smoothing method 4."""
    return _bleu(_profile(reference), _profile(hypothesis))


@lru_cache(maxsize=8192)
def bleu_score(reference: str, candidate: str) -> float:
    """AgentBench's ``bleu_score``: whitespace tokens, ``reference`` first (cached: a model
    repeats its near-miss commands against the same admissible ones)."""
    return _bleu(_text_profile(reference), _text_profile(candidate))


def snap_to_admissible(action: str, admissible: Sequence[str] | None, threshold: float = SNAP_THRESHOLD) -> str:
    """AgentBench's ``process_action`` after the ``ACTION:`` split: lower-case the first line,
    keep it when admissible, else the best-scoring admissible command (first on ties, like
    ``numpy.argmax``) when its BLEU is above ``threshold``, else the lower-cased text."""
    lines = action.strip().lower().split("\n")
    command = lines[0]
    if not admissible:
        return command
    if command in admissible:
        return command
    scores = [bleu_score(choice, command) for choice in admissible]
    best = max(range(len(scores)), key=lambda index: (scores[index], -index))
    return admissible[best] if scores[best] > threshold else command
