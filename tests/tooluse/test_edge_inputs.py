"""Tool logs at their edges: huge money fields, empty tools columns, odd BFCL latencies, shared tool
definitions that callers must not change, figures a tool description states."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prefbuild.io.sources import LabelInputError, read_trajectories
from prefbuild.labelers.tools.stated import read_sources, unsupported_statement

HERE = Path(__file__).resolve().parent
BFCL_FC = HERE.parent / "bfclimport" / "data" / "Qwen_Qwen3-4B-Instruct-2507-FC" / "multi_turn"


def test_a_large_money_field_does_not_exhaust_memory() -> None:
    # a byte count under a "total" key, a price beside it: summing them once built a 10**12-bit integer
    sources = read_sources(['{"total_bytes": 10737418240, "price": 3.5}'])
    assert unsupported_statement("It costs $3.50 a month.", sources) is None
    assert unsupported_statement("It costs $9.99 a month.", sources) is not None


def test_sums_below_the_limit_are_still_found() -> None:
    sources = read_sources(['{"items": [{"price": 120.5}, {"price": 80.25}, {"price": 10}], "balance": 5000000}'])
    assert unsupported_statement("Your order totals $210.75.", sources) is None  # 120.5 + 80.25 + 10


HOUSEHOLD = {
    "messages": [
        {"role": "user",
         "content": "You are in the middle of a room.\nYour task is to: put a clean mug in countertop."},
        {"role": "assistant", "content": "THOUGHT: find a mug.\nACTION: go to cabinet 1"},
        {"role": "user", "content": "On the cabinet 1, you see a mug 1."},
    ],
    "won": False,
}


@pytest.mark.parametrize("tools", [None, "", "  "])
def test_a_household_log_with_an_empty_tools_column_stays_household(tmp_path: Path, tools: object) -> None:
    # datasets with one schema for every row (LLaMA-Factory's "tools" column) carry null or "" where no
    # tools were offered
    path = tmp_path / "chats.jsonl"
    path.write_text(json.dumps({**HOUSEHOLD, "tools": tools}) + "\n", encoding="utf-8")
    (trajectory,) = read_trajectories(path)
    assert trajectory.env.name == "household"
    assert trajectory.steps[0].action == "go to cabinet 1"


def test_a_tools_list_still_makes_a_tool_log(tmp_path: Path) -> None:
    path = tmp_path / "chats.jsonl"
    record = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
              "tools": [{"type": "function", "function": {"name": "f"}}]}
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    (trajectory,) = read_trajectories(path)
    assert trajectory.task.meta["source"] == "chat_tools"


def _bfcl_entry(tmp_path: Path, **changes: object) -> Path:
    record = json.loads((BFCL_FC / "BFCL_v4_multi_turn_base_result.json").read_text().splitlines()[0])
    record.update(changes)
    folder = tmp_path / "m" / "multi_turn"
    folder.mkdir(parents=True)
    path = folder / "BFCL_v4_multi_turn_base_result.json"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("latency", [10**400, True, -1, "3"])
def test_a_bfcl_latency_that_is_no_duration_is_unknown(tmp_path: Path, latency: object) -> None:
    pytest.importorskip("bfcl_eval")
    path = _bfcl_entry(tmp_path, latency=[[latency] * 40])
    (trajectory,) = read_trajectories(path)
    assert {step.latency_s for step in trajectory.steps} == {None}


def test_a_bfcl_latency_in_seconds_is_kept(tmp_path: Path) -> None:
    pytest.importorskip("bfcl_eval")
    path = _bfcl_entry(tmp_path, latency=[[1.5] * 40])
    (trajectory,) = read_trajectories(path)
    assert trajectory.steps[0].latency_s == 1.5


def test_label_input_error_is_importable() -> None:
    assert issubclass(LabelInputError, ValueError)


def test_the_shared_toolbox_cannot_be_grown_by_a_caller() -> None:
    from prefbuild.tooluse.dispatch import checked_toolbox

    tools = [{"type": "function", "function": {"name": "review_f", "parameters": {"type": "object"}}}]
    box = checked_toolbox(tools)
    with pytest.raises(AttributeError):
        box.tools.append({"type": "function", "function": {"name": "h"}})  # type: ignore[union-attr]
    assert checked_toolbox([dict(tools[0])]).names == ["review_f"]  # type: ignore[union-attr]


def test_tau2_tool_definitions_are_the_callers_own() -> None:
    pytest.importorskip("tau2")
    from prefbuild.envs.tau2.env import Tau2Env
    from prefbuild.tooluse.dispatch import ToolBox

    env = Tau2Env.__new__(Tau2Env)
    env._box = ToolBox(({"type": "function", "function": {"name": "f", "description": "d"}},))
    mine = env.tool_definitions()
    mine[0]["function"]["description"] = "changed"
    assert env._box.tools[0]["function"]["description"] == "d"


def test_a_figure_of_a_tool_description_is_one_the_agent_was_shown(tmp_path: Path) -> None:
    from prefbuild.labelers.tools.answers import HallucinatedToolOutputLabeler

    record = {"messages": [{"role": "user", "content": "How much is a checked bag?"},
                           {"role": "assistant", "content": "A checked bag costs $35."}],
              "tools": [{"type": "function", "function": {"name": "book", "parameters": {"type": "object"},
                                                          "description": "Each checked bag costs $35."}}]}
    path = tmp_path / "chats.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    (trajectory,) = read_trajectories(path)
    assert HallucinatedToolOutputLabeler().label(trajectory) == []
