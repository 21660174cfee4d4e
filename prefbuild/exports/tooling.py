"""Tool turns in exports: Hermes text made structured, and the ``tools`` column.

A model served without a tool parser writes its calls as Hermes text; trainers want them as
structured ``tool_calls`` so the chat template renders them (and the tool definitions) itself.
``structured_turn`` turns an assistant message whose text holds cleanly written calls into
``content`` (the text before the first call, as the Qwen template writes it back) plus
``tool_calls``; a turn with broken calls stays text, so a rejected malformed call is trained
on exactly as it was written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from prefbuild.records import Message, Role
from prefbuild.tooluse.hermes import parse_tool_turn

_FIRST_CALL = re.compile(r"<tool_call>", re.IGNORECASE)


def structured_turn(message: Message) -> Message:
    """An assistant message with its Hermes calls as ``tool_calls`` (unchanged when it has
    structured calls already, holds no calls, or writes them with any problem).

    Args:
        message: Any message.

    Returns:
        The message, structured where its text allows.

    Example:
        >>> turn = structured_turn(Message(role="assistant",
        ...     content='Let me run it.\\n<tool_call>\\n{"name": "f", "arguments": {"x": 1}}\\n</tool_call>'))
        >>> (turn.content, turn.tool_calls[0].function.arguments)
        ('Let me run it.', '{"x": 1}')
    """
    if message.role is not Role.assistant or message.tool_calls or "<tool_call>" not in message.content.lower():
        return message
    turn = parse_tool_turn(message.content)
    if not turn.calls or turn.problems or turn.normalized:
        return message
    first = _FIRST_CALL.search(message.content)
    head = message.content[: first.start()].rstrip() if first is not None else ""
    tail = message.content[message.content.lower().rfind("</tool_call>") + len("</tool_call>") :].strip()
    if tail:
        return message  # text after the calls has no place in a structured turn
    return message.model_copy(update={"content": head, "tool_calls": turn.calls})


def export_messages(messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None) -> list[Message]:
    """Messages as a tool dataset holds them: structured calls where the record has tools."""
    if not tools:
        return list(messages)
    return [structured_turn(message) for message in messages]


def tools_column(tools: Sequence[dict[str, Any]] | None) -> dict[str, str]:
    """``{"tools": <JSON text>}`` for a record with tools, else nothing.

    JSON text, as TRL's trainers accept it (``json.loads`` when the value is a string): tool
    schemas differ in shape, which one parquet column of structs could not hold.

    Example:
        >>> tools_column([{"type": "function", "function": {"name": "f"}}])
        {'tools': '[{"type": "function", "function": {"name": "f"}}]'}
    """
    return {"tools": json.dumps(list(tools), ensure_ascii=False)} if tools else {}
