"""Where shard workers put finished episodes: a folder per shard, local or behind an fsspec URL.

On a local or shared filesystem a shard is one JSONL file, appended and flushed per episode
(``JsonlWriter``: a killed worker loses only its episodes in flight, and the cut-off last
line is repaired when the retry reopens the file). Object stores cannot append, so there a
shard is a series of part objects, each written whole every ``flush_every`` episodes (and at
the end): a killed worker loses its episodes in flight and the unflushed ones of its part.

Layout under the store's root (``<run dir>/ray-shards`` by default)::

    shard-000007/episodes.jsonl        local filesystems
    shard-000007/part-<uuid>.jsonl     object stores (s3://, gs://, memory://, ...)
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fsspec
from fsspec.implementations.local import LocalFileSystem

from prefbuild.errors import PrefbuildError
from prefbuild.io.jsonl import JsonlWriter, repair_tail
from prefbuild.records import Trajectory

LOCAL_FILE = "episodes.jsonl"
SHARD_STORE = "ray-shards"  # the store's folder in a local run directory
SHARD_FOLDER = "shard-{:06d}"


def is_local(url: str) -> bool:
    """Whether ``url`` is a plain path or a ``file://`` URL.

    Example:
        >>> is_local("runs/sim"), is_local("s3://bucket/runs/sim")
        (True, False)
    """
    try:
        filesystem, _ = fsspec.core.url_to_fs(url)
    except ImportError as error:  # fsspec knows the scheme, its filesystem package is not installed
        raise PrefbuildError(f"{url}: {error} (fsspec's filesystem for this scheme, e.g. pip install s3fs)") from None
    return isinstance(filesystem, LocalFileSystem)


def local_path(url: str) -> Path:
    """The path a plain path or a ``file://`` URL names.

    Example:
        >>> str(local_path("file:///runs/sim")), str(local_path("runs/sim"))
        ('/runs/sim', 'runs/sim')
    """
    if not url.startswith("file://"):
        return Path(url)
    _, root = fsspec.core.url_to_fs(url)
    return Path(root)


class ShardStore:
    """The shards of one run under ``root`` (a path or an fsspec URL).

    Args:
        root: the store's folder.
        storage_options: passed to fsspec (credentials, ``endpoint_url``...).
        flush_every: object stores: episodes per part object.

    Example:
        >>> store = ShardStore("/tmp/run/ray-shards")
        >>> store.shard_url(7)
        '/tmp/run/ray-shards/shard-000007'
    """

    def __init__(self, root: str, storage_options: dict[str, Any] | None = None, flush_every: int = 32) -> None:
        self.root = root.rstrip("/")
        self.storage_options = dict(storage_options or {})
        self.flush_every = flush_every
        self.filesystem, self.root_path = fsspec.core.url_to_fs(self.root, **self.storage_options)
        self.local = isinstance(self.filesystem, LocalFileSystem)

    def shard_url(self, shard: int) -> str:
        return f"{self.root}/{SHARD_FOLDER.format(shard)}"

    def _shard_path(self, shard: int) -> str:
        return f"{self.root_path}/{SHARD_FOLDER.format(shard)}"

    def shards(self) -> list[int]:
        """The shards that hold anything, in order."""
        if not self.filesystem.exists(self.root_path):
            return []
        names = (path.rstrip("/").rsplit("/", 1)[-1] for path in self.filesystem.ls(self.root_path, detail=False))
        return sorted(int(name.removeprefix("shard-")) for name in names if name.startswith("shard-"))

    def files(self, shard: int) -> list[str]:
        """The shard's record files (filesystem paths), in write order for parts (names sort by time)."""
        folder = self._shard_path(shard)
        if not self.filesystem.exists(folder):
            return []
        return sorted(path for path in self.filesystem.ls(folder, detail=False) if path.endswith(".jsonl"))

    def lines(self, shard: int) -> Iterator[bytes]:
        """Every complete line the shard holds (a cut-off last line is skipped), streaming."""
        for path in self.files(shard):
            with self.filesystem.open(path, "rb") as handle:
                for line in handle:
                    if line.endswith(b"\n"):
                        yield line

    def finished_ids(self, shard: int) -> set[str]:
        """Ids of the episodes the shard already holds (what a retry skips)."""
        found: set[str] = set()
        for line in self.lines(shard):
            try:
                found.add(json.loads(line)["id"])
            except (ValueError, KeyError, TypeError, RecursionError):
                # handled: a broken line is not a finished episode: it is redone
                continue
        return found

    def append_new_episodes(self, target: Path, seen: set[str]) -> int:
        """Append to the file ``target`` every stored episode whose id is not in ``seen`` (which grows).

        A cut-off last line of ``target`` (a run killed mid-write, or mid-merge) is removed first,
        so no stored line is glued to it.

        Args:
            target: a trajectory JSONL file (created when missing).
            seen: ids already in ``target``.

        Returns:
            How many episodes were appended.
        """
        target.parent.mkdir(parents=True, exist_ok=True)
        repair_tail(target)
        added = 0
        with open(target, "ab") as handle:
            for shard in self.shards():
                for line in self.lines(shard):
                    try:
                        episode = json.loads(line)["id"]
                    except (ValueError, KeyError, TypeError, RecursionError):
                        # handled: a broken line (a killed worker's partial write) is not finished: it is redone
                        continue
                    if episode in seen:
                        continue
                    seen.add(episode)
                    handle.write(line)
                    added += 1
        return added

    def writer(self, shard: int) -> ShardWriter:
        """A writer that appends this shard's finished episodes."""
        if self.local:
            return LocalShardWriter(Path(self._shard_path(shard)) / LOCAL_FILE)
        return PartShardWriter(self.filesystem, self._shard_path(shard), self.flush_every)

    def remove(self) -> None:
        """Delete the whole store (after the driver merged it)."""
        if self.filesystem.exists(self.root_path):
            self.filesystem.rm(self.root_path, recursive=True)


class ShardWriter:
    """Appends one shard's trajectories; ``close`` makes everything written durable."""

    def write(self, trajectory: Trajectory) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> ShardWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LocalShardWriter(ShardWriter):
    """One JSONL file, flushed per episode."""

    def __init__(self, path: Path) -> None:
        self._writer = JsonlWriter(path)

    def write(self, trajectory: Trajectory) -> None:
        self._writer.write(trajectory)

    def close(self) -> None:
        self._writer.close()


class PartShardWriter(ShardWriter):
    """Part objects of ``flush_every`` episodes, each written whole (object stores cannot append)."""

    def __init__(self, filesystem: Any, folder: str, flush_every: int) -> None:
        self.filesystem = filesystem
        self.folder = folder
        self.flush_every = max(flush_every, 1)
        self._buffer: list[str] = []
        self._attempt = uuid.uuid4().hex[:12]
        self._parts = 0

    def write(self, trajectory: Trajectory) -> None:
        self._buffer.append(trajectory.model_dump_json() + "\n")
        if len(self._buffer) >= self.flush_every:
            self.flush()

    def flush(self) -> None:
        if not self._buffer:
            return
        # Names sort by attempt and then by part number, so a shard reads back in write order per attempt.
        path = f"{self.folder}/part-{self._attempt}-{self._parts:06d}.jsonl"
        self.filesystem.pipe_file(path, "".join(self._buffer).encode())
        self._parts += 1
        self._buffer.clear()

    def close(self) -> None:
        self.flush()
