"""Hermes / Qwen3 tool-call text: read the calls out of a model turn, write them back.

Models served without a tool parser write their calls into the text the way the Qwen2.5 /
Qwen3 (Hermes) chat templates show them::

    <think>reasoning</think>
    optional content
    <tool_call>
    {"name": "code_interpreter", "arguments": {"code": "print(1)"}}
    </tool_call>

Several ``<tool_call>`` blocks are parallel calls. The parser tolerates what small models
get wrong (an unclosed last tag, a markdown fence inside the tag, a bare JSON call without
tags, ``arguments`` given as a JSON string or under ``parameters``) and reports every
tolerance in ``normalized`` and every deviation in ``problems``, so labelers can tell a
clean turn from a repaired one. ``render_tool_turn`` writes calls exactly as the Qwen3
template renders an assistant message with ``tool_calls``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from prefbuild.records import FunctionCall, ToolCall

_OPEN_TAG = re.compile(r"<tool_call>", re.IGNORECASE)
_CLOSE_TAG = re.compile(r"</tool_call>", re.IGNORECASE)
_CLOSE = re.compile(r"\s*</tool_call>", re.IGNORECASE)
_DECODER = json.JSONDecoder()
_THINK = re.compile(r"<think>(?P<body>.*?)(?:</think>|$)", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"^\s*```[\w-]*\s*$")


@dataclass
class ToolTurn:
    """One assistant turn read as Hermes tool calls.

    Attributes:
        content: The text outside the calls and the reasoning blocks, stripped.
        thought: The ``<think>`` blocks joined by newlines, or None.
        calls: The decoded calls in order (arguments JSON-encoded, as OpenAI servers send them).
        problems: Every deviation from the clean format ("unclosed <tool_call>", ...).
        normalized: Every tolerance the parser applied to read the calls.
    """

    content: str
    thought: str | None
    calls: list[ToolCall] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    normalized: list[str] = field(default_factory=list)


def split_thinking(text: str) -> tuple[list[str], str]:
    """Reasoning blocks and the text without them.

    A bare leading ``...</think>`` (the chat template opened the block in the prompt) counts
    as a reasoning block too.

    Args:
        text: One model turn.

    Returns:
        The non-empty reasoning texts and the remaining text.

    Example:
        >>> split_thinking("<think>plan</think>answer")
        (['plan'], 'answer')
    """
    thoughts: list[str] = []
    if "</think>" in text and "<think>" not in text:
        head, _, text = text.partition("</think>")
        thoughts.append(head.strip())
    thoughts.extend(match.group("body").strip() for match in _THINK.finditer(text))
    return [thought for thought in thoughts if thought], _THINK.sub("", text)


def strip_fence_lines(text: str) -> tuple[str, bool]:
    """Remove markdown code-fence lines; returns the text and whether any was found.

    Example:
        >>> strip_fence_lines("```json\\n{}\\n```")
        ('{}', True)
    """
    lines = text.split("\n")
    kept = [line for line in lines if not _FENCE.match(line)]
    return "\n".join(kept), len(kept) != len(lines)


def _closed_json_end(text: str, start: int) -> int | None:
    """End of ``<JSON object></tool_call>`` starting at ``start`` (after the opening tag), or None.

    Decoding the JSON first keeps a ``</tool_call>`` inside a string argument (code that prints
    the tag) from cutting the call short.
    """
    begin = len(text) - len(text[start:].lstrip())
    try:
        _, json_end = _DECODER.raw_decode(text, begin)
    except (ValueError, RecursionError):  # handled: not a JSON value at this position: not a bare tool call
        return None
    rest = text[json_end:]
    close = _CLOSE.match(rest)
    return json_end + close.end() if close else None


def _call_blocks(text: str, normalized: list[str], problems: list[str]) -> tuple[list[str], str]:
    """Every call body in ``text`` and the text outside the calls."""
    bodies: list[str] = []
    outside: list[str] = []
    position = 0
    while (opening := _OPEN_TAG.search(text, position)) is not None:
        outside.append(text[position : opening.start()])
        body_start = opening.end()
        end = _closed_json_end(text, body_start)
        if end is not None:
            bodies.append(text[body_start:end][: -len("</tool_call>")])
            position = end
            continue
        closing = _CLOSE_TAG.search(text, body_start)
        if closing is None:
            bodies.append(text[body_start:])
            normalized.append("unclosed <tool_call>")
            problems.append("unclosed <tool_call>")
            position = len(text)
            break
        bodies.append(text[body_start : closing.start()])
        position = closing.end()
    outside.append(text[position:])
    if not bodies:
        candidate = strip_fence_lines(text)[0].strip()
        if candidate.startswith("{") and candidate.endswith("}") and '"name"' in candidate:
            normalized.append("bare JSON tool call")
            problems.append("tool call without <tool_call> tags")
            return [candidate], ""
    return bodies, "".join(outside)


def _decode_block(body: str, call_id: str, normalized: list[str], problems: list[str]) -> ToolCall | None:
    """One ``records.ToolCall`` from a call body, or None (with a problem) when it is not a call."""
    body, fenced = strip_fence_lines(body)
    if fenced:
        normalized.append("markdown fence")
        problems.append("markdown fence")
    try:
        payload = json.loads(body.strip())
    except (ValueError, RecursionError):  # handled: reported in the turn's problems
        problems.append("tool call is not valid JSON")
        return None
    if not isinstance(payload, dict):
        problems.append("tool call is not a JSON object")
        return None
    name = payload.get("name")
    if not isinstance(name, str) or not name.strip():
        problems.append("tool call without a name")
        return None
    if "arguments" in payload:
        arguments = payload["arguments"]
    elif "parameters" in payload:
        arguments = payload["parameters"]
        normalized.append("'parameters' read as 'arguments'")
    else:
        arguments = {}
        normalized.append("missing arguments read as {}")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
            normalized.append("arguments given as a JSON string")
        except (ValueError, RecursionError):  # handled: reported in the turn's problems
            problems.append(f"arguments of {name!r} are not valid JSON")
            return None
    if not isinstance(arguments, dict):
        problems.append(f"arguments of {name!r} are not a JSON object")
        return None
    encoded = json.dumps(arguments, ensure_ascii=False)
    return ToolCall(id=call_id, function=FunctionCall(name=name.strip(), arguments=encoded))


def parse_tool_turn(text: str, id_prefix: str = "call_") -> ToolTurn:
    """Read the Hermes tool calls, reasoning and content of one model turn; never raises.

    Args:
        text: The model's text exactly as generated.
        id_prefix: Call ids are ``id_prefix`` + the call's position in the turn (Hermes text
            carries no ids).

    Returns:
        A ``ToolTurn``; ``problems`` is empty only for a clean turn.

    Example:
        >>> turn = parse_tool_turn('<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>')
        >>> (turn.calls[0].function.name, turn.calls[0].function.arguments, turn.problems)
        ('f', '{"x": 1}', [])
    """
    if not isinstance(text, str):
        return ToolTurn(content="", thought=None, problems=["output is not text"])
    normalized: list[str] = []
    problems: list[str] = []
    # Reasoning comes before the calls; a "<think>" inside a call's arguments is not reasoning.
    first_call = _OPEN_TAG.search(text)
    head, calls_part = (text, "") if first_call is None else (text[: first_call.start()], text[first_call.start() :])
    thoughts, head = split_thinking(head)
    bodies, outside = _call_blocks(head + calls_part, normalized, problems)
    calls: list[ToolCall] = []
    for body in bodies:
        call = _decode_block(body, f"{id_prefix}{len(calls)}", normalized, problems)
        if call is not None:
            calls.append(call)
    if bodies:
        outside, fenced = strip_fence_lines(outside)
        if fenced:
            normalized.append("markdown fence around the calls")
            problems.append("markdown fence")
    return ToolTurn(
        content=outside.strip(),
        thought="\n".join(thoughts) or None,
        calls=calls,
        problems=problems,
        normalized=normalized,
    )


def call_arguments_text(arguments: str | Mapping[str, Any]) -> str:
    """Arguments as the chat template writes them: a JSON object, ``ensure_ascii`` off."""
    if isinstance(arguments, str):
        try:
            return json.dumps(json.loads(arguments), ensure_ascii=False)
        except (ValueError, RecursionError):
            # handled: arguments that are not JSON are written as the text the model wrote
            return arguments
    return json.dumps(dict(arguments), ensure_ascii=False)


def render_tool_call(name: str, arguments: str | Mapping[str, Any]) -> str:
    """One ``<tool_call>`` block as the Qwen3 template writes it.

    Example:
        >>> print(render_tool_call("f", {"x": 1}))
        <tool_call>
        {"name": "f", "arguments": {"x": 1}}
        </tool_call>
    """
    return f'<tool_call>\n{{"name": "{name}", "arguments": {call_arguments_text(arguments)}}}\n</tool_call>'


def render_tool_turn(calls: Sequence[ToolCall | Mapping[str, Any]], content: str | None = None) -> str:
    """An assistant turn's text with ``calls``, as a Qwen/Hermes chat template shows it.

    Args:
        calls: ``records.ToolCall`` objects or mappings with ``name`` and ``arguments``
            (a dict or a JSON string).
        content: Text before the calls (Qwen3 puts a newline between it and the first call).

    Returns:
        The turn text; parsing it with ``parse_tool_turn`` gives back the same calls.

    Example:
        >>> render_tool_turn([{"name": "f", "arguments": {}}], content="Let me check.")
        'Let me check.\\n<tool_call>\\n{"name": "f", "arguments": {}}\\n</tool_call>'
    """
    blocks: list[str] = []
    for call in calls:
        if isinstance(call, ToolCall):
            blocks.append(render_tool_call(call.function.name, call.function.arguments))
        else:
            blocks.append(render_tool_call(str(call["name"]), call.get("arguments", {})))
    text = content or ""
    if blocks:
        text = f"{text}\n" if text else ""
        text += "\n".join(blocks)
    return text
