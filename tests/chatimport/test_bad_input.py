"""A tool chat log that is not of its format's form is refused with one located line,
``error: file:line field: message``, a non-zero exit, no traceback and no output file."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from prefbuild.cli import main
from tests.chatimport.test_fixtures import OPENAI, SHAREGPT


def openai_record() -> dict[str, Any]:
    """``oa-clean``: system, user, assistant with one call, its result, the answer."""
    return json.loads(OPENAI.read_text(encoding="utf-8").splitlines()[0])


def sharegpt_record() -> dict[str, Any]:
    return json.loads(SHAREGPT.read_text(encoding="utf-8"))[0]


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(record: dict[str, Any]) -> None:
        target = record
        for part in path[:-1]:
            target = target[part]
        if value is _DELETE:
            del target[path[-1]]
        else:
            target[path[-1]] = value

    return change


_DELETE = object()
CALL = ("messages", 2, "tool_calls", 0)
CASES: dict[str, tuple[Callable[[], dict[str, Any]], Callable[[dict[str, Any]], None], str]] = {
    "messages not a list": (openai_record, _set(("messages",), "hello"),
                            "messages: expected a list of chat turns, got str"),
    "call without a name": (openai_record, _set((*CALL, "function", "name"), _DELETE),
                            "messages[2].tool_calls[0].function.name: missing"),
    "call with an empty name": (openai_record, _set((*CALL, "function", "name"), " "),
                                "messages[2].tool_calls[0].function.name: empty tool name"),
    "arguments neither text nor object": (openai_record, _set((*CALL, "function", "arguments"), [1, 2]),
                                          "messages[2].tool_calls[0].function.arguments: expected JSON text or an "
                                          "object, got list"),
    "tool_calls not a list": (openai_record, _set(("messages", 2, "tool_calls"), {"id": "x"}),
                              "messages[2].tool_calls: expected a list, got dict"),
    "result of no call": (openai_record, _set(("messages", 3, "tool_call_id"), "call_zz"),
                          "messages[3].tool_call_id: 'call_zz' answers no call of messages[2] (its calls: call_a1)"),
    "result before any assistant turn": (openai_record, _set(("messages", 2), {"role": "tool", "content": "x"}),
                                         "messages[2]: a tool result before any assistant turn"),
    "unknown role": (openai_record, _set(("messages", 1, "role"), "robot"),
                     "messages[1].role: unknown role 'robot'; a tool chat log has system, developer, user"),
    "calls on a user turn": (openai_record, _set(("messages", 1, "tool_calls"), [{"id": "c"}]),
                             "messages[1].tool_calls: tool calls on a 'user' turn"),
    "an image part": (openai_record, _set(("messages", 1, "content"), [{"type": "image_url", "image_url": {}}]),
                      "messages[1].content[0]: a 'image_url' part: only text parts"),
    "content a number": (openai_record, _set(("messages", 1, "content"), 7),
                         "messages[1].content: expected text, null or a list of text parts, got int"),
    "tools not a list": (openai_record, _set(("tools",), {"name": "get_weather"}),
                         "tools: expected a list of tool definitions, got dict"),
    "a tool without a name": (openai_record, _set(("tools", 1, "function", "name"), _DELETE),
                              "tools[1].function.name: a tool definition needs a function name"),
    "not a tool env": (openai_record, _set(("env",), "household"),
                       "env: 'household' is not a tool env; a tool chat log is one of bfcl, code, tau2"),
    "function_call not JSON": (sharegpt_record, _set(("conversations", 1, "value"), "get_weather(city='Paris')"),
                               "conversations[1].value: a function_call turn holds the call as JSON text"),
    "tools text not JSON": (sharegpt_record, _set(("tools",), "[{"), "tools: not JSON text of a tool list"),
}


def refused(path: Path, tmp_path: Path) -> str:
    """The one error line ``prefbuild label`` gives for ``path``."""
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(main, ["label", str(path), "-o", str(out)], catch_exceptions=False)
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert result.exit_code != 0 and "Traceback" not in result.output, result.output
    assert len(errors) == 1, result.output
    assert not out.exists()
    return errors[0]


def test_in_a_json_array_the_error_names_the_line_of_the_field(tmp_path: Path) -> None:
    records = [openai_record(), copy.deepcopy(openai_record())]
    function = records[1]["messages"][2]["tool_calls"][0]["function"]
    del function["name"]
    function["arguments"] = '{"city": "Marker"}'
    text = json.dumps(records, indent=2)
    path = tmp_path / "dump.json"
    path.write_text(text, encoding="utf-8")
    # a missing field is located at the object that lacks it
    line = text[: text.rindex('"function": {', 0, text.index("Marker"))].count("\n") + 1
    assert refused(path, tmp_path).startswith(f"error: {path}:{line} messages[2].tool_calls[0].function.name: missing")
    records[1]["messages"][2]["tool_calls"][0]["function"]["name"] = "get_weather"
    records[1]["messages"][3]["tool_call_id"] = "call_zz"
    text = json.dumps(records, indent=2)
    path.write_text(text, encoding="utf-8")
    line = text[: text.index('"call_zz"')].count("\n") + 1
    assert refused(path, tmp_path).startswith(f"error: {path}:{line} messages[3].tool_call_id: 'call_zz' answers")


# The slime tau2 pipeline's trajectories (tests/chatimport/data/slime_*.jsonl).
SLIME_ACTION = SHAREGPT.parent / "slime_action.jsonl"
SLIME_NATIVE = SHAREGPT.parent / "slime_native.jsonl"


def slime_record() -> dict[str, Any]:
    """``[airline]5[sample_0]``: system, customer, two lookups and their results, respond, customer, done()."""
    return json.loads(SLIME_ACTION.read_text(encoding="utf-8").splitlines()[0])


def slime_native_record() -> dict[str, Any]:
    """``[retail]22[sample_3]`` (under ``prompt``): a call of an unknown tool, its result, a lookup, respond."""
    return json.loads(SLIME_NATIVE.read_text(encoding="utf-8").splitlines()[1])


def _turn_text(position: int, text: str, key: str = "prompt") -> Callable[[dict[str, Any]], None]:
    return _set((key, position, "content"), text)


SLIME_CASES: dict[str, tuple[Callable[[], dict[str, Any]], Callable[[dict[str, Any]], None], str]] = {
    "prompt not a list": (slime_record, _set(("prompt",), "Hi"), "prompt: expected a list of chat turns, got str"),
    "a turn not an object": (slime_record, _set(("prompt", 2), "get_user_details()"),
                             "prompt[2]: expected a chat turn object with 'role' and 'content'"),
    "unknown role": (slime_record, _set(("prompt", 1, "role"), "customer"),
                     "prompt[1].role: unknown role 'customer'; a slime tau2 trajectory has system, user and assistant"),
    "content a number": (slime_record, _set(("prompt", 1, "content"), 7), "prompt[1].content: expected text, got int"),
    # after respond(...) the customer speaks: no call waits for a result
    "a result after respond": (slime_record, _turn_text(7, '[TOOL_RESULT]\nrespond(content="x")\nok\n[/TOOL_RESULT]'),
                               "prompt[7].content: a tool result with no call before it"),
    "a second result for one call": (slime_record, lambda record: record["prompt"].insert(4, record["prompt"][3]),
                                     "prompt[4].content: a tool result with no call before it"),
    "a result of another tool": (slime_record,
                                 _turn_text(3, '[TOOL_RESULT]\nget_order_details(order_id="#W1")\n{}\n[/TOOL_RESULT]'),
                                 "prompt[3].content: the result of 'get_order_details', but prompt[2] called "
                                 "'get_user_details'"),
    "an unclosed result": (slime_record, _turn_text(3, '[TOOL_RESULT]\nget_user_details(user_id="mia_li_3668")\n{}'),
                           "prompt[3].content: a [TOOL_RESULT] block without [/TOOL_RESULT] at its end"),
    "a native result after a broken call": (
        slime_native_record, _turn_text(2, '<tool_call>\n{"name": "lookup_order", "arguments": {\n</tool_call>'),
        "prompt[3].content: a tool result with no call before it"),
    "metadata not an object": (slime_record, _set(("metadata",), ["airline"]),
                               "metadata: expected an object, got list"),
    "success not true or false": (slime_record, _set(("metadata", "success"), "yes"),
                                  "metadata.success: expected true or false, got str"),
    "partial score above 1": (slime_record, _set(("metadata", "partial_score"), 1.5),
                              "metadata.partial_score: expected a number from 0 to 1, got 1.5"),
    "domain not text": (slime_record, _set(("metadata", "domain"), 3), "metadata.domain: expected a string, got int"),
    "task_id not text": (slime_record, _set(("task_id",), 5), "task_id: expected a string, got int"),
}


BROKEN = {**CASES, **{f"slime: {case}": broken for case, broken in SLIME_CASES.items()}}


@pytest.mark.parametrize("case", BROKEN, ids=str)
def test_a_broken_record_gives_one_located_error_line(case: str, tmp_path: Path) -> None:
    make, change, message = BROKEN[case]
    good, bad = make(), make()
    change(bad)
    path = tmp_path / "log.jsonl"
    # after a good record, and as the first record (the one the format is detected from)
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    assert refused(path, tmp_path).startswith(f"error: {path}:2 {message}")
    path.write_text(json.dumps(bad) + "\n" + json.dumps(good) + "\n", encoding="utf-8")
    assert refused(path, tmp_path).startswith(f"error: {path}:1 {message}")
