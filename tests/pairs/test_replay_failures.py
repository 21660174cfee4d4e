"""A trajectory that cannot be replayed is counted as replay_failed, never silently dropped
as something else."""

from __future__ import annotations

from collections import defaultdict

from prefbuild.pairs import build_strategy
from tests.pairs.household import cached


def _unreplayable(trajectory):
    """The trajectory with its task's regeneration index removed (as an edited or foreign record)."""
    task = trajectory.task.model_copy(update={"meta": {}})
    return trajectory.model_copy(update={"task": task})


def test_expert_fallback_counts_an_unreplayable_task_as_replay_failed() -> None:
    by_task = defaultdict(list)
    for trajectory in cached(8, 2, 3):
        by_task[trajectory.task.id].append(trajectory)
    failures = [t for group in by_task.values() if not any(x.outcome.success for x in group) for t in group]
    assert failures, "the scripted run must have a task without a success"
    strategy = build_strategy("trajectory", {})
    assert list(strategy.pairs([_unreplayable(t) for t in failures])) == []
    assert strategy.stats.skipped["replay_failed"] == len(failures)
    assert "no_success_for_task" not in strategy.stats.skipped
    # The same failures, replayable, give oracle pairs: the count above is the replay's doing.
    assert list(build_strategy("trajectory", {}).pairs(failures))
