"""Evaluations as text tables (terminal, examples) and as a section of the HTML report."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from pathlib import Path

from prefbuild.eval.metrics import Interval, MetricDifference, group_by_task
from prefbuild.eval.run import EVALUATION, Evaluation, load_evaluation


def _number(value: float | None, metric: str) -> str:
    if value is None:
        return "-"
    if metric == "success_rate" or metric.startswith("pass@"):
        return f"{value:.1%}"
    return f"{value:.2f}"


def _interval(interval: Interval, metric: str) -> str:
    if interval is None:
        return "-"
    return f"[{_number(interval[0], metric)}, {_number(interval[1], metric)}]"


def _signed(value: float | None, metric: str) -> str:
    text = _number(value, metric)
    return text if value is None or value < 0 else f"+{text}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows, strict=True)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)) for line in [header, *rows]]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(line.rstrip() for line in lines)


def evaluation_table(evaluation: Evaluation) -> str:
    """One evaluation as a text table: metric, value, 95% bootstrap interval.

    Example:
        >>> print(evaluation_table(load_evaluation("runs/eval-base")))  # doctest: +SKIP
        metric              value   95% CI
        ...
    """
    head = (
        f"{evaluation.model} ({evaluation.backend}) on {evaluation.recipe} {'/'.join(evaluation.splits)}: "
        f"{evaluation.tasks} tasks, {len(evaluation.episodes)} episodes, {evaluation.steps} steps"
    )
    rows = [
        [name, _number(value, name), _interval(evaluation.intervals.get(name), name)]
        for name, value in evaluation.metrics.items()
    ]
    return head + "\n" + _table(["metric", "value", "95% CI"], rows)


def comparison_table(a: Evaluation, b: Evaluation, differences: Sequence[MetricDifference]) -> str:
    """Two evaluations side by side: A, B, B - A and the bootstrap interval of B - A."""
    tasks_a, tasks_b = set(group_by_task(a.episodes)), set(group_by_task(b.episodes))
    shared = tasks_a & tasks_b
    if not (differences and differences[0].paired):
        kind = "independent task sets (no task in common)"
    elif tasks_a == tasks_b:
        kind = f"paired over the same {len(shared)} tasks"
    else:
        kind = (f"paired over the {len(shared)} tasks both played (left out: {len(tasks_a - shared)} of A's, "
                f"{len(tasks_b - shared)} of B's)")
    head = (f"A = {a.model} on {a.recipe} ({a.run_dir})\nB = {b.model} on {b.recipe} ({b.run_dir})\n"
            f"B - A with 95% bootstrap CI, {kind}")
    if a.recipe != b.recipe:
        head += f"\nwarning: A and B evaluate different recipes ({a.recipe} and {b.recipe})"
    rows = [
        [d.metric, _number(d.a, d.metric), _number(d.b, d.metric), _signed(d.difference, d.metric),
         _interval(d.interval, d.metric)]
        for d in differences
    ]
    return head + "\n" + _table(["metric", "A", "B", "B - A", "95% CI"], rows)


def evaluation_section(run_dir: str | Path) -> str:
    """The HTML report's evaluation section for a run directory holding ``evaluation.json`` ('' otherwise)."""
    folder = Path(run_dir)
    if not folder.is_dir() or not (folder / EVALUATION).is_file():
        return ""
    evaluation = load_evaluation(folder)
    body = "".join(
        f"<tr><td>{escape(name)}</td><td>{_number(value, name)}</td>"
        f"<td>{_interval(evaluation.intervals.get(name), name)}</td></tr>"
        for name, value in evaluation.metrics.items()
    )
    caption = (
        f"{escape(evaluation.model)} ({escape(evaluation.backend)}) on held-out "
        f"{escape('/'.join(evaluation.splits))}: {evaluation.tasks} tasks, {len(evaluation.episodes)} episodes, "
        f"{evaluation.steps} steps. Failure modes are labelled steps per 100 steps; intervals are 95% bootstrap "
        "over tasks."
    )
    return (
        f'<h2>Evaluation</h2><p id="evaluation-caption">{caption}</p>'
        '<table class="counts" id="table-evaluation"><tr><th>metric</th><th>value</th><th>95% CI</th></tr>'
        f"{body}</table>"
    )
