"""Calls a log joined into one assistant message although the agent made them one after another (tau2-bench's
``langchain_agent`` logs: ``find_user_id_by_name_zip`` and ``get_user_details`` on the id it returned, in one
message). They are read as the conversation the agent had: one step per call, each after the result before it;
calls with no such evidence stay one parallel step."""

from __future__ import annotations

import copy
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from prefbuild.io.sources import read_trajectories
from prefbuild.records import Trajectory

FIXTURE = Path(__file__).resolve().parent / "data" / "mock_results.json"
USERS = '[{"user_id": "user_1", "name": "Test User", "tasks": ["task_1"]}]'  # tau2 mock's get_users, as logged
DONE = '{"task_id": "task_1", "title": "Test task", "description": "A test task", "status": "completed"}'


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": arguments, "requestor": "assistant"}


def _result(call_id: str, content: str) -> dict[str, Any]:
    return {"id": call_id, "role": "tool", "content": content, "requestor": "assistant"}


def _file(tmp_path: Path, name: str, middle: list[dict[str, Any]]) -> Path:
    """The fixture's ``update_task_1`` conversation with the customer naming no task and ``middle`` as the agent's
    work: the same calls, logged as the agent made them or joined into one message."""
    results = json.loads(FIXTURE.read_text(encoding="utf-8"))
    simulation = copy.deepcopy(results["simulations"][3])
    greeting, _, _, _, answer, bye = simulation["messages"]
    asked = {"role": "user", "content": "Hello, please mark my only task as completed.", "tool_calls": None}
    simulation["messages"] = [greeting, asked, *middle, answer, bye]
    results["simulations"] = [simulation]
    path = tmp_path / name
    path.write_text(json.dumps(results, indent=2), encoding="utf-8")
    return path


def _shape(trajectory: Trajectory) -> list[tuple[list[tuple[str, str]], list[str]]]:
    """Per step: its calls, and the tool results it was shown."""
    return [
        ([(call.function.name, call.function.arguments) for call in step.tool_calls or []],
         [message.content for message in step.observation_messages or [] if message.role == "tool"])
        for step in trajectory.steps
    ]


def test_a_message_of_calls_made_one_after_another_is_read_as_they_were_made(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    lookup, update = _call("c1", "get_users", {}), _call("c2", "update_task_status",
                                                         {"task_id": "task_1", "status": "completed"})
    as_made = _file(tmp_path, "as_made.json", [
        {"role": "assistant", "content": None, "tool_calls": [lookup]}, _result("c1", USERS),
        {"role": "assistant", "content": None, "tool_calls": [update]}, _result("c2", DONE),
    ])
    joined = _file(tmp_path, "joined.json", [
        {"role": "assistant", "content": None, "tool_calls": [lookup, update]},
        _result("c1", USERS), _result("c2", DONE),
    ])
    (expected,) = read_trajectories(as_made)
    with caplog.at_level(logging.WARNING):
        (read,) = read_trajectories(joined)
    assert _shape(read) == _shape(expected) and len(read.steps) == 3
    assert [[fact.name for fact in step.facts.tools] for step in read.steps] == [
        ["get_users"], ["update_task_status"], []]
    assert "joined.json:1: 1 assistant message(s) in 1 simulation(s) call a tool with an id" in caplog.text


def test_calls_with_no_sign_they_were_sequential_stay_one_parallel_step(caplog: pytest.LogCaptureFixture) -> None:
    # simulation 0 of the fixture: get_users and create_task(user_1) in one message, the customer having named user_1
    with caplog.at_level(logging.WARNING):
        first = next(iter(read_trajectories(FIXTURE)))
    assert len(first.steps[0].tool_calls or []) == 2
    assert "call a tool with an id" not in caplog.text


def test_a_chat_log_with_joined_calls_is_read_as_they_were_made(tmp_path: Path) -> None:
    record = {"messages": [
        {"role": "user", "content": "Mark my only task as completed."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_users", "arguments": "{}"}},
            {"id": "c2", "type": "function", "function": {
                "name": "update_task_status", "arguments": json.dumps({"task_id": "task_1", "status": "completed"})}},
        ]},
        {"role": "tool", "tool_call_id": "c1", "content": USERS},
        {"role": "tool", "tool_call_id": "c2", "content": DONE},
        {"role": "assistant", "content": "Done: task_1 is completed."},
    ], "success": True}
    path = tmp_path / "log.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    (trajectory,) = read_trajectories(path, fmt="tools")
    assert [[call.function.name for call in step.tool_calls or []] for step in trajectory.steps] == [
        ["get_users"], ["update_task_status"], []]
    assert [message.content for message in trajectory.steps[1].observation_messages or []] == [USERS]
