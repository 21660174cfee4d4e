"""``prefbuild generate --ray``: shards as Ray tasks, one merged run directory at the end.

The driver plans the run (ids and plan positions, as a single-machine run does), submits one
Ray task per shard, shows one progress view, and merges the shard store into
``trajectories/episodes.jsonl`` in plan order (``order_file``): the same files a
single-machine run writes, byte for byte with a deterministic teacher.

Fault tolerance comes from Ray and the store: a shard whose worker dies (SIGKILL, lost node)
is retried by Ray (``max_retries``); the retry skips every episode the store already holds.
The merge drops an id seen twice, so a zombie attempt can never duplicate an episode.

A run directory behind an fsspec URL (``s3://...``) is assembled in a local copy (the
returned ``run_dir``) and uploaded file by file at the end; the shard store then lives at
``<URL>/ray-shards``.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import fsspec

from prefbuild.errors import PrefbuildError
from prefbuild.io.rundir import MANIFEST, RECIPE, TRAJECTORIES, finished_episode_ids, prepare_run_dir
from prefbuild.ray import require_ray
from prefbuild.ray.progress import ClusterProgress, ProgressBoard, add_stats
from prefbuild.ray.storage import ShardStore, is_local
from prefbuild.ray.worker import ShardJob, ShardOutcome, run_shard
from prefbuild.recipe import LoadedRecipe
from prefbuild.rollout.generate import GenerateResult, update_manifest
from prefbuild.rollout.plan import Shard, plan_episodes
from prefbuild.rollout.progress import RolloutStats
from prefbuild.rollout.runner import order_file

SHARD_STORE = "ray-shards"
EPISODES = "episodes.jsonl"
RUN_FILES = (RECIPE, MANIFEST, f"{TRAJECTORIES}/{EPISODES}")


@dataclass
class RayOptions:
    """How a run uses the cluster.

    Attributes:
        address: ``None`` or ``"local"`` starts a local Ray instance; ``"auto"`` joins the
            running cluster; ``host:6379`` or ``ray://host:10001`` joins that one.
        shards: shards to split the tasks into (default: 4 per CPU of the cluster).
        max_retries: Ray retries of a shard whose worker died.
        num_cpus: CPUs each shard task reserves.
        storage_options: fsspec options for an ``--out`` URL (``endpoint_url``, keys...).
        flush_every: episodes per part object on object stores.
    """

    address: str | None = None
    shards: int | None = None
    max_retries: int = 3
    num_cpus: float = 1.0
    storage_options: dict[str, Any] = field(default_factory=dict)
    flush_every: int = 32


@contextlib.contextmanager
def connected(address: str | None) -> Iterator[Any]:
    """Join (or start) a Ray cluster for the block; shut down only what this call started.

    Example:
        >>> with connected(None) as ray:  # doctest: +SKIP
        ...     ray.cluster_resources()["CPU"]
    """
    ray = require_ray()
    if ray.is_initialized():
        yield ray
        return
    target = None if address in (None, "", "local") else address
    ray.init(address=target, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        yield ray
    finally:
        ray.shutdown()


@dataclass
class _Plan:
    positions: dict[str, int]
    shard_of: dict[str, int]
    skipped_items: list[str]


def _plan(loaded: LoadedRecipe, shards: int, limit: int | None) -> _Plan:
    positions: dict[str, int] = {}
    shard_of: dict[str, int] = {}
    skipped_items: list[str] = []
    for episode in plan_episodes(loaded.recipe, None, limit, skipped_items=skipped_items):
        positions[episode.id] = len(positions)
        shard_of[episode.id] = episode.task_position % shards
    return _Plan(positions, shard_of, skipped_items)


def _shard_count(ray: Any, options: RayOptions, tasks: int) -> int:
    if options.shards is not None:
        if options.shards < 1:
            raise PrefbuildError(f"--ray-shards must be >= 1, got {options.shards}")
        return min(options.shards, max(tasks, 1))
    cpus = int(ray.cluster_resources().get("CPU", 1))
    return max(1, min(4 * cpus, tasks))


def merge_shards(store: ShardStore, shards: int, run_dir: Path, positions: dict[str, int]) -> int:
    """Append every stored episode not yet in the run directory, then put the file in plan order.

    Args:
        store: the shard store.
        shards: how many shards the run had.
        run_dir: the local run directory.
        positions: episode id -> plan position.

    Returns:
        How many episodes were added.
    """
    target = run_dir / TRAJECTORIES / EPISODES
    seen = finished_episode_ids(run_dir)
    added = 0
    with open(target, "ab") as handle:
        for index in range(shards):
            for line in store.lines(Shard(index, shards)):
                try:
                    episode = json.loads(line)["id"]
                except (ValueError, KeyError, TypeError):
                    continue
                if episode in seen:
                    continue
                seen.add(episode)
                handle.write(line)
                added += 1
    order_file(target, positions)
    return added


def _local_run_dir(loaded: LoadedRecipe, out: str, new: bool, storage_options: dict[str, Any]) -> Path:
    if is_local(out):
        return prepare_run_dir(loaded, Path(out), new=new)
    staging = Path(tempfile.mkdtemp(prefix="prefbuild-ray-run-"))
    filesystem, root = fsspec.core.url_to_fs(out, **storage_options)
    for name in RUN_FILES:  # resume: fetch what the URL already holds
        if filesystem.exists(f"{root}/{name}"):
            (staging / name).parent.mkdir(parents=True, exist_ok=True)
            filesystem.get_file(f"{root}/{name}", str(staging / name))
    return prepare_run_dir(loaded, staging, new=False)


def _upload(run_dir: Path, out: str, storage_options: dict[str, Any]) -> None:
    filesystem, root = fsspec.core.url_to_fs(out, **storage_options)
    for name in RUN_FILES:
        if (run_dir / name).exists():
            filesystem.put_file(str(run_dir / name), f"{root}/{name}")


def _collect(ray: Any, pending: list[Any], board: Any, view: ClusterProgress) -> list[ShardOutcome]:
    """Wait for every shard, updating the view; on a failure or Ctrl+C the other shards are cancelled."""
    outcomes: list[ShardOutcome] = []
    try:
        while pending:
            ready, pending = ray.wait(pending, num_returns=len(pending), timeout=0.5)
            for reference in ready:
                try:
                    outcomes.append(ray.get(reference))
                except ray.exceptions.RayTaskError as error:
                    cause = error.cause if isinstance(error.cause, PrefbuildError) else None
                    raise cause or PrefbuildError(f"a shard failed on the cluster: {error}") from None
                except ray.exceptions.WorkerCrashedError as error:
                    raise PrefbuildError(f"a shard worker died more often than the retries allow: {error}") from None
            latest = {report.shard: report for report in ray.get(board.snapshot.remote())}
            # A finished shard's own final report is the truth (its last message to the board may be in flight).
            latest.update({outcome.shard: outcome.report for outcome in outcomes})
            view.update(list(latest.values()))
    except BaseException:
        for reference in pending:
            ray.cancel(reference, force=True)
        raise
    return outcomes


def generate_on_ray(
    loaded: LoadedRecipe,
    *,
    out: str | Path | None = None,
    options: RayOptions | None = None,
    limit: int | None = None,
    quiet: bool = True,
    new: bool = False,
) -> GenerateResult:
    """Generate (or resume) a recipe's trajectories on a Ray cluster into one run directory.

    Args:
        loaded: the recipe.
        out: the run directory: a path (shared by every node) or an fsspec URL.
        options: cluster settings (``RayOptions``).
        limit: at most this many episodes (the first ones of the plan).
        quiet: no progress display.
        new: a fresh sibling directory if ``out`` belongs to another recipe.

    Returns:
        A ``GenerateResult`` whose ``run_dir`` is the local run directory (for a URL: its local copy).

    Example:
        >>> loaded = load_recipe("simulate")  # doctest: +SKIP
        >>> result = generate_on_ray(loaded, out="runs/sim", options=RayOptions("auto"))  # doctest: +SKIP
    """
    from prefbuild.ray.replicas import cluster_teacher

    options = options or RayOptions()
    if limit is not None and limit < 1:
        raise PrefbuildError("--limit must be >= 1")
    out_text = str(out) if out is not None else str(loaded.recipe.run_dir())
    run_dir = _local_run_dir(loaded, out_text, new, options.storage_options)
    store_root = f"{run_dir}/{SHARD_STORE}" if is_local(out_text) else f"{out_text.rstrip('/')}/{SHARD_STORE}"
    store = ShardStore(store_root, options.storage_options, options.flush_every)
    started = time.monotonic()
    with connected(options.address) as ray:
        tasks = sum(env.num_tasks for env in loaded.recipe.envs)
        shards = _shard_count(ray, options, tasks)
        plan = _plan(loaded, shards, limit)
        done = finished_episode_ids(run_dir)
        skip: list[set[str]] = [set() for _ in range(shards)]
        only: list[set[str]] | None = [set() for _ in range(shards)] if limit is not None else None
        for episode, shard in plan.shard_of.items():
            if episode in done:
                skip[shard].add(episode)
            if only is not None:
                only[shard].add(episode)
        board = ray.remote(num_cpus=0)(ProgressBoard).remote()
        remote_shard = ray.remote(num_cpus=options.num_cpus, max_retries=options.max_retries)(_shard_task)
        with cluster_teacher(ray, loaded, run_dir) as teacher_override:
            pending = [
                remote_shard.remote(
                    ShardJob(loaded, Shard(index, shards), store_root, options.storage_options, options.flush_every,
                             frozenset(skip[index]), frozenset(only[index]) if only is not None else None,
                             teacher_override),
                    board,
                )
                for index in range(shards)
            ]
            with ClusterProgress(len(plan.positions), quiet=quiet) as view:
                outcomes = _collect(ray, pending, board, view)
    merge_shards(store, shards, run_dir, plan.positions)
    stats = RolloutStats(total=len(plan.positions), started=started)
    for outcome in sorted(outcomes, key=lambda outcome: outcome.shard):
        add_stats(stats, outcome.stats)  # skipped: in the run directory, or stored by an earlier attempt
    update_manifest(run_dir, time.monotonic() - started, stats, len(plan.skipped_items))
    if not is_local(out_text):
        _upload(run_dir, out_text, options.storage_options)
    store.remove()
    return GenerateResult(run_dir, stats, len(plan.positions))


def _shard_task(job: ShardJob, board: Any) -> ShardOutcome:
    """The Ray task: one shard, reporting to the driver's progress board."""
    return run_shard(job, report=lambda report: board.report.remote(report))
