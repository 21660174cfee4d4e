"""The command line: help, validate with located errors, schema, recipes, clean errors without tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from prefbuild.cli.main import main
from tests.foundation.factories import make_pair, make_trajectory

COMMANDS = ["run", "generate", "label", "pair", "export", "publish", "inspect", "stats", "validate", "schema",
            "envs", "recipes"]


def test_help_lists_every_command() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    for command in COMMANDS:
        assert f"  {command} " in result.output or f"  {command}\n" in result.output, command


def test_version() -> None:
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0 and "prefbuild" in result.output


def test_validate_reports_line_7_chosen_equals_rejected(tmp_path: Path) -> None:
    path = tmp_path / "pairs.jsonl"
    lines = [make_pair(id=f"p{i}").model_dump(mode="json") for i in range(10)]
    lines[6]["chosen"] = lines[6]["rejected"]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 1
    assert f"{path}:7" in result.output
    assert "chosen and rejected are identical" in result.output
    assert "10 pair records, 9 valid, 1 invalid" in result.output


def test_validate_trajectories_ok(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(make_trajectory().model_dump_json() + "\n" + make_trajectory(id="b").model_dump_json() + "\n")
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 0, result.output
    assert "2 trajectory records, 2 valid, 0 invalid" in result.output


def test_validate_field_path(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    data = make_trajectory().model_dump(mode="json")
    data["steps"][1]["index"] = 5
    path.write_text(make_trajectory().model_dump_json() + "\n" + json.dumps(data) + "\n")
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 1
    assert f"{path}:2" in result.output and "contiguous" in result.output


def test_schema_command_writes_every_schema(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["schema", "--out", str(tmp_path)])
    assert result.exit_code == 0
    names = {p.name for p in tmp_path.iterdir()}
    assert {"trajectory.schema.json", "pair.schema.json", "recipe.schema.json", "manifest.schema.json"} <= names


def test_recipes_lists_and_prints() -> None:
    runner = CliRunner()
    listed = runner.invoke(main, ["recipes"])
    assert listed.exit_code == 0 and "quickstart" in listed.output
    shown = runner.invoke(main, ["recipes", "quickstart"])
    assert shown.exit_code == 0 and "name: quickstart" in shown.output
    missing = runner.invoke(main, ["recipes", "nope"])
    assert missing.exit_code == 1 and "no bundled recipe" in missing.output


def test_bad_recipe_is_one_line_without_traceback(tmp_path: Path) -> None:
    path = tmp_path / "recipe.yaml"
    path.write_text("name: x\nenv:\n  name: household\n  protocol: agentbench\nteacher:\n  backend: openai\n"
                    "  sampling:\n    temperature: [1, 2]\n")
    completed = subprocess.run(
        [sys.executable, "-m", "prefbuild", "check-recipe", str(path)], capture_output=True, text=True, check=False
    )
    assert completed.returncode == 1
    assert f"{path}:8 teacher.sampling.temperature:" in completed.stderr
    assert "Traceback" not in completed.stderr
