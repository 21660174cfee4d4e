"""The DBBench prompt and parse rules (spec sections 3 and 4)."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefbuild.envs import get_protocol
from prefbuild.envs.sql import actions
from prefbuild.envs.sql.protocol import AGENT_ACK, INSTRUCTION, DBBenchProtocol
from prefbuild.records import Role

from .helpers import make_item, make_task

P = DBBenchProtocol()


def test_registered_and_prefix() -> None:
    protocol = get_protocol("sql", "dbbench")
    assert isinstance(protocol, DBBenchProtocol)
    task = make_task(make_item())
    prefix = protocol.prefix_messages(task)
    assert [m.role for m in prefix] == [Role.user, Role.assistant]
    assert prefix[0].content == INSTRUCTION and prefix[1].content == AGENT_ACK == "Ok."
    assert INSTRUCTION.startswith("\nI will ask you a question") and INSTRUCTION.endswith("deal with it by yourself.\n")
    assert "Action: Operation\n```sql\nSELECT * FROM table WHERE condition;\n```\n" in INSTRUCTION
    assert 'Final Answer: ["ANSWER1", "ANSWER2", ...]\n' in INSTRUCTION
    # Checked character by character against the spec's verbatim block (section 3).
    assert INSTRUCTION.count("\n") == 19
    assert (
        hashlib.sha256(INSTRUCTION.encode()).hexdigest()
        == "b4d40c8bfe1e9ea9a9c2c014e16f9e269133123acf536417b1cf1f5fc1c677f5"
    )


def test_first_turn_is_description_and_add_description() -> None:
    item = make_item()
    turn = P.observation_turn(item.prompt, first=True, task=make_task(item))
    assert turn == (
        "What is the Title when the Role is johnson?\n"
        "The name of this table is Table of Year, Title, and Role, and the headers of this table are "
        "Year,Title,Role,Notes/Extra."
    )


@pytest.mark.parametrize(
    ("text", "action", "format_ok", "final"),
    [
        ("Think.\nAction: Operation\n```sql\nSELECT 1;\n```", "Operation: SELECT 1;", True, False),
        ("Action: Operation\n```sql\nSELECT *\nFROM t\n```", "Operation: SELECT * FROM t", False, False),
        ("Action: Operation\n```sql\n  SELECT 1  \n```\n```sql\nSELECT 2\n```", "Operation: SELECT 1", False, False),
        # An operation without the exact fence is a validation failure, not a guess.
        ("Action: Operation\n```\nSELECT 1\n```", "Invalid: Action: Operation without a ```sql block", False, False),
        ("Action: Operation\n```sql SELECT 1 ```", "Invalid: Action: Operation without a ```sql block", False, False),
        ("Action: Operation\nSELECT 1", "Invalid: Action: Operation without a ```sql block", False, False),
        # The action word needs a following newline; at the very end it is not recognised.
        (
            "Final Answer: [1]\nAction: Operation",
            "Invalid: no 'Action:' line and no 'Final Answer:' line",
            False,
            False,
        ),
        ('x\nAction: Answer\nFinal Answer: ["a"]', 'Answer: ["a"]', True, True),
        ("x\nAction: Answer\nFinal Answer: Soviet Union\nthanks", "Answer: Soviet Union", True, True),
        ('x\nFinal Answer: ["a"]', 'Answer: ["a"]', False, True),  # no Action line: still accepted
        ("Action: operation\nFinal Answer: [1]", "Answer: [1]", False, True),  # action word is case-sensitive
        ("Action: Answer\nFinal answer: [1]", "Invalid: no 'Final Answer:' line", False, False),
        ("Action: Answer\nFinal Answer: [1]", "Answer: [1]", True, True),
        (
            "Final Answer: [1]",
            "Invalid: no 'Action:' line and no 'Final Answer:' line",
            False,
            False,
        ),  # no newline before
        ("Action: Answer\nFinal Answer:", "Answer:", True, True),
        # An answer inside an Operation turn rides along: the operation runs; the env reads the
        # answer only when no operation is left (the benchmark's final turn).
        (
            "Action: Operation\n```sql\nSELECT 1\n```\nFinal Answer: [1]",
            "Operation: SELECT 1\nAnswer: [1]",
            False,
            False,
        ),
    ],
)
def test_parse_rules(text: str, action: str, format_ok: bool, final: bool) -> None:
    parsed = P.parse(text)
    assert parsed.action == action
    assert parsed.format_ok is format_ok
    assert parsed.final is final
    if not format_ok:
        assert parsed.problems or parsed.normalized


def test_thought_is_the_text_before_the_action() -> None:
    assert P.parse("I will count.\nAction: Operation\n```sql\nSELECT 1\n```").thought == "I will count."
    assert P.parse("Action: Answer\nFinal Answer: [1]").thought is None


@pytest.mark.parametrize(
    "action",
    [
        "Operation: SELECT `Notes` FROM `Jiu-Jitsu Championships Results` WHERE `Method` = 'Decision';",
        'Answer: ["Women +60kg Bronze"]',
        "Answer: Soviet Union",
        "Answer:",
        'Answer: ["a\\nb", 12.0]',
    ],
)
def test_render_parse_round_trip(action: str) -> None:
    text = P.render(action, thought="Because.")
    parsed = P.parse(text)
    assert parsed.action == action and parsed.format_ok and parsed.thought == "Because."
    assert P.parse(P.render(action)).action == action  # default thought


def test_final_turn_parses_as_final_answer() -> None:
    parsed = P.parse(P.final_turn('["x"]') or "")
    assert parsed.final and parsed.action == 'Answer: ["x"]'
    assert P.parse(P.final_turn() or "").action == "Answer: []"


def test_invalid_action_renders_to_a_turn_that_is_invalid_again() -> None:
    parsed = P.parse(P.render(actions.invalid("no sql block")))
    assert parsed.action is not None and parsed.action.startswith("Invalid: ")


@settings(deadline=None, max_examples=200)
@given(st.text())
def test_parse_never_raises_and_always_yields_an_action(text: str) -> None:
    parsed = P.parse(text)
    assert parsed.action is not None
    kind = actions.parse_action(parsed.action).kind
    assert kind in ("operation", "answer", "invalid")
    assert parsed.final is (kind == "answer")
    assert "\n" not in parsed.action
