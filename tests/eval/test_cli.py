"""``prefbuild eval`` end to end with the scripted teacher: table, JSON, report section, --compare, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from prefbuild.cli.main import main
from prefbuild.io.jsonl import read_records
from prefbuild.records import Trajectory

BASE = ["eval", "simulate", "--model", "scripted-expert", "--num-tasks", "6", "--samples", "2", "--quiet"]
CLEAN = ["--set", "teacher.scripted.invalid_action=0", "--set", "teacher.scripted.format_violation=0"]


@pytest.fixture(scope="module")
def evaluations(tmp_path_factory) -> tuple[Path, Path, dict]:
    root = tmp_path_factory.mktemp("eval")
    runner = CliRunner()
    first = runner.invoke(main, [*BASE, "-o", str(root / "a"), "--json"])
    assert first.exit_code == 0, first.output
    second = runner.invoke(main, [*BASE, *CLEAN, "-o", str(root / "b")])
    assert second.exit_code == 0, second.output
    assert "success_rate" in second.output and "95% CI" in second.output
    return root / "a", root / "b", json.loads(first.output)


def test_evaluation_plays_only_held_out_tasks_and_scores_every_episode(evaluations):
    run_a, _, data = evaluations
    episodes = list(read_records(run_a / "labelled.jsonl", Trajectory))
    assert {t.task.split for t in episodes} == {"valid_unseen"}
    assert data["tasks"] == 6 and data["episodes"] == 12 == len(episodes)
    assert data["steps"] == sum(len(t.steps) for t in episodes)
    wins = sum(t.outcome.success for t in episodes)
    assert data["metrics"]["success_rate"] == pytest.approx(wins / 12)
    invalid = sum(any(label.mode == "invalid_action" for label in s.labels) for t in episodes for s in t.steps)
    assert data["metrics"]["invalid_action_per_100_steps"] == pytest.approx(100 * invalid / data["steps"])
    assert {"pass@1", "pass@2", "steps_to_success"} <= set(data["metrics"])
    assert {"loop", "invalid_action", "format_violation", "premature_success"} <= set(data["modes"])


def test_report_has_an_evaluation_section(evaluations):
    html = (evaluations[0] / "report.html").read_text()
    assert 'id="table-evaluation"' in html and "invalid_action_per_100_steps" in html


def test_compare_shows_the_difference_with_an_interval(evaluations):
    run_a, run_b, _ = evaluations
    result = CliRunner().invoke(main, ["eval", "--compare", str(run_a), str(run_b), "--json"])
    assert result.exit_code == 0, result.output
    rows = {row["metric"]: row for row in json.loads(result.output)["metrics"]}
    fv = rows["format_violation_per_100_steps"]
    assert fv["paired"] and fv["b"] == 0 and fv["a"] > 0
    assert fv["difference"] == pytest.approx(-fv["a"]) and fv["interval"][1] <= 0
    table = CliRunner().invoke(main, ["eval", "--compare", str(run_a), str(run_b)])
    assert "B - A" in table.output and "paired over the same 6 tasks" in table.output
    assert "warning" not in table.output  # the same recipe


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["eval", "--compare", "nope-a", "nope-b"], "error: nope-a: no evaluation.json"),
        (["eval", "simulate", "--model", "x", "--tasks", "train"], "is the training split"),
        (["eval", "simulate"], "eval needs RECIPE and --model"),
        (["eval", "bfcl-envtuning", "--model", "x", "--set", "env.split=test"], "shares 'multi_turn_base_"),
    ],
)
def test_bad_input_is_one_error_line(args, message):
    result = CliRunner().invoke(main, args)
    assert result.exit_code != 0
    assert message in result.output and "Traceback" not in result.output


@pytest.mark.parametrize(
    ("text", "message"),
    [("{}", "no field 'model'"), ("[1, 2]", "a JSON list, not an object"), ("{nope", "not JSON")],
)
def test_a_file_that_is_no_evaluation_says_what_is_wrong(tmp_path: Path, text: str, message: str) -> None:
    bad = tmp_path / "evaluation.json"
    bad.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(main, ["eval", "--compare", str(bad), str(bad)])
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert f"error: {bad}: not an evaluation file ({message}" in result.output.replace("\n", "")
