"""The bundled ``code-interpreter`` recipe end to end with the scripted teacher (no model):
generate -> label -> pair -> export -> report, with tool calls recorded in the step facts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from prefbuild.cli import main
from prefbuild.envs.code.sandbox import namespaces_available
from prefbuild.io.jsonl import read_records
from prefbuild.records import Pair, Trajectory

pytestmark = pytest.mark.skipif(namespaces_available() is not None, reason=f"no sandbox: {namespaces_available()}")


def test_code_interpreter_recipe_runs_with_the_scripted_teacher(tmp_path: Path) -> None:
    out = tmp_path / "run"
    settings = ["teacher.backend=scripted", "env.num_tasks=5", "env.samples_per_task=2", "teacher.concurrency=4"]
    arguments = ["run", "code-interpreter", "--out", str(out), "-q"]
    for setting in settings:
        arguments += ["--set", setting]
    result = CliRunner().invoke(main, arguments)
    assert result.exit_code == 0, result.output
    trajectories = [
        t for path in sorted((out / "trajectories").glob("*.jsonl")) for t in read_records(path, Trajectory)
    ]
    assert len(trajectories) == 10
    assert {t.task.type for t in trajectories} == {
        "arithmetic",
        "number_theory",
        "combinatorics",
        "algebra",
        "programs",
    }
    for trajectory in trajectories:
        tool_steps = [step for step in trajectory.steps if step.facts.tools]
        # Only a turn the scripted teacher played as answering without tools leaves none.
        assert tool_steps or trajectory.steps[0].facts.simulated != "expert", trajectory.id
        assert all(fact.name == "code_interpreter" for step in tool_steps for fact in step.facts.tools)
        assert all("<tool_call>" in step.raw_output for step in tool_steps)
        if trajectory.outcome.success:
            assert trajectory.steps[-1].info["outcome"] == "correct" and trajectory.steps[-1].facts.won
    pairs = list(read_records(out / "pairs.jsonl", Pair))
    assert pairs and (out / "report.html").is_file()
    assert json.loads((out / "manifest.json").read_text())["counts"]
