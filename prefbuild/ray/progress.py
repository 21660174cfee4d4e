"""One progress view on the driver for every worker of a Ray run.

Each shard task keeps a ``RolloutStats`` (``prefbuild.rollout.progress``) and sends a
``ShardReport`` snapshot to a ``ProgressBoard`` actor at most twice a second. The driver
polls the board, adds the latest report of every shard into one ``RolloutStats`` shown by
the usual ``ProgressDisplay``, and lists per worker: episodes, steps/s, tokens/s, errors.
A retried shard's new report replaces the dead attempt's, so nothing is counted twice.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field

from rich.console import Console
from rich.table import Table

from prefbuild.rollout.progress import ProgressDisplay, RolloutStats


@dataclass(frozen=True)
class ShardReport:
    """A shard attempt's counters at one moment."""

    shard: int
    worker: str  # host:pid
    done: int
    skipped: int
    success: int
    steps: int
    tokens: int
    errors: int
    elapsed: float
    finished: bool = False

    @classmethod
    def of(cls, shard: int, stats: RolloutStats, finished: bool = False) -> ShardReport:
        return cls(shard=shard, worker=f"{socket.gethostname()}:{os.getpid()}", done=stats.done,
                   skipped=stats.skipped, success=stats.success, steps=stats.steps,
                   tokens=stats.usage.prompt_tokens + stats.usage.completion_tokens,
                   errors=stats.errors, elapsed=stats.elapsed, finished=finished)


def add_stats(total: RolloutStats, part: RolloutStats) -> None:
    """Add a shard's final counters to the run's (``total`` keeps its own ``total`` and clock).

    Example:
        >>> total, part = RolloutStats(), RolloutStats(done=2, success=1, steps=7)
        >>> add_stats(total, part); (total.done, total.success, total.steps)
        (2, 1, 7)
    """
    for name in ("skipped", "done", "success", "errors", "steps"):
        setattr(total, name, getattr(total, name) + getattr(part, name))
    total.usage.include(part.usage)
    total.stop_reasons.update(part.stop_reasons)
    for task_type, (episodes, successes) in part.by_task_type.items():
        counts = total.by_task_type.setdefault(task_type, [0, 0])
        counts[0] += episodes
        counts[1] += successes
    total.first_error = total.first_error or part.first_error


class ProgressBoard:
    """The latest report of every shard (a Ray actor on the driver's node)."""

    def __init__(self) -> None:
        self.reports: dict[int, ShardReport] = {}

    def report(self, report: ShardReport) -> None:
        self.reports[report.shard] = report

    def snapshot(self) -> list[ShardReport]:
        return list(self.reports.values())


@dataclass
class WorkerRow:
    episodes: int = 0
    steps: int = 0
    tokens: int = 0
    errors: int = 0
    seconds: float = 0.0
    shards: set[int] = field(default_factory=set)


def worker_rows(reports: list[ShardReport]) -> dict[str, WorkerRow]:
    """Per worker (host:pid): episodes, steps, tokens and errors of the shards it ran last.

    Example:
        >>> rows = worker_rows([ShardReport(0, "a:1", 3, 0, 2, 30, 0, 1, 2.0)])
        >>> rows["a:1"].episodes, rows["a:1"].errors
        (3, 1)
    """
    rows: dict[str, WorkerRow] = {}
    for report in reports:
        row = rows.setdefault(report.worker, WorkerRow())
        row.episodes += report.done
        row.steps += report.steps
        row.tokens += report.tokens
        row.errors += report.errors
        row.seconds += report.elapsed  # a worker runs its shards one after the other
        row.shards.add(report.shard)
    return rows


def worker_table(reports: list[ShardReport]) -> Table:
    """A rich table of ``worker_rows``."""
    table = Table(title="workers", show_edge=False)
    for column in ("worker", "shards", "episodes", "steps/s", "tokens/s", "errors"):
        table.add_column(column, justify="left" if column == "worker" else "right")
    for worker, row in sorted(worker_rows(reports).items()):
        seconds = max(row.seconds, 1e-9)
        table.add_row(worker, str(len(row.shards)), str(row.episodes), f"{row.steps / seconds:,.1f}",
                      f"{row.tokens / seconds:,.0f}", str(row.errors))
    return table


class ClusterProgress:
    """The driver's view: one ``ProgressDisplay`` over the sum of the shards' reports.

    Args:
        total: episodes planned.
        quiet: show nothing.
        console: where to draw (stderr by default).
    """

    def __init__(self, total: int, *, quiet: bool, console: Console | None = None) -> None:
        self.stats = RolloutStats(total=total)
        self.console = console or Console(stderr=True)
        self.quiet = quiet
        self.display = ProgressDisplay(self.stats, total, quiet=quiet, console=self.console)
        self.reports: list[ShardReport] = []

    def __enter__(self) -> ClusterProgress:
        self.display.__enter__()
        return self

    def update(self, reports: list[ShardReport]) -> None:
        """Show the latest reports (one per shard)."""
        self.reports = reports
        stats = self.stats
        stats.done = sum(report.done for report in reports)
        stats.skipped = sum(report.skipped for report in reports)
        stats.success = sum(report.success for report in reports)
        stats.steps = sum(report.steps for report in reports)
        stats.errors = sum(report.errors for report in reports)
        stats.usage.completion_tokens = sum(report.tokens for report in reports)
        stats.usage.prompt_tokens = 0
        self.display.update()

    def __exit__(self, *exc: object) -> None:
        self.display.__exit__(*exc)
        if not self.quiet and self.reports:
            self.console.print(worker_table(self.reports))
