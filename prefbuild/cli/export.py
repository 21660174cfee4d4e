"""``prefbuild export``: pairs (or, for trajectory formats such as ``sft``, episodes) as a trainer's dataset.

Argument parsing and display only; the work is ``prefbuild.exports.export_dataset``. Format
names are checked against the registry at run time, so an installed plug-in format is
accepted exactly like a built-in one.
"""

from __future__ import annotations

from pathlib import Path

import click

from prefbuild.cli.errors import PrefbuildCommand
from prefbuild.errors import PrefbuildError
from prefbuild.io.jsonl import detect_kind


def _check_formats(ctx: click.Context, param: click.Parameter, formats: tuple[str, ...]) -> tuple[str, ...]:
    from prefbuild.exports import format_names

    known = format_names()
    for name in formats:
        if name not in known:
            raise click.BadParameter(f"unknown export format {name!r}; known: {', '.join(known)}", ctx, param)
    return formats


def _resolved_recipe(recipe: str | None) -> dict | None:
    if recipe is None:
        return None
    from prefbuild.recipe import load_recipe

    return load_recipe(recipe).resolved_dict()


@click.command("export", cls=PrefbuildCommand)
@click.argument("input_files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("-o", "--output", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option("--format", "formats", multiple=True, default=("trl",), show_default=True, callback=_check_formats,
              help="Repeatable; each format becomes one config of the dataset (built-in: trl, roundwise, "
                   "llamafactory, swift, sft, sft_first; installed plug-in formats too).")
@click.option("--jsonl", is_flag=True,
              help="Write <format>/<split>.jsonl files instead of a parquet dataset directory.")
@click.option("--recipe", default=None, help="Recipe whose name, publish settings and provenance go on the card.")
@click.option("--strict", is_flag=True, help="Fail on a pair the format cannot express (default: skip and count it).")
@click.option("--test-fraction", type=click.FloatRange(0, 1, max_open=True), default=0.1, show_default=True,
              help="Trajectory formats (sft): share of task ids in the test split.")
@click.option("--seed", type=int, default=0, show_default=True, help="Trajectory formats (sft): seed of the split.")
@click.option("--k", "ks", type=click.IntRange(min=1), multiple=True, default=(1,), show_default=True,
              help="Trajectory formats (sft): pass@k values to report (repeatable).")
def export_command(input_files: tuple[Path, ...], out_dir: Path, formats: tuple[str, ...], jsonl: bool,
                   recipe: str | None, strict: bool, test_fraction: float, seed: int, ks: tuple[int, ...]) -> None:
    """Export pairs for a trainer: TRL, round-wise, LLaMA-Factory, ms-swift; or successful episodes for SFT.

    Pair formats read pairs.jsonl files; `sft` reads trajectory files. Pairs keep the split
    `prefbuild pair` gave them (by task id); `stats.json` in the output lists rows per
    format and split, skipped records with why, and pass@k per task for `sft`.

    \b
    Examples:
      prefbuild export runs/simulate/pairs.jsonl -o dataset --format trl --format roundwise
      prefbuild export runs/simulate/pairs.jsonl -o lf --format llamafactory --jsonl
      prefbuild export runs/simulate/labelled.jsonl -o sft --format sft --k 1 --k 4
    """
    from prefbuild.exports import export_dataset

    for path in input_files:
        if not path.is_file():
            raise PrefbuildError(f"{path}: no such file")
    kinds = {path: detect_kind(path) for path in input_files}
    summary = export_dataset(
        [p for p, kind in kinds.items() if kind == "pair"],
        out_dir,
        formats,
        trajectory_files=[p for p, kind in kinds.items() if kind == "trajectory"],
        jsonl=jsonl,
        recipe=_resolved_recipe(recipe),
        strict=strict,
        test_fraction=test_fraction,
        seed=seed,
        ks=ks,
    )
    for fmt, fmt_stats in summary.formats.items():
        skipped = f"; skipped {fmt_stats['skipped']}" if fmt_stats["skipped"] else ""
        click.echo(f"{fmt}: {fmt_stats['rows']}{skipped}")
    for k, per_task in summary.pass_at_k.items():
        if not per_task:
            click.echo(f"pass@{k}: no task has the {k} episodes it needs (generate with env.samples_per_task={k})")
            continue
        click.echo(f"pass@{k}: {sum(per_task.values()) / len(per_task):.3f} over {len(per_task)} tasks")
    if summary.simulated:
        click.echo("note: simulated data (scripted teacher); the dataset card says so")
    click.echo(f"wrote {out_dir}")
