"""Live counters of a rollout and the progress view that shows them."""

from __future__ import annotations

import collections
import time
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from prefbuild.records import StopReason, Trajectory, UsageTotals


@dataclass
class RolloutStats:
    """Live counters for the progress display and the final summary."""

    total: int = 0
    skipped: int = 0
    done: int = 0
    success: int = 0
    errors: int = 0
    steps: int = 0
    usage: UsageTotals = field(default_factory=UsageTotals)
    stop_reasons: collections.Counter[str] = field(default_factory=collections.Counter)
    by_task_type: dict[str, list[int]] = field(default_factory=dict)  # type -> [episodes, successes]
    first_error: str | None = None
    started: float = field(default_factory=time.monotonic)

    def add(self, trajectory: Trajectory) -> None:
        self.done += 1
        self.steps += len(trajectory.steps)
        self.success += int(trajectory.outcome.success)
        self.stop_reasons[trajectory.outcome.stop_reason.value] += 1
        if trajectory.outcome.stop_reason is StopReason.error:
            self.errors += 1
            self.first_error = self.first_error or trajectory.outcome.error
        self.usage.include(trajectory.usage)
        counts = self.by_task_type.setdefault(trajectory.task.type, [0, 0])
        counts[0] += 1
        counts[1] += int(trajectory.outcome.success)

    @property
    def elapsed(self) -> float:
        return max(time.monotonic() - self.started, 1e-9)


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


