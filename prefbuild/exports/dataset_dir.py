"""Dataset directories in the Hub's layout: parquet shards, a dataset card, the recipe.

``write_dataset_dir`` writes exactly what ``prefbuild publish`` will push: parquet shards
written by ``datasets`` under ``data/`` (``data/<config>/`` per config), a ``README.md`` card
whose YAML declares every config and split (so ``load_dataset`` works on the directory and on
the repo alike), the recipe as ``recipe.yaml``, and each export format's sidecar files (e.g.
LLaMA-Factory's ``dataset_info.json``). Formats are looked up through
``prefbuild.exports.base.get_format`` (the registry), so a plug-in format gets its sidecars and
card snippet exactly like a built-in. Everything is built in a temporary directory and renamed
into place, so a crash leaves the previous dataset intact.

A hidden ``.prefbuild-export.json`` records the record files the dataset was made from (size
and modification time); ``prefbuild publish`` refuses a dataset whose sources changed since.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prefbuild import registry
from prefbuild.analysis.stats import pair_frame, pair_stats
from prefbuild.exports.base import ExportError, get_format
from prefbuild.hub.card import (
    CARD_NAME,
    CardInfo,
    ConfigSummary,
    card_metadata,
    dump_yaml,
    render_card,
    render_card_body,
)
from prefbuild.io.jsonl import JsonlWriter, atomic_path, atomic_write_text, temporary_refused
from prefbuild.io.overwrite import check_folders_on_the_way, refuse_inputs_inside, refuse_replacing_foreign_dir
from prefbuild.io.permissions import make_shareable
from prefbuild.records import Pair

DATA_DIR = "data"
RECIPE_NAME = "recipe.yaml"
SOURCES_NAME = ".prefbuild-export.json"
DEFAULT_MAX_SHARD_BYTES = 500 * 1024 * 1024

Rows = Mapping[str, Mapping[str, Iterable[Mapping[str, Any]]]]
"""config (usually an export format name) -> split -> rows."""
Files = dict[str, dict[str, list[str]]]
"""config -> split -> files relative to the output directory."""

_CONFIG_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_SPLIT_NAME = re.compile(r"^\w+(\.\w+)*$")


@dataclass
class DatasetDirSummary:
    """What ``write_dataset_dir`` wrote."""

    path: Path
    configs: list[ConfigSummary]
    pairs: int
    files: list[str] = field(default_factory=list)

    def files_by_config(self) -> Files:
        """config -> split -> shard files."""
        return {config.name: dict(config.files) for config in self.configs}


def config_data_dir(config: str) -> str:
    """Where a config's shards live: ``data/`` for the ``default`` config, ``data/<config>/`` otherwise.

    Example:
        >>> config_data_dir("trl")
        'data/trl'
    """
    return DATA_DIR if config == "default" else f"{DATA_DIR}/{config}"


def _check_names(rows: Mapping[str, Mapping[str, Any]]) -> None:
    if not rows:
        raise ExportError("nothing to write: no configs given")
    for config, splits in rows.items():
        if not _CONFIG_NAME.match(config) or config == DATA_DIR:
            raise ExportError(f"config name {config!r} is not allowed (letters, digits, '_', '-', '.'; not 'data')")
        for split in splits:
            if not _SPLIT_NAME.match(split):
                raise ExportError(f"config {config!r}: split name {split!r} must match {_SPLIT_NAME.pattern}")


def _ordered_splits(splits: Mapping[str, Iterable[Mapping[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """Non-empty splits as lists, train / validation / test first."""
    order = {"train": 0, "validation": 1, "test": 2}
    materialised = {split: [dict(row) for row in split_rows] for split, split_rows in splits.items()}
    return {split: materialised[split] for split in sorted(materialised, key=lambda s: (order.get(s, 3), s))
            if materialised[split]}


def _write_config(
    root: Path, config: str, splits: Mapping[str, Iterable[Mapping[str, Any]]], max_shard_bytes: int
) -> tuple[ConfigSummary, Any] | None:
    """Write one config's splits as parquet shards; returns its summary and ``datasets.DatasetInfo``."""
    import datasets
    import pyarrow as pa

    materialised = _ordered_splits(splits)
    if not materialised:
        return None
    try:
        # One schema for all splits: a column that is null in one split must not change type in another.
        every_row = [row for split_rows in materialised.values() for row in split_rows]
        features = datasets.Dataset.from_list(every_row).features
        tables = {split: datasets.Dataset.from_list(split_rows, features=features)
                  for split, split_rows in materialised.items()}
    except (pa.ArrowException, TypeError, ValueError) as error:
        raise ExportError(f"config {config!r}: rows cannot be stored as one table: {error}") from None
    folder = config_data_dir(config)
    (root / folder).mkdir(parents=True, exist_ok=True)
    info = datasets.DatasetInfo(config_name=config, features=features, splits=datasets.SplitDict(),
                                download_size=0, dataset_size=0)
    files: dict[str, list[str]] = {}
    quiet = not datasets.utils.are_progress_bars_disabled()
    if quiet:
        datasets.disable_progress_bars()
    try:
        _write_shards(root, folder, tables, info, files, max_shard_bytes)
    finally:
        if quiet:
            datasets.enable_progress_bars()
    info.size_in_bytes = info.download_size + info.dataset_size
    summary = ConfigSummary(name=config, splits={s: len(d) for s, d in tables.items()}, files=files,
                            columns=list(features))
    return summary, info


def _write_shards(root: Path, folder: str, tables: Mapping[str, Any], info: Any, files: dict[str, list[str]],
                  max_shard_bytes: int) -> None:
    """Write each split in shards of at most ``max_shard_bytes`` (in memory), named as ``push_to_hub`` does."""
    import datasets

    for split, dataset in tables.items():
        num_shards = max(1, math.ceil(dataset.data.nbytes / max_shard_bytes))
        for index in range(num_shards):
            name = f"{folder}/{split}-{index:05d}-of-{num_shards:05d}.parquet"
            dataset.shard(num_shards, index, contiguous=True).to_parquet(str(root / name))
            files.setdefault(split, []).append(name)
            info.download_size += (root / name).stat().st_size
        info.splits.add(datasets.SplitInfo(name=split, num_bytes=dataset.data.nbytes, num_examples=len(dataset)))
        info.dataset_size += dataset.data.nbytes


def _swap_into_place(built: Path, target: Path) -> None:
    """Rename ``built`` to ``target``; an existing ``target`` is moved aside first and removed after."""
    old: Path | None = None
    if target.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
        old.rmdir()
        os.replace(target, old)
    try:
        os.replace(built, target)
    except OSError:
        if old is not None:
            os.replace(old, target)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def format_extras(files: Files) -> tuple[dict[str, str], dict[str, str]]:
    """``(sidecar files, card snippets)`` of the configs that are registered export formats.

    Args:
        files: config -> split -> data files, relative to the output directory.

    Returns:
        File name -> text to write at the top of the directory, and config -> card markdown.

    Raises:
        ExportError: two formats want to write the same sidecar file.
    """
    known = set(registry.names("exports"))
    sidecars: dict[str, str] = {}
    owners: dict[str, str] = {}
    snippets: dict[str, str] = {}
    for config, config_files in files.items():
        if config not in known:
            continue
        export = get_format(config)
        for name, text in export.sidecar_files(config_files).items():
            if name in owners:
                raise ExportError(f"export formats {owners[name]!r} and {config!r} both write {name}")
            owners[name] = config
            sidecars[name] = text
        snippets[config] = export.loading_snippet("<user>/<dataset>", config)
    return sidecars, snippets


def source_stamp(paths: Sequence[Path]) -> list[dict[str, Any]]:
    """Size and modification time of each source record file, to tell later whether it changed."""
    stamps = []
    for path in paths:
        stat = Path(path).stat()
        stamps.append({"path": str(Path(path).resolve()), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns})
    return stamps


def write_dataset_dir(
    out_dir: str | os.PathLike[str],
    rows: Rows,
    pairs: Iterable[Pair],
    info: CardInfo,
    *,
    default_config: str | None = None,
    max_shard_bytes: int = DEFAULT_MAX_SHARD_BYTES,
    sources: Sequence[Path] = (),
    extra_files: Mapping[str, str] | None = None,
) -> DatasetDirSummary:
    """Write a Hub-ready dataset directory: parquet shards, dataset card, recipe, format sidecars.

    Args:
        out_dir: the directory to (re)place; its parent is created if needed.
        rows: already-converted rows per config and split (``{"trl": {"train": [...], "test": [...]}}``,
            e.g. from ``prefbuild.exports.base.to_rows``). A config named like a registered export
            format gets that format's sidecar files and card snippet.
        pairs: the records the rows came from, streamed once for the card's statistics and sample.
        info: provenance for the card (``CardInfo.from_recipe``; ``with_teachers`` from the trajectories).
        default_config: the config ``load_dataset(repo)`` opens; default: the first.
        max_shard_bytes: in-memory size of one parquet shard at most.
        sources: record files the dataset was made from; ``publish`` refuses the dataset once they change.
        extra_files: more top-level files to write, name -> text (e.g. the export's ``stats.json``).

    Returns:
        A ``DatasetDirSummary`` (path, configs with rows per split, pair count, files written).

    Raises:
        ExportError: bad config or split names, rows that do not fit one table, nothing to write.

    Example:
        >>> from prefbuild.hub.card import CardInfo
        >>> info = CardInfo(pretty_name="demo")
        >>> summary = write_dataset_dir("ds", {"trl": {"train": rows}}, pairs, info)  # doctest: +SKIP
        >>> summary.files  # doctest: +SKIP
        ['README.md', 'data/trl/train-00000-of-00001.parquet']
    """
    _check_names(rows)
    target = Path(out_dir)
    if target.exists() and not target.is_dir():
        raise ExportError(f"{target}: exists and is not a directory")
    check_folders_on_the_way(target)
    # The directory is replaced whole: only an earlier export (it holds SOURCES_NAME) or an empty one.
    refuse_replacing_foreign_dir(target, marker=SOURCES_NAME, written_by="prefbuild export")
    refuse_inputs_inside(target, sources or ())
    if default_config is not None and default_config not in rows:
        raise ExportError(f"default config {default_config!r} is not among the configs {sorted(rows)}")
    default_config = default_config or next(iter(rows))
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        building = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    except OSError as error:  # a read-only or unwritable folder: the dataset, not the hidden temporary, is named
        raise temporary_refused(error, target) from None
    try:
        configs: list[ConfigSummary] = []
        dataset_infos: dict[str, Any] = {}
        for config, splits in rows.items():
            written = _write_config(building, config, splits, max_shard_bytes)
            if written is None:
                continue
            summary, dataset_info = written
            summary.default = config == default_config
            configs.append(summary)
            dataset_infos[config] = dataset_info
        if not configs:
            raise ExportError("nothing to write: every config and split is empty")
        if not any(config.default for config in configs):
            configs[0].default = True
        sample: Pair | None = None

        def keep_sample(stream: Iterable[Pair]) -> Iterable[Pair]:
            nonlocal sample
            for pair in stream:
                if sample is None or (sample.split != "train" and pair.split == "train"):
                    sample = pair
                yield pair

        stats = pair_stats(pair_frame(keep_sample(pairs)))
        sidecars, snippets = format_extras({config.name: dict(config.files) for config in configs})
        data_dirs = {config.name: config_data_dir(config.name) for config in configs}
        metadata = card_metadata(info, configs, dataset_infos, stats, data_dirs)
        body = render_card_body(info, configs, stats, sample, snippets)
        (building / CARD_NAME).write_text(render_card(metadata, body), encoding="utf-8")
        if info.recipe is not None:
            (building / RECIPE_NAME).write_text(dump_yaml(info.recipe), encoding="utf-8")
        for name, text in {**sidecars, **(extra_files or {})}.items():
            (building / name).write_text(text, encoding="utf-8")
        # Always written: it marks the directory as an export, which a later export may replace.
        (building / SOURCES_NAME).write_text(json.dumps({"sources": source_stamp(sources or [])}, indent=2) + "\n",
                                             encoding="utf-8")
        files = sorted(str(p.relative_to(building)) for p in building.rglob("*")
                       if p.is_file() and not p.name.startswith("."))
        make_shareable(building)  # mkdtemp makes it private; the dataset is an ordinary directory
        _swap_into_place(building, target)
    finally:
        if building.exists():
            shutil.rmtree(building, ignore_errors=True)
    return DatasetDirSummary(path=target, configs=configs, pairs=int(stats.get("pairs", 0)), files=files)


def write_jsonl_dir(out_dir: str | os.PathLike[str], rows: Mapping[str, Mapping[str, Sequence[Mapping[str, Any]]]]
                    ) -> Files:
    """Write ``<config>/<split>.jsonl`` files (each atomically) plus the formats' sidecar files.

    Args:
        out_dir: the output directory (created if needed; other files in it are left alone).
        rows: config -> split -> rows.

    Returns:
        config -> split -> files written, relative to ``out_dir``.

    Example:
        >>> write_jsonl_dir("lf", {"llamafactory": {"train": rows}})  # doctest: +SKIP
        {'llamafactory': {'train': ['llamafactory/train.jsonl']}}
    """
    root = Path(out_dir)
    _check_names(rows)
    check_folders_on_the_way(root)
    root.mkdir(parents=True, exist_ok=True)
    files: Files = {}
    for config, splits in rows.items():
        for split, split_rows in _ordered_splits(splits).items():
            path = root / config / f"{split}.jsonl"
            with atomic_path(path) as temporary, JsonlWriter(temporary) as writer:
                for row in split_rows:
                    writer.write(dict(row))
            files.setdefault(config, {})[split] = [path.relative_to(root).as_posix()]
    sidecars, _ = format_extras(files)
    for name, text in sidecars.items():
        atomic_write_text(root / name, text)
    for config in files:
        make_shareable(root / config)
    for name in sidecars:
        make_shareable(root / name)
    return files
