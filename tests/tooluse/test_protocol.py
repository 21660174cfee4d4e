"""``ToolUseProtocol``: Hermes text in, JSON actions out, and back."""

from __future__ import annotations

import json
from typing import ClassVar

from prefbuild.envs.base import EnvTask
from prefbuild.records import Role, TaskInfo
from prefbuild.tooluse.actions import decode_action, encode_action
from prefbuild.tooluse.protocol import NO_TOOL_CALL_REPLY, ToolUseProtocol

TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]
TASK = EnvTask(info=TaskInfo(id="t", type="x", goal="g", split="test"))


class Demo(ToolUseProtocol):
    name: ClassVar[str] = "demo"


def test_roles_tools_and_prefix() -> None:
    protocol = Demo(TOOLS, system_prompt="You are helpful.")
    assert (protocol.turn_role(first=True), protocol.turn_role(), protocol.turn_role(unparsed_reply=True)) == (
        "user",
        "tool",
        "user",
    )
    tools = protocol.tools()
    assert tools == TOOLS and tools is not TOOLS
    tools[0]["function"]["name"] = "changed"
    assert protocol.tools() == TOOLS
    assert [(m.role, m.content) for m in protocol.prefix_messages(TASK)] == [(Role.system, "You are helpful.")]
    assert Demo(TOOLS).prefix_messages(TASK) == []


def test_parse_calls_messages_and_failures() -> None:
    protocol = Demo(TOOLS)
    parsed = protocol.parse('<think>go</think>Checking.\n<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>')
    assert parsed.format_ok and not parsed.final and parsed.thought == "go\nChecking."
    assert json.loads(parsed.action) == {"tool_calls": [{"id": "call_0", "name": "f", "arguments": {"a": 1}}]}
    answer = protocol.parse("<think>done</think>The answer is 4.")
    assert (answer.final, answer.thought, decode_action(answer.action).message) == (True, "done", "The answer is 4.")
    broken = protocol.parse("<tool_call>{nope}</tool_call>")
    assert (broken.action, broken.problems) == (None, ("tool call is not valid JSON", "no tool call"))
    assert protocol.unparsed_reply(broken) == NO_TOOL_CALL_REPLY
    assert protocol.parse("   ").problems == ("empty output",)
    repaired = protocol.parse('<tool_call>{"name": "f", "arguments": {}}')
    assert repaired.action is not None and not repaired.format_ok


def test_render_round_trips() -> None:
    protocol = Demo(TOOLS)
    parsed = protocol.parse('<tool_call>{"name": "f", "arguments": {"a": [1, "é"]}}</tool_call>')
    text = protocol.render(parsed.action, "Let me check.")
    assert text == 'Let me check.\n<tool_call>\n{"name": "f", "arguments": {"a": [1, "é"]}}\n</tool_call>'
    again = protocol.parse(text)
    assert again.format_ok and again.action == parsed.action
    assert protocol.render(encode_action(message="It is 4.")) == "It is 4."
    assert protocol.final_turn("It is 4.") == "It is 4." and protocol.final_turn() is None
