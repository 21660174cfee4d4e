"""``prefbuild pair``: re-pair existing trajectory files.

``pair`` streams trajectory files through the strategies and post-processing of
``build_pairs`` and writes ``pairs.jsonl`` atomically (``prefbuild export``, in
``prefbuild.cli.export``, turns it into a trainer's dataset).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import click

from prefbuild.errors import PrefbuildError
from prefbuild.io.jsonl import JsonlWriter, atomic_path, atomic_write_text, read_records
from prefbuild.records import Trajectory


def _trajectories(paths: Sequence[Path]) -> Iterator[Trajectory]:
    for path in paths:
        yield from read_records(path, Trajectory)


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
