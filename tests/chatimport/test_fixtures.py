"""The fixtures of ``data/`` hold exactly the published shapes README.md names, every episode has
its expectation and every expectation its episode: checked here field by field, without the
importer, so a fixture that drifts from its format fails instead of being skipped."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import jsonschema

from prefbuild.records import failure_modes

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
OPENAI = DATA / "openai.jsonl"
HERMES = DATA / "hermes.jsonl"
SHAREGPT = DATA / "sharegpt.json"
CALL_BLOCK = re.compile(r"<tool_call>\n(?P<body>.*?)\n</tool_call>", re.DOTALL)
RESPONSE_TURN = re.compile(r"^(?:<tool_response>\n.*?\n</tool_response>\s*)+$", re.DOTALL)


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def expected() -> dict[str, Any]:
    return json.loads((DATA / "expected.json").read_text(encoding="utf-8"))


def check_openai_tools(tools: Any) -> set[str]:
    """The chat-completions ``tools`` parameter: ``{"type": "function", "function": {...}}`` with a JSON Schema."""
    assert isinstance(tools, list) and tools
    names = set()
    for tool in tools:
        assert set(tool) == {"type", "function"} and tool["type"] == "function"
        function = tool["function"]
        assert set(function) <= {"name", "description", "parameters", "strict"}
        assert isinstance(function["name"], str) and re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", function["name"])
        jsonschema.Draft202012Validator.check_schema(function["parameters"])
        assert function["parameters"]["type"] == "object"
        names.add(function["name"])
    return names


def text_of(content: Any) -> str:
    if isinstance(content, list):
        assert all(set(part) == {"type", "text"} and part["type"] == "text" for part in content)
        return "".join(part["text"] for part in content)
    assert content is None or isinstance(content, str)
    return content or ""


def test_openai_records_are_chat_completions_tool_conversations() -> None:
    records = lines(OPENAI)
    assert records
    for record in records:
        assert set(record) <= {"id", "messages", "tools", "success", "reward", "model", "env"}, record["id"]
        check_openai_tools(record["tools"])
        open_calls: set[str] = set()
        seen_calls: set[str] = set()
        for message in record["messages"]:
            role = message["role"]
            assert role in ("system", "user", "assistant", "tool"), record["id"]
            text_of(message["content"])
            if role == "tool":
                assert set(message) <= {"role", "content", "tool_call_id", "name"}
                open_calls.remove(message["tool_call_id"])  # answers a call of the last assistant turn, once
                continue
            assert not open_calls, f"{record['id']}: calls without a result before a {role} turn"
            if role == "assistant" and "tool_calls" in message:
                assert message["tool_calls"], record["id"]
                for call in message["tool_calls"]:
                    assert set(call) == {"id", "type", "function"} and call["type"] == "function"
                    assert set(call["function"]) == {"name", "arguments"} and call["function"]["name"]
                    arguments = call["function"]["arguments"]
                    assert isinstance(json.loads(arguments) if isinstance(arguments, str) else arguments, dict)
                    assert call["id"] not in seen_calls
                    seen_calls.add(call["id"])
                    open_calls.add(call["id"])
        assert not open_calls and record["messages"][-1]["role"] == "assistant", record["id"]


def hermes_prompt_tools(system: str) -> set[str]:
    """The Qwen3 template's tools section: the header, one JSON definition a line, the call format."""
    assert "# Tools\n\nYou may call one or more functions" in system
    body = system.split("XML tags:\n<tools>\n", 1)[1].split("\n</tools>", 1)[0]
    tools = [json.loads(line) for line in body.splitlines()]
    assert system.endswith('<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>')
    return check_openai_tools(tools)


def test_hermes_records_are_qwen3_text_turns() -> None:
    records = lines(HERMES)
    assert records
    for record in records:
        messages = record["messages"]
        assert messages[0]["role"] == "system"
        system = messages[0]["content"]
        names = check_openai_tools(record["tools"]) if "tools" in record else hermes_prompt_tools(system)
        calls_waiting = 0
        for message in messages[1:]:
            assert "tool_calls" not in message and isinstance(message["content"], str), record["id"]
            text = message["content"]
            if message["role"] == "assistant":
                assert not calls_waiting
                blocks = CALL_BLOCK.findall(text)
                for body in blocks:
                    if record["id"] == "he-malformed" and body.count("{") != body.count("}"):
                        continue  # the episode's broken call: not JSON, on purpose
                    call = json.loads(body)
                    assert set(call) == {"name", "arguments"} and isinstance(call["arguments"], dict)
                    assert call["name"] in names or record["id"] == "he-unknown-tool"
                    calls_waiting += 1
                text_outside = CALL_BLOCK.sub("", text)
                assert "<tool_call>" not in text_outside
            elif message["role"] == "tool" or RESPONSE_TURN.match(text):
                assert calls_waiting == 1, record["id"]  # every episode here makes one call a turn
                calls_waiting = 0
            else:
                assert message["role"] == "user" and "<tool_response>" not in text
        assert messages[-1]["role"] == "assistant" and not CALL_BLOCK.search(messages[-1]["content"])


def test_sharegpt_records_follow_llamafactorys_format() -> None:
    text = SHAREGPT.read_text(encoding="utf-8")
    assert text.lstrip().startswith("[")  # one JSON array, as LLaMA-Factory ships its datasets
    records = json.loads(text)
    assert records
    for record in records:
        assert set(record) <= {"id", "conversations", "system", "tools", "success", "reward"}
        assert isinstance(record["tools"], str)  # JSON text, as the `tools` column holds it
        tools = json.loads(record["tools"])
        assert all("type" not in tool and set(tool) == {"name", "description", "parameters"} for tool in tools)
        names = check_openai_tools([{"type": "function", "function": tool} for tool in tools])
        for position, turn in enumerate(record["conversations"]):
            assert set(turn) == {"from", "value"} and isinstance(turn["value"], str)
            # human and observation at odd positions (1-based), gpt and function_call at even ones
            assert turn["from"] in (("human", "observation") if position % 2 == 0 else ("gpt", "function_call"))
            if turn["from"] == "function_call":
                call = json.loads(turn["value"])
                assert set(call) == {"name", "arguments"} and call["name"] in names
                assert isinstance(call["arguments"], dict)
            if turn["from"] == "observation":
                assert record["conversations"][position - 1]["from"] == "function_call"
        assert record["conversations"][-1]["from"] == "gpt"


def assistant_turns(record: dict[str, Any]) -> int:
    """Steps by the formats' own definitions: assistant / gpt / function_call turns after the first user turn."""
    turns = record.get("messages") or record["conversations"]
    roles = [turn.get("role", turn.get("from")) for turn in turns]
    first_user = next(i for i, role in enumerate(roles) if role in ("user", "human"))
    return sum(role in ("assistant", "gpt", "function_call") for role in roles[first_user:])


def test_every_episode_has_its_expectation_and_the_expected_step_count() -> None:
    records = lines(OPENAI) + lines(HERMES) + json.loads(SHAREGPT.read_text(encoding="utf-8"))
    ids = [record["id"] for record in records]
    assert len(ids) == len(set(ids))
    wanted = expected()
    assert set(ids) == set(wanted)
    modes = failure_modes()
    for record in records:
        case = wanted[record["id"]]
        assert case["steps"] == assistant_turns(record), record["id"]
        for step, mode in case["labels"]:
            assert mode in modes and 0 <= step < case["steps"], (record["id"], step, mode)
    # every failure the README lists is in the set, in each shape it names
    labelled = {mode for case in wanted.values() for _, mode in case["labels"]}
    assert {"unknown_tool", "invalid_arguments", "tool_error", "repeated_tool_call", "malformed_tool_call",
            "hallucinated_tool_output"} <= labelled
    assert sum(not case["labels"] for case in wanted.values()) >= 6  # clean episodes


def test_build_writes_the_files_as_they_are() -> None:
    sys.path.insert(0, str(HERE))
    try:
        import build
    finally:
        sys.path.remove(str(HERE))
    assert [json.loads(json.dumps(e)) for e in build.openai_episodes()] == lines(OPENAI)
    assert [json.loads(json.dumps(e)) for e in build.hermes_episodes()] == lines(HERMES)
    assert json.loads(json.dumps(build.sharegpt_episodes())) == json.loads(SHAREGPT.read_text(encoding="utf-8"))
    assert {key: sorted(map(tuple, case["labels"])) for key, case in expected().items()} == {
        key: sorted(value) for key, value in build.EXPECTED.items()
    }
