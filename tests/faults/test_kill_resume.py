"""kill -9 at a random moment of every stage, then the same command again: the final outputs
are byte-identical to an uninterrupted run, the manifest counts match, nothing is left over.

The scripted ``simulate`` recipe is deterministic, so an uninterrupted reference run and a
killed-then-resumed run must agree byte for byte. Each stage's kill moment is drawn with a
seeded random generator within the time that stage took in the reference run (stages are
announced on stdout), so the kills land inside the stage, at different points each stage.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from prefbuild.io.runlock import LOCK_FILE

REPO = Path(__file__).resolve().parents[2]
STAGES = ("generate", "label", "pair", "export", "report")
ARGS = ["run", "simulate", "--set", "env.num_tasks=10", "--set", "env.samples_per_task=2", "--out", "run", "--quiet"]
VOLATILE_MANIFEST_KEYS = {"created_at", "updated_at", "timings"}
EXPORT_STAMP = ".prefbuild-export.json"  # absolute source paths and mtimes, by design (stale-dataset check)
TIMEOUT_S = 180


def _command() -> list[str]:
    return [sys.executable, "-m", "prefbuild", *ARGS]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}


def _timed_run(cwd: Path) -> dict[str, float]:
    """An uninterrupted run; returns each stage's start time (seconds after launch)."""
    cwd.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    marks: dict[str, float] = {}
    with subprocess.Popen(_command(), cwd=cwd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True) as process:
        assert process.stdout is not None
        for line in process.stdout:
            if line.strip() in STAGES:
                marks[line.strip()] = time.monotonic() - started
        assert process.wait(timeout=TIMEOUT_S) == 0
    marks["end"] = time.monotonic() - started
    return marks


def _killed_run(cwd: Path, stage: str, delay_s: float) -> bool:
    """Start the run, kill -9 it ``delay_s`` after ``stage`` is announced; whether it was killed."""
    cwd.mkdir(parents=True, exist_ok=True)
    with subprocess.Popen(_command(), cwd=cwd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True) as process:
        assert process.stdout is not None
        for line in process.stdout:
            if line.strip() == stage:
                time.sleep(delay_s)
                process.send_signal(signal.SIGKILL)
                break
        process.wait(timeout=TIMEOUT_S)
        return process.returncode == -signal.SIGKILL


def _snapshot(run_dir: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for path in sorted(run_dir.rglob("*")):
        if path.is_file() and path.name not in ("manifest.json", LOCK_FILE):  # the lock file holds the last pid
            data = path.read_bytes()
            if path.name == EXPORT_STAMP:
                sources = json.loads(data)["sources"]
                data = json.dumps([(Path(s["path"]).name, s["size"]) for s in sources]).encode()
            files[str(path.relative_to(run_dir))] = data
    return files


def _manifest(run_dir: Path) -> dict:
    data = json.loads((run_dir / "manifest.json").read_text())
    return {key: value for key, value in data.items() if key not in VOLATILE_MANIFEST_KEYS}


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, float]]:
    cwd = tmp_path_factory.mktemp("reference")
    marks = _timed_run(cwd)
    assert set(STAGES) <= set(marks), marks
    return cwd / "run", marks


@pytest.mark.parametrize("stage", STAGES)
def test_kill_9_in_a_stage_then_rerun_gives_identical_outputs(
    stage: str, reference: tuple[Path, dict[str, float]], tmp_path: Path
) -> None:
    reference_dir, marks = reference
    order = [*STAGES, "end"]
    duration = marks[order[order.index(stage) + 1]] - marks[stage]
    delay = random.Random(f"kill-{stage}").uniform(0.0, max(duration, 0.01) * 0.9)
    cwd = tmp_path / "killed"
    assert _killed_run(cwd, stage, delay), f"the run ended before the kill {delay:.2f} s into {stage}"
    # The same command again finishes the run.
    rerun = subprocess.run(_command(), cwd=cwd, env=_env(), capture_output=True, text=True, timeout=TIMEOUT_S)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    run_dir = cwd / "run"
    expected, got = _snapshot(reference_dir), _snapshot(run_dir)
    assert sorted(got) == sorted(expected)  # no temporary file or stale output left behind
    different = [name for name in expected if expected[name] != got[name]]
    assert different == []
    assert _manifest(run_dir) == _manifest(reference_dir)
