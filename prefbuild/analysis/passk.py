"""pass@k: the chance that at least one of k sampled episodes of a task succeeds.

The one implementation used by ``prefbuild stats``, the HTML report and the ``sft`` export.
It is the unbiased estimator of Chen et al. (2021, "Evaluating Large Language Models Trained
on Code"): with ``n`` episodes of a task of which ``c`` succeeded,
``pass@k = 1 - C(n - c, k) / C(n, k)``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Protocol


class _Episode(Protocol):
    """What pass@k needs from a trajectory: its task id and whether it succeeded."""

    @property
    def task(self) -> object: ...  # has ``.id``

    @property
    def outcome(self) -> object: ...  # has ``.success``


def pass_at_k(samples: int, successes: int, k: int) -> float:
    """Unbiased pass@k of one task.

    Args:
        samples: episodes run for the task (``n``).
        successes: how many of them succeeded (``c``).
        k: the budget of attempts; at least 1 and at most ``samples``.

    Returns:
        ``1 - C(n - c, k) / C(n, k)``, a probability in [0, 1].

    Raises:
        ValueError: ``k`` is below 1 or above ``samples``, or ``successes`` is out of range.

    Example:
        >>> pass_at_k(4, 1, 1)
        0.25
        >>> pass_at_k(4, 1, 2)
        0.5
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    if k > samples:
        raise ValueError(f"pass@{k} needs at least {k} samples, the task has {samples}")
    if not 0 <= successes <= samples:
        raise ValueError(f"successes must be between 0 and {samples}, not {successes}")
    if samples - successes < k:
        return 1.0
    return 1.0 - math.comb(samples - successes, k) / math.comb(samples, k)


def outcomes_by_task(trajectories: Iterable[_Episode]) -> dict[str, tuple[int, int]]:
    """``task id -> (episodes, successes)`` over a stream of trajectories.

    Example:
        >>> outcomes_by_task([])
        {}
    """
    totals: dict[str, list[int]] = {}
    for trajectory in trajectories:
        entry = totals.setdefault(trajectory.task.id, [0, 0])  # type: ignore[attr-defined]
        entry[0] += 1
        entry[1] += int(trajectory.outcome.success)  # type: ignore[attr-defined]
    return {task_id: (n, c) for task_id, (n, c) in totals.items()}


def pass_at_k_by_task(outcomes: dict[str, tuple[int, int]], k: int) -> dict[str, float]:
    """pass@k per task id; tasks with fewer than ``k`` episodes have no unbiased estimate and are left out.

    Args:
        outcomes: ``task id -> (episodes, successes)``, as ``outcomes_by_task`` returns.
        k: the budget of attempts (at least 1).

    Returns:
        ``task id -> pass@k``.

    Example:
        >>> pass_at_k_by_task({"t1": (2, 1), "t2": (1, 1)}, 2)
        {'t1': 1.0}
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    return {task_id: pass_at_k(n, c, k) for task_id, (n, c) in outcomes.items() if n >= k}


def mean_pass_at_k(
    outcomes: dict[str, tuple[int, int]], ks: Iterable[int] = (1, 2, 4, 8, 16, 32, 64)
) -> dict[str, float]:
    """Mean pass@k over tasks for each ``k`` that every task has enough episodes for.

    Args:
        outcomes: ``task id -> (episodes, successes)``.
        ks: candidate budgets; those above the fewest episodes any task has are left out
            (a mean over a subset of tasks would not be comparable between k).

    Returns:
        ``{"pass@1": ..., "pass@2": ...}``, rounded to 4 decimals.

    Example:
        >>> mean_pass_at_k({"t1": (2, 1), "t2": (2, 0)})
        {'pass@1': 0.25, 'pass@2': 0.5}
    """
    if not outcomes:
        return {}
    fewest = min(n for n, _ in outcomes.values())
    table: dict[str, float] = {}
    for k in ks:
        if k > fewest:
            continue
        values = pass_at_k_by_task(outcomes, k).values()
        table[f"pass@{k}"] = round(sum(values) / len(outcomes), 4)
    return table
