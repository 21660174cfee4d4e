"""The turns of a tool-calling chat log as ``ChatTurn`` objects, from any of the layouts people keep
them in (one record at a time):

- OpenAI messages: ``{"role", "content"}``; an assistant turn's structured calls in ``tool_calls``
  (``[{"id", "type": "function", "function": {"name", "arguments"}}]``, ``arguments`` JSON text or
  an object), one ``{"role": "tool", "tool_call_id", "content"}`` message per result; ``content``
  may be null or a list of ``{"type": "text", "text"}`` parts.
- Hermes / Qwen3 text: calls written in the assistant text as ``<tool_call>{...}</tool_call>``
  (read by the env's protocol when the steps are built), results as ``tool`` messages or as a
  user turn of ``<tool_response>...</tool_response>`` blocks (how the Qwen3 template shows them),
  which becomes one tool result per block.
- ShareGPT / LLaMA-Factory: ``{"from", "value"}`` with ``function_call`` turns (the call as JSON
  text ``{"name", "arguments"}``, a list of them for parallel calls) and ``observation`` results.

Whether a call failed is read from its result, conservatively (``call_failure``). A result that
names a call id no call of the turn before it has, or a result before any assistant turn, is
refused: the OpenAI API refuses such a message list as well.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from prefbuild.io.importers.located import JsonPath, Locate, fail, field_name, get_field
from prefbuild.io.importers.tool_steps import ChatTurn, RawCall, usage_of

# Role names of both layouts (OpenAI ``role``, ShareGPT ``from``) and what they are.
ROLES: dict[str, str] = {
    "system": "system",
    "developer": "system",  # OpenAI's newer name for the system turn
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "gpt": "assistant",
    "function_call": "assistant",
    "tool": "tool",
    "observation": "tool",
}
_RESPONSE = re.compile(r"<tool_response>\n?(?P<body>.*?)\n?</tool_response>", re.DOTALL)
_TOOL_CALL_WORDS = re.compile(r"<tool_call>(?P<body>.*?)</tool_call>", re.DOTALL)
# How a failed call's result starts: "Error: ...", "ERROR ...", "error: ...", "Exception ...", "ValueError: ...".
_FAILED_START = re.compile(r"(?:Error\b|ERROR\b|error:|Exception\b|[A-Z]\w*(?:Error|Exception):)")
_TRACEBACK = re.compile(r"^Traceback \(most recent call last\):", re.MULTILINE)


def call_failure(text: str) -> str | None:
    """Why a tool result says its call failed, or None for a call that ran.

    The rule is conservative (a result that merely mentions an error is a call that ran): a JSON
    object with a non-empty ``error`` member, a Python traceback, or text whose first line
    starts with ``Error`` / ``ERROR`` / ``error:`` / ``Exception`` or an exception name and a colon.

    Example:
        >>> call_failure('{"error": "city not found"}')
        'city not found'
        >>> call_failure("Error: unknown tool 'x'")
        "Error: unknown tool 'x'"
        >>> call_failure('{"temperature": 18, "error": null}') is None
        True
        >>> call_failure("Errors found: 0") is None
        True
    """
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            value = json.loads(stripped)
        except (ValueError, RecursionError):  # handled: not JSON, judged as text below
            value = None
        if isinstance(value, dict):
            error = value.get("error")
            if error in (None, False, "", [], {}):
                return None
            return error if isinstance(error, str) else json.dumps(error, ensure_ascii=False)
    if _TRACEBACK.search(stripped):
        return [line for line in stripped.splitlines() if line.strip()][-1].strip()
    first = stripped.split("\n", 1)[0]
    return first if _FAILED_START.match(first) else None


def chat_turns(history: Any, key: str, locate: Locate) -> list[ChatTurn]:
    """The turns of a record's ``messages`` / ``conversations`` list.

    Args:
        history: the list.
        key: its key in the record (for error locations).
        locate: ``file:line`` of a JSON path.

    Returns:
        The turns in order; a ``<tool_response>`` user turn becomes one tool turn per block.

    Raises:
        ExternalLogError: a turn or field is not of a chat log's form, naming ``file:line field``.

    Example:
        >>> turns = chat_turns([{"from": "human", "value": "hi"}, {"from": "function_call",
        ...     "value": '{"name": "f", "arguments": {}}'}, {"from": "observation", "value": "ok"}], "c", str)
        >>> [(turn.role, [call.name for call in turn.calls]) for turn in turns]
        [('user', []), ('assistant', ['f']), ('tool', [])]
    """
    if not isinstance(history, list):
        raise fail(locate, (key,), f"expected a list of chat turns, got {type(history).__name__}")
    turns: list[ChatTurn] = []
    paths: list[JsonPath] = []
    for position, raw in enumerate(history):
        path: JsonPath = (key, position)
        for turn in _read_turn(raw, locate, path):
            turns.append(turn)
            paths.append(path)
    _check_results(turns, paths, locate)
    return turns


def _read_turn(raw: Any, locate: Locate, path: JsonPath) -> list[ChatTurn]:
    if not isinstance(raw, dict) or not ({"role", "from"} & raw.keys()):
        expected = "expected a chat turn object with 'role' and 'content' (or ShareGPT 'from' and 'value')"
        raise fail(locate, path, expected)
    role_key, text_key = ("role", "content") if "role" in raw else ("from", "value")
    name = raw[role_key]
    role = ROLES.get(name) if isinstance(name, str) else None
    if role is None:
        raise fail(locate, (*path, role_key), f"unknown role {name!r}; a tool chat log has {', '.join(ROLES)}")
    text = _text(raw.get(text_key), locate, (*path, text_key))
    if name == "function_call":
        return [_function_call(text, locate, (*path, text_key))]
    if role == "assistant":
        calls = _structured_calls(raw, locate, path)
        return [ChatTurn(role="assistant", content=text, calls=calls, usage=usage_of(raw.get("usage")),
                         finish_reason=raw.get("finish_reason") if isinstance(raw.get("finish_reason"), str) else None)]
    if raw.get("tool_calls"):
        raise fail(locate, (*path, "tool_calls"), f"tool calls on a {name!r} turn (only an assistant turn makes calls)")
    if role == "tool":
        return [_result(raw, text, locate, path)]
    if role == "user" and _only_responses(text):
        return [_result({}, match.group("body"), locate, path) for match in _RESPONSE.finditer(text)]
    return [ChatTurn(role=role, content=text)]


def _text(content: Any, locate: Locate, path: JsonPath) -> str:
    """A turn's text: a string, null, or a list of ``{"type": "text", "text"}`` parts (joined)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise fail(locate, path, f"expected text, null or a list of text parts, got {type(content).__name__}")
    parts = []
    for position, part in enumerate(content):
        if isinstance(part, str):
            parts.append(part)
            continue
        kind = part.get("type") if isinstance(part, dict) else type(part).__name__
        if kind != "text" or not isinstance(part.get("text"), str):
            message = f"a {kind!r} part: only text parts ({{'type': 'text', 'text'}}) are read"
            raise fail(locate, (*path, position), message)
        parts.append(part["text"])
    return "".join(parts)


def _structured_calls(raw: dict[str, Any], locate: Locate, path: JsonPath) -> tuple[RawCall, ...]:
    """An assistant message's ``tool_calls``: OpenAI's ``{"id", "function": {"name", "arguments"}}``
    (or the flat ``{"id", "name", "arguments"}`` some servers write)."""
    calls = get_field(raw, "tool_calls", list, locate, path, required=False) or []
    found = []
    for position, call in enumerate(calls):
        where = (*path, "tool_calls", position)
        if not isinstance(call, dict):
            raise fail(locate, where, f"expected a tool call object, got {type(call).__name__}")
        function = call.get("function")
        if function is not None:
            if not isinstance(function, dict):
                raise fail(locate, (*where, "function"), f"expected an object, got {type(function).__name__}")
            fields, inner = function, (*where, "function")
        else:
            fields, inner = call, where
        name = get_field(fields, "name", str, locate, inner)
        if not name.strip():
            raise fail(locate, (*inner, "name"), "empty tool name")
        call_id = get_field(call, "id", str, locate, where, required=False) or f"call_{position}"
        found.append(_call(call_id, name, fields.get("arguments"), locate, (*inner, "arguments")))
    return tuple(found)


def _call(call_id: str, name: str, arguments: Any, locate: Locate, path: JsonPath) -> RawCall:
    """One call; arguments that are text but not a JSON object are the model's mistake, kept as written
    (the call is recorded as failed, as prefbuild's own tool envs record it)."""
    if arguments is None:
        return RawCall(id=call_id, name=name, arguments={}, encoded="{}")
    if isinstance(arguments, dict):
        return RawCall(id=call_id, name=name, arguments=arguments, encoded=json.dumps(arguments, ensure_ascii=False))
    if not isinstance(arguments, str):
        raise fail(locate, path, f"expected JSON text or an object, got {type(arguments).__name__}")
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except (ValueError, RecursionError):  # handled: recorded as the call's problem
        return RawCall(id=call_id, name=name, arguments=None, encoded=arguments,
                       problem=f"arguments of {name!r} are not valid JSON")
    if not isinstance(value, dict):
        return RawCall(id=call_id, name=name, arguments=None, encoded=arguments,
                       problem=f"arguments of {name!r} are not a JSON object")
    return RawCall(id=call_id, name=name, arguments=value, encoded=arguments)


def _function_call(text: str, locate: Locate, path: JsonPath) -> ChatTurn:
    """A LLaMA-Factory ``function_call`` turn: a JSON call ``{"name", "arguments"}`` or a list of them,
    optionally after text and between ``<tool_call>`` words (LLaMA-Factory's default ``tool_call_words``)."""
    content, body = "", text
    match = _TOOL_CALL_WORDS.search(text)
    if match is not None:
        content, body = text[: match.start()].rstrip(), match.group("body")
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):  # handled: refused below, as LLaMA-Factory refuses it
        value = None
    items = value if isinstance(value, list) else [value]
    if not items or not all(isinstance(item, dict) and isinstance(item.get("name"), str) and item["name"].strip()
                            for item in items):
        raise fail(locate, path, "a function_call turn holds the call as JSON text {\"name\", \"arguments\"} "
                                 "(or a list of them), as LLaMA-Factory reads it")
    calls = tuple(_call(f"call_{position}", item["name"].strip(), item.get("arguments"), locate, path)
                  for position, item in enumerate(items))
    return ChatTurn(role="assistant", content=content, calls=calls)


def _result(raw: dict[str, Any], text: str, locate: Locate, path: JsonPath) -> ChatTurn:
    """A tool result: failed by its ``error`` flag (true, or an error text) or by ``call_failure``."""
    call_id = get_field(raw, "tool_call_id", str, locate, path, required=False)
    name = get_field(raw, "name", str, locate, path, required=False)
    flag = raw.get("error")
    if isinstance(flag, str) and flag.strip():
        error: str | None = flag.strip().split("\n", 1)[0]
    elif flag is True:
        error = (text.strip().split("\n", 1)[0] or "the tool reported an error")
    else:
        error = call_failure(text)
    return ChatTurn(role="tool", content=text, call_id=call_id or None, name=name, failed=error is not None,
                    error=error)


def _only_responses(text: str) -> bool:
    """Is a user turn nothing but ``<tool_response>`` blocks (the Qwen3 template's tool results)?"""
    return "<tool_response>" in text and not _RESPONSE.sub("", text).strip()


def _check_results(turns: Sequence[ChatTurn], paths: Sequence[JsonPath], locate: Locate) -> None:
    """Every tool result follows an assistant turn, and one that names a call id names a call of it
    (where that turn's calls are structured: Hermes text calls carry no ids of the log's)."""
    last: ChatTurn | None = None
    last_path: JsonPath = ()
    for turn, path in zip(turns, paths, strict=True):
        if turn.role == "assistant":
            last, last_path = turn, path
            continue
        if turn.role != "tool":
            continue
        if last is None:
            raise fail(locate, path, "a tool result before any assistant turn")
        ids = [call.id for call in last.calls]
        if turn.call_id is not None and ids and turn.call_id not in ids:
            raise fail(locate, (*path, "tool_call_id"),
                       f"{turn.call_id!r} answers no call of {field_name(last_path)} (its calls: {', '.join(ids)})")
