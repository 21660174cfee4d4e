"""The one pass@k, checked against brute force over every k-subset of a task's episodes."""

from __future__ import annotations

import itertools
import random

import pytest

from prefbuild.analysis.passk import mean_pass_at_k, outcomes_by_task, pass_at_k, pass_at_k_by_task
from tests.pairs.factory import S, act, trajectory


def brute_force_pass_at_k(outcomes: list[bool], k: int) -> float:
    subsets = list(itertools.combinations(range(len(outcomes)), k))
    return sum(any(outcomes[i] for i in subset) for subset in subsets) / len(subsets)


@pytest.mark.parametrize(("n", "c", "k", "expected"), [(3, 1, 1, 1 / 3), (3, 1, 2, 2 / 3), (3, 0, 2, 0.0),
                                                        (3, 3, 1, 1.0), (5, 4, 2, 1.0)])
def test_pass_at_k_of_one_task(n: int, c: int, k: int, expected: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(expected)


def test_pass_at_k_refuses_impossible_budgets() -> None:
    for n, c, k in ((3, 1, 0), (2, 1, 3), (2, 3, 1)):
        with pytest.raises(ValueError):
            pass_at_k(n, c, k)


def test_pass_at_k_per_task_is_the_unbiased_estimator() -> None:
    rng = random.Random(5)
    trajectories, expected = [], {}
    for task in range(6):
        outcomes = [rng.random() < 0.4 for _ in range(rng.randint(1, 7))]
        for sample, success in enumerate(outcomes):
            steps = [S(act("look"), "look")]
            trajectories.append(trajectory(steps, traj_id=f"{task}-{sample}", task_id=f"task-{task}", success=success))
        expected[f"task-{task}"] = outcomes
    per_task = outcomes_by_task(trajectories)
    assert per_task == {task: (len(o), sum(o)) for task, o in expected.items()}
    for k in (1, 2, 3):
        result = pass_at_k_by_task(per_task, k)
        want = {task: brute_force_pass_at_k(o, k) for task, o in expected.items() if len(o) >= k}
        assert result.keys() == want.keys()
        for task, value in want.items():
            assert result[task] == pytest.approx(value)
    fewest = min(len(o) for o in expected.values())
    means = mean_pass_at_k(per_task)
    assert set(means) == {f"pass@{k}" for k in (1, 2, 4, 8) if k <= fewest}
    assert means["pass@1"] == pytest.approx(sum(sum(o) / len(o) for o in expected.values()) / 6, abs=1e-4)
    with pytest.raises(ValueError):
        pass_at_k_by_task(per_task, 0)
