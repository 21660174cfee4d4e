"""`prefbuild run` end to end: bundled recipes through every stage into a loadable dataset."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from prefbuild.cli.main import main
from prefbuild.io.jsonl import read_records
from prefbuild.io.rundir import read_manifest
from prefbuild.records import Pair


def run_recipe(tmp_path: Path, recipe: str, *overrides: str) -> tuple[Path, str]:
    out = tmp_path / "run"
    args = ["run", recipe, "--out", str(out), "--quiet"]
    for override in overrides:
        args += ["--set", override]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return out, result.output


def check_outputs(out: Path, output: str) -> list[Pair]:
    pairs = list(read_records(out / "pairs.jsonl", Pair))
    assert pairs, "the run made pairs"
    validated = CliRunner().invoke(main, ["validate", str(out / "pairs.jsonl"), str(out / "labelled.jsonl")])
    assert validated.exit_code == 0, validated.output
    assert (out / "dataset" / "README.md").exists()
    assert list((out / "dataset").rglob("*.parquet"))
    assert (out / "report.html").exists()
    manifest = read_manifest(out)
    assert manifest is not None and manifest.counts["pairs"] == len(pairs)
    assert manifest.stages == ["generate", "label", "pair", "export", "report"]
    assert f"prefbuild inspect {out / 'pairs.jsonl'}" in output
    runner = CliRunner()
    for args in (["inspect", str(out / "pairs.jsonl"), "-n", "2", "--no-pager"],
                 ["inspect", str(out / "labelled.jsonl"), "-n", "1", "--no-pager"],
                 ["stats", str(out)], ["stats", str(out / "pairs.jsonl"), "--json"]):
        shown = runner.invoke(main, args)
        assert shown.exit_code == 0, (args, shown.output)
        assert shown.output.strip()
    return pairs


def test_ironguard_recipe_with_scripted_teacher(tmp_path: Path) -> None:
    out, output = run_recipe(
        tmp_path, "agentbench-ironguard", "teacher.backend=scripted", "teacher.model=scripted-expert",
        "env.0.num_tasks=16", "env.1.num_tasks=16",
    )
    pairs = check_outputs(out, output)
    assert {pair.source.env for pair in pairs} == {"sql", "household"}
    assert {pair.strategy for pair in pairs} == {"style", "stepwise"}
    style = [pair for pair in pairs if pair.strategy == "style"]
    assert all(pair.reason in ("verbose_filler", "overlong") for pair in style)
    from datasets import load_dataset

    swift = load_dataset("parquet", data_files=[str(p) for p in (out / "dataset").rglob("swift/train-*.parquet")])
    assert {"messages", "rejected_response"} <= set(swift["train"].column_names)
    episodes = [json.loads(line) for line in (out / "labelled.jsonl").read_text().splitlines()]
    assert len(episodes) == 32


@pytest.mark.slow
def test_quickstart_on_embedded_teacher(tmp_path: Path) -> None:
    """The `make demo` path, shrunk: the embedded SmolLM2 on CPU through the transformers backend."""
    out, _ = run_recipe(
        tmp_path, "quickstart", "env.num_tasks=2", "env.max_steps=2", "teacher.sampling.max_tokens=16",
    )
    trajectories = [json.loads(line) for line in (out / "labelled.jsonl").read_text().splitlines()]
    assert {t["teacher"]["backend"] for t in trajectories} == {"transformers"}
    assert all(t["usage"]["completion_tokens"] > 0 for t in trajectories)
    assert (out / "pairs.jsonl").exists()


def test_generate_with_dead_server_exits_non_zero_and_says_how_many_failed(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, [
        "generate", "simulate", "--out", str(tmp_path / "run"), "--quiet",
        "--set", "env.num_tasks=3", "--set", "teacher.backend=openai", "--set", "teacher.model=m",
        "--set", "teacher.base_urls=[http://127.0.0.1:9/v1]", "--set", "teacher.retries.max_attempts=1",
    ])
    assert result.exit_code == 1
    written = (tmp_path / "run" / "trajectories" / "episodes.jsonl").read_text().splitlines()
    lines = [json.loads(line) for line in written]
    assert len(lines) == 3
    assert {line["outcome"]["stop_reason"] for line in lines} == {"error"}
    summary = CliRunner().invoke(main, ["generate", "simulate", "--out", str(tmp_path / "run2"),
                                        "--set", "env.num_tasks=2", "--set", "teacher.backend=openai",
                                        "--set", "teacher.model=m", "--set", "teacher.base_urls=[http://127.0.0.1:9/v1]",
                                        "--set", "teacher.retries.max_attempts=1"])
    assert summary.exit_code == 1
    assert "2 of 2 episodes failed" in summary.output
