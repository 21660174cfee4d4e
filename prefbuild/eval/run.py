"""``evaluate``: play a recipe's held-out tasks with a model as the policy and score its episodes.

The evaluation is an ordinary run directory (``recipe.yaml``, ``trajectories/``,
``labelled.jsonl``, ``report.html``) plus ``evaluation.json``: the recipe is the original one
with the held-out split, the evaluated model as the teacher, and the same labelers, so an
evaluation resumes like any run and every figure can be traced to the episodes behind it.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from prefbuild.errors import PrefbuildError
from prefbuild.eval.metrics import (
    EpisodeRow,
    Interval,
    Metrics,
    bootstrap_intervals,
    compute_metrics,
    group_by_task,
    pass_ks,
)
from prefbuild.eval.split import TEST, check_disjoint, held_out_split
from prefbuild.recipe import LoadedRecipe, load_recipe_text

EVALUATION = "evaluation.json"
BACKENDS: tuple[str, ...] = ("transformers", "vllm", "openai", "scripted")

PathLike = str | os.PathLike[str]


@dataclass
class Evaluation:
    """One model's scores on one recipe's held-out tasks, with the episodes behind them."""

    model: str
    backend: str
    recipe: str
    splits: list[str]
    run_dir: str
    modes: list[str]
    metrics: Metrics
    intervals: dict[str, Interval]
    episodes: list[EpisodeRow] = field(default_factory=list)

    @property
    def tasks(self) -> int:
        return len(group_by_task(self.episodes))

    @property
    def steps(self) -> int:
        return sum(row.steps for row in self.episodes)

    def as_dict(self) -> dict[str, Any]:
        """Plain data for ``evaluation.json`` and ``--json``."""
        return {
            "model": self.model,
            "backend": self.backend,
            "recipe": self.recipe,
            "splits": self.splits,
            "run_dir": self.run_dir,
            "tasks": self.tasks,
            "episodes": len(self.episodes),
            "steps": self.steps,
            "modes": self.modes,
            "metrics": self.metrics,
            "intervals": {name: list(value) if value else None for name, value in self.intervals.items()},
            "episode_rows": [row.as_dict() for row in self.episodes],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Evaluation:
        return cls(
            model=data["model"],
            backend=data["backend"],
            recipe=data["recipe"],
            splits=list(data["splits"]),
            run_dir=data["run_dir"],
            modes=list(data["modes"]),
            metrics=dict(data["metrics"]),
            intervals={name: tuple(value) if value else None for name, value in data["intervals"].items()},
            episodes=[EpisodeRow(**row) for row in data["episode_rows"]],
        )


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", Path(text).name or text).strip("-") or "model"


def evaluation_recipe(
    loaded: LoadedRecipe,
    model: str,
    *,
    backend: str | None = None,
    tasks: str = TEST,
    num_tasks: int | None = None,
    samples_per_task: int | None = None,
    out: PathLike | None = None,
) -> LoadedRecipe:
    """The recipe an evaluation runs: held-out split, ``model`` as the teacher, its own run directory.

    Args:
        loaded: the training recipe.
        model: a model folder, a Hub id or ``embedded``.
        backend: ``transformers``, ``vllm`` or ``openai`` (default: the recipe's).
        tasks: ``test`` (the env's held-out split) or a split name.
        num_tasks: held-out tasks per env section (default: the recipe's ``num_tasks``).
        samples_per_task: episodes per task (pass@k needs k of them).
        out: the run directory (default ``runs/<recipe>-eval-<model>``).

    Returns:
        The evaluation recipe, validated.

    Raises:
        PrefbuildError: no held-out split, or held-out tasks that overlap the training tasks.
    """
    chosen = backend or loaded.recipe.teacher.backend
    if chosen not in BACKENDS:
        raise PrefbuildError(f"--backend {chosen!r}: expected one of {', '.join(BACKENDS)}")
    data = loaded.resolved_dict()
    sections = data["env"] if isinstance(data["env"], list) else [data["env"]]
    for section, env in zip(sections, loaded.recipe.envs, strict=True):
        section["split"] = held_out_split(env, tasks)
        if num_tasks is not None:
            section["num_tasks"] = num_tasks
        if samples_per_task is not None:
            section["samples_per_task"] = samples_per_task
    teacher = data["teacher"]
    if chosen != teacher["backend"]:
        teacher["scripted"] = {}
    teacher["backend"], teacher["model"] = chosen, model
    data["name"] = f"{loaded.recipe.name}-eval-{_slug(model)}"[:120]
    data["output"]["dir"] = str(out) if out is not None else str(Path("runs") / data["name"])
    evaluation = load_recipe_text(yaml.safe_dump(data, sort_keys=False), source=loaded.source)
    for train_env, test_env in zip(loaded.recipe.envs, evaluation.recipe.envs, strict=True):
        check_disjoint(train_env, test_env, loaded.recipe.seed)
    return evaluation


def deployed_modes(recipe_file: Path, env_names: Sequence[str]) -> list[str]:
    """Failure modes of the labelers a recipe deploys on its envs, in a stable order."""
    from prefbuild.labelers import build_labelers
    from prefbuild.labelers.stage import recipe_labelers

    configs = recipe_labelers(recipe_file)
    modes: list[str] = []
    for env_name in env_names:
        for labeler in build_labelers(configs, env=env_name):
            if str(labeler.mode) not in modes:
                modes.append(str(labeler.mode))
    return modes


def score_run(run_dir: PathLike, *, model: str, backend: str, recipe: str, seed: int = 0) -> Evaluation:
    """Score a labelled evaluation run directory (``labelled.jsonl``) and write its ``evaluation.json``.

    Args:
        run_dir: the evaluation's run directory.
        model, backend, recipe: recorded as they are.
        seed: the bootstrap's seed.

    Returns:
        The ``Evaluation``.
    """
    from prefbuild.io.jsonl import atomic_write_text, read_records
    from prefbuild.io.rundir import RECIPE
    from prefbuild.recipe import load_recipe
    from prefbuild.records import Trajectory

    folder = Path(run_dir)
    run_recipe = load_recipe(folder / RECIPE).recipe
    rows = [EpisodeRow.of(trajectory) for trajectory in read_records(folder / "labelled.jsonl", Trajectory)]
    if not rows:
        raise PrefbuildError(f"{folder}: no episodes to score")
    modes = deployed_modes(folder / RECIPE, [env.name for env in run_recipe.envs])
    modes += sorted({mode for row in rows for mode in row.labelled_steps} - set(modes))
    groups = group_by_task(rows)
    ks = pass_ks(groups)
    evaluation = Evaluation(
        model=model,
        backend=backend,
        recipe=recipe,
        splits=[env.split for env in run_recipe.envs],
        run_dir=str(folder),
        modes=modes,
        metrics=compute_metrics(list(groups.values()), modes, ks),
        intervals=bootstrap_intervals(groups, modes, ks, seed=seed),
        episodes=rows,
    )
    atomic_write_text(folder / EVALUATION, json.dumps(evaluation.as_dict(), indent=1) + "\n")
    return evaluation


def load_evaluation(path: PathLike) -> Evaluation:
    """An evaluation from its run directory or its ``evaluation.json``.

    Raises:
        PrefbuildError: no evaluation there, or a file that is not one.
    """
    target = Path(path)
    file = target / EVALUATION if target.is_dir() else target
    if not file.is_file():
        raise PrefbuildError(f"{target}: no {EVALUATION} (run `prefbuild eval RECIPE --model ...` first)")
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise PrefbuildError(f"{file}: not an evaluation file (not JSON: {error})") from None
    if not isinstance(data, dict):
        raise PrefbuildError(f"{file}: not an evaluation file (a JSON {type(data).__name__}, not an object)")
    try:
        return Evaluation.from_dict(data)
    except KeyError as error:
        raise PrefbuildError(f"{file}: not an evaluation file (no field {error})") from None
    except (TypeError, ValueError, AttributeError) as error:
        raise PrefbuildError(f"{file}: not an evaluation file ({error})") from None


def evaluate(
    recipe: PathLike | LoadedRecipe,
    model: str,
    *,
    backend: str | None = None,
    tasks: str = TEST,
    num_tasks: int | None = None,
    samples_per_task: int | None = None,
    overrides: Sequence[str] = (),
    out: PathLike | None = None,
    quiet: bool = True,
    teacher: Any = None,
    seed: int = 0,
) -> Evaluation:
    """Play the recipe's held-out tasks with ``model``, label every episode, score, and report.

    Args:
        recipe: the training recipe (file, bundled name or loaded).
        model: the policy: a model folder, a Hub id, ``embedded``, or a served model's name.
        backend: ``transformers``, ``vllm`` or ``openai`` (default: the recipe's teacher backend).
        tasks: ``test`` (held-out split) or an explicit split that is not the training split.
        num_tasks, samples_per_task: held-out tasks per env section and episodes per task.
        overrides: ``key=value`` overrides applied to the recipe first (e.g. ``teacher.base_urls=[...]``).
        out: the evaluation's run directory.
        quiet: no progress display.
        teacher: a ready ``Teacher`` to play with instead of building one.
        seed: the bootstrap's seed.

    Returns:
        The ``Evaluation`` (also in ``OUT/evaluation.json``, with ``OUT/report.html``).

    Example:
        >>> result = evaluate("quickstart", "embedded", num_tasks=4, out="runs/eval-base")  # doctest: +SKIP
        >>> result.metrics["success_rate"]  # doctest: +SKIP
        0.25
    """
    from prefbuild import api
    from prefbuild.io.rundir import RECIPE, trajectory_files

    loaded = api.load(recipe, overrides)
    plan = evaluation_recipe(
        loaded, model, backend=backend, tasks=tasks, num_tasks=num_tasks, samples_per_task=samples_per_task, out=out
    )
    result = api.generate(plan, out=plan.recipe.run_dir(), quiet=quiet, teacher=teacher)
    run_dir = result.run_dir
    api.label(trajectory_files(run_dir), run_dir / "labelled.jsonl", recipe=run_dir / RECIPE)
    evaluation = score_run(
        run_dir, model=model, backend=plan.recipe.teacher.backend, recipe=loaded.recipe.name, seed=seed
    )
    api.report(run_dir, run_dir / api.REPORT)
    return evaluation
