"""``prefbuild run``: every stage of a recipe, one after the other, over files in the run directory.

Each stage is the same command a user can run alone (`label`, `pair`, `export`, `report`),
invoked with the run directory's files, so `run` never does anything a stage command would
not do. The resolved recipe written by `generate` is what later stages read, which makes a
run directory self-describing: re-running a stage by hand gives the same result.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import click

from prefbuild.io.rundir import RECIPE, read_manifest, trajectory_files, write_manifest
from prefbuild.recipe import LoadedRecipe
from prefbuild.rollout.generate import generate, print_summary

LABELLED = "labelled.jsonl"
PAIRS = "pairs.jsonl"
DATASET = "dataset"
REPORT = "report.html"


@dataclass
class PipelineSummary:
    run_dir: Path
    pairs: int
    exit_code: int


def _count_lines(path: Path) -> int:
    with open(path, "rb") as handle:
        return sum(1 for line in handle if line.strip())


def run_pipeline(
    ctx: click.Context,
    loaded: LoadedRecipe,
    *,
    out: Path | None = None,
    limit: int | None = None,
    shard: str | None = None,
    new: bool = False,
    quiet: bool = False,
) -> PipelineSummary:
    """Generate, label, pair, export and report; returns where things are and the exit code."""
    from prefbuild.cli.analysis import report_command
    from prefbuild.cli.export import export_command
    from prefbuild.cli.label import label
    from prefbuild.cli.pair import pair_command

    result = generate(loaded, out=out, shard=shard, limit=limit, quiet=quiet, new=new)
    if not quiet:
        print_summary(result)
    run_dir = result.run_dir
    recipe_file = run_dir / RECIPE
    labelled = run_dir / LABELLED
    pairs = run_dir / PAIRS
    dataset = run_dir / DATASET
    click.secho("\nlabel", bold=True)
    ctx.invoke(label, files=tuple(trajectory_files(run_dir)), out=labelled, recipe=recipe_file)
    click.secho("\npair", bold=True)
    ctx.invoke(pair_command, trajectory_files=(labelled,), output=pairs, recipe=str(recipe_file))
    pair_count = _count_lines(pairs)
    formats = tuple(loaded.recipe.output.formats)
    exported = False
    if pair_count or "sft" in formats:
        click.secho("\nexport", bold=True)
        inputs = (pairs, labelled) if "sft" in formats else (pairs,)
        pair_formats = formats if pair_count else ("sft",)
        ctx.invoke(export_command, input_files=inputs, out_dir=dataset, formats=pair_formats,
                   recipe=str(recipe_file), test_fraction=loaded.recipe.pairs.test_fraction, seed=loaded.recipe.seed)
        exported = True
    else:
        click.secho("no pairs: nothing to export (the teacher made no labelled mistakes, or none could be paired)",
                    fg="yellow")
    click.secho("\nreport", bold=True)
    ctx.invoke(report_command, run_dir=run_dir, output=run_dir / REPORT)
    manifest = read_manifest(run_dir)
    if manifest is not None:
        manifest.counts = {**manifest.counts, "pairs": pair_count}
        stages = ["label", "pair", *(["export"] if exported else []), "report"]
        manifest.stages = [*manifest.stages, *(stage for stage in stages if stage not in manifest.stages)]
        write_manifest(run_dir, manifest)
    click.secho("\ndone", bold=True)
    click.echo(f"  run directory: {run_dir}")
    click.echo(f"  pairs:         {pairs} ({pair_count} pairs)")
    if exported:
        click.echo(f"  dataset:       {dataset}  (parquet + README.md card; load with datasets.load_dataset)")
    click.echo(f"  report:        {run_dir / REPORT}")
    click.echo(f"  inspect:       prefbuild inspect {pairs}")
    click.echo(f"                 prefbuild inspect {labelled} -n 2")
    click.echo(f"  stats:         prefbuild stats {run_dir}")
    return PipelineSummary(run_dir, pair_count, 1 if result.stats.errors else 0)
