"""The held-out split an evaluation plays never shares a task or a floor plan with the training tasks."""

from __future__ import annotations

import pytest

from prefbuild.envs import make_env
from prefbuild.errors import PrefbuildError
from prefbuild.eval.split import check_disjoint, held_out_split
from prefbuild.recipe import EnvConfig


def household(split: str, num_tasks: int) -> EnvConfig:
    return EnvConfig(name="household", protocol="agentbench", split=split, num_tasks=num_tasks)


@pytest.mark.parametrize("seed", [0, 7])
def test_household_held_out_tasks_share_no_task_and_no_floor_plan_with_training(seed):
    train = household("train", 150)
    test = household(held_out_split(train), 60)
    check_disjoint(train, test, seed)  # does not raise
    env = make_env("household")
    train_tasks = list(env.tasks("train", 150, seed))
    test_tasks = list(env.tasks(test.split, 60, seed))
    plans = {(t.payload.scene.room, t.payload.scene.scene_number) for t in train_tasks}
    assert test.split == "valid_unseen"
    assert not {t.info.id for t in train_tasks} & {t.info.id for t in test_tasks}
    assert not plans & {(t.payload.scene.room, t.payload.scene.scene_number) for t in test_tasks}
    assert len({t.payload.goal.task_type for t in test_tasks}) == 6  # every task type is evaluated


def test_a_split_that_shares_floor_plans_is_refused():
    train = household("train", 200)
    with pytest.raises(PrefbuildError, match="shares"):
        check_disjoint(train, household("valid_seen", 50), 7)


def test_the_training_split_is_never_played():
    with pytest.raises(PrefbuildError, match="training split"):
        held_out_split(household("train", 4), "train")


def test_held_out_split_of_a_recipe_trained_on_the_held_out_split_is_refused():
    with pytest.raises(PrefbuildError, match="training split"):
        held_out_split(household("valid_unseen", 4))


def test_env_without_a_held_out_split_needs_an_explicit_one():
    env = EnvConfig(name="lights", protocol="lights", split="train", num_tasks=2)  # a plug-in env
    with pytest.raises(PrefbuildError, match="no known held-out split"):
        held_out_split(env)
    assert held_out_split(env, "valid") == "valid"


def test_bfcl_trained_on_every_task_has_no_held_out_tasks_left():
    train = EnvConfig(name="bfcl", protocol="hermes", split="test", task_types=["base"], num_tasks=200)
    held_out = EnvConfig(name="bfcl", protocol="hermes", split=held_out_split(train), task_types=["base"],
                         num_tasks=10)
    with pytest.raises(PrefbuildError, match="shares 'multi_turn_base_"):
        check_disjoint(train, held_out, 0)


def test_sql_held_out_tasks_are_the_test_split():
    train = EnvConfig(name="sql", protocol="dbbench", split="train", num_tasks=40)
    test = EnvConfig(name="sql", protocol="dbbench", split=held_out_split(train), num_tasks=20)
    check_disjoint(train, test, 3)
    assert test.split == "test"
