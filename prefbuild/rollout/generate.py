"""``prefbuild generate``: plan episodes, skip the finished ones, play the rest, keep every result.

This module ties the rollout (plan, episode loop, runner) to a run directory, a teacher and a
progress display. Counts in the manifest are read from the trajectory files, so they stay
right after a killed run.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prefbuild.collector import fewer_collections
from prefbuild.errors import PrefbuildError
from prefbuild.io.jsonl import JsonlWriter, read_records
from prefbuild.io.rundir import (
    FAILED,
    TRAJECTORIES,
    finished_episode_ids,
    iter_trajectories,
    open_run_dir,
    read_manifest,
    set_aside_failed_episodes,
    write_manifest,
)
from prefbuild.recipe import LoadedRecipe, Recipe
from prefbuild.records import Trajectory, UsageTotals
from prefbuild.rollout.episode import EpisodeRunner
from prefbuild.rollout.plan import Episode, Shard, plan_episodes, planned_count
from prefbuild.rollout.progress import ProgressDisplay, RolloutStats
from prefbuild.rollout.runner import order_file, rollout
from prefbuild.rollout.tools import with_tool_parser
from prefbuild.teachers.base import Teacher

log = logging.getLogger("prefbuild.rollout.generate")


@dataclass
class GenerateResult:
    run_dir: Path
    stats: RolloutStats
    planned: int
    retried: int = 0
    outside_plan: int = 0  # episodes in the run directory this recipe no longer plans (num_tasks shrank)


def teacher_settings(recipe: Recipe, run_dir: Path) -> dict[str, Any]:
    """The teacher section as the plain mapping the teacher factory takes."""
    settings = recipe.teacher.model_dump(mode="json")
    if settings.get("launch") is not None:
        settings["launch"]["log_path"] = str(run_dir / "logs" / "vllm.log")
    if settings["backend"] == "vllm" and recipe_declares_tools(recipe):
        launch = settings.setdefault("launch", {}) or {}
        launch["args"] = with_tool_parser(launch.get("args") or [])
        settings["launch"] = launch
    if settings["backend"] in ("transformers", "vllm") and settings.get("model") in ("", "embedded"):
        from prefbuild.teachers.embedded import ensure_embedded_model

        settings["model"] = str(ensure_embedded_model())
    return settings


def recipe_declares_tools(recipe: Recipe) -> bool:
    """Whether any env section's protocol acts through tool calls (fixed or per-task tools)."""
    from prefbuild.rollout.episode import protocol_for_section
    from prefbuild.rollout.tools import declares_tools

    return any(declares_tools(protocol_for_section(section)) for section in recipe.envs)


def build_teacher(recipe: Recipe, run_dir: Path) -> Teacher:
    from prefbuild.teachers import make_teacher

    return make_teacher(teacher_settings(recipe, run_dir))


async def _play(recipe: Recipe, teacher: Teacher, episodes: Iterator[Episode], path: Path, stats: RolloutStats,
                quiet: bool) -> None:
    """Play ``episodes``, appending each trajectory to ``path`` (flushed) and counting it as it finishes.

    An error here (the disk refusing a write) or Ctrl-C closes the rollout at once, which cancels
    the episodes in flight: none goes on playing against a closing teacher.
    """
    runner = EpisodeRunner(recipe, teacher)
    display = ProgressDisplay(stats, stats.total, quiet=quiet)
    played = rollout(episodes, runner, concurrency=recipe.teacher.concurrency)
    with fewer_collections(), JsonlWriter(path) as writer, display:
        async with contextlib.aclosing(played) as trajectories:
            async for trajectory in trajectories:
                writer.write(trajectory)  # flushed before it is counted
                stats.add(trajectory)
                display.update()


def _take_in_shard_store(run_dir: Path) -> None:
    """Episodes a stopped ``--ray`` run left in its shard store (not merged yet) join the run's file, so a
    resume on one machine does not play them again; the store is then removed, as the driver does."""
    from prefbuild.ray.storage import SHARD_STORE, ShardStore

    if not (run_dir / SHARD_STORE).is_dir():
        return
    store = ShardStore(str(run_dir / SHARD_STORE))
    added = store.append_new_episodes(run_dir / TRAJECTORIES / "episodes.jsonl", finished_episode_ids(run_dir))
    log.info("%s: %d episodes of a stopped --ray run taken in from %s", run_dir, added, SHARD_STORE)
    store.remove()


async def _generate_async(
    recipe: Recipe, run_dir: Path, shard: Shard | None, limit: int | None, quiet: bool, teacher: Teacher | None,
    keep_failed: bool = False,
) -> GenerateResult:
    if shard is None:
        _take_in_shard_store(run_dir)
    retried = 0 if keep_failed else set_aside_failed_episodes(run_dir)
    done_ids = finished_episode_ids(run_dir)
    positions: dict[str, int] = {}
    skipped_items: list[str] = []
    stats = RolloutStats(total=planned_count(recipe, shard, limit))

    def todo() -> Iterator[Episode]:
        for episode in plan_episodes(recipe, shard, limit, skipped_items=skipped_items):
            positions[episode.id] = len(positions)
            if episode.id in done_ids:
                stats.skipped += 1
                continue
            yield episode

    path = run_dir / TRAJECTORIES / (shard.file_name if shard else "episodes.jsonl")
    owned = teacher is None
    started = time.monotonic()
    episodes = todo()
    first = next(episodes, None)
    failing = refused_write = False
    try:
        if first is not None:
            teacher = teacher or build_teacher(recipe, run_dir)
            async with teacher:
                await _play(recipe, teacher, itertools.chain([first], episodes), path, stats, quiet)
        else:
            for _ in episodes:  # count the rest as skipped
                pass
    except OSError:
        failing = refused_write = True  # a full disk, a file too large: the file may end in a cut-off line
        raise
    except BaseException:
        failing = True  # Ctrl-C (cancelled), a teacher that cannot start, a bug
        raise
    finally:
        if owned and teacher is not None:
            await teacher.close()
        _close_run(run_dir, path, positions, time.monotonic() - started, stats, len(skipped_items),
                   failing=failing, order=not refused_write)
    # A whole-plan invocation has listed every planned id: episodes on disk beyond them (a smaller
    # num_tasks, another data file) stay in the run, and label reads them too.
    outside = 0 if shard or limit else len(done_ids - positions.keys())
    return GenerateResult(run_dir, stats, len(positions), retried, outside)


def _close_run(run_dir: Path, path: Path, positions: dict[str, int], seconds: float, stats: RolloutStats,
               invalid_items: int, *, failing: bool, order: bool) -> None:
    """Put the trajectory file in plan order and update the manifest, as every invocation ends.

    Args:
        run_dir: the run directory.
        path: this invocation's trajectory file.
        positions: episode id -> plan position, for ``order_file``.
        seconds: this invocation's time.
        stats: this invocation's counters (token usage).
        invalid_items: data items the envs skipped.
        failing: the invocation is ending with an error (or Ctrl-C): a failure here (the same full
            disk) is logged, so the error the user sees is the one that stopped the run.
        order: whether to rewrite the file in plan order; not after the disk refused a write, when the
            copy would not fit either: the run that finishes the file orders it.
    """
    try:
        if order:
            order_file(path, positions)
        update_manifest(run_dir, seconds, invalid_items)
    except OSError as error:
        if not failing:
            raise
        log.warning("%s: the run directory was not closed tidily (%s); the next run of the same command resumes it",
                    run_dir, error)


def _file_counts(run_dir: Path) -> tuple[dict[str, int], UsageTotals]:
    """Episode, success, error and step counts read from the run's trajectory files, and the teacher
    usage of every episode on disk, the failed attempts set aside included (the truth, also after a
    killed run: an invocation's own counters die with it)."""
    counts = {"episodes": 0, "successes": 0, "errors": 0, "steps": 0}
    usage = UsageTotals()
    for trajectory in iter_trajectories(run_dir):
        counts["episodes"] += 1
        counts["successes"] += int(trajectory.outcome.success)
        counts["errors"] += int(trajectory.outcome.stop_reason.value == "error")
        counts["steps"] += len(trajectory.steps)
        usage.include(trajectory.usage)
    for path in sorted((run_dir / TRAJECTORIES / FAILED).glob("*.jsonl")):
        for trajectory in read_records(path, Trajectory):
            usage.include(trajectory.usage)
    return counts, usage


def update_manifest(run_dir: Path, seconds: float, invalid_items: int) -> None:
    """Counts and teacher usage from the run's files (and the data items the envs skipped), plus this
    invocation's time, into its manifest."""
    manifest = read_manifest(run_dir)
    if manifest is None:
        return
    counts, usage = _file_counts(run_dir)
    manifest.counts = {**manifest.counts, **counts, "invalid_items": invalid_items}
    manifest.timings = {**manifest.timings, "generate_s": round(manifest.timings.get("generate_s", 0.0) + seconds, 3)}
    manifest.usage = usage
    if "generate" not in manifest.stages:
        manifest.stages = [*manifest.stages, "generate"]
    write_manifest(run_dir, manifest)


def generate(
    loaded: LoadedRecipe,
    *,
    out: Path | None = None,
    shard: str | None = None,
    limit: int | None = None,
    quiet: bool = False,
    new: bool = False,
    teacher: Teacher | None = None,
    keep_failed: bool = False,
) -> GenerateResult:
    """Generate (or resume) a recipe's trajectories into its run directory.

    Episodes already on disk are skipped, except those that ended with ``stop_reason=error``:
    they are set aside under ``trajectories/failed/`` and played again, unless ``keep_failed``.
    The run directory's writer lock is held throughout: a second process on the same directory is
    refused at once (``RunDirBusy``). Ctrl-C stops the episodes in flight and raises
    ``KeyboardInterrupt`` once the file is in order; what was written is kept and a re-run resumes.
    """
    recipe = loaded.recipe
    parsed_shard = Shard.parse(shard) if shard else None
    if limit is not None and limit < 1:
        raise PrefbuildError("--limit must be >= 1")
    target = Path(out) if out else recipe.run_dir()
    with open_run_dir(loaded, target, new=new, shard=str(parsed_shard) if parsed_shard else None) as run_dir:
        try:
            return asyncio.run(_generate_async(recipe, run_dir, parsed_shard, limit, quiet, teacher, keep_failed))
        except KeyError as error:  # unknown env / protocol names from the registry
            raise PrefbuildError(str(error.args[0]) if error.args else str(error)) from None


def exit_code(result: GenerateResult) -> int:
    """Non-zero when any episode of this invocation failed with an error."""
    return 1 if result.stats.errors else 0

