"""The rollout ends promptly however its caller stops (an error, Ctrl-C, ``aclose``), and builds no
more episode tasks than there are episodes, whatever ``concurrency`` says."""

from __future__ import annotations

import asyncio
import contextlib
import tracemalloc

import pytest

from prefbuild.envs import base as env_base
from prefbuild.recipe import load_recipe_text
from prefbuild.rollout import EpisodeRunner, plan_episodes, rollout
from tests.rollout.toy import CountEnv, ProgrammedTeacher

RECIPE = """\
name: toy
seed: 1
env: {name: count, protocol: count, num_tasks: 20, samples_per_task: 1, max_steps: 6}
teacher: {backend: scripted, model: toy, concurrency: 2}
"""
DEADLINE_S = 10
pytestmark = pytest.mark.timeout(60)  # the old rollout hung here for good


@pytest.fixture(autouse=True)
def _register_toy(monkeypatch: pytest.MonkeyPatch) -> None:
    from prefbuild import registry

    monkeypatch.setitem(registry.BUILTINS["envs"], "count", "tests.rollout.toy:CountEnv")
    assert issubclass(CountEnv, env_base.Env)


def _runner():
    recipe = load_recipe_text(RECIPE, "toy.yaml").recipe
    return recipe, EpisodeRunner(recipe, ProgrammedTeacher(lambda messages, n: "ACTION: inc"))


@pytest.mark.parametrize("concurrency", [1, 2, 5])
def test_a_caller_that_stops_reading_closes_the_rollout_at_once(concurrency: int) -> None:
    """Results waiting to be read (a full backlog) never keep the rollout from closing (it used to hang)."""
    recipe, runner = _runner()

    async def first_then_stop() -> str:
        played = rollout(plan_episodes(recipe), runner, concurrency=concurrency)
        async with contextlib.aclosing(played) as trajectories:
            async for trajectory in trajectories:
                await asyncio.sleep(0.05)  # the other episodes finish and queue up meanwhile
                return trajectory.id
        raise AssertionError("no trajectory")

    async def bounded() -> str:
        return await asyncio.wait_for(first_then_stop(), DEADLINE_S)

    assert asyncio.run(bounded())


def test_cancelling_the_caller_cancels_the_episodes_in_flight() -> None:
    """Ctrl-C under ``asyncio.run`` cancels the main task: the rollout returns, nothing keeps running."""
    recipe, runner = _runner()
    read: list[str] = []

    async def consume() -> None:  # as generate reads it
        async with contextlib.aclosing(rollout(plan_episodes(recipe), runner, concurrency=1)) as trajectories:
            async for trajectory in trajectories:
                read.append(trajectory.id)
                await asyncio.sleep(0.05)

    async def cancel_soon() -> set[asyncio.Task]:
        task = asyncio.ensure_future(consume())
        await asyncio.sleep(0.02)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(task, DEADLINE_S)
        return asyncio.all_tasks() - {asyncio.current_task()}

    assert asyncio.run(cancel_soon()) == set()
    assert 0 < len(read) < 20


def _peak_bytes(concurrency: int) -> int:
    recipe, runner = _runner()

    async def collect() -> list[str]:
        return [trajectory.id async for trajectory in rollout(plan_episodes(recipe), runner, concurrency=concurrency)]

    tracemalloc.start()
    try:
        ids = asyncio.run(collect())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sorted(ids) == sorted(episode.id for episode in plan_episodes(recipe))
    return peak


def test_a_huge_concurrency_costs_no_more_than_the_episodes_it_plays() -> None:
    """Slots are a counter, not workers: 100,000 of them for 20 episodes cost what 20 do (it was ~100 MB)."""
    _peak_bytes(2)  # imports and caches, outside the measurement
    reference = _peak_bytes(20)
    assert _peak_bytes(100_000) < reference * 1.5 + 1_000_000
