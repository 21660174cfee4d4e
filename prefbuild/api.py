"""prefbuild as a library: every stage as a plain function, and ``run`` chaining them.

This is what the command line calls, and what a notebook, a Ray task or another pipeline
calls: files in, files out, plain summaries back; nothing here prints or exits. Errors a
user can fix are ``PrefbuildError`` with a message that says what and where.

Example:
    >>> from prefbuild import api
    >>> summary = api.run("simulate", overrides=["env.num_tasks=4"], out="runs/sim-4")  # doctest: +SKIP
    >>> summary.pairs, summary.dataset  # doctest: +SKIP
    (10, PosixPath('runs/sim-4/dataset'))
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prefbuild.collector import fewer_collections
from prefbuild.errors import PrefbuildError
from prefbuild.recipe import LoadedRecipe, load_recipe
from prefbuild.rollout.generate import GenerateResult

__all__ = [
    "RunSummary",
    "compare",
    "evaluate",
    "export",
    "generate",
    "label",
    "load",
    "pair",
    "publish",
    "report",
    "run",
]

LABELLED = "labelled.jsonl"
PAIRS = "pairs.jsonl"
DATASET = "dataset"
REPORT = "report.html"

PathLike = str | os.PathLike[str]
RecipeLike = PathLike | LoadedRecipe


def load(recipe: RecipeLike, overrides: Sequence[str] = ()) -> LoadedRecipe:
    """A validated recipe from a file, a bundled recipe's name, or an already loaded one.

    Args:
        recipe: a path, a bundled name (``quickstart``), or a ``LoadedRecipe``.
        overrides: ``key=value`` strings, as ``--set`` takes them.

    Returns:
        The loaded recipe.

    Example:
        >>> load("simulate", ["env.num_tasks=2"]).recipe.envs[0].num_tasks
        2
    """
    if isinstance(recipe, LoadedRecipe):
        if overrides:
            raise PrefbuildError("overrides apply to a recipe file or name, not to an already loaded recipe")
        return recipe
    return load_recipe(recipe, overrides)


def generate(
    recipe: RecipeLike,
    *,
    overrides: Sequence[str] = (),
    out: PathLike | None = None,
    shard: str | None = None,
    limit: int | None = None,
    new: bool = False,
    quiet: bool = True,
    teacher: Any = None,
    ray: Any = None,
    keep_failed: bool = False,
) -> GenerateResult:
    """Generate (or resume) a recipe's trajectories into its run directory.

    Args:
        recipe: the recipe (see ``load``).
        overrides: ``key=value`` overrides.
        out: the run directory (default: the recipe's ``output.dir`` or ``runs/<name>``).
        shard: ``K/N`` to run one slice of the tasks.
        limit: at most this many episodes.
        new: if ``out`` belongs to another recipe, use a sibling (``out-2``...), fresh or holding this
            recipe's run.
        quiet: no progress display.
        teacher: a ready ``Teacher`` to use instead of the recipe's.
        ray: run the shards on a Ray cluster: an address (``"auto"``, ``"host:6379"``, ``"local"``
            for a local instance) or a ``prefbuild.ray.driver.RayOptions``; ``out`` may then be
            an fsspec URL.
        keep_failed: keep episodes that ended in error as they are (default: play them again,
            the failed records kept under ``trajectories/failed/``).

    Returns:
        Where the run is, what was planned and what happened (``result.stats``).

    Raises:
        RecipeError: anything the run would use cannot be built (checked before the first request).
    """
    from prefbuild.checks import check_recipe
    from prefbuild.rollout.generate import generate as generate_run

    if ray is not None:
        return _generate_on_ray(check_recipe(load(recipe, overrides), teacher_here=False), ray, out=out, shard=shard,
                                limit=limit, new=new, quiet=quiet, teacher=teacher, keep_failed=keep_failed)
    return generate_run(
        check_recipe(load(recipe, overrides), teacher_here=teacher is None), out=Path(out) if out else None,
        shard=shard, limit=limit, quiet=quiet, new=new, teacher=teacher, keep_failed=keep_failed,
    )


def _generate_on_ray(loaded: LoadedRecipe, ray: Any, *, out: PathLike | None, shard: str | None, limit: int | None,
                     new: bool, quiet: bool, teacher: Any, keep_failed: bool) -> GenerateResult:
    from prefbuild.ray.driver import RayOptions, generate_on_ray

    if shard:
        raise PrefbuildError("--ray splits the run into shards itself; drop --shard")
    if teacher is not None:
        raise PrefbuildError("--ray builds the recipe's teacher on every worker; a ready teacher cannot be passed")
    options = ray if isinstance(ray, RayOptions) else RayOptions(address=str(ray))
    return generate_on_ray(loaded, out=out, options=options, limit=limit, quiet=quiet, new=new, keep_failed=keep_failed)


def _path_list(paths: PathLike | Sequence[PathLike]) -> list[PathLike]:
    """``paths`` as a list; one path given alone (``"pairs.jsonl"``) is a list of one, not of its characters."""
    return [paths] if isinstance(paths, str | os.PathLike) else list(paths)


def _existing_record_files(paths: PathLike | Sequence[PathLike]) -> list[Path]:
    """``paths`` as paths, refusing a missing file or one without a single record (an empty input is a mistake)."""
    from prefbuild.io.jsonl import iter_lines

    files = [Path(path) for path in _path_list(paths)]
    for path in files:
        if not path.is_file():
            raise PrefbuildError(f"{path}: no such file")
        if next(iter_lines(path), None) is None:
            raise PrefbuildError(f"{path}: empty file: no records")
    return files


def label(
    inputs: PathLike | Sequence[PathLike],
    output: PathLike,
    *,
    recipe: PathLike | None = None,
    choices: Sequence[str] = (),
    fmt: str = "auto",
    model: str = "unknown",
) -> Any:
    """Label trajectory files or external agent logs into ``output`` (labels are replaced).

    Args:
        inputs: prefbuild trajectory files, AgentBench ``runs.jsonl``, chat-message logs (household,
            DBBench or tool-calling agents), tau2-bench results files, BFCL multi-turn result files or
            the slime tau2 pipeline's trajectory files.
        output: ``OUT.jsonl``, or a folder for one output file per input.
        recipe: a recipe file whose ``labelers`` section to use (default: each env's defaults).
        choices: ``labelers=loop,invalid_action`` or ``loop.k=4`` style settings.
        fmt: ``auto`` or one of ``io.sources.FORMATS`` (``prefbuild``, ``agentbench``, ``messages``,
            ``tools``, ``slime``, ``tau2``, ``bfcl``).
        model: the model name recorded on trajectories imported from external logs.

    Returns:
        ``LabelCounts``: labels and labelled trajectories per failure mode.
    """
    from prefbuild.labelers import build_labelers
    from prefbuild.labelers.stage import LabelCounts, label_files, output_plan, recipe_labelers, select_labelers

    configs = select_labelers(recipe_labelers(recipe), choices)
    try:
        labelers = build_labelers(configs, env=None)
    except (KeyError, ValueError) as error:
        if isinstance(error, PrefbuildError):
            raise
        raise PrefbuildError(str(error.args[0] if error.args else error)) from None
    counts = LabelCounts()
    files = _existing_record_files(inputs)
    with fewer_collections():
        for group, target in output_plan(files, Path(output)):
            label_files(group, target, labelers, fmt=fmt, model=model, counts=counts)
    return counts


def pair(
    trajectory_files: PathLike | Sequence[PathLike],
    output: PathLike,
    *,
    recipe: RecipeLike | None = None,
    strategies: Sequence[str] = (),
    **overrides: Any,
) -> Any:
    """Build chosen/rejected pairs from labelled trajectory files into ``output``.

    Args:
        trajectory_files: labelled trajectory JSONL files.
        output: the ``pairs.jsonl`` to write (replaced only when complete).
        recipe: whose ``pairs`` section, seed and teacher to use.
        strategies: strategy names replacing the recipe's.
        **overrides: ``max_per_reason``, ``max_per_trajectory``, ``test_fraction``, ``seed``,
            ``dedup``, ``near_dedup``, ``balance_envs``, ``max_tokens``, ``tokenizer``, ``stats_path``.

    Returns:
        ``PairCounts`` (``counts.as_dict()`` for plain data).
    """
    from prefbuild.pairs.stage import pair_files

    files = _existing_record_files(trajectory_files)
    loaded = load(recipe) if recipe is not None else None
    with fewer_collections():
        return pair_files(files, Path(output), recipe=loaded, strategies=strategies, **overrides)


def export(
    pairs_files: PathLike | Sequence[PathLike],
    out_dir: PathLike,
    formats: Sequence[str] = ("trl",),
    **options: Any,
) -> Any:
    """Export pairs (and, for ``sft``, trajectories) as a trainer-ready dataset directory.

    Args:
        pairs_files: ``pairs.jsonl`` files.
        out_dir: the output directory (replaced atomically).
        formats: registered export format names (``trl``, ``roundwise``, ``llamafactory``, ``swift``,
            ``sft``, and plug-ins).
        **options: see ``prefbuild.exports.export_dataset`` (``trajectory_files``, ``jsonl``, ``recipe``, ...).

    Returns:
        An ``ExportSummary``.
    """
    from prefbuild.exports import export_dataset

    if isinstance(formats, str):
        formats = [formats]
    if "trajectory_files" in options:
        options["trajectory_files"] = _path_list(options["trajectory_files"])
    return export_dataset(_path_list(pairs_files), out_dir, formats, **options)


def report(path: PathLike, output: PathLike, **options: Any) -> Path:
    """Write one self-contained HTML report of a run directory or a records file.

    Returns:
        The report's path.
    """
    from prefbuild.analysis.report import write_report

    return write_report(path, output, **options)


def publish(dataset_dir: PathLike, repo_id: str, **options: Any) -> Any:
    """Push a dataset directory to the Hugging Face Hub in one commit (see ``hub.publish``)."""
    from prefbuild.hub.publish import publish_dataset_dir

    return publish_dataset_dir(dataset_dir, repo_id, **options)


def evaluate(recipe: RecipeLike, model: str, **options: Any) -> Any:
    """Play a recipe's held-out tasks with ``model`` as the policy, label and score the episodes.

    Args:
        recipe: the training recipe (see ``load``); its held-out split is played, never its ``env.split``.
        model: a model folder, a Hub id, ``embedded``, or a served model's name.
        **options: ``backend``, ``tasks``, ``num_tasks``, ``samples_per_task``, ``overrides``, ``out``,
            ``quiet``, ``teacher``, ``seed`` (see ``prefbuild.eval.run.evaluate``).

    Returns:
        An ``Evaluation``: metrics, 95% bootstrap intervals and the scored episodes; its run
        directory holds ``evaluation.json`` and ``report.html``.

    Example:
        >>> result = evaluate("quickstart", "embedded", num_tasks=4, out="runs/eval-base")  # doctest: +SKIP
        >>> sorted(result.metrics)[:2]  # doctest: +SKIP
        ['format_violation_per_100_steps', 'implausible_location_per_100_steps']
    """
    from prefbuild.eval import evaluate as evaluate_policy

    return evaluate_policy(recipe, model, **options)


def compare(a: PathLike, b: PathLike, *, seed: int = 0) -> Any:
    """Two evaluations (run directories or ``evaluation.json`` files) metric by metric.

    Returns:
        ``(A, B, differences)``: each difference has A, B, B - A and its 95% bootstrap interval.
    """
    from prefbuild.eval import compare as compare_evaluations
    from prefbuild.eval import load_evaluation

    first, second = load_evaluation(a), load_evaluation(b)
    return first, second, compare_evaluations(first, second, seed=seed)


@dataclass
class RunSummary:
    """Where a run's outputs are and how it went."""

    run_dir: Path
    generated: GenerateResult
    labelled: Path
    pairs_file: Path
    pairs: int
    dataset: Path | None
    report: Path
    exit_code: int


Progress = Callable[[str], None]


def run(
    recipe: RecipeLike,
    *,
    overrides: Sequence[str] = (),
    out: PathLike | None = None,
    limit: int | None = None,
    shard: str | None = None,
    new: bool = False,
    quiet: bool = True,
    on_stage: Progress | None = None,
    ray: Any = None,
    keep_failed: bool = False,
) -> RunSummary:
    """Every stage of a recipe: generate -> label -> pair -> export -> report, in its run directory.

    Each stage is the same function a user can call alone, with the run directory's files, so
    re-running a stage by hand gives the same result. A stage that produced nothing removes its
    stale output from an earlier run (a dataset from old pairs is never left to be published).

    Args:
        recipe, overrides, out, limit, shard, new, quiet, keep_failed: as for ``generate``.
        on_stage: called with each stage's name as it starts (for a display).
        ray: as for ``generate``; labelling then runs on the cluster too (pairing and export
            stream on the driver). ``out`` must be a path every node shares.

    Returns:
        A ``RunSummary``; ``exit_code`` is 1 when any episode failed.

    Raises:
        RunDirBusy: another process is writing the run directory.
    """
    from prefbuild.io.rundir import choose_run_dir
    from prefbuild.io.runlock import writing

    loaded = load(recipe, overrides)
    if ray is not None and out is not None:
        from prefbuild.ray.storage import is_local

        if not is_local(str(out)):
            raise PrefbuildError(f"run --ray needs --out on a filesystem every node shares, not {out}; "
                                 "use `generate --ray --out URL` for object stores")
    target = choose_run_dir(loaded, Path(out) if out else loaded.recipe.run_dir(), new=new)
    with writing(target):  # one process writes a run directory, from its first episode to its report
        return _run_stages(loaded, target, limit=limit, shard=shard, new=new, quiet=quiet,
                           announce=on_stage or (lambda stage: None), ray=ray, keep_failed=keep_failed)


def _stop_if_every_episode_failed(result: Any) -> None:
    """End ``run`` after generate when every episode it played ended in an error (a teacher server that
    is not there, a wrong model name): labelling and pairing would end in "no pairs" and hide why.

    Raises:
        PrefbuildError: naming how many failed and the first error; the run directory keeps them, and
            the next run plays them again.
    """
    stats = result.stats
    if stats.done and stats.errors == stats.done:
        raise PrefbuildError(
            f"every episode this run played failed ({stats.errors} of {stats.done}), so it stops before "
            f"labelling: {stats.first_error}. Fix that and run again: failed episodes are played again"
        )


def _run_stages(loaded: LoadedRecipe, out: Path, *, limit: int | None, shard: str | None, new: bool, quiet: bool,
                announce: Progress, ray: Any, keep_failed: bool) -> RunSummary:
    """``run``'s stages, in order, into the run directory ``out`` (whose writer lock the caller holds)."""
    import shutil

    from prefbuild.io.rundir import RECIPE, read_manifest, trajectory_files, write_manifest

    announce("generate")
    if ray is not None:
        from prefbuild.ray.driver import RayOptions, connected
        from prefbuild.ray.stages import label_run_on_ray

        options = ray if isinstance(ray, RayOptions) else RayOptions(address=str(ray))
        with connected(options.address) as cluster:
            result = generate(loaded, out=out, shard=shard, limit=limit, new=new, quiet=quiet, ray=options,
                              keep_failed=keep_failed)
            _stop_if_every_episode_failed(result)
            announce("label")
            label_run_on_ray(cluster, result.run_dir)
    else:
        result = generate(loaded, out=out, shard=shard, limit=limit, new=new, quiet=quiet, keep_failed=keep_failed)
        _stop_if_every_episode_failed(result)
        announce("label")
        label(trajectory_files(result.run_dir), result.run_dir / LABELLED, recipe=result.run_dir / RECIPE)
    run_dir = result.run_dir
    recipe_file = run_dir / RECIPE
    labelled, pairs_file, dataset = run_dir / LABELLED, run_dir / PAIRS, run_dir / DATASET
    announce("pair")
    run_recipe = load(recipe_file)
    counts = pair([labelled], pairs_file, recipe=run_recipe)
    pair_count = counts.kept
    formats = tuple(loaded.recipe.output.formats)
    trajectory_formats = {"sft"}
    exported = False
    if pair_count or trajectory_formats & set(formats):
        announce("export")
        chosen = formats if pair_count else tuple(f for f in formats if f in trajectory_formats)
        export(
            [pairs_file], dataset, chosen, trajectory_files=[labelled], recipe=run_recipe.resolved_dict(),
            test_fraction=loaded.recipe.pairs.test_fraction, seed=loaded.recipe.seed,
        )
        exported = True
    elif dataset.exists():
        shutil.rmtree(dataset)  # from an earlier run whose pairs are gone: never publish it
    announce("report")
    report_path = report(run_dir, run_dir / REPORT)
    manifest = read_manifest(run_dir)
    if manifest is not None:
        manifest.counts = {**manifest.counts, "pairs": pair_count}
        stages = ["label", "pair", *(["export"] if exported else []), "report"]
        manifest.stages = [*manifest.stages, *(stage for stage in stages if stage not in manifest.stages)]
        write_manifest(run_dir, manifest)
    return RunSummary(
        run_dir=run_dir,
        generated=result,
        labelled=labelled,
        pairs_file=pairs_file,
        pairs=pair_count,
        dataset=dataset if exported else None,
        report=report_path,
        exit_code=1 if result.stats.errors else 0,
    )
