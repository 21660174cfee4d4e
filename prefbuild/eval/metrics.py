"""Evaluation metrics of labelled episodes, with task-level bootstrap confidence intervals.

A policy is scored on what its episodes did: the success rate, pass@k (the one estimator in
``prefbuild.analysis.passk``), the mean number of steps of successful episodes, and for every
failure mode the labelled steps per 100 steps played. Episodes of one task are not
independent (same game), so confidence intervals resample whole tasks (a cluster bootstrap),
and a comparison of two policies on the same tasks resamples the tasks once for both (a
paired bootstrap), which is what makes small held-out sets usable.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from prefbuild.analysis.passk import pass_at_k
from prefbuild.records import Trajectory

SUCCESS_RATE = "success_rate"
STEPS_TO_SUCCESS = "steps_to_success"
PER_100_STEPS = "_per_100_steps"
PASS_KS: tuple[int, ...] = (1, 2, 4, 8, 16)
RESAMPLES = 2000
CONFIDENCE = 0.95

Metrics = dict[str, float | None]
Interval = tuple[float, float] | None


@dataclass(frozen=True)
class EpisodeRow:
    """What the metrics need from one labelled episode."""

    task_id: str
    task_type: str
    success: bool
    steps: int
    labelled_steps: dict[str, int] = field(default_factory=dict)  # mode -> steps carrying a label of that mode

    @classmethod
    def of(cls, trajectory: Trajectory) -> EpisodeRow:
        """The row of a labelled trajectory (a step labelled twice with one mode counts once)."""
        per_mode: dict[str, int] = {}
        for step in trajectory.steps:
            for mode in {str(label.mode) for label in step.labels}:
                per_mode[mode] = per_mode.get(mode, 0) + 1
        return cls(
            task_id=trajectory.task.id,
            task_type=trajectory.task.type,
            success=bool(trajectory.outcome.success),
            steps=len(trajectory.steps),
            labelled_steps=dict(sorted(per_mode.items())),
        )

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def mode_metric(mode: str) -> str:
    """The metric name of a failure mode's rate: ``invalid_action`` -> ``invalid_action_per_100_steps``."""
    return f"{mode}{PER_100_STEPS}"


def group_by_task(rows: Iterable[EpisodeRow]) -> dict[str, list[EpisodeRow]]:
    """``task id -> its episodes``, in first-seen order."""
    groups: dict[str, list[EpisodeRow]] = {}
    for row in rows:
        groups.setdefault(row.task_id, []).append(row)
    return groups


def pass_ks(groups: Mapping[str, Sequence[EpisodeRow]], ks: Iterable[int] = PASS_KS) -> list[int]:
    """The budgets ``k`` every task has enough episodes for (so pass@k is comparable between k)."""
    if not groups:
        return []
    fewest = min(len(episodes) for episodes in groups.values())
    return [k for k in ks if k <= fewest]


def compute_metrics(tasks: Sequence[Sequence[EpisodeRow]], modes: Sequence[str], ks: Sequence[int]) -> Metrics:
    """The metrics of a list of tasks' episodes (a task may appear several times: bootstrap draws).

    Args:
        tasks: each item is one task's episodes.
        modes: failure modes to report (a mode without labels reports 0).
        ks: pass@k budgets (each at most the fewest episodes of any task).

    Returns:
        ``{"success_rate", "pass@k"..., "steps_to_success", "<mode>_per_100_steps"...}``; a metric
        with nothing to measure (no episode, no success) is None.

    Example:
        >>> row = EpisodeRow("t1", "pick", True, 4, {"loop": 1})
        >>> compute_metrics([[row]], ["loop"], [1])
        {'success_rate': 1.0, 'pass@1': 1.0, 'steps_to_success': 4.0, 'loop_per_100_steps': 25.0}
    """
    episodes = [row for task in tasks for row in task]
    steps = sum(row.steps for row in episodes)
    wins = [row.steps for row in episodes if row.success]
    metrics: Metrics = {SUCCESS_RATE: len(wins) / len(episodes) if episodes else None}
    for k in ks:
        values = [pass_at_k(len(task), sum(row.success for row in task), k) for task in tasks]
        metrics[f"pass@{k}"] = float(np.mean(values)) if values else None
    metrics[STEPS_TO_SUCCESS] = float(np.mean(wins)) if wins else None
    for mode in modes:
        labelled = sum(row.labelled_steps.get(mode, 0) for row in episodes)
        metrics[mode_metric(mode)] = 100.0 * labelled / steps if steps else None
    return metrics


def _interval(values: Sequence[float | None], confidence: float) -> Interval:
    finite = np.array([value for value in values if value is not None], dtype=float)
    if finite.size == 0:
        return None
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(finite, [tail, 100.0 - tail])
    return float(low), float(high)


def bootstrap_intervals(
    groups: Mapping[str, Sequence[EpisodeRow]],
    modes: Sequence[str],
    ks: Sequence[int],
    *,
    resamples: int = RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = 0,
) -> dict[str, Interval]:
    """Percentile bootstrap interval of every metric, resampling tasks with replacement.

    Args:
        groups: ``task id -> episodes`` (``group_by_task``).
        modes, ks: as for ``compute_metrics``.
        resamples: bootstrap draws.
        confidence: the interval's coverage (0.95: the 2.5th to 97.5th percentile).
        seed: the draws' seed (the same data and seed give the same intervals).

    Returns:
        ``metric -> (low, high)``, or None where no draw could measure the metric.
    """
    tasks = list(groups.values())
    rng = np.random.default_rng(seed)
    draws: dict[str, list[float | None]] = {}
    for _ in range(resamples):
        picked = rng.integers(0, len(tasks), len(tasks))
        for name, value in compute_metrics([tasks[i] for i in picked], modes, ks).items():
            draws.setdefault(name, []).append(value)
    return {name: _interval(values, confidence) for name, values in draws.items()}


@dataclass(frozen=True)
class MetricDifference:
    """One metric of two evaluations: A, B, B - A and the bootstrap interval of B - A."""

    metric: str
    a: float | None
    b: float | None
    difference: float | None
    interval: Interval
    paired: bool


def compare_rows(
    rows_a: Sequence[EpisodeRow],
    rows_b: Sequence[EpisodeRow],
    modes: Sequence[str],
    *,
    resamples: int = RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = 0,
) -> list[MetricDifference]:
    """Every metric of A and B with the difference B - A and its bootstrap interval.

    When A and B played the same tasks, each draw resamples the task ids once and scores both
    policies on them (paired: the task-to-task variation cancels). When their tasks only overlap
    (one evaluation played more tasks), both are compared on the shared tasks alone, paired; with
    no task in common, each side's tasks are resampled on their own.

    Args:
        rows_a, rows_b: the episodes of the two evaluations.
        modes: failure modes to compare.
        resamples, confidence, seed: as for ``bootstrap_intervals``.

    Returns:
        One ``MetricDifference`` per metric, in ``compute_metrics`` order.

    Example:
        >>> a = [EpisodeRow("t1", "pick", False, 5, {"loop": 2})]
        >>> b = [EpisodeRow("t1", "pick", True, 5, {})]
        >>> [d.difference for d in compare_rows(a, b, ["loop"], resamples=10)]
        [1.0, 1.0, None, -40.0]
    """
    groups_a, groups_b = group_by_task(rows_a), group_by_task(rows_b)
    shared = groups_a.keys() & groups_b.keys()
    if shared and shared != groups_a.keys() | groups_b.keys():  # a paired comparison of the same tasks
        groups_a = {task: rows for task, rows in groups_a.items() if task in shared}
        groups_b = {task: groups_b[task] for task in groups_a}
    ks = sorted(set(pass_ks(groups_a)) & set(pass_ks(groups_b)))
    value_a = compute_metrics(list(groups_a.values()), modes, ks)
    value_b = compute_metrics(list(groups_b.values()), modes, ks)
    paired = set(groups_a) == set(groups_b)
    ids_a, ids_b = list(groups_a), list(groups_b) if not paired else list(groups_a)
    rng = np.random.default_rng(seed)
    draws: dict[str, list[float | None]] = {name: [] for name in value_a}
    for _ in range(resamples):
        picked_a = rng.integers(0, len(ids_a), len(ids_a))
        picked_b = picked_a if paired else rng.integers(0, len(ids_b), len(ids_b))
        drawn_a = compute_metrics([groups_a[ids_a[i]] for i in picked_a], modes, ks)
        drawn_b = compute_metrics([groups_b[ids_b[i]] for i in picked_b], modes, ks)
        for name in draws:
            draws[name].append(_difference(drawn_a[name], drawn_b[name]))
    return [
        MetricDifference(
            metric=name,
            a=value_a[name],
            b=value_b[name],
            difference=_difference(value_a[name], value_b[name]),
            interval=_interval(draws[name], confidence),
            paired=paired,
        )
        for name in value_a
    ]


def _difference(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else b - a
