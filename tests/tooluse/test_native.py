"""Structured tool calls on the wire and in the backends: request keys, answer parsing, the
transformers backend's Hermes reading, vLLM's tool parser flags for tool recipes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prefbuild.envs import make_protocol
from prefbuild.recipe import load_recipe
from prefbuild.records import Message
from prefbuild.rollout.generate import recipe_declares_tools, teacher_settings
from prefbuild.rollout.tools import TOOL_PARSER_ARGS, turn_calls, with_tool_parser
from prefbuild.teachers.base import Completion, Sampling, TeacherRequest
from prefbuild.teachers.openai_backend import build_payload
from prefbuild.tooluse.hermes import render_tool_turn
from prefbuild.tooluse.native import response_tool_calls, tool_options, with_text_tool_calls

TOOLS = [{"type": "function", "function": {"name": "code_interpreter", "parameters": {
    "type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}}}]

# The ``message`` of a vLLM answer with ``--tool-call-parser hermes`` (two parallel calls).
VLLM_MESSAGE = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {"id": "chatcmpl-tool-a1", "type": "function",
         "function": {"name": "code_interpreter", "arguments": "{\"code\": \"print(1)\"}"}},
        {"id": "chatcmpl-tool-b2", "type": "function",
         "function": {"name": "code_interpreter", "arguments": "{\"code\": \"print(2)\"}"}},
    ],
}


def test_payload_offers_tools_and_tool_choice_only_with_tools() -> None:
    request = TeacherRequest([Message(role="user", content="hi")], Sampling(), tools=TOOLS, tool_choice="auto")
    payload = build_payload("m", request, 1, None)
    assert payload["tools"] == TOOLS and payload["tool_choice"] == "auto"
    no_tools = TeacherRequest([Message(role="user", content="hi")], Sampling(), tool_choice="auto")
    bare = build_payload("m", no_tools, 1, 0)
    assert "tools" not in bare and "tool_choice" not in bare
    assert tool_options(TOOLS, None) == {"tools": TOOLS}


def test_native_calls_parse_with_server_ids_and_feed_the_protocol_unchanged() -> None:
    calls = response_tool_calls(VLLM_MESSAGE["tool_calls"])
    assert [call.id for call in calls] == ["chatcmpl-tool-a1", "chatcmpl-tool-b2"]
    protocol = make_protocol("code", "hermes")
    parsed = protocol.parse_completion("", calls)
    action = json.loads(parsed.action)
    assert [c["id"] for c in action["tool_calls"]] == ["chatcmpl-tool-a1", "chatcmpl-tool-b2"]
    assert [c["arguments"] for c in action["tool_calls"]] == [{"code": "print(1)"}, {"code": "print(2)"}]
    assert parsed.format_ok and not parsed.final
    # The same calls written as Hermes text give the same action (ids aside).
    text_action = json.loads(protocol.parse(render_tool_turn(list(calls))).action)
    assert [c["arguments"] for c in text_action["tool_calls"]] == [c["arguments"] for c in action["tool_calls"]]
    recorded, native = turn_calls(protocol, parsed, calls)
    assert native and recorded == list(calls)


def test_servers_that_send_object_arguments_or_no_ids_are_read() -> None:
    (call,) = response_tool_calls([{"function": {"name": "f", "arguments": {"x": [1, "é"]}}}])
    assert call.id == "call_0" and json.loads(call.function.arguments) == {"x": [1, "é"]}
    with pytest.raises(ValueError, match="no function name"):
        response_tool_calls([{"function": {"arguments": "{}"}}])
    assert response_tool_calls(None) == ()


def test_text_protocols_get_native_calls_as_hermes_text() -> None:
    calls = response_tool_calls(VLLM_MESSAGE["tool_calls"][:1])
    protocol = make_protocol("household", "react")
    parsed = protocol.parse_completion("thinking", calls)
    assert parsed == protocol.parse(render_tool_turn(list(calls), content="thinking"))


def test_transformers_completions_carry_their_hermes_calls_in_text() -> None:
    text = 'Let me run it.\n<tool_call>\n{"name": "code_interpreter", "arguments": {"code": "print(1)"}}\n</tool_call>'
    completion = with_text_tool_calls(Completion(text, "stop", 3, 5, 0.1), TOOLS)
    assert completion.calls_in_text and completion.text == text
    assert completion.tool_calls[0].function.name == "code_interpreter"
    assert with_text_tool_calls(Completion(text, "stop", 3, 5, 0.1), None).tool_calls == ()


def test_vllm_gets_the_hermes_tool_parser_for_tool_recipes(tmp_path: Path) -> None:
    assert with_tool_parser(["--tool-call-parser", "qwen3_xml"]) == [
        "--tool-call-parser", "qwen3_xml", "--enable-auto-tool-choice"]
    assert with_tool_parser(with_tool_parser([])) == list(TOOL_PARSER_ARGS)
    code = load_recipe("code-interpreter").recipe
    assert recipe_declares_tools(code)
    args = teacher_settings(code, tmp_path)["launch"]["args"]
    assert args[:2] == ["--max-model-len", "32768"] and args[-3:] == list(TOOL_PARSER_ARGS)
    household = load_recipe("quickstart", ["teacher.backend=vllm", "teacher.model=some/model"]).recipe
    assert not recipe_declares_tools(household)
    assert "--enable-auto-tool-choice" not in teacher_settings(household, tmp_path)["launch"]["args"]
