"""The bundled ``tau2-grpo-data`` recipe end to end with the scripted teacher and scripted user.

One task per domain, two samples each, on the package's real data and evaluator: rollout ->
label -> pair -> export (DPO pairs and successful trajectories for rejection fine-tuning).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("tau2")

from prefbuild.io.jsonl import read_records
from prefbuild.records import Trajectory
from tests.rollout.test_run_pipeline import run_recipe


def test_tau2_grpo_recipe_with_scripted_teacher_and_user(tmp_path: Path) -> None:
    overrides = ["teacher.backend=scripted", "teacher.model=scripted-expert"]
    for index, samples in enumerate((1, 1, 2)):  # airline and retail databases are slow to load
        overrides += [f"env.{index}.num_tasks=1", f"env.{index}.samples_per_task={samples}"]
        overrides.append(f"env.{index}.options.user=scripted")
    out, output = run_recipe(tmp_path, "tau2-grpo-data", *overrides)
    trajectories = list(read_records(out / "labelled.jsonl", Trajectory))
    assert sorted({t.task.type for t in trajectories}) == ["airline", "retail", "telecom"]
    assert len(trajectories) == 4
    assert {t.env.name for t in trajectories} == {"tau2"}
    finished = [t for t in trajectories if t.outcome.stop_reason.value in ("success", "agent_finished")]
    assert finished, [t.outcome for t in trajectories]
    for trajectory in finished:
        last = trajectory.steps[-1]
        assert last.done and "reward_info" in last.info["tau2"]
        assert trajectory.outcome.success == last.info["tau2"]["success"]
    assert trajectory.messages[0].role.value == "system" and "<policy>" in trajectory.messages[0].content
    steps = [step for t in trajectories for step in t.steps]
    assert all(step.facts.progress is not None for step in steps)
    tool_steps = [step for step in steps if step.facts.tools]
    assert tool_steps and all(fact.name for step in tool_steps for fact in step.facts.tools)
    sft = list((out / "dataset").rglob("*.parquet"))
    assert sft
    assert "pass@1" in output or json.loads((out / "manifest.json").read_text())["counts"]


def test_eval_plays_tau2_test_tasks_disjoint_from_the_training_tasks() -> None:
    from prefbuild.eval.run import evaluation_recipe
    from prefbuild.recipe import load_recipe

    evaluation = evaluation_recipe(load_recipe("tau2-grpo-data"), "some-model")  # checked disjoint inside
    assert [section.split for section in evaluation.recipe.envs] == ["test", "test", "test"]
