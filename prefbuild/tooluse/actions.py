"""The action string a tool-use protocol hands to ``Env.step``.

``Env.step`` takes text, so a tool turn travels as JSON: ``{"tool_calls": [{"id", "name",
"arguments": {...}}, ...]}`` for a turn with calls, ``{"message": "..."}`` for a turn with
none (an answer, a reply to a user). Both keys may appear together when a turn has text
besides its calls. ``decode_action`` never raises: an env receives whatever a scripted
teacher or a user wrote, and reports a broken action as a problem, not a crash.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from prefbuild.records import FunctionCall, ToolCall


@dataclass(frozen=True)
class ToolAction:
    """A decoded tool-use action.

    Attributes:
        calls: The calls to run, in order (arguments JSON-encoded, as in ``records.ToolCall``).
        message: The turn's text without calls, or None.
        problems: What was wrong with the action string (empty for a well-formed one).
    """

    calls: list[ToolCall] = field(default_factory=list)
    message: str | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def has_calls(self) -> bool:
        return bool(self.calls)


def _arguments_object(arguments: str) -> Any:
    """The JSON value of encoded arguments, or the raw text when it is not JSON."""
    try:
        return json.loads(arguments)
    except (ValueError, RecursionError):  # handled: arguments that are not JSON are kept as the text the model wrote
        return arguments


def encode_action(calls: Sequence[ToolCall] | None = None, message: str | None = None) -> str:
    """The JSON action string for a turn's calls and/or message.

    Args:
        calls: ``records.ToolCall`` objects (their JSON-encoded arguments are embedded as objects).
        message: Text of a turn without calls (or the text beside the calls).

    Returns:
        ``{"tool_calls": [...]}``, ``{"message": ...}`` or both keys.

    Example:
        >>> encode_action(message="The answer is 4.")
        '{"message": "The answer is 4."}'
    """
    payload: dict[str, Any] = {}
    if calls:
        payload["tool_calls"] = [
            {"id": call.id, "name": call.function.name, "arguments": _arguments_object(call.function.arguments)}
            for call in calls
        ]
    if message is not None or not calls:
        payload["message"] = message or ""
    return json.dumps(payload, ensure_ascii=False)


def _decode_call(position: int, raw: Any, problems: list[str]) -> ToolCall | None:
    if not isinstance(raw, dict):
        problems.append(f"tool_calls[{position}] is not an object")
        return None
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        problems.append(f"tool_calls[{position}].name is missing")
        return None
    call_id = raw.get("id")
    if not isinstance(call_id, str) or not call_id:
        call_id = f"call_{position}"
    arguments = raw.get("arguments", {})
    encoded = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return ToolCall(id=call_id, function=FunctionCall(name=name, arguments=encoded))


def decode_action(action: str) -> ToolAction:
    """Read an action string written by ``encode_action``; never raises.

    Text that is not a JSON object is read as a message (with a problem), so a plain answer
    typed by a user still reaches the env.

    Args:
        action: The string ``Env.step`` received.

    Returns:
        The ``ToolAction``; ``problems`` names each broken part.

    Example:
        >>> action = decode_action('{"tool_calls": [{"id": "c0", "name": "f", "arguments": {"x": 1}}]}')
        >>> action.calls[0].function.arguments
        '{"x": 1}'
    """
    if not isinstance(action, str):
        return ToolAction(problems=["action is not text"])
    try:
        payload = json.loads(action)
    except (ValueError, RecursionError):  # handled: not JSON: reported as a problem below
        payload = None
    if not isinstance(payload, dict) or not ({"tool_calls", "message"} & payload.keys()):
        return ToolAction(message=action, problems=["action is not tool-action JSON; read as a message"])
    problems: list[str] = []
    unknown = sorted(set(payload) - {"tool_calls", "message"})
    if unknown:
        problems.append(f"unknown action keys: {', '.join(unknown)}")
    raw_calls = payload.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        problems.append("tool_calls is not a list")
        raw_calls = []
    calls = [call for position, raw in enumerate(raw_calls) if (call := _decode_call(position, raw, problems))]
    message = payload.get("message")
    if message is not None and not isinstance(message, str):
        problems.append("message is not a string")
        message = json.dumps(message, ensure_ascii=False)
    return ToolAction(calls=calls, message=message, problems=problems)
