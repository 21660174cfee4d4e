"""Record files for the stats, inspect and report tests.

``simulated_run`` is a directory written by the real command line (``prefbuild run simulate``),
so the tests see exactly the layout a user gets: raw ``trajectories/``, ``labelled.jsonl``,
``pairs.jsonl``, ``dataset/``, ``report.html``. ``run_dir`` is a hand-made directory with
three samples per task (for pass@k) and no labelled copy.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
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


SIMULATED_TASKS = 12


@pytest.fixture(scope="module")
def simulated_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``prefbuild run simulate`` (12 tasks, one episode each) through the real CLI, in a subprocess."""
    root = tmp_path_factory.mktemp("simulated") / "run"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    result = subprocess.run(
        [sys.executable, "-m", "prefbuild", "run", "simulate", "--out", str(root), "--quiet",
         "--set", f"env.num_tasks={SIMULATED_TASKS}"],
        capture_output=True, text=True, env=env, cwd=root.parent, timeout=300, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return root
