"""Hermes tool-call text: every tolerated form, parallel calls, and render/parse round trips."""

from __future__ import annotations

import doctest
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefbuild.tooluse import hermes
from prefbuild.tooluse.hermes import parse_tool_turn, render_tool_turn

CLEAN = '<tool_call>\n{"name": "code_interpreter", "arguments": {"code": "print(1)"}}\n</tool_call>'


def _calls(text: str) -> list[tuple[str, dict]]:
    return [(call.function.name, json.loads(call.function.arguments)) for call in parse_tool_turn(text).calls]


def test_doctests() -> None:
    assert doctest.testmod(hermes).failed == 0


@pytest.mark.parametrize(
    ("text", "calls", "problems", "normalized"),
    [
        (CLEAN, [("code_interpreter", {"code": "print(1)"})], [], []),
        (
            '<tool_call>{"name": "f", "arguments": {"x": 1}}',
            [("f", {"x": 1})],
            ["unclosed <tool_call>"],
            ["unclosed <tool_call>"],
        ),
        (
            '<tool_call>\n```json\n{"name": "f", "arguments": {"x": 1}}\n```\n</tool_call>',
            [("f", {"x": 1})],
            ["markdown fence"],
            ["markdown fence"],
        ),
        (
            '```json\n{"name": "f", "arguments": {}}\n```',
            [("f", {})],
            ["tool call without <tool_call> tags"],
            ["bare JSON tool call"],
        ),
        (
            '<tool_call>{"name": "f", "arguments": "{\\"x\\": [1, 2]}"}</tool_call>',
            [("f", {"x": [1, 2]})],
            [],
            ["arguments given as a JSON string"],
        ),
        (
            '<tool_call>{"name": "f", "parameters": {"x": 1}}</tool_call>',
            [("f", {"x": 1})],
            [],
            ["'parameters' read as 'arguments'"],
        ),
        ('<tool_call>{"name": "f"}</tool_call>', [("f", {})], [], ["missing arguments read as {}"]),
        ("<tool_call>{not json}</tool_call>", [], ["tool call is not valid JSON"], []),
        ("<tool_call>[1, 2]</tool_call>", [], ["tool call is not a JSON object"], []),
        ('<tool_call>{"arguments": {}}</tool_call>', [], ["tool call without a name"], []),
        ('<tool_call>{"name": "f", "arguments": "look"}</tool_call>', [], ["arguments of 'f' are not valid JSON"], []),
        ('<tool_call>{"name": "f", "arguments": [1]}</tool_call>', [], ["arguments of 'f' are not a JSON object"], []),
        ("The answer is \\boxed{4}.", [], [], []),
        (
            '<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>\n'
            '<tool_call>{"name": "g", "arguments": {"y": "é"}}</tool_call>',
            [("f", {"x": 1}), ("g", {"y": "é"})],
            [],
            [],
        ),
        (
            '<tool_call>{broken}</tool_call><tool_call>{"name": "g", "arguments": {}}</tool_call>',
            [("g", {})],
            ["tool call is not valid JSON"],
            [],
        ),
    ],
)
def test_parse_forms(text: str, calls: list, problems: list[str], normalized: list[str]) -> None:
    turn = parse_tool_turn(text)
    assert (_calls(text), turn.problems, turn.normalized) == (calls, problems, normalized)


def test_parallel_calls_get_positional_ids_and_content_and_thought_are_split() -> None:
    text = (
        "<think>\nTwo checks at once.\n</think>\n\nLet me run both.\n"
        '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>\n<tool_call>\n{"name": "g", "arguments": {}}\n'
        "</tool_call>"
    )
    turn = parse_tool_turn(text, id_prefix="t3_")
    assert [call.id for call in turn.calls] == ["t3_0", "t3_1"]
    assert (turn.thought, turn.content) == ("Two checks at once.", "Let me run both.")
    opened_by_template = parse_tool_turn("plan</think>\nanswer 4")
    assert (opened_by_template.thought, opened_by_template.content, opened_by_template.calls) == (
        "plan",
        "answer 4",
        [],
    )


def test_render_matches_the_qwen3_template_layout() -> None:
    # Qwen3's template: content, a newline before the first call only when there is content,
    # a newline between calls, arguments as compact-separator JSON without ASCII escaping.
    calls = [{"name": "f", "arguments": {"code": "print('π')"}}, {"name": "g", "arguments": '{"n":1}'}]
    assert render_tool_turn(calls) == (
        '<tool_call>\n{"name": "f", "arguments": {"code": "print(\'π\')"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "g", "arguments": {"n": 1}}\n</tool_call>'
    )
    assert render_tool_turn(calls[:1], content="Checking.").startswith("Checking.\n<tool_call>\n")
    assert render_tool_turn([], content="Done.") == "Done."


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=8,
)


@settings(deadline=None, max_examples=150)
@given(
    calls=st.lists(
        st.tuples(
            st.from_regex(r"[A-Za-z_][A-Za-z0-9_.-]{0,20}", fullmatch=True),
            st.dictionaries(st.text(max_size=10), json_values, max_size=4),
        ),
        min_size=1,
        max_size=3,
    ),
    content=st.none() | st.text(alphabet=st.characters(blacklist_characters="<{}`"), max_size=40),
)
def test_render_then_parse_gives_back_the_calls(calls: list[tuple[str, dict]], content: str | None) -> None:
    text = render_tool_turn([{"name": name, "arguments": arguments} for name, arguments in calls], content=content)
    turn = parse_tool_turn(text)
    assert turn.problems == [] and turn.normalized == []
    assert [(call.function.name, json.loads(call.function.arguments)) for call in turn.calls] == calls
    assert turn.content == (content or "").strip() or turn.thought is not None


@settings(deadline=None, max_examples=200)
@given(
    text=st.text(max_size=200)
    | st.sampled_from(["<tool_call>", "<tool_call></tool_call>", "</think>", "<think>", '{"name": 1}', "```"])
)
def test_parse_never_raises(text: str) -> None:
    turn = parse_tool_turn(text)
    for call in turn.calls:
        assert isinstance(json.loads(call.function.arguments), dict)


def test_tags_inside_string_arguments_do_not_cut_the_call() -> None:
    code = 'print("</tool_call>")\nprint("<think>x</think>")'
    text = "<think>ok</think>\n" + render_tool_turn([{"name": "code_interpreter", "arguments": {"code": code}}])
    turn = parse_tool_turn(text)
    assert (turn.thought, turn.problems) == ("ok", [])
    assert json.loads(turn.calls[0].function.arguments) == {"code": code}


def test_fences_around_the_calls_are_a_problem() -> None:
    turn = parse_tool_turn("```\n" + CLEAN + "\n```")
    assert (turn.content, turn.problems, len(turn.calls)) == ("", ["markdown fence"], 1)
