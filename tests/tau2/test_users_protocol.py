"""The scripted and OpenAI-compatible users, and the tau2 protocol's prompt and tools."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("tau2")

from prefbuild.envs.tau2.env import Tau2Env
from prefbuild.envs.tau2.package import tau2_modules
from prefbuild.envs.tau2.protocol import Tau2Protocol
from prefbuild.envs.tau2.users import CONFIRMATION, requested_calls
from prefbuild.records import Role
from prefbuild.tooluse.actions import encode_action
from tests.tau2.helpers import task_by_id
from tests.teachers.fake_openai import FakeOpenAIServer

DEVICE = ("toggle_airplane_mode", "set_network_mode_preference")


def test_requested_calls_read_literals_only() -> None:
    text = "First toggle_airplane_mode(), then set_network_mode_preference(mode='4g_5g_preferred'). Thanks!"
    assert requested_calls(text, DEVICE) == [
        ("toggle_airplane_mode", {}),
        ("set_network_mode_preference", {"mode": "4g_5g_preferred"}),
    ]
    hostile = [
        "toggle_airplane_mode(x=__import__('os').system('echo hacked'))",
        "set_network_mode_preference(mode=open('/etc/passwd').read())",
        "toggle_airplane_mode(*[1])",
        "delete_everything()",
        "toggle_airplane_mode(",
    ]
    for text in hostile:
        assert requested_calls(text, DEVICE) == [], text


def test_scripted_user_opens_confirms_and_stops() -> None:
    env = Tau2Env(domain="mock")
    task = task_by_id(env, "base", "create_task_1")
    first, _ = env.reset(task)
    assert first == task.payload.task.user_scenario.instructions.strip() == task.info.goal
    question = env.step(encode_action(message="May I have your user id?"))
    assert question.observation == CONFIRMATION and not question.done
    assert question.messages[0].role is Role.user
    closing = env.step(encode_action(message="All set."))
    assert closing.done and closing.observation == "###STOP###"


def test_protocol_prefix_and_tools_are_tau2s() -> None:
    env = Tau2Env(domain="retail")
    task = next(env.tasks("test", 1, 0))
    protocol = Tau2Protocol()
    prefix = protocol.prefix_messages(task)
    environment = tau2_modules().registry.get_env_constructor("retail")()
    assert prefix[0].role is Role.system
    assert tau2_modules().agent.AGENT_INSTRUCTION in prefix[0].content and environment.get_policy() in prefix[0].content
    assert (prefix[1].role, prefix[1].content) == (Role.assistant, "Hi! How can I help you today?")
    assert protocol.tools() == [tool.openai_schema for tool in environment.get_tools()]
    with pytest.raises(ValueError, match="set up for domain 'retail'"):
        protocol.prefix_messages(next(Tau2Env(domain="mock").tasks("base", 1, 0)))


def test_protocol_round_trip_drives_the_env() -> None:
    env = Tau2Env(domain="mock")
    task = task_by_id(env, "base", "create_task_1")
    protocol = Tau2Protocol("mock")
    env.reset(task)
    text = protocol.render(env.expert_action())
    assert "<tool_call>" in text
    parsed = protocol.parse(text)
    assert parsed.format_ok and not parsed.final
    assert env.step(parsed.action).facts.tools[0].ok
    message = protocol.parse("Your task is created.")
    assert message.action is not None and not message.final  # a message goes to the customer


def test_history_task_starts_after_its_history() -> None:
    env = Tau2Env(domain="mock")
    task = task_by_id(env, "base", "update_task_with_message_history")
    prefix = Tau2Protocol().prefix_messages(task)
    assert [message.role for message in prefix] == [Role.system, Role.user, Role.assistant, Role.tool, Role.assistant]
    assert prefix[2].tool_calls[0].function.name == "create_task"
    first, _ = env.reset(task)
    assert first


class ScriptedServer(FakeOpenAIServer):
    """Answers with queued assistant messages (as the user model would), recording requests."""

    def __init__(self, replies: list[dict[str, Any]]) -> None:
        super().__init__(model="user-model")
        self.replies = replies

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        message = {"role": "assistant", "content": None, **self.replies.pop(0)}
        return {"id": "x", "object": "chat.completion", "model": self.model,
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}


def device_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"tool_calls": [{"id": "u0", "type": "function",
                            "function": {"name": name, "arguments": json.dumps(arguments)}}]}


def test_llm_user_gets_tau2s_prompt_runs_device_calls_and_stops() -> None:
    server = ScriptedServer([
        {"content": "My phone has no service."},
        device_call("check_status_bar", {}),
        {"content": "The status bar shows airplane mode."},
        {"content": "Thanks! ###STOP###"},
    ]).start()
    try:
        env = Tau2Env(domain="telecom", user={"base_url": server.base_url, "model": "user-model", "temperature": 0.7})
        task = next(env.tasks("test", 1, 0))
        first, _ = env.reset(task)
        assert first == "My phone has no service."
        system = server.requests[0]["messages"][0]
        assert system["role"] == "system" and str(task.payload.task.user_scenario) in system["content"]
        assert "###STOP###" in system["content"]
        assert server.requests[0]["messages"][1] == {"role": "user", "content": "Hi! How can I help you today?"}
        assert server.requests[0]["temperature"] == 0.7
        assert "check_status_bar" in {tool["function"]["name"] for tool in server.requests[0]["tools"]}
        reply = env.step(encode_action(message="Please check your status bar."))
        assert reply.observation == "The status bar shows airplane mode." and not reply.done
        tool_turn = server.requests[2]["messages"][-1]
        assert tool_turn["role"] == "tool" and tool_turn["tool_call_id"] == "user_2_0"
        device = [message for message in env.trajectory if message.role == "user" and message.tool_calls]
        assert device[0].tool_calls[0].requestor == "user"
        last = env.step(encode_action(message="Anything else?"))
        assert last.done and last.facts.stop == "user_stop" and "reward_info" in last.info["tau2"]
        assert last.info["tau2"]["nl_assertions"] in ("none", "not judged")
    finally:
        server.stop()


def test_llm_user_unreachable_is_a_clear_error() -> None:
    from prefbuild.envs.tau2.llm import ChatModelError

    env = Tau2Env(domain="mock", user={"base_url": "http://127.0.0.1:9", "model": "m", "timeout_s": 2})
    with pytest.raises(ChatModelError, match=r"127\.0\.0\.1:9"):
        env.reset(next(env.tasks("base", 1, 0)))


def test_llm_user_sees_the_task_history_from_its_side() -> None:
    server = ScriptedServer([{"content": "Please mark task_2 as completed."}]).start()
    try:
        env = Tau2Env(domain="mock", user={"base_url": server.base_url, "model": "user-model"})
        first, _ = env.reset(task_by_id(env, "base", "update_task_with_message_history"))
    finally:
        server.stop()
    assert first == "Please mark task_2 as completed."
    sent = server.requests[0]["messages"]
    assert [message["role"] for message in sent] == ["system", "assistant", "user"]  # roles flipped for the user
    assert sent[1]["content"] == "I need to create a task for the project review meeting."
    assert sent[2]["content"].startswith("I've created a task titled 'Project Review'")


def test_failed_device_calls_of_the_customer_end_the_conversation_at_max_errors() -> None:
    """tau2's orchestrator counts every failed tool result, the customer's device calls included, and
    ends with TOO_MANY_ERRORS (reward 0) once ``max_errors`` is reached."""
    env = Tau2Env(domain="telecom", user="scripted", max_errors=4)
    task = next(env.tasks("train", 1, 0))
    env.reset(task)
    ask = encode_action(message="Could you please run toggle_airplane_mode(bogus=1) on your phone?")
    results = [env.step(ask) for _ in range(4)]
    assert [result.done for result in results] == [False, False, False, True]
    last = results[-1]
    assert last.reward == 0.0 and not last.facts.won
    assert last.info["tau2"]["termination"] == "too_many_errors"
    failed = [m for m in env.trajectory if m.role == "tool" and m.error and m.requestor == "user"]
    assert len(failed) == 4
