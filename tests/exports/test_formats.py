"""Export layouts, checked against each trainer's documented dataset format.

Expected layouts, written out from the projects' documentation:

- LLaMA-Factory, ``data/README.md`` "Sharegpt Format / Preference Dataset": each row is
  ``{"conversations": [{"from": "human", "value": ...}, {"from": "gpt", ...}, {"from": "human", ...}],
  "chosen": {"from": "gpt", "value": ...}, "rejected": {"from": "gpt", "value": ...}}``; human and
  observation turns at odd positions (1-based), gpt and function_call turns at even positions;
  an optional ``system`` column. The ``dataset_info.json`` entry is
  ``{"file_name": ..., "formatting": "sharegpt", "ranking": true,
  "columns": {"messages": "conversations", "chosen": "chosen", "rejected": "rejected", ...}}``.
- ms-swift, "Custom Dataset" (RLHF / DPO): ``{"messages": [{"role": "system", ...}, {"role": "user", ...},
  {"role": "assistant", "content": <chosen>}], "rejected_response": <rejected text>}``; agent data
  ("Agent support"): calls as ``{"role": "tool_call", "content": <JSON name/arguments>}`` and results
  as ``{"role": "tool_response", "content": ...}``.
- TRL, "Dataset formats" (preference, conversational, explicit prompt):
  ``{"prompt": [{"role": "user", "content": ...}], "chosen": [{"role": "assistant", ...}],
  "rejected": [{"role": "assistant", ...}]}``.
"""

from __future__ import annotations

import json

import pytest

from prefbuild.analysis.counters import Tally
from prefbuild.exports.base import ExportError, format_names, get_format, to_rows
from prefbuild.exports.llamafactory import llamafactory_dataset_info
from prefbuild.records import FailureMode
from prefbuild.registry import UnknownPluginError
from tests.exports.pairs_factory import multi_turn_pair, stepwise_pair, tool_pair
from tests.pairs.factory import S, act, trajectory

LLAMAFACTORY_USER_ROLES = {"human", "observation"}
LLAMAFACTORY_ASSISTANT_ROLES = {"gpt", "function_call"}


def test_export_formats_are_the_documented_five():
    assert format_names()[:5] == ["trl", "roundwise", "llamafactory", "swift", "sft"]
    assert {name: get_format(name).consumes for name in format_names()[:5]} == {
        "trl": "pairs", "roundwise": "pairs", "llamafactory": "pairs", "swift": "pairs", "sft": "trajectories"}


def test_trl_rows_are_conversational_prompt_chosen_rejected():
    (row,) = to_rows([stepwise_pair()], "trl")
    assert set(row) == {"prompt", "chosen", "rejected", "id", "reason"}
    assert row["prompt"][-1] == {"role": "user", "content": "On the shelf 1, you see nothing."}
    assert row["chosen"] == [{"role": "assistant", "content": "ACTION: go to cabinet 1"}]
    assert row["rejected"] == [{"role": "assistant", "content": "ACTION: Task succeeded."}]
    assert row["reason"] == "premature_success"
    (multi,) = to_rows([multi_turn_pair()], "trl")
    assert [m["role"] for m in multi["chosen"]] == ["assistant", "user", "assistant"]


def test_roundwise_rows_use_the_seed_vocabulary_and_assistant_strings():
    (row,) = to_rows([stepwise_pair()], "roundwise")
    assert set(row) == {"messages", "chosen", "rejected", "reason"}
    assert row["reason"] == "task_succeeded_negative"
    assert row["chosen"] == "ACTION: go to cabinet 1" and row["rejected"] == "ACTION: Task succeeded."
    assert row["messages"][0] == {"role": "user", "content": "Interact with a household to solve a task."}
    (loop,) = to_rows([stepwise_pair(FailureMode.loop)], "roundwise")
    assert loop["reason"] == "loop"


def assert_llamafactory_layout(row: dict) -> None:
    assert set(row) == {"conversations", "system", "tools", "chosen", "rejected"} and row["tools"] == ""
    assert isinstance(row["system"], str)
    for position, turn in enumerate(row["conversations"], start=1):
        assert set(turn) == {"from", "value"} and isinstance(turn["value"], str)
        expected = LLAMAFACTORY_USER_ROLES if position % 2 == 1 else LLAMAFACTORY_ASSISTANT_ROLES
        assert turn["from"] in expected, (position, turn)
    assert len(row["conversations"]) % 2 == 1  # ends with a human/observation turn
    for key in ("chosen", "rejected"):
        assert set(row[key]) == {"from", "value"} and row[key]["from"] == "gpt"


def test_llamafactory_rows_follow_the_sharegpt_ranking_layout():
    (row,) = to_rows([stepwise_pair(system=True)], "llamafactory")
    assert_llamafactory_layout(row)
    assert row["system"] == "You are a household agent."
    assert row["conversations"][0] == {"from": "human", "value": "Interact with a household to solve a task."}
    assert row["chosen"] == {"from": "gpt", "value": "ACTION: go to cabinet 1"}
    assert row["rejected"] == {"from": "gpt", "value": "ACTION: Task succeeded."}
    (tools,) = to_rows([tool_pair()], "llamafactory")
    assert_llamafactory_layout(tools)
    assert tools["conversations"][1]["from"] == "function_call"
    assert json.loads(tools["conversations"][1]["value"]) == {"name": "act", "arguments": {"action": "go to shelf 1"}}
    assert tools["conversations"][2] == {"from": "observation", "value": "On the shelf 1, you see nothing."}


def test_llamafactory_dataset_info_registers_a_sharegpt_ranking_dataset():
    info = llamafactory_dataset_info("prefbuild_dpo", "train.jsonl")
    assert list(info) == ["prefbuild_dpo"]
    entry = info["prefbuild_dpo"]
    assert entry["file_name"] == "train.jsonl"
    assert entry["formatting"] == "sharegpt"
    assert entry["ranking"] is True
    assert entry["columns"] == {
        "messages": "conversations",
        "system": "system",
        "tools": "tools",
        "chosen": "chosen",
        "rejected": "rejected",
    }
    assert entry["tags"]["user_tag"] == "human" and entry["tags"]["assistant_tag"] == "gpt"
    json.dumps(info)  # plain JSON


def test_swift_rows_end_messages_with_chosen_and_carry_rejected_response():
    (row,) = to_rows([stepwise_pair(system=True)], "swift")
    assert set(row) == {"messages", "rejected_response"}
    assert row["messages"][0] == {"role": "system", "content": "You are a household agent."}
    assert row["messages"][-1] == {"role": "assistant", "content": "ACTION: go to cabinet 1"}
    assert row["messages"][-2]["role"] == "user"
    assert row["rejected_response"] == "ACTION: Task succeeded."
    (tools,) = to_rows([tool_pair()], "swift")
    assert [m["role"] for m in tools["messages"]] == ["system", "user", "tool_call", "tool_response", "assistant"]
    assert json.loads(tools["messages"][2]["content"]) == {"name": "act", "arguments": {"action": "go to shelf 1"}}
    assert tools["messages"][3] == {"role": "tool_response", "content": "On the shelf 1, you see nothing."}
    assert all(set(m) == {"role", "content"} for m in tools["messages"])


@pytest.mark.parametrize("fmt", ["roundwise", "llamafactory", "swift"])
def test_single_turn_formats_refuse_or_skip_multi_turn_pairs(fmt):
    with pytest.raises(ExportError, match=r"pair-2 .*multi-turn continuation"):
        list(to_rows([multi_turn_pair()], fmt))
    tally = Tally()
    rows = list(to_rows([multi_turn_pair(), stepwise_pair()], fmt, skip_unsupported=True, tally=tally))
    assert len(rows) == 1 and tally.kept == 1 and tally.skipped == {f"trajectory:unsupported_by_{fmt}": 1}


def test_unknown_format_and_sft_on_pairs_are_errors():
    with pytest.raises(UnknownPluginError, match="unknown export format 'axolotl'; known: trl, roundwise"):
        list(to_rows([stepwise_pair()], "axolotl"))
    with pytest.raises(ExportError, match="the sft format exports trajectories, not pairs"):
        list(to_rows([stepwise_pair()], "sft"))


def test_sft_rows_are_successful_episodes_as_messages():
    ok = trajectory(
        [S(act("go to shelf 1"), "go to shelf 1"), S(act("put mug 1 in/on shelf 1"), "x")], traj_id="ok", success=True
    )
    bad = trajectory([S(act("go to bed 1"), "go to bed 1")], traj_id="bad")
    tally = Tally()
    (row,) = to_rows([ok, bad], "sft", tally=tally)
    assert tally.as_dict() == {"kept": 1, "skipped": {"not_successful": 1}}
    roles = [m["role"] for m in row["messages"]]
    assert roles == ["user", "assistant", "user", "assistant", "user", "assistant"]
    assert row["messages"][-1]["content"] == act("put mug 1 in/on shelf 1")
    assert row["task_id"] == "task-1" and row["id"] == "ok"


def test_llamafactory_keeps_the_text_written_beside_a_tool_call():
    """LLaMA-Factory's FunctionFormatter reads the calls between its tool-call words and keeps the text
    around them; a pair whose only difference is that text stays a pair."""
    from prefbuild.exports.llamafactory import TOOL_CALL_WORDS, sharegpt_message
    from prefbuild.records import FunctionCall, Message, Role, ToolCall

    call = ToolCall(id="c1", function=FunctionCall(name="code", arguments='{"x": 1}'))
    plain = sharegpt_message(Message(role=Role.assistant, content="", tool_calls=[call]), "row")
    assert json.loads(plain["value"]) == {"name": "code", "arguments": {"x": 1}}
    chatty = sharegpt_message(Message(role=Role.assistant, content="Sure! I run it.", tool_calls=[call]), "row")
    text, words, rest = chatty["value"].partition(TOOL_CALL_WORDS[0])
    assert (chatty["from"], text, words) == ("function_call", "Sure! I run it.\n", TOOL_CALL_WORDS[0])
    assert json.loads(rest.removesuffix(TOOL_CALL_WORDS[1])) == {"name": "code", "arguments": {"x": 1}}


def test_the_trl_card_snippet_is_python_that_keeps_long_agent_prompts():
    snippet = get_format("trl").loading_snippet("user/name", "trl")
    code = snippet.split("```python\n", 1)[1].split("```", 1)[0]
    compile(code, "card snippet", "exec")
    assert 'load_dataset("user/name", "trl")' in code and "max_length=8192" in code


def test_swift_text_before_a_call_joins_it_as_the_rejected_side_renders_it():
    """ms-swift concatenates an assistant turn and the tool_call turn after it with nothing between;
    the chosen side must come out as the Hermes text the rejected side is written in."""
    from prefbuild.exports.swift import swift_messages
    from prefbuild.records import FunctionCall, Message, Role, ToolCall
    from prefbuild.tooluse.hermes import render_tool_turn

    call = ToolCall(id="c1", function=FunctionCall(name="code", arguments='{"x": 1}'))
    turns = swift_messages(Message(role=Role.assistant, content="I run it.", tool_calls=[call]))
    assert [turn["role"] for turn in turns] == ["assistant", "tool_call"]
    assert render_tool_turn([call], content="I run it.").startswith(turns[0]["content"] + "<tool_call>")


def test_swift_chosen_and_rejected_calls_render_alike_with_non_ascii_arguments():
    """ms-swift's hermes agent template re-dumps a ``tool_call`` turn as ``<tool_call>\\n{json.dumps(call,
    ensure_ascii=False)}\\n</tool_call>``; the rejected side is written as text already. A call with a
    non-ASCII argument must read the same on both sides, so the pair does not teach an escaping."""
    from prefbuild.exports.swift import swift_messages
    from prefbuild.records import FunctionCall, Message, Role, ToolCall
    from prefbuild.tooluse.hermes import render_tool_turn

    call = ToolCall(id="c1", function=FunctionCall(name="search", arguments='{"city": "東京", "note": "café"}'))
    (turn,) = swift_messages(Message(role=Role.assistant, content="", tool_calls=[call]))
    assert "東京" in turn["content"] and "\\u" not in turn["content"]
    as_swift_renders = f"<tool_call>\n{json.dumps(json.loads(turn['content']), ensure_ascii=False)}\n</tool_call>"
    assert as_swift_renders == render_tool_turn([call])
