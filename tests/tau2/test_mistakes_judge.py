"""Simulated tau2 mistakes, and the optional natural-language-assertion judge."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

pytest.importorskip("tau2")

from prefbuild.envs.tau2.env import Tau2Env
from prefbuild.simulation.tau2_mistakes import MODES, failure_action
from prefbuild.tooluse.actions import decode_action, encode_action
from tests.tau2.helpers import task_by_id
from tests.tau2.test_users_protocol import ScriptedServer


@pytest.mark.parametrize("seed", range(6))
def test_invalid_action_fails_before_running(seed: int) -> None:
    env = Tau2Env(domain="mock", hints="actionable")
    env.reset(task_by_id(env, "base", "update_task_1"))
    action = failure_action(env, "invalid_action", random.Random(seed))
    assert action is not None and action != env.expert_action()
    result = env.step(action)
    fact = result.facts.tools[0]
    assert not fact.ok and fact.hinted and result.valid is False


def test_wrong_arguments_is_well_formed_but_rejected() -> None:
    env = Tau2Env(domain="airline")
    env.reset(next(env.tasks("test", 1, 0)))
    assert "_id" in env.expert_action()  # the first test task starts with a lookup by identifier
    action = failure_action(env, "wrong_arguments", random.Random(1))
    expert = json.loads(decode_action(env.expert_action()).calls[0].function.arguments)
    wrong = json.loads(decode_action(action).calls[0].function.arguments)
    assert wrong.keys() == expert.keys() and wrong != expert
    result = env.step(action)
    assert not result.facts.tools[0].ok and "not found" in result.observation.lower()


def test_premature_success_ends_the_talk_and_fails() -> None:
    env = Tau2Env(domain="mock")
    env.reset(task_by_id(env, "base", "update_task_1"))
    action = failure_action(env, "premature_success", random.Random(0))
    result = env.step(action)
    assert result.done and not result.facts.won and result.reward == 0.0


def test_modes_give_none_where_they_cannot_show() -> None:
    env = Tau2Env(domain="mock")
    env.reset(task_by_id(env, "base", "create_task_1_nl_eval"))  # no expected actions: no expert
    assert all(failure_action(env, mode, random.Random(0)) is None for mode in MODES)
    assert failure_action(env, "loop", random.Random(0)) is None


def judge_reply(met: bool) -> dict[str, Any]:
    results = [{"expectedOutcome": "The task is created successfully", "reasoning": "seen", "metExpectation": met}]
    return {"content": json.dumps({"results": results})}


def play_nl_task(env: Tau2Env) -> dict[str, Any]:
    env.reset(task_by_id(env, "base", "create_task_1_nl_eval"))
    arguments = {"user_id": "user_1", "title": "Important Meeting"}
    env.step(json.dumps({"tool_calls": [{"id": "c", "name": "create_task", "arguments": arguments}]}))
    result = env.step(encode_action(message="Done. You are doing great work!"))
    assert result.done
    return result.info["tau2"]


def test_judge_is_off_by_default_and_marked() -> None:
    verdict = play_nl_task(Tau2Env(domain="mock"))
    assert verdict["nl_assertions"] == "not judged" and verdict["evaluation"] == "all"
    assert verdict["reward_info"]["nl_assertions"] is None


def test_judge_grades_nl_assertions_through_an_openai_compatible_server() -> None:
    server = ScriptedServer([judge_reply(True)]).start()
    try:
        env = Tau2Env(domain="mock", judge={"base_url": server.base_url, "model": "user-model"})
        verdict = play_nl_task(env)
    finally:
        server.stop()
    assert verdict["nl_assertions"] == "judged" and verdict["evaluation"] == "all_with_nl_assertions"
    checks = verdict["reward_info"]["nl_assertions"]
    assert [check["met"] for check in checks] == [True]
    prompt = server.requests[0]["messages"][1]["content"]
    assert "The user is complimented" in prompt and "You are doing great work!" in prompt
