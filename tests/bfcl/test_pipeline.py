"""The bundled bfcl-envtuning recipe through the real rollout with the scripted expert."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from prefbuild.cli.main import main
from prefbuild.io.jsonl import read_records
from prefbuild.records import Trajectory


def test_scripted_expert_generates_successful_bfcl_trajectories(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["generate", "bfcl-envtuning", "--out", str(out), "--quiet"]
    for override in (
        "teacher.backend=scripted",
        "teacher.model=scripted-expert",
        "env.num_tasks=3",
        "env.samples_per_task=1",
        "teacher.scripted.invalid_action=0",
        "teacher.scripted.premature_success=0",
    ):
        args += ["--set", override]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    trajectories = [
        t for path in sorted((out / "trajectories").glob("*.jsonl")) for t in read_records(path, Trajectory)
    ]
    assert len(trajectories) == 3
    for trajectory in trajectories:
        assert trajectory.env.name == "bfcl" and trajectory.task.type in ("base", "miss_func", "miss_param")
        assert trajectory.messages[0].content.startswith("# Tools")
        assert trajectory.outcome.success and trajectory.outcome.progress == 1.0, trajectory.task.id
        assert any("<tool_call>" in step.raw_output for step in trajectory.steps)
