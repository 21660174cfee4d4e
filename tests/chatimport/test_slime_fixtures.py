"""The slime fixtures of ``data/`` hold exactly the layout README.md describes (the slime tau2
pipeline's SFT / RL trajectory records), checked here turn by turn without prefbuild's importer: a
fixture that drifts from the format fails instead of being skipped. The tools they call are checked
against tau2's own tool definitions (only the episodes written to break them do)."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from prefbuild.records import failure_modes
from tests.chatimport.build_slime import EXPECTED, STEPS

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
ACTION = DATA / "slime_action.jsonl"
NATIVE = DATA / "slime_native.jsonl"
TASK_ID = re.compile(r"^\[(?P<domain>airline|retail|telecom)\](?P<task>[^\[\]]+)\[sample_(?P<sample>\d+)\]$")
LEGACY_TURN = re.compile(r"^<think>\n(?P<think>.+?)\n</think>\n\[ACTION\]\n(?P<line>[^\n]+)\n\[/ACTION\]$", re.DOTALL)
NATIVE_TURN = re.compile(
    r"^(?:<(?P<tag>think|thinking)>\n(?P<think>.+?)\n</(?P=tag)>\n)?<tool_call>\n(?P<body>[^\n]+)\n</tool_call>$",
    re.DOTALL,
)
LEGACY_RESULT = re.compile(r"^\[TOOL_RESULT\]\n(?P<call>[^\n]+)\n(?P<output>.+)\n\[/TOOL_RESULT\]$", re.DOTALL)
NATIVE_RESULT = re.compile(r"^Tool result for (?P<call>[^\n]+):\n(?P<output>.+)$", re.DOTALL)
SPECIAL = ("respond", "done")
# The episodes written to break the format or the tools, and how.
BROKEN = {"[airline]3[sample_0]", "[airline]5[sample_4]"}
UNKNOWN_TOOL = {"[airline]9[sample_1]": "get_flight_info", "[retail]22[sample_3]": "lookup_order"}
BAD_ARGUMENTS = {"[airline]14[sample_0]": "send_certificate", "[telecom]bills_1[sample_0]": "get_bills_for_customer"}


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def literal(node: ast.expr) -> Any:
    """A keyword value the format allows: a literal, a list / tuple / dict of them, or True / False / None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str | int | float | bool | type(None)):
        return node.value
    if isinstance(node, ast.List | ast.Tuple):
        return [literal(item) for item in node.elts]
    if isinstance(node, ast.Dict):
        return {literal(key): literal(value) for key, value in zip(node.keys, node.values, strict=True)}  # type: ignore[arg-type]
    raise AssertionError(f"not a literal the format allows: {ast.dump(node)}")


def legacy_call(line: str) -> tuple[str, dict[str, Any]]:
    """``name(key=value, ...)``: one call expression, keyword arguments only."""
    expression = ast.parse(line, mode="eval").body
    assert isinstance(expression, ast.Call) and isinstance(expression.func, ast.Name), line
    assert not expression.args and all(keyword.arg is not None for keyword in expression.keywords), line
    return expression.func.id, {str(keyword.arg): literal(keyword.value) for keyword in expression.keywords}


def native_call(body: str) -> tuple[str, dict[str, Any]]:
    """``{"name", "arguments"}``; arguments an object or a JSON string of one."""
    payload = json.loads(body)
    assert set(payload) == {"name", "arguments"} and isinstance(payload["name"], str), body
    arguments = payload["arguments"]
    if isinstance(arguments, str):
        arguments = json.loads(arguments)
    assert isinstance(arguments, dict), body
    return payload["name"], arguments


def native_call_text(name: str, arguments: dict[str, Any]) -> str:
    """How the pipeline names a native call in its result turn."""
    return f"{name}(" + ", ".join(f"{key}={json.dumps(value)}" for key, value in arguments.items()) + ")"


def check_record(record: dict[str, Any], native: bool) -> list[tuple[str, dict[str, Any]]]:
    """The record's layout, turn by turn; returns the calls it makes (respond / done included)."""
    key = "messages" if "messages" in record else "prompt"
    assert set(record) == {"task_id", key, "response", "metadata"} and record["response"] == ""
    match = TASK_ID.match(record["task_id"])
    assert match, record["task_id"]
    metadata = record["metadata"]
    assert set(metadata) <= {"domain", "tau2_task_id", "success", "partial_score", "tool_sequence", "reward_info"}
    assert metadata["domain"] == match["domain"] and metadata["tau2_task_id"] == match["task"]
    assert isinstance(metadata.get("success", False), bool)
    partial = metadata.get("partial_score", 0.0)
    assert isinstance(partial, float) and 0.0 <= partial <= 1.0
    turns = record[key]
    assert [turn["role"] for turn in turns[:2]] == ["system", "user"]
    calls: list[tuple[str, dict[str, Any]]] = []
    broken: list[int] = []
    waiting: tuple[str, str] | None = None  # (call text a result must name, tool name) of the last call
    for position, turn in enumerate(turns[1:], start=1):
        assert set(turn) == {"role", "content"} and isinstance(turn["content"], str) and turn["content"]
        assert turn["role"] in ("user", "assistant"), (record["task_id"], position)
        text = turn["content"]
        if turn["role"] == "assistant":
            assert waiting is None, f"{record['task_id']}: a call without its result at turn {position}"
            shape = (NATIVE_TURN if native else LEGACY_TURN).match(text)
            assert shape, (record["task_id"], position)
            try:
                name, arguments = native_call(shape["body"]) if native else legacy_call(shape["line"])
            except (ValueError, SyntaxError, AssertionError):
                assert record["task_id"] in BROKEN, (record["task_id"], position)
                broken.append(position)
                continue  # the harness cannot read it: no tool ran, no result follows
            calls.append((name, arguments))
            if name not in SPECIAL:
                waiting = (native_call_text(name, arguments) if native else shape["line"], name)
            continue
        result = (NATIVE_RESULT if native else LEGACY_RESULT).match(text)
        if result is None:  # the customer (or the harness's format error after a broken turn)
            assert "[TOOL_RESULT]" not in text and not text.startswith("Tool result for"), record["task_id"]
            continue
        assert waiting is not None and result["call"] == waiting[0], (record["task_id"], position)
        output = result["output"]
        assert output.strip() == output and output
        if output.startswith("Error: Tool "):
            assert output == f"Error: Tool '{waiting[1]}' not found."
        waiting = None
    assert turns[-1]["role"] == "assistant", record["task_id"]
    assert bool(broken) is (record["task_id"] in BROKEN), record["task_id"]
    sequence = [name for name, _ in calls if name not in SPECIAL]
    assert metadata["tool_sequence"] == sequence, record["task_id"]
    for name, arguments in calls:
        if name == "respond":
            assert set(arguments) == {"content"} and isinstance(arguments["content"], str) and arguments["content"]
        if name == "done":
            assert arguments == {}
    return calls


def test_legacy_records_are_the_action_format() -> None:
    found = records(ACTION)
    assert found and all("prompt" in record for record in found)
    for record in found:
        check_record(record, native=False)


def test_native_records_are_the_tool_call_format() -> None:
    found = records(NATIVE)
    assert found and {"prompt", "messages"} <= {key for record in found for key in record}  # both keys occur
    for record in found:
        check_record(record, native=True)
    texts = [turn["content"] for record in found for turn in record.get("prompt", record.get("messages"))]
    assert any(text.startswith("<thinking>") for text in texts)  # both reasoning tags
    assert any('"arguments": "{' in text for text in texts)  # double-encoded arguments


def test_the_calls_fit_tau2s_own_tools_except_where_written_not_to() -> None:
    """Every call names a tool of its domain in the installed tau2 with arguments that fit its schema;
    only the unknown-tool and bad-argument episodes break that, each in the one way it is written to."""
    pytest.importorskip("tau2")
    from prefbuild.envs.tau2.package import new_environment, openai_tools

    schemas: dict[str, dict[str, Any]] = {}
    for domain in ("airline", "retail", "telecom"):
        schemas[domain] = {tool["function"]["name"]: tool["function"]["parameters"]
                           for tool in openai_tools(new_environment(domain))}
    broke: set[str] = set()
    for path, native in ((ACTION, False), (NATIVE, True)):
        for record in records(path):
            tools = schemas[record["metadata"]["domain"]]
            for name, arguments in check_record(record, native):
                if name in SPECIAL:
                    continue
                if name not in tools:
                    assert UNKNOWN_TOOL.get(record["task_id"]) == name, (record["task_id"], name)
                    broke.add(record["task_id"])
                    continue
                errors = list(jsonschema.Draft202012Validator(tools[name]).iter_errors(arguments))
                if errors:
                    assert BAD_ARGUMENTS.get(record["task_id"]) == name, (record["task_id"], name, errors[0].message)
                    broke.add(record["task_id"])
    assert broke == set(UNKNOWN_TOOL) | set(BAD_ARGUMENTS)


def test_every_episode_has_its_expectation_and_every_expectation_its_episode() -> None:
    written = json.loads((DATA / "slime_expected.json").read_text(encoding="utf-8"))
    ids = [record["task_id"] for path in (ACTION, NATIVE) for record in records(path)]
    assert len(ids) == len(set(ids)) == len(written) and set(ids) == set(written)
    modes = set(failure_modes())
    for task_id, case in written.items():
        assert case["steps"] == STEPS[task_id]
        assert [tuple(pair) for pair in case["labels"]] == EXPECTED[task_id]
        assert all(0 <= step < case["steps"] and mode in modes for step, mode in case["labels"])
    for path in (ACTION, NATIVE):
        for record in records(path):
            turns = record.get("prompt", record.get("messages"))
            steps = sum(turn["role"] == "assistant" for turn in turns)
            assert steps == written[record["task_id"]]["steps"], record["task_id"]
