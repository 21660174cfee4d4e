"""``prefbuild stats``: polars aggregations over pair and trajectory files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from prefbuild.analysis.stats import collect_stats, estimate_tokens, tokenizer_counter
from prefbuild.cli.analysis import stats_command
from prefbuild.errors import PrefbuildError
from tests.report.conftest import SIMULATED_TASKS


def test_estimate_tokens() -> None:
    assert estimate_tokens("ACTION: go to desk 1.") == 7
    assert estimate_tokens("") == 0


def test_run_directory_stats(run_dir: Path) -> None:
    stats = collect_stats(run_dir)
    trajectory, pair = stats["trajectory"], stats["pair"]
    assert trajectory["trajectories"] == 12 and trajectory["tasks"] == 4
    # success when index % 3 == 0: exactly one success in each task of 3 samples
    assert trajectory["success_rate"] == pytest.approx(4 / 12, abs=1e-4)
    assert trajectory["pass_at_k"] == {"pass@1": pytest.approx(1 / 3, abs=1e-4),
                                       "pass@2": pytest.approx(2 / 3, abs=1e-4)}
    assert trajectory["labels_by_mode"] == [{"mode": "loop", "count": 8}]
    assert {row["task_type"] for row in trajectory["success_by_task_type"]} == {
        "pick_and_place", "pick_clean_then_place", "look_at_obj"}
    assert pair["pairs"] == 12
    assert {row["reason"]: row["count"] for row in pair["by_reason"]} == {
        "loop": 4, "invalid_action": 4, "premature_success": 4}
    assert {row["split"]: row["count"] for row in pair["by_split"]} == {"train": 9, "test": 3}
    assert {row["strategy"]: row["count"] for row in pair["by_strategy"]} == {"stepwise": 9, "trajectory": 3}
    assert pair["by_teacher_model"] == [{"teacher_model": "smollm2-135m-instruct", "count": 12}]
    assert pair["tokens"]["prompt_tokens"]["p50"] == 48.0
    assert pair["tokens"]["chosen_tokens"]["max"] == 15


def test_cli_json_and_table(run_dir: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(stats_command, [str(run_dir / "pairs.jsonl"), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["pair"]["pairs"] == 12 and "trajectory" not in data

    result = runner.invoke(stats_command, [str(run_dir)])
    assert result.exit_code == 0, result.output
    for needle in ("12 episodes of 4 tasks", "pass@2=66.7%", "success by task type", "pairs: 12",
                   "premature_success", "lengths in tokens"):
        assert needle in result.output, needle


def test_bad_file_names_file_and_line(bad_pairs: Path) -> None:
    result = CliRunner().invoke(stats_command, [str(bad_pairs)])
    assert result.exit_code == 1
    assert f"{bad_pairs}:3" in result.output and "identical" in result.output
    assert "Traceback" not in result.output


def test_missing_and_empty_inputs(tmp_path: Path) -> None:
    result = CliRunner().invoke(stats_command, [str(tmp_path / "nope.jsonl")])
    missing = tmp_path / "nope.jsonl"
    assert result.exit_code == 1 and result.output.strip() == f"error: {missing}: no such file or directory"
    with pytest.raises(PrefbuildError, match=r"not a run directory"):
        collect_stats(tmp_path)
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(PrefbuildError, match=r"no trajectory or pair records"):
        collect_stats(tmp_path / "empty.jsonl")


def test_run_directory_reads_only_the_run_files_and_reports_broken_ones(run_dir: Path) -> None:
    (run_dir / "dataset").mkdir()
    (run_dir / "dataset" / "llamafactory.jsonl").write_text('{"instruction": "x", "output": "y"}\n')
    (run_dir / "notes.jsonl").write_text("{not json\n")
    assert collect_stats(run_dir)["pair"]["pairs"] == 12
    (run_dir / "trajectories" / "shard-00001.jsonl").write_text("{not json\n")
    result = CliRunner().invoke(stats_command, [str(run_dir)])
    assert result.exit_code == 1 and "shard-00001.jsonl:1" in result.output
    assert "Traceback" not in result.output


def test_real_run_directory_counts_each_episode_once(simulated_run: Path) -> None:
    episodes_on_disk = sum(1 for path in (simulated_run / "trajectories").glob("*.jsonl")
                           for line in path.read_text().splitlines() if line.strip())
    assert episodes_on_disk == SIMULATED_TASKS and (simulated_run / "labelled.jsonl").is_file()
    stats = collect_stats(simulated_run)
    assert stats["files"]["trajectory"] == [str(simulated_run / "labelled.jsonl")]
    trajectory = stats["trajectory"]
    assert trajectory["trajectories"] == SIMULATED_TASKS and trajectory["tasks"] == SIMULATED_TASKS
    assert set(trajectory["pass_at_k"]) == {"pass@1"}  # one episode per task: no pass@2 to make up
    assert trajectory["simulated"] is True
    assert trajectory["by_teacher_backend"] == [{"teacher_backend": "scripted", "count": SIMULATED_TASKS}]
    assert sum(row["count"] for row in trajectory["labels_by_mode"]) > 0  # the labelled copy was read
    pairs_on_disk = len((simulated_run / "pairs.jsonl").read_text().splitlines())
    assert stats["pair"]["pairs"] == pairs_on_disk
    result = CliRunner().invoke(stats_command, [str(simulated_run)])
    assert result.exit_code == 0, result.output
    assert f"{SIMULATED_TASKS} episodes of {SIMULATED_TASKS} tasks" in result.output
    assert "simulated data" in result.output


def test_tokenizer_must_be_a_local_folder(tmp_path: Path, run_dir: Path) -> None:
    with pytest.raises(PrefbuildError, match="needs a local tokenizer folder"):
        tokenizer_counter("Qwen/Qwen3-4B")
    result = CliRunner().invoke(stats_command, [str(run_dir), "--tokenizer", "Qwen/Qwen3-4B"])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --tokenizer Qwen/Qwen3-4B: needs a local tokenizer folder")


def test_table_shows_record_values_verbatim(tmp_path: Path) -> None:
    """Model names and task types are data, not rich markup: nothing is dropped and `[/x]` does not crash."""
    from prefbuild.io.jsonl import write_records
    from tests.publish.factories import make_trajectory

    path = tmp_path / "episodes.jsonl"
    write_records(path, [make_trajectory(0, model="runs/dpo[lr=1e-6]/merged"),
                         make_trajectory(1, task_type="pick[/bold]")])
    result = CliRunner().invoke(stats_command, [str(path)], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "runs/dpo[lr=1e-6]/merged" in result.output and "pick[/bold]" in result.output


def test_stale_labelled_file_is_warned_about(simulated_run: Path, tmp_path: Path) -> None:
    """Episodes generated after labelling are not in labelled.jsonl: stats says so instead of silently
    reporting fewer episodes; a copy that only reset the modification times is not warned about."""
    import os
    import shutil

    run = tmp_path / "run"
    shutil.copytree(simulated_run, run)
    result = CliRunner().invoke(stats_command, [str(run), "--json"])
    assert result.exit_code == 0 and "warning:" not in result.output
    labelled = run / "labelled.jsonl"
    lines = labelled.read_text().splitlines(keepends=True)
    labelled.write_text("".join(lines[:5]))
    os.utime(labelled, ns=(1, 1))
    result = CliRunner().invoke(stats_command, [str(run)])
    assert result.exit_code == 0
    assert f"5 episodes, but trajectories/ holds {SIMULATED_TASKS}" in result.output
