"""Importers on the log shapes real users bring: ReAct chat logs, AgentBench turns without a
logged round, the AgentBench dialect read from the admissible commands."""

from __future__ import annotations

import copy
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from prefbuild.io.sources import read_trajectories

HELDOUT = Path(__file__).parent / "heldout"


def _records(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (HELDOUT / name).read_text(encoding="utf-8").splitlines()]


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def test_react_log_is_read_with_the_react_protocol_and_the_real_goal(tmp_path: Path) -> None:
    record = _records("react_messages.jsonl")[0]
    prompt = record["messages"][0]["content"]
    assert prompt.count("Your task is to:") == 3, "two few-shot tasks before the real one"
    (trajectory,) = read_trajectories(_write(tmp_path / "react.jsonl", [record]))
    assert trajectory.env.protocol == "react"
    assert trajectory.task.goal == "clean some lettuce and put it in diningtable."
    assert trajectory.task.type == "pick_clean_then_place_in_recep"
    first = trajectory.steps[0]
    assert first.action is None and first.thought and first.thought.startswith("To solve the task")
    assert first.format_ok and not first.facts.problems
    commands = [step.action for step in trajectory.steps if step.action is not None]
    assert commands[:2] == ["go to fridge 1", "open fridge 1"]


def test_prompt_markers_before_react_commands_are_harmless(tmp_path: Path) -> None:
    record = next(r for r in _records("react_messages.jsonl") if r["id"] == "re-prompt-marker-commands")
    (trajectory,) = read_trajectories(_write(tmp_path / "react.jsonl", [record]))
    assert trajectory.env.protocol == "react"
    assert all(step.format_ok for step in trajectory.steps)
    assert trajectory.steps[1].action == "go to diningtable 1"


def test_a_log_whose_turns_mostly_parse_to_nothing_is_reported(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    record = copy.deepcopy(_records("react_messages.jsonl")[0])
    prompt = record["messages"][0]["content"]
    record["messages"][0]["content"] = prompt[prompt.rindex("You are in the middle of a room") :]
    for turn in record["messages"][1:]:
        if turn["role"] == "assistant":
            turn["content"] = "I am looking around the room to understand it better"
    with caplog.at_level(logging.WARNING, logger="prefbuild.io.importers.messages"):
        (trajectory,) = read_trajectories(_write(tmp_path / "prose.jsonl", [record]))
    assert all(step.action is None for step in trajectory.steps)
    (message,) = [r.getMessage() for r in caplog.records]
    assert f"{len(trajectory.steps)} of {len(trajectory.steps)} turns parse to no action" in message
    assert "prose.jsonl:1" in message


def test_a_readable_log_is_not_reported(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="prefbuild.io.importers.messages"):
        list(read_trajectories(HELDOUT / "react_messages.jsonl"))
    assert caplog.records == []


def test_last_agentbench_turn_without_a_logged_round_is_kept(tmp_path: Path) -> None:
    record = copy.deepcopy(_records("alfworld_runs.jsonl")[0])
    rounds = len(record["output"]["result"]["log"])
    record["output"]["history"].append({"role": "agent", "content": "THOUGHT: I am not sure what to do next."})
    record["output"]["status"] = "agent validation failed"
    (trajectory,) = read_trajectories(_write(tmp_path / "runs.jsonl", [record]))
    assert len(trajectory.steps) == rounds + 1
    last = trajectory.steps[-1]
    assert last.index == rounds and last.action is None and last.raw_output.startswith("THOUGHT: I am not sure")


def test_agentbench_dialect_comes_from_the_admissible_commands(tmp_path: Path) -> None:
    records = _records("alfworld_runs.jsonl")
    modern = copy.deepcopy(next(r for r in records if any(
        c.startswith("move ") for entry in r["output"]["result"]["log"] for c in entry["admissible_commands"]
    )))
    for entry in modern["output"]["result"]["log"]:  # no reply in the modern spelling at all
        entry["observation"] = entry["observation"].replace("You move the", "You put the")
    classic = records[0]
    read = list(read_trajectories(_write(tmp_path / "runs.jsonl", [modern, classic])))
    assert [trajectory.env.dialect for trajectory in read] == ["modern", "classic"]
