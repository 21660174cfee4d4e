"""CPU the client spends per teacher request, against a loopback server that answers instantly.

A server in its own process answers every ``POST /v1/chat/completions`` at once with a
fixed chat completion, so only the client's cost shows. The request bodies are prefbuild's
real ones: the bundled quickstart recipe (household env, AgentBench protocol, its sampling
settings) is played by the scripted teacher through prefbuild's rollout and every
``TeacherRequest`` is captured, episode by episode, with the same ``Message`` objects the
rollout passes (so incremental payload building sees what it sees in a run).

Each client replays the captured episodes, ``concurrency`` episodes in flight, each one
sending its steps in order, and the script prints the client process's CPU time per
request (``time.process_time``: user + system CPU of this process only; the server's CPU
is not counted) as the median of ``--repeats`` runs, and ratios to the raw aiohttp loop
measured in the same process:

* ``prefbuild``   ``OpenAITeacher.complete`` (routing, payload, HTTP, parsing, completions)
* ``aiohttp raw`` one shared ``aiohttp.ClientSession`` posting pre-encoded bodies (the floor)
* ``httpx raw``   one shared ``httpx.AsyncClient`` posting pre-encoded bodies
* ``distilabel``  distilabel's ``OpenAILLM.agenerate`` with the same messages and sampling
                  (only when distilabel is installed: ``pip install 'prefbuild[bench]'``);
                  its pipeline machinery (processes, batching) is not counted, so this is a
                  lower bound of what a distilabel ``TextGeneration`` pipeline spends.

The whole household step (env, protocol, payload, HTTP, record) is measured by
``pipeline_cpu_per_request``: it runs the recipe through ``prefbuild generate`` against the
instant server and divides the process CPU by the number of teacher requests. It needs the
rollout's ``generate`` entry point (``GENERATE`` below names it; update it when the rollout
moves). Run with ``--pipeline`` to print that row too.

Usage: ``python bench/client_overhead.py [--episodes 64] [--repeats 3] [--pipeline]``
Figures are printed, never asserted.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import json
import multiprocessing
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import click

# The rollout entry point used to capture requests and to measure the whole pipeline:
# "module:function" taking (loaded_recipe, out=Path, quiet=True, teacher=Teacher).
GENERATE = "prefbuild.rollout.generate:generate"
RECIPE = "quickstart"
# The server answers a request with the next of these after the ones its history already holds
# (its count of assistant turns, modulo four), so every episode walks through them in turn and is
# never cut short by a repeated-output rule, whatever the interleaving of episodes.
ANSWER_TEXTS = (
    "THOUGHT: I should look around.\nACTION: look\n",
    "ACTION: inventory\n",
    "THOUGHT: The cabinet may hold it.\nACTION: go to cabinet 1\n",
    "ACTION: examine cabinet 1\n",
)


# ---------------------------------------------------------------- the instant server
def _answer(text: str) -> bytes:
    body = {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "model": "bench-model",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 900, "completion_tokens": 12, "total_tokens": 912},
    }
    data = json.dumps(body).encode()
    head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
    return head.encode() + data


class _InstantProtocol(asyncio.Protocol):
    """Minimal HTTP/1.1 keep-alive server: a request gets the canned answer after its history's last one."""

    answers = tuple(_answer(text) for text in ANSWER_TEXTS)
    models = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n' + json.dumps(
        {"object": "list", "data": [{"id": "bench-model"}]}
    ).encode().ljust(50)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.buffer = b""

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buffer[:end].decode("latin-1")
            length = 0
            for line in head.split("\r\n")[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            if len(self.buffer) < end + 4 + length:
                return
            if head.startswith("GET /v1/models"):
                reply = self.models
            else:
                body = self.buffer[end + 4 : end + 4 + length]
                turns = body.count(b'"role":"assistant"') + body.count(b'"role": "assistant"')
                reply = self.answers[turns % len(self.answers)]
            self.buffer = self.buffer[end + 4 + length :]
            self.transport.write(reply)  # type: ignore[attr-defined]


def _serve(connection: Connection) -> None:
    async def main() -> None:
        server = await asyncio.get_running_loop().create_server(_InstantProtocol, "127.0.0.1", 0, backlog=1024)
        connection.send(server.sockets[0].getsockname()[1])
        await asyncio.Event().wait()

    asyncio.run(main())


@contextmanager
def instant_server() -> Iterator[str]:
    """Run the instant OpenAI-compatible server in a child process; yields its base URL (``.../v1``).

    Example:
        >>> with instant_server() as base_url:  # doctest: +SKIP
        ...     print(base_url)
        http://127.0.0.1:40123/v1
    """
    parent, child = multiprocessing.Pipe()
    process = multiprocessing.get_context("spawn").Process(target=_serve, args=(child,), daemon=True)
    process.start()
    try:
        port = parent.recv()
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        process.join(5)


# ---------------------------------------------------------------- capturing prefbuild's requests
def _generate_function() -> Callable[..., Any]:
    module, _, name = GENERATE.partition(":")
    return getattr(importlib.import_module(module), name)


def capture_episodes(num_tasks: int) -> list[list[Any]]:
    """Every ``TeacherRequest`` prefbuild sends for ``num_tasks`` quickstart episodes, per episode in order.

    The scripted teacher plays (a simulation, so no model is needed); its requests are
    exactly the rollout's, context aside.
    """
    from prefbuild.recipe import load_recipe
    from prefbuild.simulation.scripted import ScriptedTeacher
    from prefbuild.teachers.base import Teacher, TeacherRequest

    class Capturing(Teacher):
        backend = "scripted"
        reads_env_state = True

        def __init__(self) -> None:
            self.inner = ScriptedTeacher({}, model="scripted-expert")
            self.model = self.inner.model
            self.episodes: dict[Any, list[TeacherRequest]] = {}

        async def complete(self, request: TeacherRequest) -> list[Any]:
            key = request.env_view.episode_id if request.env_view else id(request.messages[0])
            self.episodes.setdefault(key, []).append(
                TeacherRequest(request.messages, request.sampling, tools=request.tools)
            )
            return await self.inner.complete(request)

    loaded = load_recipe(RECIPE, [f"env.num_tasks={num_tasks}", "teacher.backend=scripted"])
    teacher = Capturing()
    with tempfile.TemporaryDirectory() as out:
        _generate_function()(loaded, out=Path(out) / "run", quiet=True, teacher=teacher)
    return list(teacher.episodes.values())


# ---------------------------------------------------------------- measuring
@dataclass
class Figure:
    client: str
    concurrency: int
    cpu_ms: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.cpu_ms)


async def replay(episodes: Sequence[Sequence[Any]], concurrency: int, send: Callable[[Any], Awaitable[Any]]) -> int:
    """Send every episode's requests in order, ``concurrency`` episodes at a time; returns the request count."""
    queue = list(episodes)
    sent = 0

    async def worker() -> None:
        nonlocal sent
        while queue:
            episode = queue.pop()
            for request in episode:
                await send(request)
                sent += 1

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return sent


def cpu_per_request(run: Callable[[], Awaitable[int]]) -> float:
    """CPU milliseconds of this process per request while ``run`` sends its requests."""

    async def measured() -> tuple[float, int]:
        started = time.process_time()
        count = await run()
        return time.process_time() - started, count

    seconds, count = asyncio.run(measured())
    return 1000 * seconds / max(count, 1)


def prefbuild_client(
    base_url: str, episodes: Sequence[Sequence[Any]], concurrency: int
) -> Callable[[], Awaitable[int]]:
    from prefbuild.teachers.openai_backend import OpenAITeacher

    async def run() -> int:
        async with OpenAITeacher("bench-model", base_url, concurrency=concurrency, api_key_env=None) as teacher:
            return await replay(episodes, concurrency, teacher.complete)

    return run


def _bodies(episodes: Sequence[Sequence[Any]]) -> list[list[bytes]]:
    from prefbuild.teachers.openai_backend import build_payload

    return [[json.dumps(build_payload("bench-model", r, 1, r.sampling.seed)).encode() for r in e] for e in episodes]


def aiohttp_client(base_url: str, episodes: Sequence[Sequence[Any]], concurrency: int) -> Callable[[], Awaitable[int]]:
    import aiohttp

    bodies = _bodies(episodes)
    url = f"{base_url}/chat/completions"
    headers = {"Content-Type": "application/json"}

    async def run() -> int:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:

            async def send(body: bytes) -> None:
                async with session.post(url, data=body, headers=headers) as response:
                    json.loads(await response.read())

            return await replay(bodies, concurrency, send)

    return run


def httpx_client(base_url: str, episodes: Sequence[Sequence[Any]], concurrency: int) -> Callable[[], Awaitable[int]]:
    import httpx

    bodies = _bodies(episodes)
    url = f"{base_url}/chat/completions"
    headers = {"Content-Type": "application/json"}
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)

    async def run() -> int:
        async with httpx.AsyncClient(limits=limits) as client:

            async def send(body: bytes) -> None:
                (await client.post(url, content=body, headers=headers)).json()

            return await replay(bodies, concurrency, send)

    return run


def distilabel_client(
    base_url: str, episodes: Sequence[Sequence[Any]], concurrency: int
) -> Callable[[], Awaitable[int]]:
    from distilabel.models import OpenAILLM

    conversations = [[[m.model_dump(mode="json", exclude_none=True) for m in r.messages] for r in e] for e in episodes]
    sampling = episodes[0][0].sampling
    llm = OpenAILLM(model="bench-model", base_url=base_url, api_key="none")
    llm.load()

    async def run() -> int:
        async def send(messages: list[dict[str, Any]]) -> None:
            await llm.agenerate(
                input=messages, num_generations=1, max_new_tokens=sampling.max_tokens,
                temperature=sampling.temperature, top_p=sampling.top_p,
            )

        try:
            return await replay(conversations, concurrency, send)
        finally:
            client = getattr(llm, "_aclient", None)
            if client is not None:
                await client.close()  # in this event loop, not at interpreter exit

    return run


def pipeline_cpu_per_request(base_url: str, num_tasks: int, concurrency: int) -> float:
    """CPU ms per teacher request of the whole household step: ``prefbuild generate`` on the instant server.

    Args:
        base_url: The instant server's base URL.
        num_tasks: Quickstart episodes to play.
        concurrency: Episodes in flight (``teacher.concurrency``).

    Returns:
        Process CPU milliseconds per teacher request (planning and start-up included).
    """
    from prefbuild.recipe import load_recipe
    from prefbuild.teachers.openai_backend import OpenAITeacher

    loaded = load_recipe(RECIPE, [
        f"env.num_tasks={num_tasks}", "teacher.backend=openai", "teacher.model=bench-model",
        f"teacher.base_urls=[{base_url}]", f"teacher.concurrency={concurrency}", "env.max_steps=20",
    ])
    teacher = OpenAITeacher("bench-model", base_url, concurrency=concurrency, api_key_env=None)
    with tempfile.TemporaryDirectory() as out:
        started = time.process_time()
        result = _generate_function()(loaded, out=Path(out) / "run", quiet=True, teacher=teacher)
        seconds = time.process_time() - started
    return 1000 * seconds / max(result.stats.usage.requests, 1)


CLIENTS: dict[str, Callable[..., Callable[[], Awaitable[int]]]] = {
    "aiohttp raw": aiohttp_client,
    "httpx raw": httpx_client,
    "prefbuild": prefbuild_client,
}


@click.command()
@click.option("--episodes", default=64, show_default=True, help="Quickstart episodes captured and replayed.")
@click.option("--repeats", default=3, show_default=True, help="Runs per figure (the median is printed).")
@click.option("--concurrency", "concurrencies", multiple=True, type=int, default=(16, 64), show_default=True)
@click.option("--pipeline", is_flag=True, help="Also measure the whole household step (prefbuild generate).")
def main(episodes: int, repeats: int, concurrencies: tuple[int, ...], pipeline: bool) -> None:
    """Print client CPU ms per request for prefbuild, raw aiohttp, raw httpx and distilabel."""
    captured = capture_episodes(episodes)
    requests = sum(len(episode) for episode in captured)
    click.echo(f"captured {requests} requests in {len(captured)} quickstart episodes "
               f"(mean body {statistics.mean(len(b) for e in _bodies(captured) for b in e):,.0f} bytes)")
    clients = dict(CLIENTS)
    if importlib.util.find_spec("distilabel") is not None:
        clients["distilabel"] = distilabel_client
    else:
        click.echo("distilabel is not installed: its row is skipped (pip install 'prefbuild[bench]')")
    figures: list[Figure] = []
    with instant_server() as base_url:
        cpu_per_request(aiohttp_client(base_url, captured[:4], 4))  # warm-up: imports, first connections
        for concurrency in concurrencies:
            for name, factory in clients.items():
                runs = [cpu_per_request(factory(base_url, captured, concurrency)) for _ in range(repeats)]
                figures.append(Figure(name, concurrency, runs))
            if pipeline:
                runs = [pipeline_cpu_per_request(base_url, episodes, concurrency) for _ in range(repeats)]
                figures.append(Figure("prefbuild generate (whole step)", concurrency, runs))
    click.echo(f"\n{'client':<34} {'conc':>4} {'CPU ms/req':>10} {'x aiohttp':>9} {'x prefbuild':>11}  runs")
    for figure in figures:
        same = {f.client: f.median for f in figures if f.concurrency == figure.concurrency}
        runs = " ".join(f"{value:.3f}" for value in figure.cpu_ms)
        click.echo(
            f"{figure.client:<34} {figure.concurrency:>4} {figure.median:>10.3f} "
            f"{figure.median / same['aiohttp raw']:>9.2f} {figure.median / same['prefbuild']:>11.2f}  {runs}"
        )


if __name__ == "__main__":
    main()
