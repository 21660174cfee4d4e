"""Post-processing of a pair stream: validation, dedup, caps, balance, train/test split.

Each step is a small pure piece so the pipeline can apply them in one streaming pass:

- ``validate``: every pair not built by ``make_pair`` in one of prefbuild's own strategies goes
  through the records model again and is hashed as it is (a plug-in strategy may build pairs
  without validation, or edit one after ``make_pair``); a refused pair is counted with the
  field and error type.
- exact dedup by ``content_hash`` (prompt, chosen, rejected), and an optional near-duplicate
  pass on a normalised key (the current observation, chosen and rejected with case,
  whitespace and punctuation folded; the earlier history is ignored), both keeping the first.
- ``balance_envs``: every env's pairs cut to the count of the env with the fewest (the same
  seeded ranks), after the other caps;
- ``max_per_trajectory`` and ``max_per_reason``: bottom-k samples by a seeded hash of the
  pair id, so which pairs survive does not depend on input order and needs memory only for
  the k kept per bucket.
- ``split_for``: train/test by a seeded hash of the task id, so a task is never in both.
"""

from __future__ import annotations

import copy
import heapq
import os
import pickle
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO

from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from prefbuild.pairs.common import PairDraft, content_hash, digest, why_invalid
from prefbuild.records import Pair, PairSplit

_FOLD = re.compile(r"[\W_]+", re.UNICODE)


def validate(pair: Pair) -> tuple[Pair | None, str | None]:
    """``(pair, None)`` when the records model accepts it, else ``(None, why)``."""
    try:
        return Pair.model_validate(pair.model_dump()), None
    except ValidationError as error:
        return None, why_invalid(error)


def detached(pair: Pair) -> Pair:
    """A copy of ``pair`` that shares no message, tool call or tool definition with another object.

    The pairs of one trajectory share the ``Message`` objects of its history; a copy is safe
    to edit in place. Messages are copied shallowly (their text is immutable), the ones with
    tool calls and the tool definitions deeply.

    Example:
        >>> from prefbuild.records import Message, PairSource, Role
        >>> turn = Message(role=Role.user, content="hi")
        >>> pair = Pair(id="p", strategy="s", prompt=[turn], chosen=[Message(role=Role.assistant, content="a")],
        ...             rejected=[Message(role=Role.assistant, content="b")],
        ...             source=PairSource(trajectory_id="t", task_id="k", env="e", teacher_model="m"))
        >>> mine = detached(pair)
        >>> mine.prompt[0] == turn and mine.prompt[0] is not turn
        True
    """
    update: dict[str, object] = {
        name: [message.model_copy(deep=message.tool_calls is not None) for message in getattr(pair, name)]
        for name in ("prompt", "chosen", "rejected")
    }
    if pair.tools is not None:
        update["tools"] = copy.deepcopy(pair.tools)
    if pair.scores is not None:
        update["scores"] = dict(pair.scores)
    update["source"] = pair.source.model_copy()
    return pair.model_copy(update=update)


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


def rank(pair: Pair | PairDraft, seed: int) -> str:
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
    """A kept pair in a bottom-k heap (a max-heap on rank via negated order); the pair itself
    lies in the spool file at ``offset``."""

    neg_rank: int  # minus the rank as a number: the heap's smallest is the largest rank
    arrival: int
    offset: int = field(compare=False)
    size: int = field(compare=False)
    form: str = field(compare=False, default="pickle")  # how it was spooled: see _spooled


def _neg(rank_hex: str) -> int:
    """Minus the rank: ranks are hex digests of one length, so they order as the numbers they write."""
    return -int(rank_hex, 16)


def _spooled(pair: Pair | PairDraft) -> tuple[bytes, str]:
    """``pair`` as spool bytes, and their form: ``draft`` (``PairDraft.spooled``), ``json`` (the
    pair's JSON) or ``pickle``.

    A draft is spooled as the JSON of its turns it already has, without building its record.
    JSON is several times cheaper to write than a pickle, and reads back as an equal ``Pair``
    whenever every value survives a JSON round trip: text, ints, enums and float scores (finite:
    records refuse NaN and infinities) do; ``tools`` (free-form values) and text that is not
    valid Unicode (refused) go the pickle way instead.
    """
    if isinstance(pair, PairDraft):
        data = pair.spooled()
        if data is not None:
            return data, "draft"
        pair = pair.pair()
    if pair.tools is None:
        try:
            return pair.__pydantic_serializer__.to_json(pair), "json"
        except PydanticSerializationError:  # handled: e.g. a lone surrogate in a text; pickled below
            pass
    return pickle.dumps(pair, protocol=pickle.HIGHEST_PROTOCOL), "pickle"


def _unspooled(data: bytes, form: str) -> Pair:
    """The ``Pair`` of ``_spooled``'s bytes (validated again, but for a pickled record)."""
    if form == "draft":
        return PairDraft.restore(data)
    if form == "json":
        return Pair.model_validate_json(data)
    return pickle.loads(data)  # our own spool file, written by this process


class BottomK:
    """Keeps the ``k`` pairs of smallest rank per bucket.

    Kept pairs wait in a temporary spool file, not in memory (a bucket of a few hundred
    pairs with long prompts would hold tens of MiB); the heaps hold ranks and offsets.

    Example:
        >>> balancer = BottomK(1, seed=0)
        >>> # balancer.offer("loop", pair, 1) -> False while the bucket has room
    """

    def __init__(self, k: int, seed: int) -> None:
        self.k = k
        self.seed = seed
        self.heaps: dict[str, list[_Kept]] = {}
        self._spool: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - closed by drain() or close()

    def offer(self, bucket: str, pair: Pair | PairDraft, arrival: int) -> bool:
        """Add ``pair``; True when a pair of ``bucket`` fell out (possibly ``pair`` itself).

        A draft's record is built only when it is kept (to be spooled)."""
        heap = self.heaps.setdefault(bucket, [])
        neg_rank = _neg(rank(pair, self.seed))
        if len(heap) >= self.k and not neg_rank > heap[0].neg_rank:  # not smaller than the largest kept
            return True
        item = self._store(neg_rank, arrival, pair)
        if len(heap) < self.k:
            heapq.heappush(heap, item)
            return False
        heapq.heapreplace(heap, item)
        return True

    def _store(self, neg_rank: int, arrival: int, pair: Pair | PairDraft) -> _Kept:
        data, form = _spooled(pair)
        offset = self._spool.seek(0, os.SEEK_END)
        self._spool.write(data)
        return _Kept(neg_rank, arrival, offset, len(data), form)

    def trim_to_smallest_bucket(self) -> dict[str, int]:
        """Cut every bucket to the size of the smallest, keeping the smallest ranks; returns how many
        pairs each bucket lost."""
        if not self.heaps:
            return {}
        smallest = min(len(heap) for heap in self.heaps.values())
        dropped: dict[str, int] = {}
        for bucket, heap in self.heaps.items():
            extra = len(heap) - smallest
            for _ in range(extra):
                heapq.heappop(heap)  # the largest rank kept (a max-heap on rank)
            if extra:
                dropped[bucket] = extra
        return dropped

    def drain(self) -> Iterator[tuple[int, Pair]]:
        """Every kept pair with its arrival number, in arrival order; closes the spool."""
        items = sorted((item for heap in self.heaps.values() for item in heap), key=lambda kept: kept.arrival)
        self.heaps = {}
        try:
            for item in items:
                self._spool.seek(item.offset)
                data = self._spool.read(item.size)
                yield item.arrival, _unspooled(data, item.form)
        finally:
            self.close()

    def close(self) -> None:
        """Remove the spool file (safe to call twice)."""
        self._spool.close()
