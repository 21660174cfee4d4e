"""Many episodes in flight, each written the moment it finishes; files put in plan order at close.

Why it is built this way:

* Episodes are coroutines bounded by a semaphore, so a vLLM server sees many requests at
  once (it batches them) and a new episode starts as soon as any slot frees: one long
  episode never holds back the ones behind it.
* Each trajectory is appended and flushed when it finishes, so a killed run loses only the
  episodes in flight, and memory holds only those.
* ``order_file`` rewrites a trajectory file in plan order when the run closes (offsets
  only in memory), so the same recipe with a deterministic teacher gives byte-identical
  files however the episodes interleaved, across kills and resumes too.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import AsyncIterator, Iterable, Mapping
from pathlib import Path

from prefbuild.records import Trajectory
from prefbuild.rollout.episode import EpisodeRunner
from prefbuild.rollout.plan import Episode

_ID = re.compile(rb'"id":"([^"]+)"')


async def rollout(
    episodes: Iterable[Episode], runner: EpisodeRunner, *, concurrency: int
) -> AsyncIterator[Trajectory]:
    """Run ``episodes`` with at most ``concurrency`` in flight; yield each trajectory when it finishes.

    Args:
        episodes: planned episodes (consumed lazily, one per free slot).
        runner: plays one episode.
        concurrency: episodes in flight at once.

    Returns:
        An async iterator of trajectories in completion order.
    """
    queue: asyncio.Queue[Trajectory | BaseException | None] = asyncio.Queue(maxsize=max(concurrency, 1))
    source = iter(episodes)
    lock = asyncio.Lock()

    async def worker() -> None:
        while True:
            async with lock:  # planning is lazy: one episode is built at a time
                episode = next(source, None)
            if episode is None:
                return
            await queue.put(await runner.run(episode))

    async def supervise() -> None:
        try:
            await asyncio.gather(*(worker() for _ in range(max(concurrency, 1))))
        except BaseException as error:  # a bug in the runner reaches the caller, not a silent hang
            await queue.put(error)
            raise
        finally:
            await queue.put(None)

    supervisor = asyncio.ensure_future(supervise())
    try:
        while True:
            item = await queue.get()
            if item is None:
                break
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        if not supervisor.done():
            supervisor.cancel()
        await asyncio.gather(supervisor, return_exceptions=True)


def order_file(path: str | os.PathLike[str], positions: Mapping[str, int]) -> bool:
    """Rewrite the trajectory file ``path`` with its lines in plan order; atomic, offsets in memory.

    Lines whose episode is not in ``positions`` (from another plan) keep their relative order
    after the planned ones. A file already in order is left untouched.

    Args:
        path: a trajectory JSONL file.
        positions: episode id -> plan position.

    Returns:
        Whether the file was rewritten.
    """
    path = Path(path)
    if not path.is_file():
        return False
    index: list[tuple[int, int, int, int]] = []  # (plan position or big, arrival, offset, length)
    unplanned = len(positions)
    with open(path, "rb") as handle:
        offset = 0
        for arrival, line in enumerate(handle):
            match = _ID.search(line, 0, 400)
            episode = match.group(1).decode() if match else None
            position = positions.get(episode, unplanned) if episode is not None else unplanned
            index.append((position, arrival, offset, len(line)))
            offset += len(line)
    ordered = sorted(index)
    if ordered == index:
        return False
    temporary = path.with_name(f".{path.name}.ordering")
    with open(path, "rb") as source, open(temporary, "wb") as target:
        for _, _, start, length in ordered:
            source.seek(start)
            target.write(source.read(length))
        target.flush()
        os.fsync(target.fileno())
    os.replace(temporary, path)
    return True
