"""The rollout engine's rules, checked exactly on a tiny env with a programmable teacher."""

from __future__ import annotations

import asyncio
import json

import pytest

from prefbuild.envs import base as env_base
from prefbuild.recipe import load_recipe_text
from prefbuild.records import StopReason, prompt_messages
from prefbuild.rollout import EpisodeRunner, Shard, episode_id, order_file, plan_episodes, rollout
from prefbuild.teachers.base import Completion, Teacher, TeacherRequest
from tests.rollout.toy import CountEnv, ProgrammedTeacher

RECIPE = """\
name: toy
seed: 1
env: {name: count, protocol: count, num_tasks: 5, samples_per_task: 2, max_steps: 6}
teacher: {backend: scripted, model: toy, concurrency: 3}
"""


@pytest.fixture(autouse=True)
def _register_toy(monkeypatch: pytest.MonkeyPatch) -> None:
    from prefbuild import registry

    monkeypatch.setitem(registry.BUILTINS["envs"], "count", "tests.rollout.toy:CountEnv")
    assert issubclass(CountEnv, env_base.Env)


def recipe(**overrides: str):
    return load_recipe_text(RECIPE, "toy.yaml", [f"{k}={v}" for k, v in overrides.items()]).recipe


def play(policy, **overrides: str):
    r = recipe(**overrides)
    teacher = ProgrammedTeacher(policy)
    runner = EpisodeRunner(r, teacher)

    async def collect():
        return [t async for t in rollout(plan_episodes(r), runner, concurrency=r.teacher.concurrency)]

    return asyncio.run(collect()), teacher


def test_plan_is_stable_and_ids_are_unique() -> None:
    a, b = list(plan_episodes(recipe())), list(plan_episodes(recipe()))
    assert [e.id for e in a] == [e.id for e in b]
    assert len({e.id for e in a}) == 10
    assert a[1].sample_index == 1 and a[1].task.info.id == a[0].task.info.id
    assert a[0].id == episode_id(recipe().generation_hash(), "count/train/0", 0)


def test_shards_partition_tasks() -> None:
    everything = {e.id for e in plan_episodes(recipe())}
    slices = [{e.id for e in plan_episodes(recipe(), Shard(k, 3))} for k in range(3)]
    assert set().union(*slices) == everything
    assert sum(len(s) for s in slices) == len(everything)


def test_expert_policy_succeeds_and_history_equals_prompt_messages() -> None:
    trajectories, teacher = play(lambda messages, n: "ACTION: inc")
    assert sorted(t.id for t in trajectories) == sorted(e.id for e in plan_episodes(recipe()))
    assert all(t.outcome.success and t.outcome.stop_reason is StopReason.success for t in trajectories)
    # Every request the teacher saw is exactly what prompt_messages rebuilds from the record.
    seen = {json.dumps([m.model_dump() for m in r]) for r in teacher.requests}
    for trajectory in trajectories:
        for step in trajectory.steps:
            rebuilt = prompt_messages(trajectory, step.index)
            assert json.dumps([m.model_dump() for m in rebuilt]) in seen
        assert trajectory.steps[-1].done and trajectory.steps[0].expert_action == "inc"
        assert "AVAILABLE ACTIONS" not in (trajectory.steps[0].observation_in_history or "")
    assert trajectories[0].usage.requests == len(trajectories[0].steps)


def test_step_limit_and_invalid_actions() -> None:
    trajectories, _ = play(lambda messages, n: "ACTION: jump")
    for trajectory in trajectories:
        assert trajectory.outcome.stop_reason is StopReason.max_steps
        assert len(trajectory.steps) == 6
        assert all(step.valid is False and step.feedback == "Nothing happens." for step in trajectory.steps)


def test_final_claim_ends_episode_as_agent_finished() -> None:
    trajectories, _ = play(lambda messages, n: "ACTION: done")
    assert {t.outcome.stop_reason for t in trajectories} == {StopReason.agent_finished}
    assert all(len(t.steps) == 1 and not t.outcome.success for t in trajectories)


def test_protocol_stop_rule_and_missing_action() -> None:
    trajectories, _ = play(lambda messages, n: "ACTION: wait")
    assert {t.outcome.stop_reason for t in trajectories} == {StopReason.protocol_stop}
    assert all(len(t.steps) == 4 for t in trajectories)
    assert trajectories[0].steps[-1].facts.stop == "three identical outputs"
    trajectories, _ = play(lambda messages, n: "I am not sure what to do.")
    assert all(len(t.steps) == 1 and t.steps[0].action is None for t in trajectories)
    assert {t.outcome.stop_reason for t in trajectories} == {StopReason.protocol_stop}


def test_teacher_failure_is_recorded_not_dropped() -> None:
    trajectories, _ = play(lambda messages, n: "<fail>" if len(messages) > 2 else "ACTION: inc")
    assert len(trajectories) == 10
    for trajectory in trajectories:
        assert trajectory.outcome.stop_reason is StopReason.error
        assert "all endpoints down" in trajectory.outcome.error
        assert len(trajectory.steps) == 1  # the step before the failure is kept


def test_samples_get_distinct_reproducible_seeds() -> None:
    seeds = []

    class SeedTeacher(ProgrammedTeacher):
        async def complete(self, request):
            seeds.append(request.sampling.seed)
            return await super().complete(request)

    r = recipe(**{"teacher.sampling.seed": "10", "env.num_tasks": "1"})
    runner = EpisodeRunner(r, SeedTeacher(lambda m, n: "ACTION: done"))

    async def collect():
        return [t async for t in rollout(plan_episodes(r), runner, concurrency=1)]

    asyncio.run(collect())
    assert seeds == [10, 11]


def test_a_long_episode_does_not_hold_back_the_ones_behind_it() -> None:
    """Completion order: short episodes finish while the first (slow) one is still running."""

    class SlowFirst(Teacher):
        backend = "programmed"
        model = "slow-first"

        def __init__(self, slow_prompt: str) -> None:
            self.slow_prompt = slow_prompt

        async def complete(self, request: TeacherRequest) -> list[Completion]:
            await asyncio.sleep(0.05 if request.messages[0].content == self.slow_prompt else 0)
            return [Completion("ACTION: inc", "stop", 1, 1, 0.0)]

    r = recipe()
    first = next(iter(plan_episodes(r)))
    runner = EpisodeRunner(r, SlowFirst(f"Reach {first.task.payload}. Answer 'ACTION: inc' or 'ACTION: done'."))

    async def collect() -> list[str]:
        return [t.id async for t in rollout(plan_episodes(r), runner, concurrency=3)]

    finished = asyncio.run(collect())
    planned = [e.id for e in plan_episodes(r)]
    assert sorted(finished) == sorted(planned)
    assert finished != planned  # the slow first episode did not block the ones after it


def test_order_file_puts_lines_in_plan_order_and_leaves_ordered_files_alone(tmp_path) -> None:
    path = tmp_path / "episodes.jsonl"
    lines = [f'{{"schema_version":"1.0","id":"e{n}","x":{n}}}\n' for n in (2, 0, 1)]
    path.write_text("".join(lines))
    assert order_file(path, {"e0": 0, "e1": 1, "e2": 2})
    assert path.read_text() == "".join([lines[1], lines[2], lines[0]])
    before = path.stat().st_mtime_ns
    assert not order_file(path, {"e0": 0, "e1": 1, "e2": 2})
    assert path.stat().st_mtime_ns == before
