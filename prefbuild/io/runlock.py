"""One writer per run directory: an advisory lock that the OS drops when its holder dies.

``generate``, ``run`` and ``merge`` append to a run directory and rewrite its files (plan order,
failed episodes set aside, the manifest); two processes doing that at once would play every
episode twice and interleave their lines. Each takes ``writing(run_dir)`` first: an exclusive
``flock`` on ``RUN_DIR/.prefbuild.lock``, refused at once (not waited for) with the holder's pid
when another process has it. The kernel releases the lock when the holder exits in any way
(SIGKILL included), so a killed run never blocks the next one; the lock file itself stays and is
reused. Within one process the lock is re-entrant (``run`` holds it around ``generate``).
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from prefbuild.errors import PrefbuildError

logger = logging.getLogger(__name__)

LOCK_FILE = ".prefbuild.lock"


class RunDirBusy(PrefbuildError):
    """Another process (or another thread of this one) is writing the run directory."""


@dataclass
class _Held:
    descriptor: int
    thread: int
    depth: int = 1


_held: dict[Path, _Held] = {}  # resolved run directory -> the lock this process holds on it
_guard = threading.Lock()


def _holder(lock_path: Path) -> str:
    """The pid the holder wrote into the lock file, or ``unknown`` (it has not written it yet)."""
    try:
        text = lock_path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        # handled: an unreadable lock file only loses the pid in the message
        return "unknown"
    return text if text.isdigit() else "unknown"


def _busy(run_dir: Path, lock_path: Path) -> RunDirBusy:
    return RunDirBusy(
        f"{run_dir}: another prefbuild process is writing this run (pid {_holder(lock_path)}); "
        "wait for it to finish, or use another --out"
    )


def _lock(descriptor: int, run_dir: Path, lock_path: Path, mode: int) -> None:
    """``flock`` without waiting; ``RunDirBusy`` when held elsewhere. On a filesystem without
    ``flock`` (some network mounts) the run goes on unlocked, with a warning."""
    try:
        fcntl.flock(descriptor, mode | fcntl.LOCK_NB)
    except BlockingIOError:
        raise _busy(run_dir, lock_path) from None
    except OSError as error:
        logger.warning("%s: cannot lock %s (%s); two processes writing this run at once will not be noticed",
                       run_dir, LOCK_FILE, error.strerror or error)


def _acquire(run_dir: Path) -> int:
    """Open and lock ``run_dir``'s lock file exclusively and write our pid in it; its descriptor."""
    lock_path = run_dir / LOCK_FILE
    descriptor = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        _lock(descriptor, run_dir, lock_path, fcntl.LOCK_EX)
    except RunDirBusy:
        os.close(descriptor)
        raise
    try:
        os.ftruncate(descriptor, 0)
        os.write(descriptor, f"{os.getpid()}\n".encode("ascii"))
    except OSError:
        # handled: the pid only makes a refusal's message more helpful; the lock is held without it
        pass
    return descriptor


def _enter(key: Path, run_dir: Path) -> None:
    with _guard:
        held = _held.get(key)
        if held is None:
            _held[key] = _Held(_acquire(run_dir), threading.get_ident())
        elif held.thread != threading.get_ident():
            raise RunDirBusy(f"{run_dir}: another thread of this process (pid {os.getpid()}) is writing this run")
        else:
            held.depth += 1


def _leave(key: Path) -> None:
    with _guard:
        held = _held[key]
        held.depth -= 1
        if held.depth == 0:
            del _held[key]
            os.close(held.descriptor)  # closing the descriptor releases the lock


@contextmanager
def writing(run_dir: str | os.PathLike[str]) -> Iterator[Path]:
    """Hold ``run_dir``'s writer lock for the block; refuse at once when another process holds it.

    The directory is created when missing (the lock file lives in it).

    Args:
        run_dir: the run directory about to be written.

    Returns:
        A context manager yielding ``run_dir`` as a ``Path``.

    Raises:
        RunDirBusy: another process holds the lock (its pid is in the message).

    Example:
        >>> with writing("runs/simulate"):  # doctest: +SKIP
        ...     ...  # append episodes, rewrite the manifest
    """
    path = Path(run_dir)
    path.mkdir(parents=True, exist_ok=True)
    key = path.resolve()
    _enter(key, path)
    try:
        yield path
    finally:
        _leave(key)


@contextmanager
def reading(run_dir: str | os.PathLike[str]) -> Iterator[Path]:
    """Hold a shared lock on ``run_dir`` while the block reads it (``merge``'s shards): refused at once
    while a process writes it, and no writer starts until the block ends. Nothing is created: a
    directory without a lock file (read-only, or never written by this version) is read unlocked.

    Args:
        run_dir: a run directory about to be read whole.

    Returns:
        A context manager yielding ``run_dir`` as a ``Path``.

    Raises:
        RunDirBusy: a process is writing ``run_dir``.
    """
    path = Path(run_dir)
    lock_path = path / LOCK_FILE
    try:
        descriptor: int | None = os.open(lock_path, os.O_RDONLY)
    except OSError:
        descriptor = None  # handled: no lock file (or none readable here): no prefbuild writer to wait for
    if descriptor is None:
        yield path
        return
    try:
        _lock(descriptor, path, lock_path, fcntl.LOCK_SH)
        yield path
    finally:
        os.close(descriptor)
