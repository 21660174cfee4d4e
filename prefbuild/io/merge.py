"""``prefbuild merge``: combine the run directories of several shards into one.

Shards of one recipe (``--shard k/n`` on several machines or GPUs) must share the recipe's
generation hash; an episode id present twice means two shards overlapped, which is refused
rather than silently deduplicated, because it usually means a mistyped ``--shard``.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
from collections.abc import Sequence
from pathlib import Path

from prefbuild.errors import PrefbuildError
from prefbuild.io.jsonl import decode_json_line, iter_lines
from prefbuild.io.rundir import (
    RECIPE,
    TRAJECTORIES,
    now,
    package_versions,
    read_manifest,
    trajectory_files,
    write_manifest,
)
from prefbuild.io.runlock import LOCK_FILE, reading, writing
from prefbuild.records import Manifest, UsageTotals
from prefbuild.rollout.runner import order_file

logger = logging.getLogger(__name__)


def _planned(source: Path, manifest: Manifest) -> int | None:
    """How many episodes the shard of ``source`` was planned to hold, when it can be told."""
    if manifest.shard is None or not (source / RECIPE).is_file():
        return None
    from prefbuild.recipe import load_recipe
    from prefbuild.rollout.plan import Shard, planned_count

    try:
        recipe = load_recipe(source / RECIPE).recipe
    except PrefbuildError as error:
        logger.warning(
            "%s: cannot tell how many episodes shard %s was planned to hold, so its completeness is not checked: %s",
            source, manifest.shard, error,
        )
        return None
    return planned_count(recipe, Shard.parse(manifest.shard))


EPISODES = "episodes.jsonl"


def _copy_episodes(source: Path, target: Path, position: int, *, into_one: bool) -> None:
    """A shard's trajectory files into ``target``: appended to one ``episodes.jsonl`` (to be put in
    plan order), or each copied as ``from-<position>-<name>`` when the plan is not known here."""
    for path in trajectory_files(source):
        if not into_one:
            shutil.copyfile(path, target / f"from-{position:03d}-{path.name}")
            continue
        with open(path, "rb") as reader, open(target / EPISODES, "ab") as writer:
            shutil.copyfileobj(reader, writer)


def _plan_positions(source: Path) -> dict[str, int] | None:
    """Episode id -> position in the whole plan of ``source``'s recipe; None when it cannot be loaded here."""
    from prefbuild.recipe import load_recipe
    from prefbuild.rollout.plan import plan_episodes

    try:
        recipe = load_recipe(source / RECIPE).recipe
    except PrefbuildError:  # handled: reported by _planned's warning; the shards' files are kept as they are
        return None
    return {episode.id: position for position, episode in enumerate(plan_episodes(recipe))}


def _missing_shards(sources: Sequence[Path], manifests: Sequence[Manifest]) -> list[str]:
    """What a set of ``--shard k/n`` run directories lacks to be one whole run: shards not given,
    and shards planned for a different number of episodes (``env.num_tasks`` changed between them)."""
    from prefbuild.rollout.plan import Shard

    shards = [(source, Shard.parse(manifest.shard)) for source, manifest in zip(sources, manifests, strict=True)
              if manifest.shard is not None]
    if not shards:
        return []
    counts = {shard.count for _, shard in shards}
    if len(counts) > 1:
        return [f"shards of {' and '.join(str(count) for count in sorted(counts))} ways given together"]
    (count,) = counts
    given = {shard.index for _, shard in shards}
    problems = [f"shard {index}/{count} not given" for index in range(count) if index not in given]
    plans = {source: _planned_total(source) for source, _ in shards}
    if len({total for total in plans.values() if total is not None}) > 1:
        sizes = ", ".join(f"{source}: {total}" for source, total in plans.items())
        problems.append(f"shards of plans of different sizes ({sizes} episodes; env.num_tasks changed?)")
    return problems


def _planned_total(source: Path) -> int | None:
    """How many episodes the whole run of ``source``'s recipe plans (all shards together), if it can be told."""
    from prefbuild.recipe import load_recipe
    from prefbuild.rollout.plan import planned_count

    try:
        return planned_count(load_recipe(source / RECIPE).recipe, None)
    except PrefbuildError:  # handled: reported by _planned's warning; completeness of this shard is not checked
        return None


def merge_run_dirs(sources: Sequence[Path], out: Path, *, allow_incomplete: bool = False) -> Manifest:
    """Copy every shard's trajectories into ``out``; returns the merged manifest.

    Counts come from the trajectory files (a shard's manifest may be stale after a killed run).
    A shard holding fewer episodes than its plan is refused, naming it, unless
    ``allow_incomplete`` (its missing episodes can be generated later by resuming it). A shard
    that a process is still writing is refused (``RunDirBusy``), and so is an ``out`` that
    another merge is writing.
    """
    if not sources:
        raise PrefbuildError("merge needs at least one run directory")
    manifests = []
    for source in sources:
        manifest = read_manifest(source)
        if manifest is None:
            raise PrefbuildError(f"{source}: not a prefbuild run directory (no manifest.json)")
        manifests.append(manifest)
    hashes = {manifest.recipe_hash for manifest in manifests}
    if len(hashes) > 1:
        pairs = zip(sources, manifests, strict=True)
        detail = ", ".join(f"{source}={manifest.recipe_hash}" for source, manifest in pairs)
        raise PrefbuildError(f"cannot merge runs of different recipes: {detail}")
    if out.exists() and any(path.name != LOCK_FILE for path in out.iterdir()):
        raise PrefbuildError(f"{out} exists and is not empty; merge writes a new run directory")
    with contextlib.ExitStack() as locks:  # no shard is being written while it is read, nor the merged run twice
        for source in sources:
            locks.enter_context(reading(source))
        locks.enter_context(writing(out))
        return _merge(sources, manifests, out, allow_incomplete=allow_incomplete)


def _merge(sources: Sequence[Path], manifests: list[Manifest], out: Path, *, allow_incomplete: bool) -> Manifest:
    """``merge_run_dirs`` once the shards are checked and locked: count, refuse overlaps, copy, write the manifest."""
    if any(path.name != LOCK_FILE for path in out.iterdir()):  # written between the check and the lock
        raise PrefbuildError(f"{out} exists and is not empty; merge writes a new run directory")
    seen: dict[str, str] = {}
    counts = {"episodes": 0, "successes": 0, "errors": 0, "steps": 0}
    incomplete: list[str] = []
    for source, manifest in zip(sources, manifests, strict=True):
        held = 0
        for path in trajectory_files(source):
            for number, text, _ in iter_lines(path):
                try:
                    record = decode_json_line(text)
                    episode = record["id"]
                    outcome = record["outcome"]
                except (ValueError, KeyError, TypeError):
                    raise PrefbuildError(f"{path}:{number}: not a trajectory line; run `prefbuild validate`") from None
                held += 1
                counts["episodes"] += 1
                counts["successes"] += int(bool(outcome.get("success")))
                counts["errors"] += int(outcome.get("stop_reason") == "error")
                counts["steps"] += len(record.get("steps") or [])
                where = f"{path}:{number}"
                if episode in seen:
                    raise PrefbuildError(
                        f"duplicate episode {episode}: {seen[episode]} and {where} (overlapping shards?)"
                    )
                seen[episode] = where
        planned = _planned(source, manifest)
        if planned is not None and held < planned:
            incomplete.append(f"{source} (shard {manifest.shard}: {held} of {planned} episodes)")
    incomplete += _missing_shards(sources, manifests)
    if incomplete and not allow_incomplete:
        raise PrefbuildError(
            "incomplete shards: " + "; ".join(incomplete)
            + ". Resume them with the same `prefbuild generate --shard` command, or merge with --allow-incomplete"
        )
    target = out / TRAJECTORIES
    target.mkdir(parents=True, exist_ok=True)
    positions = None if incomplete else _plan_positions(sources[0])
    usage = UsageTotals()
    for position, (source, manifest) in enumerate(zip(sources, manifests, strict=True)):
        _copy_episodes(source, target, position, into_one=positions is not None)
        usage.include(manifest.usage)
    if positions is not None:
        order_file(target / EPISODES, positions)  # the single-process run's file, byte for byte
    if (sources[0] / RECIPE).exists():
        shutil.copyfile(sources[0] / RECIPE, out / RECIPE)
    merged = Manifest(recipe_name=manifests[0].recipe_name, recipe_hash=manifests[0].recipe_hash, created_at=now(),
                      updated_at=now(), versions=package_versions(), counts=counts, usage=usage,
                      stages=["generate", "merge"])
    write_manifest(out, merged)
    return merged
