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
                    assert {label.mode for label in step.labels} == {"unknown_tool"}  # named once, narrowest
    assert hinted, "the scripted teacher called unknown functions"
    pairs = list(read_records(out / "pairs.jsonl", Pair))
    assert pairs and {pair.reason for pair in pairs} == {"unknown_tool"}
    assert list((out / "dataset").rglob("*.parquet"))


def test_train_and_heldout_halves_split_every_category_and_eval_plays_the_heldout_one() -> None:
    from prefbuild.envs.bfcl.data import CATEGORIES, load_entries
    from prefbuild.envs.bfcl.env import BfclEnv
    from prefbuild.eval.run import evaluation_recipe
    from prefbuild.recipe import load_recipe

    env = BfclEnv()
    for category in CATEGORIES:
        train = {task.info.id for task in env.tasks("train", 1000, 0, [category])}
        heldout = {task.info.id for task in env.tasks("heldout", 1000, 3, [category])}
        everything = {entry.id for entry in load_entries(category)}
        assert not train & heldout and train | heldout == everything and abs(len(train) - len(heldout)) <= 1
        assert {task.info.split for task in env.tasks("train", 2, 0, [category])} == {"train"}
    # The bundled recipe trains on the card's 100 base tasks of the train half; eval plays the other half.
    loaded = load_recipe("bfcl-envtuning")
    section = loaded.recipe.envs[0]
    assert (section.split, section.task_types, section.num_tasks) == ("train", ["base"], 100)
    evaluation = evaluation_recipe(loaded, "some-model", num_tasks=400,
                                   samples_per_task=1).recipe.envs[0]  # checked disjoint inside
    assert evaluation.split == "heldout"


def test_an_entry_bfcl_force_quits_stops_at_its_step_limit_not_at_the_agents_end(tmp_path: Path) -> None:
    """BFCL's per-turn step limit cuts the episode (Gymnasium's ``truncated``): ``max_steps``, as a recipe's
    own limit, so a filter on truncated episodes finds both."""
    out = tmp_path / "run"
    args = ["generate", "bfcl-envtuning", "--out", str(out), "--quiet"]
    for override in ("teacher.backend=scripted", "teacher.model=scripted-expert", "env.num_tasks=4",
                     "env.samples_per_task=1", "env.options.max_steps_per_turn=1"):
        args += ["--set", override]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    trajectories = list(read_records(out / "trajectories" / "episodes.jsonl", Trajectory))
    cut = [t for t in trajectories if (t.steps[-1].facts.stop or "").startswith("force quit")]
    failed = [t for t in cut if not t.outcome.success]  # a cut in the last turn is scored as usual and may pass
    assert failed and {t.outcome.stop_reason for t in failed} == {"max_steps"}
    assert {t.outcome.stop_reason for t in trajectories if t not in failed} == {"success"}
