"""Record files for the stats, inspect and report tests: a small run directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prefbuild.io.jsonl import write_records
from tests.publish.factories import make_pairs, make_trajectory


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """``trajectories/shard-00000.jsonl`` (12 episodes, 3 samples per task) and ``pairs.jsonl`` (12 pairs)."""
    root = tmp_path / "run"
    trajectories = [make_trajectory(i, samples=3, success=i % 3 == 0) for i in range(12)]
    write_records(root / "trajectories" / "shard-00000.jsonl", trajectories)
    write_records(root / "pairs.jsonl", make_pairs(12))
    return root


@pytest.fixture
def bad_pairs(tmp_path: Path) -> Path:
    """A pair file whose third line has chosen == rejected."""
    pairs = make_pairs(3)
    path = tmp_path / "bad.jsonl"
    write_records(path, pairs)
    lines = path.read_text().splitlines()
    broken = pairs[2].model_dump(mode="json")
    broken["rejected"] = broken["chosen"]
    lines[2] = json.dumps(broken)
    path.write_text("\n".join(lines) + "\n")
    return path
