"""Labelling a large run on the cluster: Ray tasks over byte ranges of the trajectory files.

Each input file is cut into ranges at line boundaries (``chunk_ranges``); a Ray task streams
its range through the labelers into a part file next to the output; the driver concatenates
the parts in order into the output (atomically) and sums the counts. Every process holds one
trajectory at a time, so memory stays flat however many trajectories the run has, and the
output is the file ``prefbuild label`` writes on one machine, byte for byte.

Pairing and export stay on the driver: they already stream, and pairing must see every
trajectory to deduplicate and balance. Inputs must be prefbuild trajectory files on a
filesystem every node reads (the run directory of a ``--ray`` run).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prefbuild.io.jsonl import JsonlWriter, atomic_path, validation_error
from prefbuild.labelers.stage import LabelCounts
from prefbuild.records import Trajectory

Range = tuple[str, int, int]  # (file, first byte, end byte)


def chunk_ranges(paths: Sequence[Path], chunk_bytes: int) -> list[Range]:
    """Cut files into ranges of about ``chunk_bytes`` that start and end on line boundaries.

    Args:
        paths: JSONL files.
        chunk_bytes: the size to aim for.

    Returns:
        ``(path, start, end)`` ranges covering every byte once, in file order.

    Example:
        >>> chunk_ranges([], 1024)
        []
    """
    ranges: list[Range] = []
    for path in paths:
        size = os.path.getsize(path)
        start = 0
        with open(path, "rb") as handle:
            while start < size:
                handle.seek(min(start + chunk_bytes, size))
                if handle.tell() < size:
                    handle.readline()  # move to the end of the line the cut fell in
                end = handle.tell()
                ranges.append((str(path), start, end))
                start = end
    return ranges


def label_range(piece: Range, output: str, labelers_config: list[dict[str, Any]] | None) -> LabelCounts:
    """Label the trajectories of one byte range into ``output`` (a Ray task's body).

    Args:
        piece: ``(path, start, end)``.
        output: the part file to write.
        labelers_config: the recipe's ``labelers`` section (None: the env defaults).

    Returns:
        The range's counts.
    """
    from prefbuild.labelers import build_labelers, label_trajectory

    path, start, end = piece
    labelers = build_labelers(labelers_config, env=None)
    counts = LabelCounts()
    line_number = 0
    with open(path, "rb") as source, JsonlWriter(output) as writer:
        source.seek(start)
        while source.tell() < end:
            line = source.readline()
            line_number += 1
            if not line.strip():
                continue
            try:
                trajectory = Trajectory.model_validate_json(line)
            except ValueError as error:
                raise validation_error(f"{path} (byte {start}+)", line_number, error) from None
            labelled = label_trajectory(trajectory, labelers)
            counts.add(labelled)
            writer.write(labelled)
    return counts


def label_on_ray(
    ray: Any, inputs: Sequence[Path], output: Path, labelers_config: list[dict[str, Any]] | None,
    *, chunk_bytes: int = 32 << 20,
) -> LabelCounts:
    """Label trajectory files on the connected Ray cluster into ``output``.

    Args:
        ray: the connected ``ray`` module.
        inputs: prefbuild trajectory files (readable from every node).
        output: the labelled JSONL to write (replaced only when complete).
        labelers_config: the labelers section (see ``prefbuild.labelers.stage.recipe_labelers``).
        chunk_bytes: input bytes per task.

    Returns:
        The summed counts.
    """
    output = Path(output)
    parts_dir = output.with_name(f".{output.name}.parts")
    shutil.rmtree(parts_dir, ignore_errors=True)
    parts_dir.mkdir(parents=True)
    try:
        ranges = chunk_ranges(inputs, chunk_bytes)
        task = ray.remote(num_cpus=1, max_retries=3)(label_range)
        parts = [parts_dir / f"part-{index:06d}.jsonl" for index in range(len(ranges))]
        pending = [task.remote(piece, str(part), labelers_config) for piece, part in zip(ranges, parts, strict=True)]
        results = ray.get(pending)
        counts = LabelCounts()
        for result in results:
            counts.trajectories += result.trajectories
            counts.steps += result.steps
            counts.labels.update(result.labels)
            counts.trajectories_with.update(result.trajectories_with)
        with atomic_path(output) as temporary, open(temporary, "wb") as target:
            for part in parts:
                with open(part, "rb") as source:
                    shutil.copyfileobj(source, target)
        return counts
    finally:
        shutil.rmtree(parts_dir, ignore_errors=True)


def label_run_on_ray(ray: Any, run_dir: Path) -> LabelCounts:
    """``label`` of a run directory's trajectories with its recipe's labelers, on the cluster.

    Args:
        ray: the connected ``ray`` module.
        run_dir: a run directory on a filesystem every node reads.

    Returns:
        The counts; the output is ``run_dir/labelled.jsonl``.
    """
    from prefbuild.io.rundir import LABELLED, RECIPE, trajectory_files
    from prefbuild.labelers.stage import recipe_labelers

    return label_on_ray(ray, trajectory_files(run_dir), run_dir / LABELLED, recipe_labelers(run_dir / RECIPE))
