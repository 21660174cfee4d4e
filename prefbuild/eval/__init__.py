"""Closing the loop: play held-out tasks with a model, label its episodes, score and compare policies.

``evaluate`` (in ``run``) plays a recipe's held-out split with a model as the policy and writes an
evaluation run directory; ``metrics`` scores labelled episodes with task-level bootstrap
intervals; ``split`` guarantees the held-out tasks are not the training tasks; ``views`` prints
and renders the results.
"""

from prefbuild.eval.metrics import EpisodeRow, MetricDifference, compare_rows, compute_metrics
from prefbuild.eval.run import EVALUATION, Evaluation, evaluate, load_evaluation, score_run
from prefbuild.eval.split import HELD_OUT_SPLITS, check_disjoint, held_out_split

__all__ = [
    "EVALUATION",
    "HELD_OUT_SPLITS",
    "EpisodeRow",
    "Evaluation",
    "MetricDifference",
    "check_disjoint",
    "compare",
    "compare_rows",
    "compute_metrics",
    "evaluate",
    "held_out_split",
    "load_evaluation",
    "score_run",
]


def compare(a: Evaluation, b: Evaluation, *, seed: int = 0) -> list[MetricDifference]:
    """Every metric of two evaluations with B - A and its bootstrap interval (see ``compare_rows``)."""
    modes = [*a.modes, *(mode for mode in b.modes if mode not in a.modes)]
    return compare_rows(a.episodes, b.episodes, modes, seed=seed)
