"""Export formats (a plug-in family) and the export stage: records in, trainer-ready dataset out.

- ``base``: the ``ExportFormat`` contract, ``get_format`` (the one registry lookup), ``to_rows``.
- ``trl``, ``roundwise``, ``llamafactory``, ``swift``, ``sft``: the built-in formats.
- ``dataset_dir``: the Hub-ready parquet directory (or JSONL files) with card and sidecars.
- ``export_dataset`` (here): the whole stage, what ``prefbuild export`` and ``prefbuild.api`` call.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prefbuild.analysis.counters import Tally
from prefbuild.analysis.passk import outcomes_by_task, pass_at_k_by_task
from prefbuild.analysis.stats import iter_pairs, iter_trajectories
from prefbuild.exports.base import ExportError, ExportFormat, format_names, get_format, to_rows
from prefbuild.exports.dataset_dir import Files, write_dataset_dir, write_jsonl_dir
from prefbuild.hub.card import CardInfo
from prefbuild.io.jsonl import atomic_write_text
from prefbuild.io.permissions import make_shareable
from prefbuild.io.rundir import is_run_dir, run_record_files, trajectory_teachers
from prefbuild.records import Pair, Trajectory

STATS_NAME = "stats.json"

__all__ = ["ExportError", "ExportFormat", "ExportSummary", "export_dataset", "format_names", "get_format", "to_rows"]


@dataclass
class ExportSummary:
    """What ``export_dataset`` wrote: rows per format and split, skipped records with why, pass@k, files.

    ``as_dict()`` is exactly what ``stats.json`` in the output directory holds.
    """

    out_dir: Path
    formats: dict[str, dict[str, Any]] = field(default_factory=dict)
    pass_at_k: dict[str, dict[str, float]] = field(default_factory=dict)
    files: Files = field(default_factory=dict)
    simulated: bool = False

    def as_dict(self) -> dict[str, Any]:
        """Plain data: ``{"formats": {fmt: {"rows": {split: n}, "skipped": {why: n}}}, "pass_at_k": ...}``."""
        result: dict[str, Any] = {"formats": self.formats}
        if self.pass_at_k:
            result["pass_at_k"] = self.pass_at_k
        return result


def _pairs(paths: Sequence[Path], duplicates: Tally) -> Iterator[Pair]:
    """Pairs of every file, each id once (a pair file concatenated twice must not train twice)."""
    seen: set[str] = set()
    for pair in iter_pairs(paths, strict=True):
        if pair.id in seen:
            duplicates.skip("duplicate_pair_id")
            continue
        seen.add(pair.id)
        yield pair


def _trajectories(paths: Sequence[Path]) -> Iterator[Trajectory]:
    return iter_trajectories(paths, strict=True)


def _format_rows(export: ExportFormat, pair_files: Sequence[Path], trajectory_files: Sequence[Path], *,
                 strict: bool, test_fraction: float, seed: int, tally: Tally) -> dict[str, list[dict[str, Any]]]:
    """One format's rows by split: pairs keep their split, trajectories are split by task id."""
    from prefbuild.pairs.postprocess import split_for

    by_split: dict[str, list[dict[str, Any]]] = {}
    if export.consumes == "pairs":
        for pair in _pairs(pair_files, tally):
            for row in to_rows([pair], export, skip_unsupported=not strict, tally=tally):
                by_split.setdefault(pair.split, []).append(row)
    else:
        for trajectory in _trajectories(trajectory_files):
            split = split_for(trajectory.task.id, test_fraction, seed)
            for row in to_rows([trajectory], export, skip_unsupported=not strict, tally=tally):
                by_split.setdefault(split, []).append(row)
    return by_split


def _card_info(recipe: Mapping[str, Any] | None, out_dir: Path, trajectory_files: Sequence[Path],
               pair_files: Sequence[Path]) -> CardInfo:
    """Provenance for the card; the teachers are read from the episodes themselves when they can be found."""
    info = CardInfo.from_recipe(dict(recipe)) if recipe is not None else CardInfo(pretty_name=out_dir.name)
    sources = list(trajectory_files)
    if not sources:  # pairs inside a run directory: its episodes say who played them
        for run_dir in dict.fromkeys(path.resolve().parent for path in pair_files):
            if is_run_dir(run_dir):
                sources += run_record_files(run_dir).trajectories
    return info.with_teachers(trajectory_teachers(sources))


def export_dataset(
    pairs_files: Sequence[str | os.PathLike[str]],
    out_dir: str | os.PathLike[str],
    formats: Sequence[str] = ("trl",),
    *,
    trajectory_files: Sequence[str | os.PathLike[str]] = (),
    jsonl: bool = False,
    recipe: Mapping[str, Any] | None = None,
    strict: bool = False,
    test_fraction: float = 0.1,
    seed: int = 0,
    ks: Sequence[int] = (1,),
) -> ExportSummary:
    """Export pairs (and, for trajectory formats such as ``sft``, episodes) as a trainer-ready dataset.

    Each format becomes one config: a parquet dataset directory with a card (default) or
    ``<format>/<split>.jsonl`` files; formats' sidecar files (LLaMA-Factory's
    ``dataset_info.json``) and ``stats.json`` are written next to the data. Pairs keep the split
    ``pair`` gave them; episodes are split by task id with ``test_fraction`` and ``seed``.

    Args:
        pairs_files: ``pairs.jsonl`` files (from ``prefbuild pair``); a pair id seen twice is exported once.
        out_dir: the output directory (replaced atomically in dataset mode).
        formats: registered export format names (``prefbuild.exports.format_names()``; plug-ins included).
        trajectory_files: trajectory files, for formats that consume trajectories.
        jsonl: write JSONL files instead of a parquet dataset directory.
        recipe: the resolved recipe as a plain dict (``LoadedRecipe.resolved_dict()``), for the card.
        strict: raise on a pair a format cannot express instead of skipping and counting it.
        test_fraction: share of task ids in the test split, for trajectory formats.
        seed: seed of that split.
        ks: pass@k budgets to report per task, for trajectory formats.

    Returns:
        An ``ExportSummary``; ``summary.as_dict()`` is also written as ``stats.json``.

    Raises:
        prefbuild.registry.UnknownPluginError: an unknown format name.
        ExportError: a format lacks its input, nothing to export, or (``strict``) an inexpressible pair.
        RecordError: a bad record or a cut-off last line, located at ``file:line``.

    Example:
        >>> pairs = ["runs/simulate/pairs.jsonl"]
        >>> summary = export_dataset(pairs, "dataset", ["trl", "llamafactory"])  # doctest: +SKIP
        >>> summary.as_dict()["formats"]["trl"]["rows"]  # doctest: +SKIP
        {'train': 19, 'test': 1}
    """
    out = Path(out_dir)
    pair_paths = [Path(p) for p in pairs_files]
    trajectory_paths = [Path(p) for p in trajectory_files]
    for path in [*pair_paths, *trajectory_paths]:
        if not path.is_file():
            raise ExportError(f"{path}: no such file")
    if not formats:
        raise ExportError("no export format given; known: " + ", ".join(format_names()))
    summary = ExportSummary(out_dir=out)
    rows: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for name in dict.fromkeys(formats):
        export = get_format(name)
        if export.consumes == "pairs" and not pair_paths:
            raise ExportError(f"the {name} format exports pairs: give pairs.jsonl files (from `prefbuild pair`)")
        if export.consumes == "trajectories" and not trajectory_paths:
            raise ExportError(f"the {name} format exports episodes: give trajectory files")
        tally = Tally()
        rows[name] = _format_rows(export, pair_paths, trajectory_paths, strict=strict,
                                  test_fraction=test_fraction, seed=seed, tally=tally)
        summary.formats[name] = {"rows": {split: len(r) for split, r in rows[name].items()},
                                 "skipped": tally.as_dict()["skipped"]}
        if export.consumes == "trajectories":
            outcomes = outcomes_by_task(_trajectories(trajectory_paths))
            summary.pass_at_k = {str(k): pass_at_k_by_task(outcomes, k) for k in ks}
    rows = {name: splits for name, splits in rows.items() if splits}
    if not rows:
        raise ExportError("nothing to export: no rows in any format")
    stats_text = json.dumps(summary.as_dict(), indent=2, sort_keys=True) + "\n"
    if jsonl:
        summary.files = write_jsonl_dir(out, rows)
        atomic_write_text(out / STATS_NAME, stats_text)
        make_shareable(out / STATS_NAME)
        return summary
    info = _card_info(recipe, out, trajectory_paths, pair_paths)
    summary.simulated = info.simulated
    written = write_dataset_dir(out, rows, _pairs(pair_paths, Tally()), info,
                                sources=[*pair_paths, *trajectory_paths], extra_files={STATS_NAME: stats_text})
    summary.files = written.files_by_config()
    return summary

