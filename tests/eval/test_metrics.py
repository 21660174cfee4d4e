"""Evaluation metrics against figures worked out by hand, and the bootstrap's basic guarantees."""

from __future__ import annotations

import pytest

from prefbuild.eval.metrics import (
    EpisodeRow,
    bootstrap_intervals,
    compare_rows,
    compute_metrics,
    group_by_task,
    pass_ks,
)


def row(task: str, success: bool, steps: int, **modes: int) -> EpisodeRow:
    return EpisodeRow(task, "pick", success, steps, dict(modes))


ROWS = [
    row("t1", True, 4, invalid_action=1),
    row("t1", False, 10, invalid_action=3, loop=2),
    row("t2", False, 6, format_violation=6),
    row("t2", False, 8),
    row("t3", True, 2),
    row("t3", True, 6, format_violation=1),
]


def test_metrics_match_hand_computed_figures():
    groups = group_by_task(ROWS)
    ks = pass_ks(groups)
    assert ks == [1, 2]
    metrics = compute_metrics(list(groups.values()), ["invalid_action", "format_violation", "loop"], ks)
    # 3 of 6 episodes won; pass@1 per task 1/2, 0, 1 -> 1/2; pass@2 per task 1, 0, 1 -> 2/3
    assert metrics["success_rate"] == pytest.approx(0.5)
    assert metrics["pass@1"] == pytest.approx(0.5)
    assert metrics["pass@2"] == pytest.approx(2 / 3)
    assert metrics["steps_to_success"] == pytest.approx((4 + 2 + 6) / 3)
    # 36 steps: 4 invalid, 7 format, 2 loop labelled steps
    assert metrics["invalid_action_per_100_steps"] == pytest.approx(400 / 36)
    assert metrics["format_violation_per_100_steps"] == pytest.approx(700 / 36)
    assert metrics["loop_per_100_steps"] == pytest.approx(200 / 36)


def test_no_success_leaves_steps_to_success_unmeasured():
    metrics = compute_metrics([[row("t1", False, 3)]], [], [1])
    assert metrics["steps_to_success"] is None and metrics["success_rate"] == 0.0


def test_intervals_contain_the_estimate_and_are_reproducible():
    groups = group_by_task(ROWS)
    modes = ["invalid_action", "format_violation"]
    metrics = compute_metrics(list(groups.values()), modes, [1, 2])
    intervals = bootstrap_intervals(groups, modes, [1, 2], resamples=300, seed=1)
    assert intervals == bootstrap_intervals(groups, modes, [1, 2], resamples=300, seed=1)
    for name, value in metrics.items():
        low, high = intervals[name]
        assert low <= value <= high, name
    assert intervals["success_rate"][0] < intervals["success_rate"][1]


def test_comparing_an_evaluation_with_itself_gives_zero_differences():
    for difference in compare_rows(ROWS, ROWS, ["invalid_action"], resamples=200):
        assert difference.paired
        if difference.difference is not None:
            assert difference.difference == 0 and difference.interval == (0.0, 0.0)


def test_paired_comparison_sees_a_consistent_gain_that_independent_resampling_blurs():
    # B removes every invalid action on each of 12 tasks whose rates differ a lot between tasks.
    a = [row(f"t{i}", False, 10, invalid_action=i % 6 + 2) for i in range(12)]
    b = [row(f"t{i}", False, 10, invalid_action=i % 6) for i in range(12)]
    paired = {d.metric: d for d in compare_rows(a, b, ["invalid_action"], resamples=500)}
    name = "invalid_action_per_100_steps"
    assert paired[name].difference == pytest.approx(-20.0)
    assert paired[name].interval == pytest.approx((-20.0, -20.0))
    other = [row(f"u{i}", False, 10, invalid_action=i % 6) for i in range(12)]
    independent = {d.metric: d for d in compare_rows(a, other, ["invalid_action"], resamples=500)}
    assert not independent[name].paired
    low, high = independent[name].interval
    assert low < -20.0 < high and high - low > 5.0


def test_evaluations_of_overlapping_task_sets_are_compared_on_the_shared_tasks_paired():
    # A played 12 tasks, B the first 8 of them (a smaller --num-tasks) and 2 others: the 8 shared are compared.
    a = [row(f"t{i}", False, 10, invalid_action=i % 6 + 2) for i in range(12)]
    b = [row(f"t{i}", False, 10, invalid_action=i % 6) for i in range(8)] + [row("x1", True, 10), row("x2", True, 10)]
    name = "invalid_action_per_100_steps"
    compared = {d.metric: d for d in compare_rows(a, b, ["invalid_action"], resamples=300)}
    assert compared[name].paired
    assert compared[name].difference == pytest.approx(-20.0)  # the extra tasks of either side are left out
    assert compared[name].interval == pytest.approx((-20.0, -20.0))
    assert compared["success_rate"].b == 0.0
