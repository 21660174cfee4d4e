"""One shard of a run, as a Ray task runs it: its planned episodes, minus what is stored, played.

The body is plain Python (no Ray import) so it can be tested and reused; ``driver`` wraps it
in ``ray.remote``. Every finished episode goes to the shard store at once, so a retry after
a lost worker redoes only the episodes that were in flight.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prefbuild.ray.progress import ShardReport
from prefbuild.ray.storage import ShardStore
from prefbuild.recipe import LoadedRecipe
from prefbuild.rollout.episode import EpisodeRunner
from prefbuild.rollout.generate import teacher_settings
from prefbuild.rollout.plan import Episode
from prefbuild.rollout.progress import RolloutStats
from prefbuild.rollout.runner import rollout

Reporter = Callable[[ShardReport], None]


@dataclass(frozen=True)
class ShardJob:
    """What one shard task runs: a run of consecutive planned episodes, planned once by the driver.

    Attributes:
        loaded: the recipe.
        index: the shard's number (its folder in the store).
        episodes: the shard's episodes, in plan order, without those already in the run directory.
        store_root: the shard store's root (path or fsspec URL).
        storage_options: fsspec options for the store.
        flush_every: episodes per part object on object stores.
        teacher: teacher settings replacing the recipe's keys (e.g. replica ``base_urls``).
    """

    loaded: LoadedRecipe
    index: int
    episodes: tuple[Episode, ...]
    store_root: str
    storage_options: dict[str, Any] = field(default_factory=dict)
    flush_every: int = 32
    teacher: dict[str, Any] = field(default_factory=dict)


@dataclass
class ShardOutcome:
    """A finished shard attempt: its index and its counters (what it played and what it skipped)."""

    shard: int
    stats: RolloutStats
    report: ShardReport


def _todo(job: ShardJob, stored: set[str], stats: RolloutStats) -> Iterator[Episode]:
    for episode in job.episodes:
        if episode.id in stored:
            stats.skipped += 1
            continue
        yield episode


async def _run(job: ShardJob, report: Reporter, report_every_s: float) -> ShardOutcome:
    from prefbuild.teachers import make_teacher

    recipe = job.loaded.recipe
    store = ShardStore(job.store_root, job.storage_options, job.flush_every)
    stats = RolloutStats(total=len(job.episodes))
    episodes = _todo(job, store.finished_ids(job.index), stats)
    first = next(episodes, None)
    if first is not None:
        with tempfile.TemporaryDirectory(prefix="prefbuild-shard-") as scratch:
            settings = {**teacher_settings(recipe, Path(scratch)), **job.teacher}
            teacher = make_teacher(settings)
            last = 0.0
            async with teacher:
                runner = EpisodeRunner(recipe, teacher)
                with store.writer(job.index) as writer:
                    played = rollout(_chain(first, episodes), runner, concurrency=recipe.teacher.concurrency)
                    async with contextlib.aclosing(played) as trajectories:  # an error stops the episodes in flight
                        async for trajectory in trajectories:
                            writer.write(trajectory)
                            stats.add(trajectory)
                            if time.monotonic() - last >= report_every_s:
                                last = time.monotonic()
                                report(ShardReport.of(job.index, stats))
    else:
        for _ in episodes:
            pass
    final = ShardReport.of(job.index, stats, finished=True)
    report(final)
    return ShardOutcome(job.index, stats, final)


def _chain(first: Episode, rest: Iterator[Episode]) -> Iterator[Episode]:
    yield first
    yield from rest


def run_shard(job: ShardJob, report: Reporter | None = None, report_every_s: float = 0.5) -> ShardOutcome:
    """Play one shard into its store, skipping what the store already holds (from an earlier attempt).

    Args:
        job: the shard and where to write it.
        report: called with the shard's counters now and then, and once at the end.
        report_every_s: seconds between reports.

    Returns:
        The shard's counts and token usage.

    Example:
        >>> from prefbuild.recipe import load_recipe
        >>> loaded = load_recipe("simulate", ["env.num_tasks=4"])  # doctest: +SKIP
        >>> job = ShardJob(loaded, 0, tuple(plan_episodes(loaded.recipe)), "/tmp/store")  # doctest: +SKIP
        >>> run_shard(job).stats.done  # doctest: +SKIP
        4
    """
    return asyncio.run(_run(job, report or (lambda _: None), report_every_s))
