"""Structured (OpenAI-layout) tool calls on the wire: the request's ``tools`` / ``tool_choice``
and the ``tool_calls`` of a server's answer (vLLM with ``--tool-call-parser hermes``).

Servers differ in small ways: some send ``arguments`` as an object instead of a JSON string,
some leave out ``type`` or an ``id``. ``response_tool_calls`` reads them all into
``records.ToolCall`` (arguments JSON-encoded, ids ``call_<n>`` where missing).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from prefbuild.records import FunctionCall, ToolCall
from prefbuild.tooluse.hermes import parse_tool_turn

if TYPE_CHECKING:
    from prefbuild.teachers.base import Completion


def tool_options(tools: Sequence[dict[str, Any]] | None, tool_choice: str | dict[str, Any] | None) -> dict[str, Any]:
    """The top-level request keys that offer tools.

    Args:
        tools: OpenAI tool definitions, or None.
        tool_choice: ``"auto"``, ``"required"``, ``"none"``, a named function, or None for the
            server's default (sent only with tools).

    Returns:
        ``{"tools": [...], "tool_choice": ...}`` as far as given; empty without tools.

    Example:
        >>> tool_options([{"type": "function", "function": {"name": "f"}}], "auto")["tool_choice"]
        'auto'
        >>> tool_options(None, "auto")
        {}
    """
    if not tools:
        return {}
    options: dict[str, Any] = {"tools": list(tools)}
    if tool_choice is not None:
        options["tool_choice"] = tool_choice
    return options


def response_tool_calls(raw: Any) -> tuple[ToolCall, ...]:
    """The ``tool_calls`` of one answer message as records.

    Args:
        raw: ``message["tool_calls"]`` of a chat completion choice (None or a list).

    Returns:
        The calls in order; empty when there are none.

    Raises:
        ValueError: a call without a function name (the answer is not a valid completion).

    Example:
        >>> calls = response_tool_calls([{"id": "c1", "type": "function",
        ...     "function": {"name": "f", "arguments": {"x": 1}}}])
        >>> (calls[0].id, calls[0].function.arguments)
        ('c1', '{"x": 1}')
    """
    if not raw:
        return ()
    if not isinstance(raw, list):
        raise ValueError(f"tool_calls is not a list: {raw!r:.200}")
    calls: list[ToolCall] = []
    for position, item in enumerate(raw):
        function = item.get("function") if isinstance(item, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(name, str) or not name:
            raise ValueError(f"tool_calls[{position}] has no function name: {item!r:.200}")
        arguments = function.get("arguments", "{}")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        call_id = item.get("id")
        calls.append(
            ToolCall(
                id=call_id if isinstance(call_id, str) and call_id else f"call_{position}",
                function=FunctionCall(name=name, arguments=arguments),
            )
        )
    return tuple(calls)


def with_text_tool_calls(completion: Completion, tools: Sequence[dict[str, Any]] | None) -> Completion:
    """A completion of a backend without a tool parser, with the Hermes calls of its text as
    ``tool_calls`` (``calls_in_text`` set: the text keeps them). Unchanged without tools.

    Example:
        >>> from prefbuild.teachers.base import Completion
        >>> done = with_text_tool_calls(Completion('<tool_call>{"name": "f", "arguments": {}}</tool_call>',
        ...     "stop", 1, 1, 0.0), [{"type": "function", "function": {"name": "f"}}])
        >>> (done.tool_calls[0].function.name, done.calls_in_text)
        ('f', True)
    """
    if not tools:
        return completion
    calls = tuple(parse_tool_turn(completion.text).calls)
    return dataclasses.replace(completion, tool_calls=calls, calls_in_text=True) if calls else completion
