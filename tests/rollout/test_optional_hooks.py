"""A failing optional env hook (oracle, searcher, progress) is logged and recorded as unknown; the episode goes on."""

from __future__ import annotations

import asyncio
import logging

import pytest

from prefbuild import registry
from prefbuild.recipe import load_recipe_text
from prefbuild.records import StopReason
from prefbuild.rollout import EpisodeRunner, plan_episodes, rollout
from tests.rollout.toy import CountEnv, ProgrammedTeacher

RECIPE = """\
name: hooks
seed: 1
env: {name: count, protocol: count, num_tasks: 2, samples_per_task: 1, max_steps: 6}
teacher: {backend: scripted, model: toy, concurrency: 1}
"""


class BrokenHooksEnv(CountEnv):
    """The counting env whose oracle, searcher and progress hooks raise."""

    def expert_action(self) -> str | None:
        raise RuntimeError("oracle lost its map")

    def searcher_action(self) -> str | None:
        raise KeyError("nothing seen yet")

    def progress(self) -> float:
        raise ZeroDivisionError("progress of nothing")


@pytest.fixture(autouse=True)
def _register(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.BUILTINS["envs"], "count", f"{__name__}:BrokenHooksEnv")


def test_failing_oracle_and_progress_are_logged_and_recorded_as_unknown(caplog: pytest.LogCaptureFixture) -> None:
    recipe = load_recipe_text(RECIPE, "hooks.yaml").recipe
    runner = EpisodeRunner(recipe, ProgrammedTeacher(lambda messages, n: "ACTION: jump"))

    async def collect():
        return [t async for t in rollout(plan_episodes(recipe), runner, concurrency=1)]

    with caplog.at_level(logging.WARNING, logger="prefbuild.rollout.episode"):
        trajectories = asyncio.run(collect())
    # The episodes still ran to their step limit: the hooks are optional.
    assert [t.outcome.stop_reason for t in trajectories] == [StopReason.max_steps] * 2
    for trajectory in trajectories:
        assert len(trajectory.steps) == 6
        assert all(step.expert_action is None and step.searcher_action is None for step in trajectory.steps)
        assert trajectory.outcome.progress is None
    messages = [record.getMessage() for record in caplog.records]
    first = trajectories[0].id
    assert any(f"episode {first}: env expert_action() failed" in m and "oracle lost its map" in m for m in messages)
    assert any(f"episode {first}: env searcher_action() failed" in m and "nothing seen yet" in m for m in messages)
    assert any(f"episode {first}: env progress() failed" in m and "progress of nothing" in m for m in messages)
    assert all("recorded as unknown" in m for m in messages)
