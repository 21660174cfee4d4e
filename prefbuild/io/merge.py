"""``prefbuild merge``: combine the run directories of several shards into one.

Shards of one recipe (``--shard k/n`` on several machines or GPUs) must share the recipe's
generation hash; an episode id present twice means two shards overlapped, which is refused
rather than silently deduplicated, because it usually means a mistyped ``--shard``.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path

from prefbuild.errors import PrefbuildError
from prefbuild.io.jsonl import iter_lines
from prefbuild.io.rundir import (
    RECIPE,
    TRAJECTORIES,
    now,
    package_versions,
    read_manifest,
    trajectory_files,
    write_manifest,
)
from prefbuild.records import Manifest, UsageTotals


def merge_run_dirs(sources: Sequence[Path], out: Path) -> Manifest:
    """Copy every shard's trajectories into ``out``; returns the merged manifest."""
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
    if out.exists() and any(out.iterdir()):
        raise PrefbuildError(f"{out} exists and is not empty; merge writes a new run directory")
    seen: dict[str, str] = {}
    for source in sources:
        for path in trajectory_files(source):
            for number, text, _ in iter_lines(path):
                try:
                    episode = json.loads(text)["id"]
                except (ValueError, KeyError, TypeError):
                    raise PrefbuildError(f"{path}:{number}: not a trajectory line; run `prefbuild validate`") from None
                where = f"{path}:{number}"
                if episode in seen:
                    raise PrefbuildError(
                        f"duplicate episode {episode}: {seen[episode]} and {where} (overlapping shards?)"
                    )
                seen[episode] = where
    target = out / TRAJECTORIES
    target.mkdir(parents=True, exist_ok=True)
    usage = UsageTotals()
    counts: dict[str, int] = {}
    for position, (source, manifest) in enumerate(zip(sources, manifests, strict=True)):
        for path in trajectory_files(source):
            shutil.copyfile(path, target / f"from-{position:03d}-{path.name}")
        usage.requests += manifest.usage.requests
        usage.prompt_tokens += manifest.usage.prompt_tokens
        usage.completion_tokens += manifest.usage.completion_tokens
        for key, value in manifest.counts.items():
            counts[key] = counts.get(key, 0) + value
    if (sources[0] / RECIPE).exists():
        shutil.copyfile(sources[0] / RECIPE, out / RECIPE)
    merged = Manifest(recipe_name=manifests[0].recipe_name, recipe_hash=manifests[0].recipe_hash, created_at=now(),
                      updated_at=now(), versions=package_versions(), counts=counts, usage=usage,
                      stages=["generate", "merge"])
    write_manifest(out, merged)
    return merged
