"""Readings of the format_violation / invalid_action definitions on AgentBench, ReAct and DBBench logs.

From the definitions: markdown around a command and two commands in one line are format
violations; a turn the game answered "Nothing happens." is invalid (a ``Task succeeded.``
line too, beside premature_success; a ReAct line whose tags the game did not understand too);
two commands AgentBench ran as the first one are not invalid; a DBBench ``Final Answer:``
line without ``Action: Answer`` is read by the benchmark and is no violation. Logs are built
in their real layouts and read by the real importers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from prefbuild.io.sources import read_trajectories
from prefbuild.labelers import build_labelers, label_trajectory
from prefbuild.labelers.format_violation import two_commands
from tests.labelers.heldout.build import HouseEpisode, SqlEpisode, alfworld_record, dbbench_record, react_record

ROOM = ["countertop 1", "drawer 1", "drawer 2", "dresser 1", "sofa 1"]


def _labels(path: Path, record: dict[str, Any]) -> dict[str, list[int]]:
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    (trajectory,) = read_trajectories(path)
    labelled = label_trajectory(trajectory, build_labelers(None))
    found: dict[str, list[int]] = {}
    for step in labelled.steps:
        for label in step.labels:
            found.setdefault(label.mode, []).append(step.index)
    return found


def _agentbench(tmp_path: Path, steps: list[dict[str, Any]], goal: str = "put some book on dresser.") -> dict:
    episode = HouseEpisode(id="e", room=ROOM, goal=goal, steps=steps)
    return _labels(tmp_path / "runs.jsonl", alfworld_record(0, episode))


def test_two_commands_in_words_are_recognised() -> None:
    assert two_commands("go to drawer 1 and open it")
    assert two_commands("take book 1 from sofa 1, then go to dresser 1")
    assert not two_commands("put book 1 in/on dresser 1")
    assert not two_commands("I will go to drawer 1 and open it")


def test_agentbench_runs_the_first_of_two_commands_a_format_violation_not_an_invalid_one(tmp_path: Path) -> None:
    steps = [
        {"a": "go to drawer 1 and open it", "x": "go to drawer 1", "o": "The drawer 1 is closed."},
        {"a": "open drawer 1", "o": "You open the drawer 1. The drawer 1 is open. In it, you see nothing."},
    ]
    found = _agentbench(tmp_path, steps)
    assert found.get("format_violation") == [0]
    assert "invalid_action" not in found


def test_a_backticked_command_is_a_format_violation(tmp_path: Path) -> None:
    steps = [
        {"a": "go to sofa 1", "o": "On the sofa 1, you see a book 1."},
        {
            "a": "`take book 1 from sofa 1`",
            "x": "take book 1 from sofa 1",
            "o": "You pick up the book 1 from the sofa 1.",
        },
    ]
    found = _agentbench(tmp_path, steps)
    assert found.get("format_violation") == [1]
    assert "invalid_action" not in found


def test_task_succeeded_answered_nothing_happens_is_also_invalid(tmp_path: Path) -> None:
    steps = [
        {"a": "go to sofa 1", "o": "On the sofa 1, you see a book 1."},
        {"a": "Task succeeded.", "x": "task succeeded.", "o": "Nothing happens."},
    ]
    found = _agentbench(tmp_path, steps)
    assert found.get("premature_success") == [1]
    assert found.get("invalid_action") == [1]


def test_task_succeeded_snapped_to_a_command_is_invalid(tmp_path: Path) -> None:
    steps = [
        {"a": "go to sofa 1", "o": "On the sofa 1, you see a book 1."},
        {"a": "Task succeeded.", "x": "examine sofa 1", "o": "On the sofa 1, you see a book 1."},
    ]
    found = _agentbench(tmp_path, steps)
    assert found.get("invalid_action") == [1]


def test_react_lines_the_game_did_not_understand_are_invalid_thoughts_are_not(tmp_path: Path) -> None:
    episode = HouseEpisode(
        id="r",
        room=ROOM,
        goal="put some book on dresser.",
        steps=[
            {"raw": "THOUGHT: Books are on sofas.\nACTION: go to sofa 1", "o": "Nothing happens."},
            {"a": "think: Task succeeded.", "o": "OK."},
            {"a": "go to sofa 1 and take book 1", "o": "Nothing happens."},
            {"a": "go to sofa 1", "o": "On the sofa 1, you see a book 1."},
        ],
    )
    found = _labels(tmp_path / "react.jsonl", react_record(episode))
    assert found.get("invalid_action") == [0, 2]
    assert found.get("format_violation") == [0, 2]
    assert found.get("premature_success") == [1]


def test_dbbench_final_answer_without_action_answer_is_read_by_the_benchmark(tmp_path: Path) -> None:
    episode = SqlEpisode(
        id="d",
        type="SELECT",
        question="Who?",
        table="The name of this table is T, and the headers of this table are A,B.",
        steps=[
            {"raw": "Action: Operation\n```sql\nSELECT `A` FROM `T` WHERE `B` = '1';\n```", "o": "[('x',)]"},
            {"raw": 'It is x.\nFinal Answer: ["x"]'},
        ],
    )
    found = _labels(tmp_path / "db.jsonl", dbbench_record(0, episode))
    assert "format_violation" not in found
    missing = SqlEpisode(
        id="d2",
        type="SELECT",
        question="Who?",
        table="The name of this table is T, and the headers of this table are A,B.",
        steps=[
            {"raw": "Action: Operation\n```sql\nSELECT `A` FROM `T` WHERE `B` = '1';\n```", "o": "[('x',)]"},
            {"raw": "Action: Answer\nx"},
        ],
    )
    assert _labels(tmp_path / "db2.jsonl", dbbench_record(0, missing)).get("format_violation") == [1]


def _insert_task(final: str) -> SqlEpisode:
    return SqlEpisode(
        id="i",
        type="INSERT",
        question="Add the row ('2021', 'Oslo') to the table.",
        table="The name of this table is T, and the headers of this table are Year,City.",
        steps=[
            {"raw": "Action: Operation\n```sql\nINSERT INTO T VALUES ('2021', 'Oslo');\n```", "o": "1146 (42S02): T"},
            {"raw": final},
        ],
    )


def test_dbbench_premature_success_needs_the_final_turn_to_say_the_change_was_made(tmp_path: Path) -> None:
    claimed = _insert_task('The row has been inserted.\nAction: Answer\nFinal Answer: ["done"]')
    assert _labels(tmp_path / "a.jsonl", dbbench_record(0, claimed)).get("premature_success") == [1]
    admitted = _insert_task("I could not insert the row.\nAction: Answer\nFinal Answer: []")
    assert "premature_success" not in _labels(tmp_path / "b.jsonl", dbbench_record(0, admitted))
