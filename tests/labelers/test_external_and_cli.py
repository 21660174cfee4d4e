"""`prefbuild label` on prefbuild files and external logs (AgentBench runs.jsonl, chat messages)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from prefbuild.cli.label import label
from prefbuild.io.sources import LabelInputError, read_trajectories
from prefbuild.records import Trajectory
from tests.labelers.samples import dbbench_record, household_record, messages_record

FIXTURES = Path(__file__).parent / "fixtures" / "trajectories.jsonl"


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def _read(path: Path) -> list[Trajectory]:
    return [Trajectory.model_validate_json(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _run(*args: str) -> Any:
    return CliRunner().invoke(label, list(args), catch_exceptions=False)


def test_agentbench_household_log_uses_the_executed_commands(tmp_path: Path) -> None:
    runs = _write(tmp_path / "outputs" / "qwen-4b" / "alfworld-std" / "runs.jsonl", [household_record(3)])
    (trajectory,) = read_trajectories(runs)
    assert trajectory.id == "qwen-4b/alfworld-std#3"
    assert trajectory.teacher.backend == "external" and trajectory.env.name == "household"
    assert trajectory.task.goal == "put a clean knife in drawer." and trajectory.task.type.startswith("pick_clean")
    assert trajectory.steps[0].observation.startswith("Here is your task. You are in the middle of a room.")
    assert "AVAILABLE ACTIONS" in trajectory.steps[1].observation
    assert trajectory.steps[1].observation_in_history == trajectory.steps[1].observation.split("AVAILABLE ACTIONS")[0]
    assert trajectory.steps[2].action == "take knife 3 from countertop 1"
    assert trajectory.steps[2].facts.executed_action == "take knife 1 from countertop 1"
    assert trajectory.outcome.stop_reason.value == "max_steps"


def test_agentbench_history_without_log_is_rebuilt_from_turns(tmp_path: Path) -> None:
    runs = _write(tmp_path / "runs.jsonl", [household_record(0, with_log=False), household_record(1, success=True)])
    first, second = read_trajectories(runs, fmt="agentbench")
    assert [step.feedback for step in first.steps][:2] == [
        "On the toilet 1, you see a soapbar 1.",
        "On the countertop 1, you see a knife 1, and a spoon 2.",
    ]
    assert len(first.steps) == 5 and first.messages[0].content.startswith("Interact with a household")
    assert second.outcome.success and second.steps[-1].done


def test_label_agentbench_and_messages_logs(tmp_path: Path) -> None:
    runs = _write(tmp_path / "hh" / "runs.jsonl", [household_record(0)])
    db = _write(tmp_path / "db" / "runs.jsonl", [dbbench_record(0)])
    chats = _write(tmp_path / "chats.jsonl", [messages_record("chat-7")])
    out = tmp_path / "labelled.jsonl"
    result = _run(str(runs), str(db), str(chats), "-o", str(out), "--model", "qwen-4b")
    assert result.exit_code == 0, result.output
    household, sql, chat = _read(out)
    by_mode = {label.mode: label for label in household.labels}
    invalid = [label for label in household.labels if label.mode == "invalid_action"]
    # The snapped take, and the 'Task succeeded.' line the game answered "Nothing happens.".
    assert [label.step for label in invalid] == [2, 4] and "knife 3" in invalid[0].evidence
    assert by_mode["premature_success"].step == 4
    assert by_mode["implausible_location"].step == 0 and "toilet" in by_mode["implausible_location"].evidence
    assert household.teacher.model == "qwen-4b"
    assert sql.env.name == "sql" and sql.steps[0].action.startswith("Operation: SELECT")
    assert [label.mode for label in sql.labels] == ["premature_success"]
    assert chat.id == "chat-7" and [label.step for label in chat.labels if label.mode == "loop"] == [2, 3, 4, 5]
    for mode in ("invalid_action", "premature_success", "implausible_location", "loop"):
        assert mode in result.output


def test_relabel_with_overrides_replaces_labels(tmp_path: Path) -> None:
    first = tmp_path / "first.jsonl"
    assert _run(str(FIXTURES), "-o", str(first)).exit_code == 0
    labelled = _read(first)
    loops = sum(1 for t in labelled for label in t.labels if label.mode == "loop")
    assert loops > 0
    second = tmp_path / "second.jsonl"
    result = _run(
        str(first), "-o", str(second), "--set", "labelers=loop", "--set", "loop.k=9", "--set", "loop.max_cycle=1"
    )
    assert result.exit_code == 0, result.output
    relabelled = _read(second)
    assert [t.id for t in relabelled] == [t.id for t in labelled]
    assert all(label.mode == "loop" for t in relabelled for label in t.labels)
    assert sum(len(t.labels) for t in relabelled) < loops


def test_recipe_labelers_section_is_used(tmp_path: Path) -> None:
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text("name: r\nlabelers:\n  - name: implausible_location\n", encoding="utf-8")
    out = tmp_path / "out"
    result = _run(str(FIXTURES), "-o", str(out), "--recipe", str(recipe))
    assert result.exit_code == 0, result.output
    modes = {label.mode for t in _read(out / FIXTURES.name) for label in t.labels}
    assert modes == {"implausible_location"}


def test_bad_input_names_file_and_line_and_leaves_no_output(tmp_path: Path) -> None:
    good = FIXTURES.read_text(encoding="utf-8").splitlines()[0]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(good + "\n" + good.replace('"steps":[', '"steps":[{"index":5},', 1) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(label, [str(bad), "-o", str(out)])
    assert result.exit_code != 0
    assert f"{bad}:2 steps.0.observation: required field is missing" in result.output
    assert "Traceback" not in result.output
    assert not out.exists() and list(tmp_path.iterdir()) == [bad]


def test_unknown_layouts_and_labelers_are_clear_errors(tmp_path: Path) -> None:
    odd = _write(tmp_path / "odd.jsonl", [{"hello": 1}])
    with pytest.raises(LabelInputError, match=r"odd\.jsonl:1: not a prefbuild trajectory"):
        list(read_trajectories(odd))
    broken = _write(tmp_path / "runs.jsonl", [{"index": 0, "output": {"history": [{"content": "x"}]}}])
    with pytest.raises(LabelInputError, match=r"runs\.jsonl:1: output\.history\[0\]: expected an object with 'role'"):
        list(read_trajectories(broken))
    result = CliRunner().invoke(label, [str(FIXTURES), "-o", str(tmp_path / "x.jsonl"), "--set", "labelers=nope"])
    assert result.exit_code != 0 and "unknown labeler 'nope'" in result.output
