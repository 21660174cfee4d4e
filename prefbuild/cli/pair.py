"""``prefbuild pair`` and ``prefbuild export``: re-pair and re-export existing files.

``pair`` streams trajectory files through the strategies and post-processing of
``build_pairs`` and writes ``pairs.jsonl`` atomically; ``export`` turns pairs (or, for
``sft``, trajectories) into the rows a trainer loads and writes them as a Hub-ready dataset
directory (``prefbuild.hub.publish.write_dataset_dir``: parquet shards plus card) or, with
``--jsonl``, as one JSONL file per format and split.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import click

from prefbuild.errors import PrefbuildError
from prefbuild.exports.formats import (
    EXPORT_FORMATS,
    ExportStats,
    llamafactory_dataset_info,
    pass_at_k,
    sft_rows,
    to_rows,
)
from prefbuild.io.jsonl import JsonlWriter, atomic_path, atomic_write_text, detect_kind, read_records
from prefbuild.pairs.postprocess import split_for
from prefbuild.records import Pair, Trajectory


def _trajectories(paths: Sequence[Path]) -> Iterator[Trajectory]:
    for path in paths:
        yield from read_records(path, Trajectory)


def _pairs(paths: Sequence[Path]) -> Iterator[Pair]:
    for path in paths:
        yield from read_records(path, Pair)


def _load_recipe(recipe: str | None) -> Any:
    if recipe is None:
        return None
    from prefbuild.recipe import load_recipe

    return load_recipe(recipe)


def _teacher_for(loaded: Any, output: Path) -> Any:
    """The recipe's teacher, for strategies that need one (built lazily: it may start a server)."""
    if loaded is None:
        return None
    from prefbuild.rollout.generate import build_teacher

    return build_teacher(loaded.recipe, output.parent)


def _needs_teacher(strategies: Sequence[dict[str, Any]]) -> bool:
    from prefbuild.pairs import needs_teacher

    return any(needs_teacher(s["name"], s.get("params")) for s in strategies)


@click.command("pair")
@click.argument("trajectory_files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path), help="pairs.jsonl")
@click.option("--recipe", default=None, help="Recipe (file or bundled name) whose `pairs` section and seed to use.")
@click.option("--strategy", "strategy_names", multiple=True, help="Strategy name (repeatable); replaces the recipe's.")
@click.option("--max-per-reason", type=click.IntRange(min=1), default=None)
@click.option("--max-per-trajectory", type=click.IntRange(min=1), default=None)
@click.option("--test-fraction", type=click.FloatRange(0, 1, max_open=True), default=None)
@click.option("--seed", type=int, default=None)
@click.option("--dedup/--no-dedup", default=None, help="Exact dedup by content (default on).")
@click.option("--near-dedup/--no-near-dedup", default=None, help="Near-duplicate pass (default off).")
@click.option("--stats", "stats_path", type=click.Path(dir_okay=False, path_type=Path), help="Write counts as JSON.")
def pair_command(
    trajectory_files: tuple[Path, ...],
    output: Path,
    recipe: str | None,
    strategy_names: tuple[str, ...],
    max_per_reason: int | None,
    max_per_trajectory: int | None,
    test_fraction: float | None,
    seed: int | None,
    dedup: bool | None,
    near_dedup: bool | None,
    stats_path: Path | None,
) -> None:
    """Build chosen/rejected pairs from labelled trajectory files.

    Settings come from the recipe's `pairs` section (or the defaults: stepwise, dedup, 10%
    test split by task id); options override them. The output is written atomically.

    \b
    Examples:
      prefbuild pair runs/simulate/trajectories/*.jsonl -o pairs.jsonl
      prefbuild pair runs/simulate/trajectories/*.jsonl -o pairs.jsonl --strategy stepwise --strategy style
      prefbuild pair trajectories.jsonl -o pairs.jsonl --recipe simulate --max-per-reason 500
    """
    from prefbuild.pairs import build_pairs
    from prefbuild.recipe import PairsConfig

    loaded = _load_recipe(recipe)
    config = loaded.recipe.pairs if loaded is not None else PairsConfig()
    strategies = [s.model_dump() for s in config.strategies]
    if strategy_names:
        strategies = [{"name": name, "params": {}} for name in strategy_names]
    teacher = None
    if _needs_teacher(strategies):
        if loaded is None:
            raise PrefbuildError("a strategy here needs a teacher: pass --recipe with a `teacher` section")
        teacher = _teacher_for(loaded, output)
    try:
        report = build_pairs(
            _trajectories(trajectory_files),
            strategies,
            max_per_reason=max_per_reason if max_per_reason is not None else config.max_per_reason,
            max_per_trajectory=max_per_trajectory if max_per_trajectory is not None else config.max_per_trajectory,
            dedup=config.dedup if dedup is None else dedup,
            near_dedup=config.near_dedup if near_dedup is None else near_dedup,
            test_fraction=config.test_fraction if test_fraction is None else test_fraction,
            seed=(loaded.recipe.seed if loaded is not None else 0) if seed is None else seed,
            teacher=teacher,
        )
    except (KeyError, ValueError) as error:
        raise PrefbuildError(f"pairs: {error.args[0] if error.args else error}") from None
    written = 0
    with atomic_path(output) as temporary, JsonlWriter(temporary) as writer:
        for pair in report:
            writer.write(pair)
            written += 1
    counts = report.counts.as_dict()
    if stats_path is not None:
        atomic_write_text(stats_path, json.dumps(counts, indent=2, sort_keys=True) + "\n")
    click.echo(f"{output}: {written} pairs from {counts['trajectories']} trajectories")
    click.echo(f"  built {counts['built']}; by reason {counts['by_reason']}; by split {counts['by_split']}")
    click.echo(
        f"  duplicates {counts['duplicates']}, near-duplicates {counts['near_duplicates']}, "
        f"capped per trajectory {counts['capped_per_trajectory']}, balanced out {counts['balanced_out']}"
    )
    if counts["invalid"]:
        click.echo(f"  invalid {counts['invalid']}")
    if counts["dropped"]:
        click.echo(f"  not paired {counts['dropped']}")


def _split_rows(rows: Iterator[tuple[str, dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    by_split: dict[str, list[dict[str, Any]]] = {}
    for split, row in rows:
        by_split.setdefault(split, []).append(row)
    return by_split


def _pair_rows(paths: Sequence[Path], fmt: str, strict: bool, stats: ExportStats) -> dict[str, list[dict[str, Any]]]:
    def tagged() -> Iterator[tuple[str, dict[str, Any]]]:
        for pair in _pairs(paths):
            for row in to_rows([pair], fmt, skip_unsupported=not strict, stats=stats):
                yield pair.split, row

    return _split_rows(tagged())


def _sft_rows(paths: Sequence[Path], test_fraction: float, seed: int, stats: ExportStats) -> dict[str, list[Any]]:
    def tagged() -> Iterator[tuple[str, dict[str, Any]]]:
        for trajectory in _trajectories(paths):
            for row in sft_rows([trajectory], stats=stats):
                yield split_for(trajectory.task.id, test_fraction, seed), row

    return _split_rows(tagged())


Files = dict[str, dict[str, list[str]]]  # format -> split -> files relative to the output directory


def _write_jsonl(out_dir: Path, rows: dict[str, dict[str, list[dict[str, Any]]]]) -> Files:
    files: Files = {}
    for fmt, splits in rows.items():
        for split, split_rows in splits.items():
            path = out_dir / fmt / f"{split}.jsonl"
            with atomic_path(path) as temporary, JsonlWriter(temporary) as writer:
                for row in split_rows:
                    writer.write(row)
            files.setdefault(fmt, {})[split] = [str(path.relative_to(out_dir))]
    return files


def _llamafactory_info(files: dict[str, list[str]]) -> dict[str, Any]:
    """One ``dataset_info.json`` entry per split; a split in several shards is named by its folder."""
    info: dict[str, Any] = {}
    for split, split_files in files.items():
        file_name = split_files[0] if len(split_files) == 1 else str(Path(split_files[0]).parent)
        info.update(llamafactory_dataset_info(f"prefbuild_{split}", file_name))
    return info


@click.command("export")
@click.argument("input_files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("-o", "--output", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--format",
    "formats",
    multiple=True,
    type=click.Choice(EXPORT_FORMATS),
    default=("trl",),
    show_default=True,
    help="Repeatable; each format becomes one config of the dataset.",
)
@click.option(
    "--jsonl", is_flag=True, help="Write <format>/<split>.jsonl files instead of a parquet dataset directory."
)
@click.option("--recipe", default=None, help="Recipe whose name, publish settings and provenance go on the card.")
@click.option("--strict", is_flag=True, help="Fail on a pair the format cannot express (default: skip and count it).")
@click.option(
    "--test-fraction",
    type=click.FloatRange(0, 1, max_open=True),
    default=0.1,
    show_default=True,
    help="sft only: share of task ids in the test split.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="sft only: seed of the split.")
@click.option(
    "--k",
    "ks",
    type=click.IntRange(min=1),
    multiple=True,
    default=(1,),
    show_default=True,
    help="sft only: pass@k values to report (repeatable).",
)
def export_command(
    input_files: tuple[Path, ...],
    out_dir: Path,
    formats: tuple[str, ...],
    jsonl: bool,
    recipe: str | None,
    strict: bool,
    test_fraction: float,
    seed: int,
    ks: tuple[int, ...],
) -> None:
    """Export pairs for a trainer: TRL, round-wise, LLaMA-Factory, ms-swift; or successful episodes for SFT.

    Pair formats read pairs.jsonl files; `sft` reads trajectory files. Pairs keep the split
    `prefbuild pair` gave them (by task id); `stats.json` in the output lists rows per
    format and split, skipped records with why, and pass@k per task for `sft`.

    \b
    Examples:
      prefbuild export runs/simulate/pairs.jsonl -o dataset --format trl --format roundwise
      prefbuild export pairs.jsonl -o lf --format llamafactory --jsonl
      prefbuild export runs/simulate/trajectories/*.jsonl -o sft --format sft --k 1 --k 4
    """
    kinds = {path: detect_kind(path) for path in input_files}
    pair_files = [p for p, kind in kinds.items() if kind == "pair"]
    trajectory_files = [p for p, kind in kinds.items() if kind == "trajectory"]
    rows: dict[str, dict[str, list[dict[str, Any]]]] = {}
    stats: dict[str, Any] = {"formats": {}}
    for fmt in formats:
        export_stats = ExportStats()
        if fmt == "sft":
            if not trajectory_files:
                raise PrefbuildError("--format sft exports successful episodes: give trajectory files")
            rows[fmt] = _sft_rows(trajectory_files, test_fraction, seed, export_stats)
            stats["pass_at_k"] = {str(k): pass_at_k(_trajectories(trajectory_files), k) for k in ks}
        else:
            if not pair_files:
                raise PrefbuildError(f"--format {fmt} exports pairs: give pairs.jsonl files (from `prefbuild pair`)")
            rows[fmt] = _pair_rows(pair_files, fmt, strict, export_stats)
        stats["formats"][fmt] = {
            "rows": {split: len(split_rows) for split, split_rows in rows[fmt].items()},
            "skipped": dict(export_stats.skipped),
        }
    if not any(rows.values()):
        raise PrefbuildError("nothing to export: no rows in any format")
    rows = {fmt: splits for fmt, splits in rows.items() if splits}
    if jsonl:
        out_dir.mkdir(parents=True, exist_ok=True)
        files = _write_jsonl(out_dir, rows)
    else:
        files = _write_dataset_dir(out_dir, rows, pair_files, recipe)
    if "llamafactory" in files:
        info = _llamafactory_info(files["llamafactory"])
        atomic_write_text(out_dir / "dataset_info.json", json.dumps(info, indent=2) + "\n")
    atomic_write_text(out_dir / "stats.json", json.dumps(stats, indent=2, sort_keys=True) + "\n")
    for fmt, fmt_stats in stats["formats"].items():
        skipped = f"; skipped {fmt_stats['skipped']}" if fmt_stats["skipped"] else ""
        click.echo(f"{fmt}: {fmt_stats['rows']}{skipped}")
    for k, per_task in stats.get("pass_at_k", {}).items():
        mean = sum(per_task.values()) / len(per_task) if per_task else float("nan")
        click.echo(f"pass@{k}: {mean:.3f} over {len(per_task)} tasks")
    click.echo(f"wrote {out_dir}")


def _write_dataset_dir(
    out_dir: Path, rows: dict[str, dict[str, list[dict[str, Any]]]], pair_files: Sequence[Path], recipe: str | None
) -> Files:
    """The Hub-ready directory (parquet shards and card) through ``prefbuild.hub.publish``."""
    from prefbuild.hub.card import CardInfo
    from prefbuild.hub.publish import write_dataset_dir

    loaded = _load_recipe(recipe)
    info = CardInfo.from_recipe(loaded.resolved_dict()) if loaded is not None else CardInfo(pretty_name=out_dir.name)
    summary = write_dataset_dir(out_dir, rows, _pairs(pair_files), info)
    return {config.name: dict(config.files) for config in summary.configs}
