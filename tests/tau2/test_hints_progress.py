"""Actionable hints on failed calls, typed tool facts, and per-step progress."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("tau2")

from prefbuild.envs.tau2.env import Tau2Env
from prefbuild.records import FunctionCall, ToolCall
from prefbuild.tooluse.actions import decode_action, encode_action
from tests.tau2.helpers import play_expert, task_by_id


def call(name: str, arguments: object, call_id: str = "c1") -> str:
    encoded = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return encode_action(calls=[ToolCall(id=call_id, function=FunctionCall(name=name, arguments=encoded))])


def reset(hints: str, tau2_id: str = "create_task_1") -> Tau2Env:
    env = Tau2Env(domain="mock", hints=hints)
    env.reset(task_by_id(env, "base", tau2_id))
    return env


FAILING = [
    ("unknown tool", "create_tsk", {"user_id": "user_1", "title": "x"}, ["create_task", "Did you mean"]),
    ("missing argument", "create_task", {"user_id": "user_1"}, ["invalid arguments", "'title' is a required property"]),
    ("domain rejects", "update_task_status", {"task_id": "task_999", "status": "completed"}, ["rejected it"]),
]


@pytest.mark.parametrize(("case", "name", "arguments", "expected"), FAILING, ids=[case[0] for case in FAILING])
def test_failed_calls_get_hints_only_when_asked(case: str, name: str, arguments: dict, expected: list[str]) -> None:
    plain = reset("off").step(call(name, arguments))
    hinted = reset("actionable").step(call(name, arguments))
    for result in (plain, hinted):
        assert result.messages[0].role.value == "tool" and result.messages[0].tool_call_id == "c1"
        assert result.messages[0].content.startswith("Error:")
        fact = result.facts.tools[0]
        assert (fact.name, fact.ok, fact.arguments) == (name, False, arguments)
        assert result.valid is False
    assert not plain.facts.tools[0].hinted and "Hint:" not in plain.observation
    assert hinted.facts.tools[0].hinted
    first_line, hint = hinted.observation.split("\n", 1)
    assert first_line == plain.observation  # tau2's own error text is kept, the hint follows
    for needle in expected:
        assert needle in hint, hint


def test_a_repeated_failing_call_is_called_out() -> None:
    env = reset("actionable")
    bad = call("update_task_status", {"task_id": "task_999", "status": "completed"})
    assert "already failed" not in env.step(bad).observation
    assert "already failed" in env.step(bad).observation


def test_hints_never_change_the_outcome() -> None:
    verdicts = []
    for hints in ("off", "actionable"):
        env = reset(hints)
        env.step(call("create_tsk", {"user_id": "user_1"}))
        while True:
            result = env.step(env.expert_action())
            if result.done:
                verdicts.append(result.info["tau2"]["reward_info"]["reward_breakdown"])
                break
    assert verdicts[0] == verdicts[1] == {"DB": 1.0, "COMMUNICATE": 1.0}


def test_non_object_arguments_run_nothing_and_are_reported() -> None:
    env = reset("actionable")
    result = env.step(call("create_task", "[1, 2]"))
    fact = result.facts.tools[0]
    assert not fact.ok and fact.arguments is None and fact.hinted
    assert "must be a JSON object" in result.observation
    assert all(message.role != "tool" for message in env.trajectory)


def test_too_many_errors_end_the_episode_with_reward_zero() -> None:
    env = Tau2Env(domain="mock", max_errors=2)
    env.reset(task_by_id(env, "base", "create_task_1"))
    assert not env.step(call("nope", {})).done
    last = env.step(call("nope", {}))
    assert last.done and last.reward == 0.0 and last.facts.stop == "too_many_errors"


def test_progress_rises_with_the_expert_and_ends_at_one() -> None:
    env = Tau2Env(domain="airline")
    task = next(t for t in env.tasks("test", 20, 0) if t.info.meta["expected_actions"] >= 3)
    results, verdict = play_expert(env, task)
    values = [result.facts.progress for result in results]
    assert verdict["success"]
    assert values == sorted(values) and values[-1] == 1.0
    assert values[0] < 1.0 and len(set(values)) >= 3


def test_parallel_calls_answer_in_order() -> None:
    env = reset("off")
    calls = [
        ToolCall(id="a", function=FunctionCall(name="get_users", arguments="{}")),
        ToolCall(id="b", function=FunctionCall(name="nope", arguments="{}")),
    ]
    result = env.step(encode_action(calls=calls))
    assert [message.tool_call_id for message in result.messages] == ["a", "b"]
    assert [fact.ok for fact in result.facts.tools] == [True, False]
    assert decode_action(encode_action(calls=calls)).calls == calls


def test_a_failed_call_neither_counts_as_progress_nor_moves_the_expert_on() -> None:
    env = reset("off", "update_task_1")
    expert = env.expert_action()
    name = decode_action(expert).calls[0].function.name
    # tau2 compares only the keys the call has when an action lists no compare_args, so this
    # call (missing its required status) "matches" the expected action although it failed.
    failed = env.step(call(name, {"task_id": "task_1"}))
    assert not failed.facts.tools[0].ok
    assert env.expert_action() == expert
    assert failed.facts.progress == 0.0


def test_a_write_that_went_through_changed_the_state_and_nothing_else_did() -> None:
    env = reset("off")
    changed = []
    for name, arguments in [
        ("get_users", {}),
        ("update_task_status", {"task_id": "task_999", "status": "completed"}),  # refused: nothing written
        ("create_task", {"user_id": "user_1", "title": "Buy milk"}),
        ("create_tsk", {"user_id": "user_1", "title": "x"}),  # no such tool
        ("update_task_status", {"task_id": "task_1", "status": "completed"}),
        ("update_task_status", {"task_id": "task_1", "status": "completed"}),  # the same again: nothing new
    ]:
        (fact,) = env.step(call(name, arguments)).facts.tools
        changed.append((fact.ok, fact.changed_state))
    assert changed == [(True, False), (False, False), (True, True), (False, False), (True, True), (True, False)]
