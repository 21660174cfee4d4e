"""The pair stage over files: labelled trajectory files in, ``pairs.jsonl`` out (atomically).

Settings come from a recipe's ``pairs`` section (or its defaults) and may be overridden one
by one; a strategy that needs a teacher gets the recipe's, built only then (it may start a
server).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from prefbuild.errors import PrefbuildError
from prefbuild.io.fast_records import read_fast_records
from prefbuild.io.jsonl import JsonlWriter, atomic_path, atomic_write_text, read_records
from prefbuild.io.overwrite import refuse_inputs_as_output
from prefbuild.pairs import build_pairs, get_strategy, needs_teacher
from prefbuild.pairs.pipeline import PairCounts
from prefbuild.recipe import LoadedRecipe, PairsConfig
from prefbuild.records import Trajectory
from prefbuild.registry import is_own_class


def iter_trajectory_files(paths: Sequence[Path], *, fast: bool = False) -> Iterator[Trajectory]:
    """Every trajectory of ``paths``, streamed in order (``fast``: as structs, see ``reads_structs``)."""
    read = read_fast_records if fast else read_records
    for path in paths:
        yield from read(path, Trajectory)


def strategies_read_structs(specs: Sequence[dict[str, Any]]) -> bool:
    """Whether every strategy of ``specs`` is a built-in that takes trajectories as structs."""
    for spec in specs:
        try:
            cls = get_strategy(str(spec.get("name")))
        except Exception:  # handled: an unknown name is reported by build_pairs, as before
            return False
        if not (cls.reads_structs and is_own_class(cls)):
            return False
    return True


def pair_files(
    trajectory_files: Sequence[Path],
    output: Path,
    *,
    recipe: LoadedRecipe | None = None,
    strategies: Sequence[str] = (),
    max_per_reason: int | None = None,
    max_per_trajectory: int | None = None,
    test_fraction: float | None = None,
    seed: int | None = None,
    dedup: bool | None = None,
    near_dedup: bool | None = None,
    stats_path: Path | None = None,
    balance_envs: bool | None = None,
    max_tokens: int | None = None,
    tokenizer: str | None = None,
) -> PairCounts:
    """Build pairs from ``trajectory_files`` into ``output``.

    Args:
        trajectory_files: labelled trajectory JSONL files.
        output: the ``pairs.jsonl`` to write (replaced only when complete).
        recipe: whose ``pairs`` section, seed and teacher to use; None for the defaults.
        strategies: strategy names replacing the recipe's (with default params).
        max_per_reason, max_per_trajectory, test_fraction, seed, dedup, near_dedup, balance_envs,
            max_tokens, tokenizer: overrides.
        stats_path: where to write the counts as JSON, if anywhere.

    Returns:
        The pipeline's counts (built, kept, dropped and why, by reason and split).

    Example:
        >>> # pair_files([Path("labelled.jsonl")], Path("pairs.jsonl"))
    """
    refuse_inputs_as_output(output, trajectory_files)
    if stats_path is not None:
        refuse_inputs_as_output(stats_path, trajectory_files, option="--stats")
    config = recipe.recipe.pairs if recipe is not None else PairsConfig()
    specs: list[dict[str, Any]] = [s.model_dump() for s in config.strategies]
    if strategies:
        specs = [{"name": name, "params": {}} for name in strategies]
    teacher = None
    if any(needs_teacher(s["name"], s.get("params")) for s in specs):
        if recipe is None:
            raise PrefbuildError("a strategy here needs a teacher: pass a recipe with a `teacher` section")
        from prefbuild.rollout.generate import build_teacher

        teacher = build_teacher(recipe.recipe, output.parent)
    try:
        report = build_pairs(
            iter_trajectory_files(trajectory_files, fast=strategies_read_structs(specs)),
            specs,
            max_per_reason=max_per_reason if max_per_reason is not None else config.max_per_reason,
            max_per_trajectory=max_per_trajectory if max_per_trajectory is not None else config.max_per_trajectory,
            dedup=config.dedup if dedup is None else dedup,
            near_dedup=config.near_dedup if near_dedup is None else near_dedup,
            test_fraction=config.test_fraction if test_fraction is None else test_fraction,
            seed=(recipe.recipe.seed if recipe is not None else 0) if seed is None else seed,
            teacher=teacher,
            balance_envs=config.balance_envs if balance_envs is None else balance_envs,
            max_tokens=config.max_tokens if max_tokens is None else max_tokens,
            tokenizer=config.tokenizer if tokenizer is None else tokenizer,
        )
    except (KeyError, ValueError) as error:
        if isinstance(error, PrefbuildError):
            raise
        raise PrefbuildError(f"pairs: {error.args[0] if error.args else error}") from None
    with atomic_path(output) as temporary, JsonlWriter(temporary, flush=False) as writer:
        for pair in report.shared():  # written, not edited: no copies needed
            writer.write(pair)
    if stats_path is not None:
        atomic_write_text(stats_path, json.dumps(report.counts.as_dict(), indent=2, sort_keys=True) + "\n")
    return report.counts
