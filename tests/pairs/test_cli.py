"""``prefbuild pair`` and ``prefbuild export`` on files from a household run."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from prefbuild.cli.export import export_command
from prefbuild.cli.main import PrefbuildGroup
from prefbuild.cli.pair import pair_command
from prefbuild.io.jsonl import JsonlWriter, read_records
from prefbuild.records import Pair
from tests.pairs.household import cached


@click.group(cls=PrefbuildGroup)
def cli() -> None:
    """The two commands as the main CLI registers them."""


cli.add_command(pair_command)
cli.add_command(export_command)


@pytest.fixture(scope="module")
def trajectory_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("run") / "trajectories.jsonl"
    with JsonlWriter(path) as writer:
        for trajectory in cached(tasks=12, samples=2, seed=4):
            writer.write(trajectory)
    return path


@pytest.fixture(scope="module")
def pairs_file(trajectory_file) -> Path:
    out = trajectory_file.parent / "pairs.jsonl"
    stats = trajectory_file.parent / "pair-stats.json"
    result = CliRunner().invoke(
        cli,
        [
            "pair",
            str(trajectory_file),
            "-o",
            str(out),
            "--strategy",
            "stepwise",
            "--strategy",
            "style",
            "--strategy",
            "trajectory",
            "--test-fraction",
            "0.3",
            "--stats",
            str(stats),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "pairs from 24 trajectories" in result.output
    counts = json.loads(stats.read_text())
    assert counts["kept"] == sum(1 for _ in read_records(out, Pair))
    return out


def test_pair_writes_valid_pairs_with_both_splits(pairs_file):
    pairs = list(read_records(pairs_file, Pair))
    assert {p.strategy for p in pairs} == {"stepwise", "style", "trajectory"}
    assert {p.split for p in pairs} == {"train", "test"}


def test_pair_errors_are_one_clean_line(trajectory_file, tmp_path):
    result = CliRunner().invoke(
        cli, ["pair", str(trajectory_file), "-o", str(tmp_path / "p.jsonl"), "--strategy", "nope"]
    )
    assert result.exit_code == 1
    assert "error: unknown pair strategy 'nope'; known: stepwise" in result.output
    assert "Traceback" not in result.output
    result = CliRunner().invoke(
        cli, ["pair", str(trajectory_file), "-o", str(tmp_path / "p.jsonl"), "--strategy", "best_of_n"]
    )
    assert result.exit_code == 1 and "needs a teacher" in result.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n')
    result = CliRunner().invoke(cli, ["pair", str(bad), "-o", str(tmp_path / "p.jsonl")])
    assert result.exit_code == 1 and f"{bad}:1" in result.output
    assert not (tmp_path / "p.jsonl").exists()


def test_export_dataset_dir_loads_with_datasets(pairs_file, tmp_path):
    from datasets import load_dataset

    out = tmp_path / "dataset"
    result = CliRunner().invoke(
        cli,
        [
            "export",
            str(pairs_file),
            "-o",
            str(out),
            "--format",
            "trl",
            "--format",
            "roundwise",
            "--format",
            "llamafactory",
            "--format",
            "swift",
        ],
    )
    assert result.exit_code == 0, result.output
    assert (out / "README.md").is_file()
    stats = json.loads((out / "stats.json").read_text())
    pairs = list(read_records(pairs_file, Pair))
    single_turn = [p for p in pairs if len(p.chosen) == 1 and len(p.rejected) == 1]
    assert sum(stats["formats"]["trl"]["rows"].values()) == len(pairs)
    assert sum(stats["formats"]["roundwise"]["rows"].values()) == len(single_turn)
    assert stats["formats"]["swift"]["skipped"] == {"trajectory:unsupported_by_swift": len(pairs) - len(single_turn)}
    trl = load_dataset(str(out), "trl", split="train")
    assert set(trl.column_names) >= {"prompt", "chosen", "rejected"}
    roundwise = load_dataset(str(out), "roundwise", split="test")
    assert set(roundwise.column_names) == {"messages", "chosen", "rejected", "reason"}
    info = json.loads((out / "dataset_info.json").read_text())
    assert set(info) == {"prefbuild_train", "prefbuild_test"}
    for entry in info.values():
        assert entry["ranking"] is True and (out / entry["file_name"]).is_file()


def test_export_jsonl_and_sft_with_pass_at_k(pairs_file, trajectory_file, tmp_path):
    out = tmp_path / "jsonl"
    result = CliRunner().invoke(cli, ["export", str(pairs_file), "-o", str(out), "--format", "llamafactory", "--jsonl"])
    assert result.exit_code == 0, result.output
    info = json.loads((out / "dataset_info.json").read_text())
    assert info["prefbuild_train"]["file_name"] == "llamafactory/train.jsonl"
    first = json.loads((out / "llamafactory" / "train.jsonl").read_text().splitlines()[0])
    assert set(first) == {"conversations", "system", "tools", "chosen", "rejected"}

    sft = tmp_path / "sft"
    result = CliRunner().invoke(
        cli, ["export", str(trajectory_file), "-o", str(sft), "--format", "sft", "--jsonl", "--k", "1", "--k", "2"]
    )
    assert result.exit_code == 0, result.output
    stats = json.loads((sft / "stats.json").read_text())
    assert set(stats["pass_at_k"]) == {"1", "2"}
    assert len(stats["pass_at_k"]["1"]) == 12
    assert "pass@2:" in result.output
    rows = [
        json.loads(line)
        for split in ("train", "test")
        if (sft / "sft" / f"{split}.jsonl").exists()
        for line in (sft / "sft" / f"{split}.jsonl").read_text().splitlines()
    ]
    successes = [t for t in cached(tasks=12, samples=2, seed=4) if t.outcome.success]
    assert len(rows) == len(successes)

    result = CliRunner().invoke(cli, ["export", str(pairs_file), "-o", str(tmp_path / "x"), "--format", "sft"])
    assert result.exit_code == 1 and "give trajectory files" in result.output


def test_pair_with_a_recipe_teacher_runs_best_of_n(trajectory_file, tmp_path):
    out = tmp_path / "bon.jsonl"
    result = CliRunner().invoke(
        cli, ["pair", str(trajectory_file), "-o", str(out), "--recipe", "simulate", "--strategy", "best_of_n"]
    )
    assert result.exit_code == 0, result.output
    pairs = list(read_records(out, Pair))
    assert pairs and {p.strategy for p in pairs} == {"best_of_n"}
    assert all(p.scores["margin"] >= 1.0 for p in pairs)
