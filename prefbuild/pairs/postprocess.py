"""Post-processing of a pair stream: validation, dedup, caps, balance, train/test split.

Each step is a small pure piece so the pipeline can apply them in one streaming pass:

- ``validate``: every pair goes through the records model again (plug-in strategies may
  build pairs without validation); a refused pair is counted with the field and error type.
- exact dedup by ``content_hash`` (prompt, chosen, rejected), and an optional near-duplicate
  pass on a normalised key (the current observation, chosen and rejected with case,
  whitespace and punctuation folded; the earlier history is ignored), both keeping the first.
- ``max_per_trajectory`` and ``max_per_reason``: bottom-k samples by a seeded hash of the
  pair id, so which pairs survive does not depend on input order and needs memory only for
  the k kept per bucket.
- ``split_for``: train/test by a seeded hash of the task id, so a task is never in both.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from pydantic import ValidationError

from prefbuild.pairs.common import content_hash, digest, why_invalid
from prefbuild.records import Pair, PairSplit

_FOLD = re.compile(r"[\W_]+", re.UNICODE)


def validate(pair: Pair) -> tuple[Pair | None, str | None]:
    """``(pair, None)`` when the records model accepts it, else ``(None, why)``."""
    try:
        return Pair.model_validate(pair.model_dump()), None
    except ValidationError as error:
        return None, why_invalid(error)


def exact_key(pair: Pair) -> str:
    return content_hash(pair.prompt, pair.chosen, pair.rejected)


def _fold(text: str) -> str:
    return _FOLD.sub(" ", text.lower()).strip()


def near_key(pair: Pair) -> str:
    """Key of the near-duplicate pass: same current observation and same turns up to case/spacing/punctuation."""
    parts = [_fold(pair.prompt[-1].content)]
    parts += ["C:" + _fold(message.content) for message in pair.chosen]
    parts += ["R:" + _fold(message.content) for message in pair.rejected]
    return digest(*parts)


def rank(pair: Pair, seed: int) -> str:
    """A seeded, order-independent priority: smaller ranks are kept first."""
    return digest(str(seed), pair.id)


def split_for(task_id: str, test_fraction: float, seed: int) -> PairSplit:
    """``test`` for a stable ``test_fraction`` share of task ids, ``train`` for the rest."""
    if test_fraction <= 0:
        return "train"
    bucket = int(digest(str(seed), "split", task_id, size=8), 16) / float(1 << 64)
    return "test" if bucket < test_fraction else "train"


@dataclass(order=True)
class _Kept:
    """A kept pair in a bottom-k heap; the heap is a max-heap on rank via negated order."""

    neg_rank: tuple[int, ...]
    arrival: int
    pair: Pair = field(compare=False)


def _neg(rank_hex: str) -> tuple[int, ...]:
    return tuple(-b for b in bytes.fromhex(rank_hex))


class BottomK:
    """Keeps the ``k`` pairs of smallest rank per bucket; replaced pairs are reported back."""

    def __init__(self, k: int, seed: int) -> None:
        self.k = k
        self.seed = seed
        self.heaps: dict[str, list[_Kept]] = {}

    def offer(self, bucket: str, pair: Pair, arrival: int) -> Pair | None:
        """Add ``pair``; returns the pair that fell out (possibly ``pair`` itself), or None."""
        heap = self.heaps.setdefault(bucket, [])
        item = _Kept(_neg(rank(pair, self.seed)), arrival, pair)
        if len(heap) < self.k:
            heapq.heappush(heap, item)
            return None
        if item.neg_rank > heap[0].neg_rank:  # smaller rank than the largest kept
            return heapq.heapreplace(heap, item).pair
        return pair

    def drain(self) -> Iterator[tuple[int, Pair]]:
        """Every kept pair with its arrival number, in arrival order."""
        items = [item for heap in self.heaps.values() for item in heap]
        for item in sorted(items, key=lambda kept: kept.arrival):
            yield item.arrival, item.pair
