"""``prefbuild generate``: plan episodes, skip the finished ones, play the rest, keep every result.

This module ties the rollout engine to a run directory, a teacher and a progress display.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from prefbuild.errors import PrefbuildError
from prefbuild.io.jsonl import JsonlWriter
from prefbuild.io.rundir import (
    TRAJECTORIES,
    finished_episode_ids,
    prepare_run_dir,
    read_manifest,
    write_manifest,
)
from prefbuild.recipe import LoadedRecipe, Recipe
from prefbuild.rollout.engine import EpisodeRunner, RolloutStats, Shard, plan_episodes, rollout
from prefbuild.teachers.base import Teacher

log = logging.getLogger("prefbuild.rollout.generate")


@dataclass
class GenerateResult:
    run_dir: Path
    stats: RolloutStats
    planned: int


def teacher_settings(recipe: Recipe, run_dir: Path) -> dict[str, Any]:
    """The teacher section as the plain mapping the teacher factory takes."""
    settings = recipe.teacher.model_dump(mode="json")
    if settings.get("launch") is not None:
        settings["launch"]["log_path"] = str(run_dir / "logs" / "vllm.log")
    if settings["backend"] in ("transformers", "vllm") and settings.get("model") in ("", "embedded"):
        from prefbuild.teachers.embedded import ensure_embedded_model

        settings["model"] = str(ensure_embedded_model())
    return settings


def build_teacher(recipe: Recipe, run_dir: Path) -> Teacher:
    from prefbuild.teachers import make_teacher

    return make_teacher(teacher_settings(recipe, run_dir))


class ProgressDisplay:
    """A rich progress bar on a terminal; plain periodic log lines otherwise; nothing with --quiet."""

    def __init__(self, stats: RolloutStats, total: int, *, quiet: bool, console: Console | None = None) -> None:
        self.stats = stats
        self.total = total
        self.quiet = quiet
        self.console = console or Console(stderr=True)
        self.live = not quiet and self.console.is_terminal
        self._last_log = 0.0
        self._progress: Progress | None = None
        self._task: Any = None

    def _line(self) -> str:
        s = self.stats
        rate = f"{100 * s.success / s.done:.0f}%" if s.done else "-"
        tokens = (s.usage.prompt_tokens + s.usage.completion_tokens) / s.elapsed
        return (f"success {rate} | {s.steps / s.elapsed:,.1f} steps/s | {tokens:,.0f} tok/s | "
                f"errors {s.errors}")

    def __enter__(self) -> ProgressDisplay:
        if self.live:
            self._progress = Progress(
                TextColumn("[bold]episodes"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[line]}"),
                TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(), console=self.console, transient=False,
            )
            self._progress.__enter__()
            self._task = self._progress.add_task("episodes", total=self.total, line=self._line())
        return self

    def update(self) -> None:
        if self._progress is not None:
            self._progress.update(self._task, completed=self.stats.done, line=self._line())
            return
        if self.quiet:
            return
        now = time.monotonic()
        if now - self._last_log >= 5.0 or self.stats.done == self.total:
            self._last_log = now
            remaining = (self.total - self.stats.done) * self.stats.elapsed / max(self.stats.done, 1)
            self.console.print(f"episodes {self.stats.done}/{self.total} | {self._line()} | eta {remaining:.0f}s",
                               highlight=False, soft_wrap=True)

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.__exit__(None, None, None)


def summary_table(stats: RolloutStats, run_dir: Path) -> Table:
    table = Table(title=f"generate: {run_dir}", show_header=True)
    table.add_column("task type")
    table.add_column("episodes", justify="right")
    table.add_column("success", justify="right")
    for task_type, (episodes, successes) in sorted(stats.by_task_type.items()):
        table.add_row(task_type, str(episodes), f"{100 * successes / episodes:.0f}%")
    table.add_section()
    table.add_row("all", str(stats.done), f"{100 * stats.success / max(stats.done, 1):.0f}%")
    table.caption = (
        "stop reasons: " + ", ".join(f"{k} {v}" for k, v in sorted(stats.stop_reasons.items()))
        + f" | tokens: prompt {stats.usage.prompt_tokens:,}, completion {stats.usage.completion_tokens:,}"
        + (f" | skipped (already done): {stats.skipped}" if stats.skipped else "")
    )
    return table


async def _generate_async(
    recipe: Recipe, run_dir: Path, shard: Shard | None, limit: int | None, quiet: bool, teacher: Teacher | None
) -> GenerateResult:
    planned = plan_episodes(recipe, shard, limit)
    done_ids = finished_episode_ids(run_dir)
    todo = [episode for episode in planned if episode.id not in done_ids]
    stats = RolloutStats(total=len(planned), skipped=len(planned) - len(todo))
    if not todo:
        return GenerateResult(run_dir, stats, len(planned))
    owned = teacher is None
    teacher = teacher or build_teacher(recipe, run_dir)
    file_name = shard.file_name if shard else "episodes.jsonl"
    started = time.monotonic()
    try:
        async with teacher:
            runner = EpisodeRunner(recipe, teacher)
            with JsonlWriter(run_dir / TRAJECTORIES / file_name) as writer, ProgressDisplay(
                stats, len(todo), quiet=quiet
            ) as display:
                async for trajectory in rollout(todo, runner, concurrency=recipe.teacher.concurrency):
                    writer.write(trajectory)  # flushed before it is counted
                    stats.add(trajectory)
                    display.update()
    finally:
        if owned:
            await teacher.close()
        _update_manifest(run_dir, stats, time.monotonic() - started)
    return GenerateResult(run_dir, stats, len(planned))


def _update_manifest(run_dir: Path, stats: RolloutStats, seconds: float) -> None:
    manifest = read_manifest(run_dir)
    if manifest is None:
        return
    counts = dict(manifest.counts)
    counts["episodes"] = counts.get("episodes", 0) + stats.done
    counts["successes"] = counts.get("successes", 0) + stats.success
    counts["errors"] = counts.get("errors", 0) + stats.errors
    counts["steps"] = counts.get("steps", 0) + stats.steps
    manifest.counts = counts
    manifest.timings = {**manifest.timings, "generate_s": round(manifest.timings.get("generate_s", 0.0) + seconds, 3)}
    manifest.usage.requests += stats.usage.requests
    manifest.usage.prompt_tokens += stats.usage.prompt_tokens
    manifest.usage.completion_tokens += stats.usage.completion_tokens
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
) -> GenerateResult:
    """Generate (or resume) a recipe's trajectories into its run directory."""
    recipe = loaded.recipe
    parsed_shard = Shard.parse(shard) if shard else None
    if limit is not None and limit < 1:
        raise PrefbuildError("--limit must be >= 1")
    run_dir = prepare_run_dir(loaded, Path(out) if out else recipe.run_dir(), new=new,
                              shard=str(parsed_shard) if parsed_shard else None)
    try:
        return asyncio.run(_generate_async(recipe, run_dir, parsed_shard, limit, quiet, teacher))
    except KeyError as error:  # unknown env / protocol names from the registry
        raise PrefbuildError(str(error.args[0]) if error.args else str(error)) from None


def print_summary(result: GenerateResult, console: Console | None = None) -> None:
    console = console or Console(stderr=False)
    console.print(summary_table(result.stats, result.run_dir))
    if result.stats.errors:
        console.print(f"[red]{result.stats.errors} of {result.stats.done} episodes failed[/red]: "
                      f"{result.stats.first_error}", highlight=False)


def exit_code(result: GenerateResult) -> int:
    """Non-zero when any episode of this invocation failed with an error."""
    return 1 if result.stats.errors else 0

