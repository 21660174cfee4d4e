"""Checking calls against JSON Schemas (the real ``jsonschema`` library) and running handlers."""

from __future__ import annotations

import doctest
import json
from typing import Any

import pytest

from prefbuild.records import FunctionCall, Role, ToolCall
from prefbuild.tooluse import dispatch
from prefbuild.tooluse.dispatch import ToolBox, ToolError, ToolOutput, joined_observation, run_calls

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "add",
            "description": "Add two integers.",
            "parameters": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"],
                "additionalProperties": False,
            },
        },
    },
    {"type": "function", "function": {"name": "fail", "parameters": {"type": "object", "properties": {}}}},
    {"type": "function", "function": {"name": "crash", "parameters": {"type": "object", "properties": {}}}},
]


def _handlers() -> dict[str, Any]:
    def fail(arguments: dict[str, Any]) -> str:
        raise ToolError("Error: the disk is full; try a smaller file", hinted=True)

    return {
        "add": lambda arguments: str(arguments["a"] + arguments["b"]),
        "fail": fail,
        "crash": lambda arguments: ToolOutput(text="Traceback ... ZeroDivisionError", error="ZeroDivisionError"),
    }


def _call(name: str, arguments: str | dict, call_id: str = "c0") -> ToolCall:
    encoded = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return ToolCall(id=call_id, function=FunctionCall(name=name, arguments=encoded))


def test_doctests() -> None:
    assert doctest.testmod(dispatch).failed == 0


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (_call("add", {"a": 1, "b": 2}), None),
        (_call("add", {"a": 1}), "arguments: 'b' is a required property"),
        (_call("add", {"a": 1, "b": "2"}), "argument 'b': '2' is not of type 'integer'"),
        (
            _call("add", {"a": 1, "b": 2, "c": 3}),
            "arguments: Additional properties are not allowed ('c' was unexpected)",
        ),
        (_call("add", "{oops"), "arguments of 'add' are not valid JSON"),
        (_call("add", "[1, 2]"), "arguments of 'add' are not a JSON object"),
        (_call("mul", {"a": 1}), "unknown tool 'mul'; available tools: add, fail, crash"),
    ],
)
def test_check(call: ToolCall, error: str | None) -> None:
    assert ToolBox(TOOLS).check(call)[1] == error


def test_run_calls_builds_tool_messages_and_facts() -> None:
    calls = [
        _call("add", {"a": 2, "b": 3}, "c0"),
        _call("add", {"a": 2}, "c1"),
        _call("fail", {}, "c2"),
        _call("crash", {}, "c3"),
        _call("mul", {}, "c4"),
    ]
    replies = run_calls(calls, ToolBox(TOOLS), _handlers())
    assert [reply.message.role for reply in replies] == [Role.tool] * 5
    assert [reply.message.tool_call_id for reply in replies] == ["c0", "c1", "c2", "c3", "c4"]
    assert [reply.message.name for reply in replies] == ["add", "add", "fail", "crash", "mul"]
    assert replies[0].message.content == "5"
    assert replies[1].message.content == "Error: arguments: 'b' is a required property"
    assert [(fact.ok, fact.hinted) for fact in (reply.facts for reply in replies)] == [
        (True, False),
        (False, False),
        (False, True),
        (False, False),
        (False, False),
    ]
    assert replies[0].facts.arguments == {"a": 2, "b": 3}
    assert replies[3].facts.error == "ZeroDivisionError"
    assert joined_observation(replies[:1]) == "5"
    assert joined_observation(replies[:2]).startswith("[add] 5\n\n[add] Error:")


def test_a_broken_schema_is_reported_by_jsonschema() -> None:
    box = ToolBox([{"type": "function", "function": {"name": "f", "parameters": {"type": "no-such-type"}}}])
    with pytest.raises(Exception, match="no-such-type"):
        box.check(_call("f", {}))
