"""``HouseholdEnv`` against the env contract: registry, tasks, reset/step info, expert, progress,
branching (snapshot/restore/clone/deepcopy) and simulated failures."""

from __future__ import annotations

import copy
import random

import pytest

from prefbuild.envs import get_env
from prefbuild.envs.base import EnvTask
from prefbuild.envs.household import priors
from prefbuild.envs.household.catalog import TASK_TYPE_NAMES
from prefbuild.envs.household.env import HouseholdEnv, task_info
from prefbuild.records import TaskInfo
from prefbuild.simulation import failure_action
from tests.household.support import worked_example_task


def example_task() -> EnvTask:
    task = worked_example_task()
    return EnvTask(info=task_info(task), payload=task)


def test_registered_and_configured() -> None:
    assert get_env("household") is HouseholdEnv
    assert HouseholdEnv.name == "household" and HouseholdEnv.dialects == ("classic", "modern")
    assert isinstance(HouseholdEnv.protocols, dict)
    with pytest.raises(ValueError, match="unknown dialect 'pirate'"):
        HouseholdEnv(dialect="pirate")
    with pytest.raises(ValueError, match="unknown option"):
        HouseholdEnv(shuffle=True)
    with pytest.raises(RuntimeError, match="reset"):
        HouseholdEnv().step("look")


def test_tasks_yield_env_tasks() -> None:
    env = HouseholdEnv()
    tasks = list(env.tasks("train", 12, 3))
    assert [t.info.type for t in tasks] == list(TASK_TYPE_NAMES) * 2
    info = tasks[5].info
    assert isinstance(info, TaskInfo)
    assert info.id == "household/train/s3/000005" and info.split == "train" and info.seed == 3
    assert info.meta["index"] == 5 and info.meta["room"] in ("kitchen", "livingroom", "bedroom", "bathroom")
    assert info.goal == tasks[5].payload.goal.sentence
    assert [t.info.id for t in env.tasks("train", 12, 3)] == [t.info.id for t in tasks]
    with pytest.raises(ValueError, match="split"):
        env.tasks("dev", 1, 0)
    cool = list(env.tasks("valid_unseen", 3, 0, ["cool"]))
    assert {t.info.type for t in cool} == {"pick_cool_then_place_in_recep"}


def test_episode_contract_on_the_worked_example() -> None:
    env = HouseholdEnv()
    observation, info = env.reset(example_task())
    assert (
        observation.startswith("You are in the middle of a room.")
        and "\nYour task is to: heat some apple" in observation
    )
    assert info["won"] is False
    assert env.expert_steps_remaining() == 6 and env.progress() == 0.0
    result = env.step("go to countertop 1")
    assert result.observation.startswith("You arrive at loc 8. On the countertop 1")
    assert result.info == {"command": "go to countertop 1"} and result.valid is True and not result.won
    assert result.reward == 0.0 and not result.done
    assert env.progress() == pytest.approx(1 / 6)
    bad = env.step("fly away")
    assert bad.observation == "Nothing happens." and bad.valid is False
    for _ in range(5):
        command = env.expert_action()
        assert command in env.admissible_actions()
        result = env.step(command)
    assert result.won and result.done and result.reward == 1.0
    assert env.expert_action() is None and env.progress() == 1.0 and env.expert_steps_remaining() == 0
    raw_env = HouseholdEnv(intro="raw")
    assert raw_env.reset(example_task())[0].startswith("-= Welcome to TextWorld, ALFRED! =-\n\n")


def test_expert_kinds_win_generated_games() -> None:
    for kind in ("oracle", "searching"):
        env = HouseholdEnv(expert=kind, dialect="modern")
        for task in env.tasks("valid_seen", 12, 8):
            env.reset(task)
            for _ in range(200):
                if env.step(env.expert_action() or "").done:
                    break
            assert env.engine.won


def test_snapshot_restore_clone_and_deepcopy() -> None:
    env = HouseholdEnv()
    env.reset(example_task())
    env.step("go to countertop 1")
    saved = env.snapshot()
    remaining = env.expert_steps_remaining()
    env.step("take mug 1 from countertop 1")
    assert env.expert_steps_remaining() == remaining + 1  # put the mug back first
    env.restore(saved)
    assert env.engine.holding() is None and env.expert_steps_remaining() == remaining
    twin = env.clone()
    deep = copy.deepcopy(env)
    twin.step("take apple 1 from countertop 1")
    assert twin.engine.holding() == "apple 1"
    assert env.engine.holding() is None and deep.engine.holding() is None
    assert deep.admissible_actions() == env.admissible_actions()
    assert twin.expert_steps_remaining() == remaining - 1


def test_failure_actions() -> None:
    env = HouseholdEnv()
    rng = random.Random(0)
    assert failure_action(env, "premature_success", rng) is None
    for task in env.tasks("train", 60, 2):
        env.reset(task)
        goal_object = task.payload.goal.object_type
        invalid = failure_action(env, "invalid_action", rng)
        assert invalid is not None
        assert invalid not in env.admissible_actions()
        assert env.step(invalid).valid is False
        implausible = failure_action(env, "implausible_location", rng)
        if implausible is None:
            continue
        assert implausible in env.admissible_actions()
        receptacle = implausible.removeprefix("go to ").removeprefix("open ")
        assert not priors.is_plausible(goal_object, receptacle.split()[0])
        assert receptacle.split()[0] != task.payload.goal.receptacle_type
        assert failure_action(env, "loop", rng) is None


def test_reset_rejects_foreign_payload() -> None:
    task = example_task()
    with pytest.raises(TypeError, match="no household payload"):
        HouseholdEnv().reset(EnvTask(info=task.info, payload={"scene": 1}))
