"""``build_pairs``: labelled trajectories in, validated and post-processed pairs out.

One streaming pass: every trajectory is fed to every strategy, the pairs it yields are
validated, deduplicated, capped per trajectory, and (when ``max_per_reason`` is set)
offered to a per-reason bottom-k sample; each pair gets its split from its task id. The
pipeline writes nothing: the caller iterates the ``PairReport`` and stores the pairs, then
reads the counts (built, invalid with why, dropped with why, deduplicated, balanced out).

The built-in strategies that draft (``stepwise``, ``style``: ``common.Drafting``) hand over
``PairDraft`` objects, checked and hashed as ``make_pair`` would; the ``Pair`` record of a
draft is built, and validated, only when the pair is kept (spooled by the per-reason sample,
or given to the caller).

Memory: flat in the number of episodes, except the dedup hash sets (about 100 bytes per
unique pair) and the per-trajectory counters; with ``max_per_reason`` the pairs kept per
reason wait in a temporary file, not in memory.
"""

from __future__ import annotations

import logging
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from prefbuild.pairs.base import INVALID_REASON_PREFIX, PairStrategy
from prefbuild.pairs.common import Drafting, PairDraft, as_pair, forget_validated, validated_content_hash
from prefbuild.pairs.postprocess import BottomK, detached, exact_key, near_key, rank, split_for, validate
from prefbuild.records import Pair, Trajectory
from prefbuild.registry import is_own_class

log = logging.getLogger(__name__)

if TYPE_CHECKING:  # the budget's module imports the exports (and their dataframe libraries) only when used
    from prefbuild.pairs.length import TokenBudget


@dataclass
class PairCounts:
    """Everything the pipeline did, for ``stats``, the report and the run manifest."""

    trajectories: int = 0
    trajectories_by_env: Counter[str] = field(default_factory=Counter)
    built: Counter[str] = field(default_factory=Counter)  # by strategy
    dropped: Counter[str] = field(default_factory=Counter)  # "strategy:why"
    invalid: Counter[str] = field(default_factory=Counter)  # "strategy:field:error"
    duplicates: int = 0
    near_duplicates: int = 0
    capped_per_trajectory: int = 0
    balanced_out: Counter[str] = field(default_factory=Counter)  # by reason
    kept: int = 0
    by_reason: Counter[str] = field(default_factory=Counter)
    by_split: Counter[str] = field(default_factory=Counter)
    by_strategy: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        return {
            "trajectories": self.trajectories,
            "trajectories_by_env": dict(self.trajectories_by_env),
            "built": dict(self.built),
            "dropped": dict(self.dropped),
            "invalid": dict(self.invalid),
            "duplicates": self.duplicates,
            "near_duplicates": self.near_duplicates,
            "capped_per_trajectory": self.capped_per_trajectory,
            "balanced_out": dict(self.balanced_out),
            "kept": self.kept,
            "by_reason": dict(self.by_reason),
            "by_split": dict(self.by_split),
            "by_strategy": dict(self.by_strategy),
        }


# A strategy's pair, or for the built-in ones that draft (``Drafting``) its draft: the pipeline
# builds the records of the pairs it keeps only (``as_pair``).
Candidate = Pair | PairDraft


def reason_key(pair: Candidate) -> str:
    return pair.reason if pair.reason is not None else "none"


class PairReport:
    """Iterate it once for the pairs; ``counts`` is complete when the iteration has ended.

    Iterating gives pairs that own their messages, so a caller may edit them in place.
    ``shared()`` gives the pairs as built, cheaper for a caller that only reads or writes
    them: the pairs of one trajectory share the ``Message`` objects of its history (and of
    the trajectory itself), so editing one pair's prompt in place would edit its siblings.
    """

    def __init__(self, pairs: Iterator[Pair], counts: PairCounts) -> None:
        self._pairs = pairs
        self.counts = counts
        self.done = False

    def __iter__(self) -> Iterator[Pair]:
        for pair in self.shared():
            yield detached(pair)

    def shared(self) -> Iterator[Pair]:
        """The pairs as built, sharing history ``Message`` objects: to read or write, not to edit."""
        yield from self._pairs
        self.done = True

    def collect(self) -> list[Pair]:
        """All pairs as a list (small runs and tests)."""
        return list(self)


def _feed_all(
    strategies: Sequence[PairStrategy], trajectories: Iterable[Trajectory], counts: PairCounts
) -> Iterator[list[Candidate]]:
    """One batch of pairs per trajectory (from every strategy), then one batch from ``finish``."""

    def counted() -> Iterator[Trajectory]:
        for trajectory in trajectories:
            counts.trajectories += 1
            counts.trajectories_by_env[trajectory.env.name] += 1
            yield trajectory

    own = [is_own_class(type(strategy)) for strategy in strategies]  # they yield what make_pair built, untouched
    feeds: list[Callable[[Trajectory], Iterable[Candidate]]] = [
        (s.drafts if isinstance(s, Drafting) else s.feed) if mine else _untrusted(s.feed, s)
        for s, mine in zip(strategies, own, strict=True)
    ]
    finishes = [s.finish if mine else _untrusted(s.finish, s) for s, mine in zip(strategies, own, strict=True)]
    try:
        for trajectory in counted():
            yield [pair for feed in feeds for pair in feed(trajectory)]
        yield [pair for finish in finishes for pair in finish()]
    finally:
        for strategy in strategies:
            strategy.close()


def _untrusted(produce: Callable[..., Iterable[Pair]], strategy: PairStrategy) -> Callable[..., Iterator[Pair]]:
    """``produce`` whose pairs the pipeline validates and hashes itself: a plug-in strategy may
    edit a pair after ``make_pair`` (``pair.chosen[0].content = ...``), and its hash would be stale.
    An exception inside the plug-in is re-raised naming the strategy and the trajectory, as a
    failing labeler's is."""

    def pairs(*args: Any) -> Iterator[Pair]:
        try:
            for pair in produce(*args):
                forget_validated(pair)
                yield pair
        except Exception as error:
            where = f"trajectory {args[0].id!r}" if args else "finish()"
            raise RuntimeError(f"pair strategy {strategy.name!r} ({type(strategy).__module__}."
                               f"{type(strategy).__qualname__}) failed on {where}: "
                               f"{type(error).__name__}: {error}") from error

    return pairs


def _collect_stats(strategies: Sequence[PairStrategy], counts: PairCounts) -> None:
    """Add each strategy's ``Tally`` of skipped candidates to ``counts`` as ``strategy:why``."""
    for strategy in strategies:
        for why, number in strategy.stats.skipped.items():
            if why.startswith(INVALID_REASON_PREFIX):
                counts.invalid[f"{strategy.name}:{why.removeprefix(INVALID_REASON_PREFIX)}"] += number
            else:
                counts.dropped[f"{strategy.name}:{why}"] += number


@dataclass(frozen=True)
class PostProcessing:
    """What happens to the strategies' pairs after they are built (see ``build_pairs``)."""

    max_per_reason: int | None = None
    max_per_trajectory: int | None = None
    dedup: bool = True
    near_dedup: bool = False
    test_fraction: float = 0.1
    seed: int = 0
    balance_envs: bool = False
    budget: TokenBudget | None = None


def process(
    strategies: Sequence[PairStrategy], trajectories: Iterable[Trajectory], counts: PairCounts, post: PostProcessing
) -> Iterator[Pair]:
    def finalise(candidate: Candidate) -> Pair:
        pair = as_pair(candidate)
        split = split_for(pair.source.task_id, post.test_fraction, post.seed)
        final = pair.model_copy(update={"split": split})
        counts.kept += 1
        counts.by_reason[reason_key(final)] += 1
        counts.by_split[split] += 1
        counts.by_strategy[final.strategy] += 1
        return final

    kept = _sampled(strategies, trajectories, counts, post)
    if post.balance_envs:
        kept = _balanced_envs(kept, counts, post.seed)
    for pair in kept:
        yield finalise(pair)
    _collect_stats(strategies, counts)


def _sampled(
    strategies: Sequence[PairStrategy], trajectories: Iterable[Trajectory], counts: PairCounts, post: PostProcessing
) -> Iterator[Candidate]:
    """The strategies' pairs validated, fitted to the token budget, deduplicated, capped per
    trajectory and sampled per reason."""
    seen_exact: set[str] = set()
    seen_near: set[str] = set()
    per_trajectory: Counter[str] = Counter()
    balancer = BottomK(post.max_per_reason, post.seed) if post.max_per_reason is not None else None
    arrival = 0
    for batch in _feed_all(strategies, trajectories, counts):
        survivors: list[Candidate] = []
        for candidate in batch:
            counts.built[candidate.strategy] += 1
            pair, content = _checked(candidate, counts)
            if pair is None:
                continue
            if post.budget is not None and not post.budget.fits(as_pair(pair)):
                counts.dropped[f"{pair.strategy}:longer than max_tokens {post.budget.max_tokens}"] += 1
                continue
            if post.dedup:
                key = content if content is not None else exact_key(as_pair(pair))
                if key in seen_exact:
                    counts.duplicates += 1
                    continue
                seen_exact.add(key)
            if post.near_dedup:
                key = near_key(as_pair(pair))
                if key in seen_near:
                    counts.near_duplicates += 1
                    continue
                seen_near.add(key)
            survivors.append(pair)
        if post.max_per_trajectory is not None:
            survivors = _cap(survivors, per_trajectory, post.max_per_trajectory, post.seed, counts)
        for pair in survivors:
            arrival += 1
            if balancer is None:
                yield pair
                continue
            if balancer.offer(reason_key(pair), pair, arrival):
                counts.balanced_out[reason_key(pair)] += 1
    if balancer is not None:
        for _, pair in balancer.drain():
            yield pair


def _checked(candidate: Candidate, counts: PairCounts) -> tuple[Candidate | None, str | None]:
    """``candidate`` ready for the post-processing, with its content hash where it is known already:
    a draft's or what ``make_pair`` built (valid both); any other pair is validated here (its hash
    is None: made when needed), a refused one counted as invalid and given as None."""
    if isinstance(candidate, PairDraft):
        return candidate, candidate.content
    content = validated_content_hash(candidate)
    if content is not None:
        return candidate, content
    pair, why = validate(candidate)
    if pair is None:
        counts.invalid[f"{candidate.strategy}:{why}"] += 1
    return pair, None


def _balanced_envs(pairs: Iterable[Candidate], counts: PairCounts, seed: int) -> Iterator[Pair]:
    """``pairs`` with every env's cut to the count of the env with the fewest (seeded ranks), in order;
    the pairs wait in a spool file meanwhile. The cut is counted as ``balanced_out["env:<name>"]``."""
    keeper = BottomK(sys.maxsize, seed)
    for arrival, pair in enumerate(pairs):
        keeper.offer(pair.source.env, pair, arrival)
    silent = sorted(set(counts.trajectories_by_env) - set(keeper.heaps))
    if silent:
        log.warning("balance_envs: no pair from the %s episodes of %s; balancing between the envs that gave pairs",
                    sum(counts.trajectories_by_env[env] for env in silent), ", ".join(silent))
    for env, number in keeper.trim_to_smallest_bucket().items():
        counts.balanced_out[f"env:{env}"] += number
    for _, pair in keeper.drain():
        yield pair


def _cap(pairs: list[Candidate], kept: Counter[str], limit: int, seed: int, counts: PairCounts) -> list[Candidate]:
    """At most ``limit`` pairs per source trajectory, chosen by seeded rank, in arrival order."""
    by_trajectory: dict[str, list[Candidate]] = {}
    for pair in pairs:
        by_trajectory.setdefault(pair.source.trajectory_id, []).append(pair)
    allowed: set[str] = set()
    for trajectory_id, group in by_trajectory.items():
        room = max(0, limit - kept[trajectory_id])
        chosen = sorted(group, key=lambda p: rank(p, seed))[:room]
        kept[trajectory_id] += len(chosen)
        counts.capped_per_trajectory += len(group) - len(chosen)
        allowed.update(p.id for p in chosen)
    return [pair for pair in pairs if pair.id in allowed]


def build_pairs(
    trajectories: Iterable[Trajectory],
    strategies: Sequence[Mapping[str, Any] | PairStrategy],
    *,
    max_per_reason: int | None = None,
    max_per_trajectory: int | None = None,
    dedup: bool = True,
    near_dedup: bool = False,
    test_fraction: float = 0.1,
    seed: int = 0,
    teacher: Any = None,
    balance_envs: bool = False,
    max_tokens: int | None = None,
    tokenizer: str | None = None,
) -> PairReport:
    """Build pairs from ``trajectories`` with ``strategies`` (``{"name": ..., "params": {...}}`` or instances).

    ``max_tokens`` with ``tokenizer`` (the model you train) keeps only pairs whose prompt and
    longer side fit the trainer's ``max_length`` (``prefbuild.pairs.length``).
    ``balance_envs`` cuts every env's pairs to the count of the env with the fewest (after the other
    caps), for a dataset balanced between, say, DBBench and the household tasks.
    ``teacher`` is handed to strategies that need one (``stepwise`` with ``chosen: teacher``,
    ``style`` with ``rewrite: teacher``, ``best_of_n``) unless their params carry their own.
    Nothing is written; iterate the returned report for the pairs.
    """
    from prefbuild.pairs import build_strategy

    if not 0 <= test_fraction < 1:
        raise ValueError(f"test_fraction must be in [0, 1), not {test_fraction}")
    if not strategies:
        raise ValueError("build_pairs needs at least one strategy")
    if max_tokens is not None and not tokenizer:
        raise ValueError("max_tokens needs tokenizer: the model you train (a local folder or a Hub id)")
    if tokenizer and max_tokens is None:
        log.warning("tokenizer %r is used only to count max_tokens, which is not set: no pair is cut", tokenizer)
    budget = None
    if max_tokens is not None and tokenizer:
        from prefbuild.pairs.length import TokenBudget

        budget = TokenBudget(tokenizer, max_tokens)
    built: list[PairStrategy] = []
    for position, spec in enumerate(strategies):
        if isinstance(spec, PairStrategy):
            built.append(spec)
            continue
        if "name" not in spec:
            raise ValueError(f"strategies[{position}]: missing 'name'")
        params = dict(spec.get("params") or {})
        built.append(build_strategy(str(spec["name"]), params, teacher=teacher, seed=seed))
    counts = PairCounts()
    post = PostProcessing(max_per_reason=max_per_reason, max_per_trajectory=max_per_trajectory, dedup=dedup,
                          near_dedup=near_dedup, test_fraction=test_fraction, seed=seed, balance_envs=balance_envs,
                          budget=budget)
    pairs = process(built, trajectories, counts, post)
    return PairReport(pairs, counts)
