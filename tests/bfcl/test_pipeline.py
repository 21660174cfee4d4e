"""The bundled bfcl-envtuning recipe end to end (generate -> label -> pair -> export) with the
scripted teacher: the ground-truth expert with injected calls of unknown functions."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from prefbuild.cli.main import main
from prefbuild.io.jsonl import read_records
from prefbuild.records import Pair, Trajectory


def test_bfcl_envtuning_recipe_with_scripted_teacher(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["run", "bfcl-envtuning", "--out", str(out), "--quiet"]
    for override in (
        "teacher.backend=scripted",
        "teacher.model=scripted-expert",
        "env.num_tasks=4",
        "env.samples_per_task=1",
        "teacher.scripted.invalid_action=0.25",
        "teacher.scripted.format_violation=0",
        "pairs.strategies.0.params.states_per_trajectory=1",
    ):
        args += ["--set", override]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    trajectories = list(read_records(out / "labelled.jsonl", Trajectory))
    assert len(trajectories) == 4
    hinted = []
    for trajectory in trajectories:
        assert trajectory.env.name == "bfcl" and trajectory.task.type in ("base", "miss_func", "miss_param")
        assert trajectory.messages[0].content.startswith("# Tools")
        assert trajectory.outcome.progress is not None
        for step in trajectory.steps:
            for fact in step.facts.tools:
                if not fact.ok:
                    assert fact.hinted and "Hint: " in step.feedback  # recipe: hints actionable
                    hinted.append(step)
                    assert any(label.mode == "invalid_action" for label in step.labels)
    assert hinted, "the scripted teacher called unknown functions"
    pairs = list(read_records(out / "pairs.jsonl", Pair))
    assert pairs and {pair.reason for pair in pairs} == {"invalid_action"}
    assert list((out / "dataset").rglob("*.parquet"))
