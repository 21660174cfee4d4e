"""The openai teacher against a misbehaving server on loopback: every fault has a bounded, recorded outcome.

The server (tests/plugins/fault_server.py) returns 500s, hangs, drips bytes, closes the
connection mid-answer and sends bodies that are not chat completions. A transient fault is
retried and the request succeeds; a lasting one ends in one ``TeacherError`` naming the
cause, after the configured attempts, within the configured deadlines. ``asyncio.wait_for``
is the bound: a request that outlives it (the old dripping-server behaviour) fails the test.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import re
import socket

import pytest

from prefbuild.records import Message
from prefbuild.teachers.base import Completion, Sampling, TeacherError, TeacherRequest
from prefbuild.teachers.openai_backend import OpenAITeacher
from tests.plugins.fault_server import FaultServer

TIMEOUT_S = 1.0
# max_outage_s=0: these tests bound the attempts; waiting out outages is tested on its own below.
FAST = {"initial_backoff_s": 0.01, "max_backoff_s": 0.05, "cooldown_s": 0.2, "timeout_s": TIMEOUT_S, "max_outage_s": 0}

# Behaviour -> what the final error must say when it never heals.
FAULTS = {
    "status:500": "HTTP 500: injected HTTP 500",
    "status:503": "HTTP 503: injected HTTP 503",
    "status:429": "HTTP 429: injected HTTP 429",
    "hang": f"no complete answer within {TIMEOUT_S:g}s",
    "drip": f"no complete answer within {TIMEOUT_S:g}s",
    "close_mid": "ClientPayloadError",
    "reset": "ServerDisconnectedError",
    "malformed": "HTTP 200 but not a chat completion (JSONDecodeError",
    "not_chat": "HTTP 200 but not a chat completion (KeyError",
}


def ask(text: str = "hello") -> TeacherRequest:
    return TeacherRequest([Message(role="user", content=text)], Sampling(max_tokens=8))


def complete(teacher: OpenAITeacher, requests: list[TeacherRequest], bound_s: float) -> list[list[Completion]]:
    async def go() -> list[list[Completion]]:
        async with teacher:
            return await asyncio.gather(*(teacher.complete(request) for request in requests))

    async def bounded() -> list[list[Completion]]:
        return await asyncio.wait_for(go(), bound_s)

    return asyncio.run(bounded())


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_transient_fault_is_retried_and_the_request_succeeds(fault_server: FaultServer, fault: str):
    fault_server.script.extend([fault, fault])
    teacher = OpenAITeacher(fault_server.model, fault_server.base_url, max_attempts=3, **FAST)
    [[completion]] = complete(teacher, [ask()], bound_s=20)
    assert completion.text == "echo 0: hello"
    assert fault_server.behaviours() == [fault, fault, "ok"]


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_lasting_fault_ends_in_one_located_error_after_bounded_attempts(fault_server: FaultServer, fault: str):
    fault_server.default = fault
    teacher = OpenAITeacher(fault_server.model, fault_server.base_url, max_attempts=3, **FAST)
    with pytest.raises(TeacherError) as caught:
        complete(teacher, [ask()], bound_s=3 * TIMEOUT_S + 15)
    message = str(caught.value)
    assert "request failed after 3 attempts" in message
    assert FAULTS[fault] in message
    assert f"{fault_server.base_url}/chat/completions" in message
    assert fault_server.behaviours() == [fault] * 3


def test_a_dripping_server_cannot_hold_a_request_beyond_its_deadline(fault_server: FaultServer):
    # The answer is ~300 bytes at one byte per 0.5 s: 150 s if only the time between bytes was bounded.
    fault_server.default = "drip"
    teacher = OpenAITeacher(fault_server.model, fault_server.base_url, max_attempts=1, timeout_s=2.0, max_outage_s=0)
    with pytest.raises(TeacherError, match="no complete answer within 2s"):
        complete(teacher, [ask()], bound_s=10)
    assert fault_server.behaviours() == ["drip"]


def test_retries_wait_for_a_cooling_endpoint_instead_of_failing(fault_server: FaultServer, caplog):
    # Three 500s put the only endpoint into a cool-down; all 30 requests in flight must survive it.
    fault_server.script.extend(["status:500"] * 3)
    teacher = OpenAITeacher(
        fault_server.model, fault_server.base_url, concurrency=30, max_attempts=4,
        initial_backoff_s=0.01, max_backoff_s=0.05, cooldown_s=0.5,
    )
    with caplog.at_level(logging.WARNING, logger="prefbuild.teachers.endpoints"):
        results = complete(teacher, [ask(str(index)) for index in range(30)], bound_s=20)
    assert [result[0].text for result in results] == [f"echo 0: {index}" for index in range(30)]
    assert any("leaves rotation" in record.getMessage() for record in caplog.records)
    ok = [served.body["messages"][-1]["content"] for served in fault_server.served if served.behaviour == "ok"]
    assert sorted(ok, key=int) == [str(index) for index in range(30)]  # each answered once


def test_default_settings_ride_out_a_server_restart(fault_server: FaultServer):
    port = fault_server.port
    fault_server.stop()  # connection refused from now on
    restarted: list[FaultServer] = []

    async def go() -> list[list[Completion]]:
        async with OpenAITeacher(fault_server.model, f"http://127.0.0.1:{port}/v1") as teacher:
            pending = asyncio.gather(*(teacher.complete(ask(str(index))) for index in range(8)))
            await asyncio.sleep(3.0)  # every request has failed at least three times by now
            restarted.append(FaultServer(port).start())
            return await pending

    try:
        results = asyncio.run(asyncio.wait_for(go(), 60))
    finally:
        for server in restarted:
            server.stop()
    assert [result[0].text for result in results] == [f"echo 0: {index}" for index in range(8)]
    assert sorted(served.body["messages"][-1]["content"] for served in restarted[0].served) == [
        str(index) for index in range(8)
    ]


def test_a_password_in_the_base_url_is_sent_as_basic_auth_and_never_shown(fault_server: FaultServer, caplog):
    password = "pa55-word-7788"
    url = fault_server.base_url.replace("http://", f"http://alice:{password}@")
    fault_server.default = "status:500"
    teacher = OpenAITeacher(fault_server.model, url, max_attempts=3, **FAST)
    assert password not in repr(teacher) and password not in str(teacher.base_urls)
    with caplog.at_level(logging.DEBUG), pytest.raises(TeacherError) as caught:
        complete(teacher, [ask()], bound_s=20)
    assert password not in str(caught.value) and "alice" not in str(caught.value)
    assert all(password not in record.getMessage() for record in caplog.records)
    sent = fault_server.served[0].headers["authorization"]
    assert base64.b64decode(sent.removeprefix("Basic ")).decode() == f"alice:{password}"


def test_an_error_body_that_echoes_the_api_key_is_masked(fault_server: FaultServer, monkeypatch, caplog):
    key = "sk-live-0123456789abcdef"
    monkeypatch.setenv("PREFBUILD_FAULT_KEY", key)
    fault_server.default = "echo_auth"
    teacher = OpenAITeacher(fault_server.model, fault_server.base_url, api_key_env="PREFBUILD_FAULT_KEY",
                            max_attempts=2, **FAST)
    with caplog.at_level(logging.DEBUG), pytest.raises(TeacherError) as caught:
        complete(teacher, [ask()], bound_s=20)
    message = str(caught.value)
    assert "invalid credentials: Bearer ***" in message and key not in message
    assert all(key not in record.getMessage() for record in caplog.records)
    assert fault_server.served[0].headers["authorization"] == f"Bearer {key}"  # the server did see it


def outage(max_outage_s: float, back_after_s: float | None) -> tuple[list[list[Completion]] | BaseException, int]:
    """A server answers once, goes away, and (maybe) comes back on its port after ``back_after_s``."""
    first = FaultServer().start()
    port = first.port
    restarted: list[FaultServer] = []
    teacher = OpenAITeacher(first.model, first.base_url, max_attempts=2, max_outage_s=max_outage_s,
                            initial_backoff_s=0.05, max_backoff_s=0.2, cooldown_s=0.2)

    async def go() -> list[list[Completion]]:
        async with teacher:
            await teacher.complete(ask("before"))
            first.stop()
            pending = asyncio.gather(*(teacher.complete(ask(str(index))) for index in range(4)))
            if back_after_s is not None:
                await asyncio.sleep(back_after_s)
                restarted.append(FaultServer(port).start())
            return await pending

    try:
        return asyncio.run(asyncio.wait_for(go(), 30)), sum(len(server.served) for server in restarted)
    except TeacherError as error:
        return error, 0
    finally:
        for server in restarted:
            server.stop()


def test_an_outage_of_a_server_that_answered_is_waited_out_beyond_the_attempts():
    # Two attempts are used up within a second; the outage budget keeps the requests alive.
    results, served = outage(max_outage_s=20, back_after_s=2.5)
    assert not isinstance(results, BaseException), results
    assert [result[0].text for result in results] == [f"echo 0: {index}" for index in range(4)]
    assert served == 4


def test_an_outage_beyond_its_budget_ends_in_one_error_naming_it():
    error, _ = outage(max_outage_s=1.0, back_after_s=None)
    assert isinstance(error, TeacherError)
    assert re.search(r"request failed after \d+ attempts and an outage of [12]s", str(error)), str(error)


def test_a_url_that_never_answered_gets_only_its_attempts():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    teacher = OpenAITeacher("m", f"http://127.0.0.1:{port}", max_attempts=3, **{**FAST, "max_outage_s": 600})
    with pytest.raises(TeacherError, match=r"failed after 3 attempts; last error: .*Cannot connect"):
        complete(teacher, [ask()], bound_s=15)
