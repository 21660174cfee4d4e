"""The shapes real logs come in, as users feed them: dataset dumps as one JSON array, ShareGPT
``conversations`` (from/value), several AgentBench result files side by side in one folder, a
turn the harness wrote in the model's place, DBBench runs kept as chat logs; and what the later
stages make of imported episodes (no replay, no success rate they do not record)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from prefbuild.cli import main
from prefbuild.io.sources import LabelInputError, read_trajectories
from prefbuild.labelers import build_labelers, label_trajectory
from prefbuild.labelers.verbose_filler import restates
from tests.labelers.samples import DB_INSTRUCTION, INSTRUCTION, INTRO, dbbench_record

ETO_TURNS: list[tuple[str, str]] = [
    ("Thought: A knife is likely on the countertop.\nAction: go to countertop 1",
     "Observation: On the countertop 1, you see a knife 1, and a spoon 2."),
    ("Thought: There is the knife 1.\nAction: take knife 1 from countertop 1",
     "Observation: You pick up the knife 1 from the countertop 1."),
    ("Thought: Now I clean it.\nAction: go to sinkbasin 1", "Observation: On the sinkbasin 1, you see nothing."),
]


def _sharegpt(record_id: str) -> dict[str, Any]:
    """An ETO-style household episode as ShareGPT turns (from/value), as ETO and AgentInstruct ship them."""
    turns = [{"from": "human", "value": INSTRUCTION}, {"from": "gpt", "value": "OK"}, {"from": "human", "value": INTRO}]
    for action, observation in ETO_TURNS:
        turns += [{"from": "gpt", "value": action}, {"from": "human", "value": observation}]
    return {"id": record_id, "conversations": turns}


def _write_lines(path: Path, records: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def _run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def test_a_json_array_of_sharegpt_conversations_is_imported(tmp_path: Path) -> None:
    dump = tmp_path / "alfworld_sft.json"
    dump.write_text(json.dumps([_sharegpt("eto-0"), _sharegpt("eto-1")], indent=2), encoding="utf-8")
    trajectories = list(read_trajectories(dump))
    assert [t.id for t in trajectories] == ["eto-0", "eto-1"]
    first = trajectories[0]
    assert first.env.protocol == "eto"
    assert first.task.goal == "put a clean knife in drawer."
    assert [step.action for step in first.steps] == [
        "go to countertop 1", "take knife 1 from countertop 1", "go to sinkbasin 1"
    ]
    assert first.steps[0].feedback == "On the countertop 1, you see a knife 1, and a spoon 2."
    assert all(step.format_ok for step in first.steps)


def test_elements_of_a_json_array_without_ids_are_numbered_by_position(tmp_path: Path) -> None:
    records = [_sharegpt("x"), _sharegpt("y")]
    for record in records:
        del record["id"]
    dump = tmp_path / "logs" / "sft.json"
    dump.parent.mkdir()
    dump.write_text(json.dumps(records, indent=1), encoding="utf-8")
    assert [t.id for t in read_trajectories(dump)] == ["logs/sft#0", "logs/sft#1"]


def test_a_bad_element_of_a_json_array_is_located_at_its_line(tmp_path: Path) -> None:
    good = json.dumps(_sharegpt("eto-0"))
    dump = tmp_path / "dump.json"
    dump.write_text("[\n" + good + ",\n" + good + ",\n  {\"conversations\": 3}\n]\n", encoding="utf-8")
    with pytest.raises(LabelInputError, match=r"dump\.json:4: conversations: expected a list of chat turns"):
        list(read_trajectories(dump))
    dump.write_text("[\n" + good + ",\n" + good + "\n", encoding="utf-8")
    with pytest.raises(LabelInputError, match=r"dump\.json:\d+: invalid JSON \(the array is not closed"):
        list(read_trajectories(dump))
    dump.write_text("[\n" + good + ",\n]\n", encoding="utf-8")
    with pytest.raises(LabelInputError, match=r"dump\.json:3: invalid JSON \(Expecting value"):
        list(read_trajectories(dump))


def test_an_empty_json_array_is_refused_as_an_empty_file_is(tmp_path: Path) -> None:
    dump = tmp_path / "dump.json"
    dump.write_text("[ ]\n", encoding="utf-8")
    with pytest.raises(LabelInputError, match=r"dump\.json: empty array: no records"):
        list(read_trajectories(dump))
    out = tmp_path / "labelled.jsonl"
    out.write_text("kept\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["label", str(dump), "-o", str(out)])
    assert result.exit_code == 1 and "empty array: no records" in result.output
    assert out.read_text(encoding="utf-8") == "kept\n"  # nothing already written is lost


def test_a_json_array_of_prefbuild_trajectories_is_read_and_validated(tmp_path: Path) -> None:
    (trajectory,) = read_trajectories(_write_lines(tmp_path / "one.jsonl", [_sharegpt("eto-0")]))
    record = trajectory.model_dump(mode="json")
    dump = tmp_path / "trajectories.json"
    dump.write_text(json.dumps([record, {**record, "steps": "none"}], indent=2), encoding="utf-8")
    with pytest.raises(LabelInputError, match=r"trajectories\.json:\d+ steps: "):
        list(read_trajectories(dump))
    dump.write_text(json.dumps([record]), encoding="utf-8")
    assert [t.id for t in read_trajectories(dump)] == ["eto-0"]


def test_a_record_without_chat_turns_names_both_keys(tmp_path: Path) -> None:
    path = _write_lines(tmp_path / "chat.jsonl", [{"id": "a", "turns": []}])
    with pytest.raises(LabelInputError, match=r"chat\.jsonl:1: no 'messages' \(or ShareGPT 'conversations'\)"):
        list(read_trajectories(path, fmt="messages"))


def test_two_result_files_in_one_folder_give_distinct_ids(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    one = _write_lines(folder / "dbbench_gpt-4o.jsonl", [dbbench_record(0), dbbench_record(1)])
    two = _write_lines(folder / "dbbench_llama-8b.jsonl", [dbbench_record(0), dbbench_record(1)])
    ids = [t.id for path in (one, two) for t in read_trajectories(path)]
    assert ids == [
        "results/dbbench_gpt-4o#0",
        "results/dbbench_gpt-4o#1",
        "results/dbbench_llama-8b#0",
        "results/dbbench_llama-8b#1",
    ]
    runs = _write_lines(tmp_path / "outputs" / "t0" / "gpt-4o" / "dbbench-std" / "runs.jsonl", [dbbench_record(5)])
    assert [t.id for t in read_trajectories(runs)] == ["gpt-4o/dbbench-std#5"]


def _context_limit_record(content: str, status: str) -> dict[str, Any]:
    record = dbbench_record(3)
    record["output"]["history"] = [*record["output"]["history"][:-1], {"role": "agent", "content": content}]
    record["output"]["status"] = status
    return record


@pytest.mark.parametrize(
    ("content", "status"),
    [("agent context limit", "agent context limit"), ("", "agent context limit"),
     ("agent context limit", "agent validation failed")],
)
def test_a_turn_the_harness_wrote_for_the_model_is_not_a_step(tmp_path: Path, content: str, status: str) -> None:
    path = _write_lines(tmp_path / "runs.jsonl", [_context_limit_record(content, status)])
    (trajectory,) = read_trajectories(path)
    assert [step.raw_output for step in trajectory.steps] == [
        "Let me look at the table.\nAction: Operation\n```sql\nSELECT * FROM Roles;\n```"
    ]
    labelled = label_trajectory(trajectory, build_labelers(None, trajectory.env.name))
    assert "format_violation" not in {label.mode for label in labelled.labels}


def test_an_empty_turn_the_model_wrote_is_kept(tmp_path: Path) -> None:
    path = _write_lines(tmp_path / "runs.jsonl", [_context_limit_record("", "agent validation failed")])
    (trajectory,) = read_trajectories(path)
    assert len(trajectory.steps) == 2 and trajectory.steps[-1].raw_output == ""


UPDATE_QUESTION = (
    "Update the capacity of the 'Princeton Tigers' team to '45,000' in the Team Information table.\n"
    "The name of this table is Team Information, and the headers of this table are Team,Stadium,Capacity."
)


def _dbbench_chat(record_id: str) -> dict[str, Any]:
    """A DBBench UPDATE item kept as a ShareGPT chat log (as AgentInstruct ships its db split)."""
    return {
        "id": record_id,
        "conversations": [
            {"from": "human", "value": DB_INSTRUCTION},
            {"from": "gpt", "value": "Ok."},
            {"from": "human", "value": UPDATE_QUESTION},
            {"from": "gpt", "value": "I update the row of the team.\nAction: Operation\n```sql\n"
             "UPDATE `Team Information` SET Capacity = '45,000' WHERE Team = 'Princeton Tigers';\n```"},
            {"from": "human", "value": "[]"},
            {"from": "gpt", "value": "The capacity is updated.\nAction: Answer\nFinal Answer: []"},
        ],
    }


def test_a_dbbench_chat_log_is_imported_as_a_sql_episode(tmp_path: Path) -> None:
    (trajectory,) = read_trajectories(_write_lines(tmp_path / "db.jsonl", [_dbbench_chat("db-0")]))
    assert (trajectory.env.name, trajectory.env.protocol) == ("sql", "dbbench")
    assert trajectory.task.goal == UPDATE_QUESTION.split("\n", 1)[0]
    assert trajectory.task.meta["outcome_known"] is False and trajectory.task.meta["source"] == "messages"
    assert [step.action for step in trajectory.steps] == [
        "Operation: UPDATE `Team Information` SET Capacity = '45,000' WHERE Team = 'Princeton Tigers';",
        "Answer: []",
    ]
    assert trajectory.steps[0].facts.sql is not None and trajectory.steps[0].facts.sql.mutated
    # The item records no type; the UPDATE the agent ran makes it a mutation item, whose answer is [].
    assert label_trajectory(trajectory, build_labelers(None, trajectory.env.name)).labels == []


def test_a_dbbench_chat_log_with_its_outcome_counts_it(tmp_path: Path) -> None:
    record = {**_dbbench_chat("db-1"), "success": True}
    (trajectory,) = read_trajectories(_write_lines(tmp_path / "db.jsonl", [record]))
    assert trajectory.outcome.success and trajectory.task.meta["outcome_known"] is True
    assert trajectory.steps[-1].done


def test_imported_dbbench_logs_through_pair_and_stats(tmp_path: Path) -> None:
    logs = _write_lines(tmp_path / "results" / "dbbench_gpt-4o.jsonl", [dbbench_record(0), dbbench_record(1)])
    labelled = tmp_path / "labelled.jsonl"
    assert _run("label", str(logs), "-o", str(labelled)).exit_code == 0
    for strategy in ("trajectory", "stepwise"):
        result = _run("pair", str(labelled), "-o", str(tmp_path / "pairs.jsonl"), "--strategy", strategy)
        assert result.exit_code == 0, result.output
        assert "0 pairs from 2 trajectories" in result.output
        assert "only `--strategy style`" in result.output
    result = _run("stats", str(labelled))
    assert result.exit_code == 0, result.output
    assert "success rate unknown" in result.output
    assert "2 episode(s) from logs that do not record whether they succeeded" in result.output
    report = tmp_path / "report.html"
    assert _run("report", str(labelled), "-o", str(report)).exit_code == 0
    assert "unknown" in report.read_text(encoding="utf-8")


def test_an_answer_stating_the_values_of_two_rows_is_not_filler() -> None:
    rows = (
        "[('Crest Whitestrips 3D Professional Effects', '12 months'), "
        "('Crest 3D Intensive Professional Effects', '12 months')]"
    )
    thought = (
        'Based on the query results, both "Crest Whitestrips 3D Professional Effects" and "Crest 3D Intensive '
        'Professional Effects" have a lasting whiteness of 12 months.'
    )
    assert not restates(thought, rows, 15, 0.8)
    three = rows[:-1] + ", ('Crest Glamorous White', '6 months')]"
    relisting = (
        "The results are Crest Whitestrips 3D Professional Effects with 12 months, Crest 3D Intensive Professional "
        "Effects with 12 months and Crest Glamorous White with 6 months."
    )
    assert restates(relisting, three, 15, 0.8)
