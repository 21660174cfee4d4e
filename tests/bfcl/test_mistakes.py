"""The scripted teacher's BFCL mistakes, on the package's real tasks."""

from __future__ import annotations

import json
import random

from prefbuild.envs.bfcl.data import load_entries
from prefbuild.envs.bfcl.env import BfclEnv, task_of
from prefbuild.simulation.bfcl_mistakes import failure_action
from prefbuild.tooluse.actions import decode_action


def started(category: str = "base", index: int = 0, hints: str = "actionable") -> BfclEnv:
    env = BfclEnv(hints=hints)
    env.reset(task_of(load_entries(category)[index]))
    return env


def test_wrong_argument_changes_one_argument_of_the_next_ground_truth_call() -> None:
    env = started()
    expected = env.remaining_expert_calls()[0]
    action = decode_action(failure_action(env, "wrong_argument", random.Random(1)))
    arguments = json.loads(action.calls[0].function.arguments)
    assert action.calls[0].function.name == expected.name
    assert arguments.keys() == env.named_arguments(expected).keys() and arguments != env.named_arguments(expected)
    result = env.step(failure_action(env, "wrong_argument", random.Random(1)))
    assert not result.facts.tools[0].ok and result.facts.tools[0].hinted  # cd into a folder that is not there


def test_unknown_function_is_not_offered_and_gets_a_hint() -> None:
    env = started()
    action = failure_action(env, "unknown_function", random.Random(0))
    name = decode_action(action).calls[0].function.name
    assert name not in env.offered_functions
    fact = env.step(action).facts.tools[0]
    assert (fact.ok, fact.error, fact.hinted) == (False, f"name {name!r} is not defined", True)
    assert failure_action(env, "invalid_action", random.Random(0)) is not None  # the alias


def test_skipped_call_ends_the_turn_early_and_fails_it() -> None:
    env = started()
    result = env.step(failure_action(env, "skipped_call", random.Random(0)))
    assert result.info["verdict"]["error_type"] == "multi_turn:empty_turn_model_response"
    assert failure_action(env, "premature_success", random.Random(0)) is not None


def test_guessed_parameter_only_where_the_model_should_ask() -> None:
    env = started("miss_param")
    assert failure_action(env, "guessed_parameter", random.Random(0)) is None  # turn 0 has ground truth
    while env.turn_ground_truth(env.turn):
        env.step(env.expert_action())
    action = failure_action(env, "guessed_parameter", random.Random(0))
    wanted = env.turn_ground_truth(env.turn + 1)[0]
    assert decode_action(action).calls[0].function.name == wanted.name


def test_modes_return_none_when_they_cannot_apply() -> None:
    env = started()
    assert failure_action(env, "no_such_mode", random.Random(0)) is None
    while not env.finished:
        env.step(env.expert_action())
    assert all(failure_action(env, mode, random.Random(0)) is None for mode in ("wrong_argument", "skipped_call"))
