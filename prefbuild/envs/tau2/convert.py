"""Conversions between tau2's message models, OpenAI chat dicts and prefbuild records."""

from __future__ import annotations

import json
from typing import Any

from prefbuild.records import FunctionCall, Message, Role, ToolCall


def to_openai(message: Any) -> dict[str, Any]:
    """A tau2 message (system / user / assistant / tool) as an OpenAI chat message dict.

    Example:
        >>> from tau2.data_model.message import UserMessage
        >>> to_openai(UserMessage(role="user", content="hi"))
        {'role': 'user', 'content': 'hi'}
    """
    if message.role == "tool":
        return {"role": "tool", "content": message.content or "", "tool_call_id": message.id}
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    calls = getattr(message, "tool_calls", None)
    if calls:
        out["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
            }
            for call in calls
        ]
    return out


def tool_calls_from_openai(raw_calls: list[dict[str, Any]] | None, requestor: str, prefix: str) -> list[Any]:
    """tau2 ``ToolCall`` models from an OpenAI reply's ``tool_calls`` (ids made unique and non-empty).

    Arguments that are not a JSON object become ``{}`` and the call still runs, as tau2's
    litellm path would fail it: the environment then answers with its own error.
    """
    from prefbuild.envs.tau2.package import tau2_modules

    ToolCallModel = tau2_modules().messages.ToolCall
    calls = []
    for position, raw in enumerate(raw_calls or []):
        function = raw.get("function") or {}
        arguments = function.get("arguments") or "{}"
        try:
            parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
        except ValueError:  # handled: a recorded call whose arguments are not JSON is converted with no arguments
            parsed = {}
        calls.append(
            ToolCallModel(
                id=f"{prefix}{position}",
                name=str(function.get("name") or ""),
                arguments=parsed if isinstance(parsed, dict) else {},
                requestor=requestor,
            )
        )
    return calls


def to_record(message: Any) -> Message:
    """A tau2 message as a prefbuild ``records.Message`` (for prompts and stored prefixes)."""
    if message.role == "tool":
        return Message(role=Role.tool, content=message.content or "", tool_call_id=message.id)
    calls = getattr(message, "tool_calls", None)
    record_calls = None
    if calls and message.role == "assistant":
        record_calls = [
            ToolCall(id=call.id, function=FunctionCall(name=call.name, arguments=json.dumps(call.arguments)))
            for call in calls
        ]
    return Message(role=Role(message.role), content=message.content or "", tool_calls=record_calls)
