"""The driver's progress view: one total over the latest report of every shard, a row per worker."""

from __future__ import annotations

import io

from rich.console import Console

from prefbuild.ray.progress import ClusterProgress, ProgressBoard, ShardReport, worker_rows


def report(shard: int, worker: str, done: int, skipped: int = 0, errors: int = 0) -> ShardReport:
    return ShardReport(shard=shard, worker=worker, done=done, skipped=skipped, success=done, steps=10 * done,
                       tokens=100 * done, errors=errors, elapsed=2.0)


def test_a_retried_shard_replaces_its_dead_attempt_and_rows_are_per_worker() -> None:
    board = ProgressBoard()
    board.report(report(0, "node-a:1", done=30))
    board.report(report(1, "node-b:2", done=20, errors=1))
    board.report(report(0, "node-b:3", done=5, skipped=30))  # shard 0 retried on another worker
    reports = board.snapshot()
    output = io.StringIO()
    with ClusterProgress(60, quiet=False, console=Console(file=output, width=120)) as view:
        view.update(reports)
        assert (view.stats.done, view.stats.skipped, view.stats.errors, view.stats.steps) == (25, 30, 1, 250)
    rows = worker_rows(reports)
    assert sorted(rows) == ["node-b:2", "node-b:3"]
    assert (rows["node-b:2"].episodes, rows["node-b:2"].errors) == (20, 1)
    table = output.getvalue()
    assert "node-b:3" in table and "node-a:1" not in table and "tokens/s" in table
