"""``prefbuild generate --ray``: shards as Ray tasks, one merged run directory at the end.

The driver plans the run once (ids and plan positions, as a single-machine run does), cuts it
into shards of consecutive episodes and submits each as a Ray task with its episodes (at most
two per cluster CPU in flight, so memory stays flat however long the plan), shows one progress
view, and merges the shard store into
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
import math
import signal
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import fsspec

from prefbuild.errors import PrefbuildError
from prefbuild.io.rundir import (
    MANIFEST,
    RECIPE,
    TRAJECTORIES,
    finished_episode_ids,
    open_run_dir,
    prepare_run_dir,
    set_aside_failed_episodes,
)
from prefbuild.ray import require_ray
from prefbuild.ray.progress import ClusterProgress, ProgressBoard, add_stats
from prefbuild.ray.storage import SHARD_STORE, ShardStore, is_local, local_path
from prefbuild.ray.worker import ShardJob, ShardOutcome, run_shard
from prefbuild.recipe import LoadedRecipe
from prefbuild.rollout.generate import GenerateResult, update_manifest
from prefbuild.rollout.plan import Episode, plan_episodes, planned_count
from prefbuild.rollout.progress import RolloutStats
from prefbuild.rollout.runner import order_file

EPISODES = "episodes.jsonl"
RUN_FILES = (RECIPE, MANIFEST, f"{TRAJECTORIES}/{EPISODES}")


@dataclass
class RayOptions:
    """How a run uses the cluster.

    Attributes:
        address: ``None`` or ``"local"`` starts a local Ray instance; ``"auto"`` joins the
            running cluster; ``host:6379`` or ``ray://host:10001`` joins that one.
        shards: shards to cut the planned episodes into (default: 4 per CPU of the cluster).
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
    if target is not None and target != "auto":
        _check_reachable(target)
    # ray.init installs a SIGTERM handler that exits with status 15 on the spot; the command line's
    # own (SIGTERM ends a run as Ctrl-C does: episodes kept, exit 143) is put back afterwards.
    in_main_thread = threading.current_thread() is threading.main_thread()
    sigterm = signal.getsignal(signal.SIGTERM) if in_main_thread else None
    try:
        ray.init(address=target, include_dashboard=False, log_to_driver=False, configure_logging=False)
    except ConnectionError as error:  # "auto" with no cluster running on this machine
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise PrefbuildError(f"--ray {address}: {first} (start one with `ray start --head`, or leave the "
                             "address out to start a local cluster)") from None
    finally:
        if in_main_thread and sigterm is not None:
            signal.signal(signal.SIGTERM, sigterm)
    try:
        yield ray
    finally:
        ray.shutdown()


def _check_reachable(address: str, timeout_s: float = 5.0) -> None:
    """Refuse at once a ``host:port`` (or ``ray://host:port``) where nothing accepts a connection:
    Ray itself retries such an address for minutes before it gives up.

    Raises:
        PrefbuildError: the port is closed or the host does not answer within ``timeout_s``.
    """
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return  # not host:port; Ray reports what it makes of it
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
    except OSError as error:
        reason = error.strerror.lower() if error.strerror else str(error) or type(error).__name__
        raise PrefbuildError(f"--ray {address}: no Ray cluster answers there ({reason}); start one with "
                             "`ray start --head` on that machine, or check the address") from None


# Episodes of one shard by default: the shards in flight (two per CPU) hold their episodes in the
# driver, so a bounded shard keeps the driver's memory flat in the length of the plan.
MAX_SHARD_EPISODES = 256


def _shard_size(ray: Any, options: RayOptions, planned: int) -> int:
    if options.shards is not None and options.shards < 1:
        raise PrefbuildError(f"--ray-shards must be >= 1, got {options.shards}")
    if options.shards is not None:
        return max(1, math.ceil(planned / options.shards))
    shards = 4 * int(ray.cluster_resources().get("CPU", 1))
    return max(1, min(math.ceil(planned / shards), MAX_SHARD_EPISODES))


def _shards(loaded: LoadedRecipe, limit: int | None, size: int, done: set[str], positions: dict[str, int],
            skipped_items: list[str]) -> Iterator[tuple[Episode, ...]]:
    """Consecutive planned episodes in groups of ``size`` (finished ones left out), planned once, lazily."""
    batch: list[Episode] = []
    for episode in plan_episodes(loaded.recipe, None, limit, skipped_items=skipped_items):
        positions[episode.id] = len(positions)
        if episode.id not in done:
            batch.append(episode)
        if len(positions) % size == 0 and batch:
            yield tuple(batch)
            batch = []
    if batch:
        yield tuple(batch)


def merge_shards(store: ShardStore, run_dir: Path, positions: dict[str, int]) -> int:
    """Append every stored episode not yet in the run directory, then put the file in plan order.

    Args:
        store: the shard store.
        run_dir: the local run directory.
        positions: episode id -> plan position.

    Returns:
        How many episodes were added.
    """
    target = run_dir / TRAJECTORIES / EPISODES
    added = store.append_new_episodes(target, finished_episode_ids(run_dir))
    order_file(target, positions)
    return added


def _staged_run_dir(loaded: LoadedRecipe, out: str, storage_options: dict[str, Any]) -> Path:
    """A fresh local copy of the run directory at the URL ``out`` (what it holds already, for a resume)."""
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


class _Shards:
    """Submits shard tasks while at most ``in_flight`` run, and collects them, updating the view."""

    def __init__(self, ray: Any, board: Any, view: ClusterProgress, in_flight: int) -> None:
        self.ray, self.board, self.view, self.in_flight = ray, board, view, in_flight
        self.pending: list[Any] = []
        self.outcomes: list[ShardOutcome] = []

    def submit(self, task: Any, job: ShardJob) -> None:
        while len(self.pending) >= self.in_flight:
            self.wait()
        self.pending.append(task.remote(job, self.board))

    def wait(self) -> None:
        ray = self.ray
        ready, self.pending = ray.wait(self.pending, num_returns=len(self.pending), timeout=0.5)
        for reference in ready:
            try:
                self.outcomes.append(ray.get(reference))
            except ray.exceptions.RayTaskError as error:
                cause = error.cause if isinstance(error.cause, PrefbuildError) else None
                raise cause or PrefbuildError(f"a shard failed on the cluster: {error}") from None
            except ray.exceptions.WorkerCrashedError as error:
                raise PrefbuildError(f"a shard worker died more often than the retries allow: {error}") from None
        latest = {report.shard: report for report in ray.get(self.board.snapshot.remote())}
        # A finished shard's own final report is the truth (its last message to the board may be in flight).
        latest.update({outcome.shard: outcome.report for outcome in self.outcomes})
        self.view.update(list(latest.values()))

    def finish(self) -> list[ShardOutcome]:
        while self.pending:
            self.wait()
        return self.outcomes

    def cancel(self) -> None:
        for reference in self.pending:
            self.ray.cancel(reference, force=True)


def generate_on_ray(
    loaded: LoadedRecipe,
    *,
    out: str | Path | None = None,
    options: RayOptions | None = None,
    limit: int | None = None,
    quiet: bool = True,
    new: bool = False,
    keep_failed: bool = False,
) -> GenerateResult:
    """Generate (or resume) a recipe's trajectories on a Ray cluster into one run directory.

    Args:
        loaded: the recipe.
        out: the run directory: a path (shared by every node) or an fsspec URL every node reaches
            (not ``memory://``, which each process has for itself).
        options: cluster settings (``RayOptions``).
        limit: at most this many episodes (the first ones of the plan).
        quiet: no progress display.
        new: if ``out`` belongs to another recipe, a sibling that is fresh or holds this recipe's run.
        keep_failed: keep episodes that ended in error as they are (default: play them again, as
            a single-machine run does).

    Returns:
        A ``GenerateResult`` whose ``run_dir`` is the local run directory (for a URL: its local copy).

    Example:
        >>> loaded = load_recipe("simulate")  # doctest: +SKIP
        >>> result = generate_on_ray(loaded, out="runs/sim", options=RayOptions("auto"))  # doctest: +SKIP
    """
    options = options or RayOptions()
    if limit is not None and limit < 1:
        raise PrefbuildError("--limit must be >= 1")
    out_text = str(out) if out is not None else str(loaded.recipe.run_dir())
    if out_text.startswith("memory://"):
        raise PrefbuildError(f"--out {out_text}: each Ray worker has its own memory:// filesystem, so the driver "
                             "would never see their episodes; use a path every node shares or an object store URL")
    if not is_local(out_text):
        return _generate(loaded, out_text, _staged_run_dir(loaded, out_text, options.storage_options), options, limit,
                         quiet, keep_failed)
    out_text = str(local_path(out_text))  # file:///runs/x is the directory /runs/x
    with open_run_dir(loaded, Path(out_text), new=new) as run_dir:  # one process writes a local run directory
        return _generate(loaded, out_text, run_dir, options, limit, quiet, keep_failed)


def _generate(loaded: LoadedRecipe, out_text: str, run_dir: Path, options: RayOptions, limit: int | None,
              quiet: bool, keep_failed: bool) -> GenerateResult:
    """``generate_on_ray`` into the local ``run_dir`` (``out_text`` itself, or the staged copy of that URL)."""
    from prefbuild.ray.replicas import cluster_teacher

    store_root = f"{run_dir}/{SHARD_STORE}" if is_local(out_text) else f"{out_text.rstrip('/')}/{SHARD_STORE}"
    store = ShardStore(store_root, options.storage_options, options.flush_every)
    started = time.monotonic()
    positions: dict[str, int] = {}
    skipped_items: list[str] = []
    if not keep_failed:
        set_aside_failed_episodes(run_dir)  # played again, as a single-machine resume does
    done = finished_episode_ids(run_dir)
    planned = planned_count(loaded.recipe, None, limit)
    with connected(options.address) as ray:
        size = _shard_size(ray, options, planned)
        in_flight = max(2, 2 * int(ray.cluster_resources().get("CPU", 1)))
        board = ray.remote(num_cpus=0)(ProgressBoard).remote()
        task = ray.remote(num_cpus=options.num_cpus, max_retries=options.max_retries)(_shard_task)
        with cluster_teacher(ray, loaded, run_dir) as teacher_override, \
                ClusterProgress(planned, quiet=quiet) as view:
            shards = _Shards(ray, board, view, in_flight)
            try:
                batches = _shards(loaded, limit, size, done, positions, skipped_items)
                for index, batch in enumerate(batches):
                    shards.submit(task, ShardJob(loaded, index, batch, store_root, options.storage_options,
                                                 options.flush_every, teacher_override))
                outcomes = shards.finish()
            except BaseException:
                shards.cancel()
                raise
    merge_shards(store, run_dir, positions)
    _check_every_episode_arrived(run_dir, positions, store_root)
    stats = RolloutStats(total=len(positions), started=started)
    for outcome in sorted(outcomes, key=lambda outcome: outcome.shard):
        add_stats(stats, outcome.stats)  # skipped: in the run directory, or stored by an earlier attempt
    stats.skipped += len(done & positions.keys())
    update_manifest(run_dir, time.monotonic() - started, len(skipped_items))
    if not is_local(out_text):
        _upload(run_dir, out_text, options.storage_options)
    store.remove()
    return GenerateResult(run_dir, stats, len(positions))


def _check_every_episode_arrived(run_dir: Path, positions: dict[str, int], store_root: str) -> None:
    """Refuse to report success when planned episodes never reached the run directory: the workers
    wrote them where the driver cannot read (a path that is not shared by every node).

    Raises:
        PrefbuildError: naming how many are missing and where the workers stored them.
    """
    missing = len(positions.keys() - finished_episode_ids(run_dir))
    if missing:
        raise PrefbuildError(
            f"{missing} of {len(positions)} planned episodes never reached {run_dir}: the workers stored them "
            f"under {store_root}, which this driver cannot read; --out must be storage every node shares"
        )


def _shard_task(job: ShardJob, board: Any) -> ShardOutcome:
    """The Ray task: one shard, reporting to the driver's progress board."""
    return run_shard(job, report=lambda report: board.report.remote(report))
