"""End to end on the household env with the scripted teacher: determinism, SIGKILL and resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from prefbuild.io.jsonl import read_records
from prefbuild.records import Trajectory

ROOT = Path(__file__).resolve().parents[2]


def generate_cli(out: Path, *extra: str, wait: bool = True) -> subprocess.Popen[str] | subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "prefbuild", "generate", "simulate", "--out", str(out), "--quiet", *extra]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if wait:
        return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, check=False, timeout=300)
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)


def test_same_recipe_and_seed_give_byte_identical_files(tmp_path: Path) -> None:
    for name in ("a", "b"):
        completed = generate_cli(tmp_path / name, "--set", "env.num_tasks=30")
        assert completed.returncode == 0, completed.stderr
    a = (tmp_path / "a" / "trajectories" / "episodes.jsonl").read_bytes()
    b = (tmp_path / "b" / "trajectories" / "episodes.jsonl").read_bytes()
    assert a == b and a.count(b"\n") == 30
    trajectories = list(read_records(tmp_path / "a" / "trajectories" / "episodes.jsonl", Trajectory))
    assert {t.teacher.backend for t in trajectories} == {"scripted"}
    assert any(t.outcome.success for t in trajectories) and any(not t.outcome.success for t in trajectories)


@pytest.mark.parametrize("kill_after_lines", [1, 37, 150])
def test_sigkill_then_resume_loses_and_duplicates_nothing(tmp_path: Path, kill_after_lines: int) -> None:
    out = tmp_path / "run"
    total = 240
    settings = ("--set", f"env.num_tasks={total}")
    shard = out / "trajectories" / "episodes.jsonl"
    process = generate_cli(out, *settings, wait=False)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if shard.exists() and shard.read_bytes().count(b"\n") >= kill_after_lines:
            break
        time.sleep(0.002)
    killed = process.poll() is None
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    lines_at_kill = shard.read_bytes().count(b"\n") if shard.exists() else 0
    if killed:
        assert lines_at_kill < total, "the run finished before it could be killed"
    resumed = generate_cli(out, *settings)
    assert resumed.returncode == 0, resumed.stderr
    ids = [json.loads(line)["id"] for line in shard.read_text().splitlines()]
    assert len(ids) == total
    assert len(set(ids)) == total
    assert len(list(read_records(shard, Trajectory))) == total
