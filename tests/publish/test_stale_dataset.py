"""``publish`` refuses a dataset directory older than the pairs it was exported from."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from prefbuild.cli.publish import publish_command
from prefbuild.exports import export_dataset
from prefbuild.exports.dataset_dir import SOURCES_NAME
from prefbuild.hub.publish import StaleDatasetError, plan_publish
from prefbuild.io.jsonl import write_records
from tests.publish.factories import make_pairs


@pytest.fixture
def run_with_dataset(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    write_records(run / "pairs.jsonl", make_pairs(8))
    export_dataset([run / "pairs.jsonl"], run / "dataset", ["trl"])
    return run


def test_fresh_dataset_is_planned(run_with_dataset: Path) -> None:
    plan = plan_publish(run_with_dataset / "dataset", "me/data")
    assert "README.md" in {item.path_in_repo for item in plan.uploads}
    assert SOURCES_NAME not in {item.path_in_repo for item in plan.uploads}  # hidden: never pushed


def test_pairs_rewritten_after_export_make_the_dataset_stale(run_with_dataset: Path) -> None:
    pairs = run_with_dataset / "pairs.jsonl"
    write_records(pairs, make_pairs(3))  # a re-run paired again (fewer pairs) but did not export
    with pytest.raises(StaleDatasetError, match=rf"stale dataset: {pairs} changed after the dataset was written"):
        plan_publish(run_with_dataset / "dataset", "me/data")
    result = CliRunner().invoke(publish_command, [str(run_with_dataset / "dataset"), "--repo", "me/data", "--dry-run"])
    assert result.exit_code == 1 and "Traceback" not in result.output
    (line,) = result.output.strip().splitlines()
    assert line.startswith(f"error: {run_with_dataset / 'dataset'}: stale dataset") and "prefbuild export" in line


def test_same_content_rewritten_is_still_stale_by_time(run_with_dataset: Path) -> None:
    pairs = run_with_dataset / "pairs.jsonl"
    stat = pairs.stat()
    os.utime(pairs, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    with pytest.raises(StaleDatasetError):
        plan_publish(run_with_dataset / "dataset", "me/data")


def test_dataset_without_a_source_record_is_compared_with_the_run_pairs(run_with_dataset: Path) -> None:
    dataset = run_with_dataset / "dataset"
    (dataset / SOURCES_NAME).unlink()  # written by an older prefbuild
    plan_publish(dataset, "me/data")
    card = dataset / "README.md"
    pairs = run_with_dataset / "pairs.jsonl"
    os.utime(pairs, ns=(card.stat().st_atime_ns, card.stat().st_mtime_ns + 5_000_000_000))
    with pytest.raises(StaleDatasetError, match="stale dataset"):
        plan_publish(dataset, "me/data")


def test_a_copied_dataset_without_its_pairs_can_be_published(run_with_dataset: Path, tmp_path: Path) -> None:
    copy = tmp_path / "elsewhere" / "dataset"
    shutil.copytree(run_with_dataset / "dataset", copy)
    (run_with_dataset / "pairs.jsonl").unlink()
    assert plan_publish(copy, "me/data").uploads
