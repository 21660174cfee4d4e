"""The JSON action string between a tool protocol and ``Env.step``."""

from __future__ import annotations

import doctest
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefbuild.records import FunctionCall, ToolCall
from prefbuild.tooluse import actions
from prefbuild.tooluse.actions import decode_action, encode_action


def _call(call_id: str, name: str, arguments: dict) -> ToolCall:
    return ToolCall(id=call_id, function=FunctionCall(name=name, arguments=json.dumps(arguments, ensure_ascii=False)))


def test_doctests() -> None:
    assert doctest.testmod(actions).failed == 0


def test_calls_round_trip_with_arguments_as_objects() -> None:
    calls = [_call("c0", "f", {"x": 1}), _call("c1", "g", {"s": "é"})]
    text = encode_action(calls)
    assert json.loads(text) == {
        "tool_calls": [
            {"id": "c0", "name": "f", "arguments": {"x": 1}},
            {"id": "c1", "name": "g", "arguments": {"s": "é"}},
        ]
    }
    decoded = decode_action(text)
    assert (decoded.calls, decoded.message, decoded.problems) == (calls, None, [])
    both = decode_action(encode_action(calls[:1], message="Running it."))
    assert (both.calls, both.message, both.has_calls) == (calls[:1], "Running it.", True)


def test_message_action() -> None:
    decoded = decode_action(encode_action(message="\\boxed{4}"))
    assert (decoded.calls, decoded.message, decoded.problems) == ([], "\\boxed{4}", [])
    assert json.loads(encode_action()) == {"message": ""}


@pytest.mark.parametrize(
    ("action", "problems", "message", "n_calls"),
    [
        ("just text", ["action is not tool-action JSON; read as a message"], "just text", 0),
        ("[1]", ["action is not tool-action JSON; read as a message"], "[1]", 0),
        ('{"tool_calls": {"name": "f"}}', ["tool_calls is not a list"], None, 0),
        (
            '{"tool_calls": [1, {"arguments": {}}]}',
            ["tool_calls[0] is not an object", "tool_calls[1].name is missing"],
            None,
            0,
        ),
        ('{"tool_calls": [{"name": "f"}], "extra": 1}', ["unknown action keys: extra"], None, 1),
        ('{"message": 3}', ["message is not a string"], "3", 0),
    ],
)
def test_broken_actions_are_problems(action: str, problems: list[str], message: str | None, n_calls: int) -> None:
    decoded = decode_action(action)
    assert (decoded.problems, decoded.message, len(decoded.calls)) == (problems, message, n_calls)


def test_missing_ids_and_string_arguments_are_kept() -> None:
    decoded = decode_action('{"tool_calls": [{"name": "f", "arguments": "{bad"}]}')
    assert (decoded.calls[0].id, decoded.calls[0].function.arguments) == ("call_0", "{bad")
    assert json.loads(encode_action(decoded.calls))["tool_calls"][0]["arguments"] == "{bad"


@settings(deadline=None, max_examples=200)
@given(
    st.text(max_size=120)
    | st.builds(
        json.dumps,
        st.dictionaries(st.sampled_from(["tool_calls", "message", "x"]), st.integers() | st.text(max_size=5)),
    )
)
def test_decode_never_raises(action: str) -> None:
    decode_action(action)
