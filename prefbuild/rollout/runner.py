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
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from pathlib import Path

from prefbuild.records import Trajectory
from prefbuild.rollout.episode import EpisodeRunner
from prefbuild.rollout.plan import Episode

_ID = re.compile(rb'"id":"([^"]+)"')


async def rollout(
    episodes: Iterable[Episode], runner: EpisodeRunner, *, concurrency: int
) -> AsyncIterator[Trajectory]:
    """Run ``episodes`` with at most ``concurrency`` in flight; yield each trajectory when it finishes.

    An episode takes a slot when it starts and gives it back when its trajectory is handed to the
    caller, so at most ``concurrency`` trajectories are held at once (played or waiting to be
    written) and no more episode tasks exist than are in flight. The results queue has no bound
    (the slots bound it), so ending the rollout never waits on a queue nobody reads: a caller that
    stops (an error, Ctrl-C, ``aclose``) cancels the episodes in flight and returns at once.

    Args:
        episodes: planned episodes (consumed lazily, one per free slot).
        runner: plays one episode.
        concurrency: episodes in flight at once.

    Returns:
        An async iterator of trajectories in completion order.
    """
    slots = asyncio.Semaphore(max(concurrency, 1))
    results: asyncio.Queue[Trajectory | Exception | None] = asyncio.Queue()
    playing: set[asyncio.Task[None]] = set()
    feeder = asyncio.ensure_future(_feed(iter(episodes), runner, slots, results, playing))
    try:
        while True:
            item = await results.get()
            if item is None:
                break
            if isinstance(item, Exception):
                raise item
            slots.release()
            yield item
    finally:
        feeder.cancel()
        for task in playing:
            task.cancel()
        await asyncio.gather(feeder, *playing, return_exceptions=True)


async def _feed(
    source: Iterator[Episode],
    runner: EpisodeRunner,
    slots: asyncio.Semaphore,
    results: asyncio.Queue[Trajectory | Exception | None],
    playing: set[asyncio.Task[None]],
) -> None:
    """Start one episode task per free slot until the plan runs out, then put the end marker (``None``).

    A planning error, or one an episode task raises, goes into ``results`` for the caller to raise.
    """
    try:
        while True:
            await slots.acquire()
            episode = next(source, None)  # planning is lazy: the next episode is built when a slot frees
            if episode is None:
                break
            task = asyncio.ensure_future(_play(episode, runner, results))
            playing.add(task)
            task.add_done_callback(playing.discard)
        await asyncio.gather(*playing)
    except Exception as error:  # handled: boundary: a planning bug reaches the caller, not a silent hang
        results.put_nowait(error)
        return
    results.put_nowait(None)


async def _play(episode: Episode, runner: EpisodeRunner, results: asyncio.Queue[Trajectory | Exception | None]) -> None:
    """Play one episode into ``results``: its trajectory, or the error the runner raised (a bug in it)."""
    try:
        results.put_nowait(await runner.run(episode))
    except Exception as error:  # handled: boundary: a bug in the runner reaches the caller, not a silent hang
        results.put_nowait(error)


def order_file(path: str | os.PathLike[str], positions: Mapping[str, int]) -> bool:
    """Rewrite the trajectory file ``path`` with its lines in plan order; atomic, offsets in memory.

    Lines whose episode is not in ``positions`` (from another plan) keep their relative order
    after the planned ones. A last line without its newline (cut off by a failed or killed write)
    stays last, where the next ``JsonlWriter`` repairs it, instead of being glued to another line.
    A file already in order is left untouched.

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
            if not line.endswith(b"\n"):
                position = unplanned + 1  # only the last line can lack its newline
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
