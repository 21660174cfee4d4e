"""Actionable hints for failed tau2 tool calls (``options.hints: actionable``).

In the spirit of environment tuning, a failed call's result says what went wrong and what
would be valid: the known tools (closest names first) for an unknown tool, the schema's
complaint and the tool's signature for bad arguments, and for a call the domain rejected
(``Error: Reservation not found``...) the signature plus the advice to check identifiers
against earlier lookups and not to repeat a failing call unchanged.

Hints never change what runs: the call goes to tau2 exactly as without hints, and tau2's
own error text stays first in the result; the evaluator replays tau2's original results.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from typing import Any

from prefbuild.records import FunctionCall, ToolCall
from prefbuild.tooluse.dispatch import ToolBox

HINT_PREFIX = "Hint: "


def signature(tool: Mapping[str, Any]) -> str:
    """``name(a: string, b?: integer)`` of an OpenAI tool definition (``?`` marks optional).

    Example:
        >>> parameters = {"properties": {"x": {"type": "string"}}, "required": ["x"]}
        >>> signature({"function": {"name": "f", "parameters": parameters}})
        'f(x: string)'
    """
    function = tool.get("function", tool)
    parameters = function.get("parameters") or {}
    required = set(parameters.get("required") or ())
    parts = []
    for name, schema in (parameters.get("properties") or {}).items():
        kind = schema.get("type") or ("object" if "$ref" in schema or "anyOf" in schema else "any")
        parts.append(f"{name}{'' if name in required else '?'}: {kind}")
    return f"{function['name']}({', '.join(parts)})"


def hint_for(name: str, arguments: Any, error_text: str, box: ToolBox, repeated: bool) -> str:
    """The hint line for one failed call.

    Args:
        name: the tool the model called.
        arguments: the decoded arguments (anything; a non-object is itself the problem).
        error_text: tau2's result text of the call (``Error: ...``).
        box: the domain's tool definitions.
        repeated: the same call (name and arguments) already failed earlier in the episode.

    Returns:
        One line starting with ``Hint: ``.
    """
    by_name = {str(tool.get("function", tool)["name"]): tool for tool in box.tools}
    if name not in by_name:
        close = difflib.get_close_matches(name, list(by_name), n=3, cutoff=0.5)
        suggestion = f" Did you mean {', '.join(close)}?" if close else ""
        return f"{HINT_PREFIX}there is no tool {name!r}.{suggestion} Valid tools: {', '.join(sorted(by_name))}."
    tool_signature = signature(by_name[name])
    if not isinstance(arguments, dict):
        return f"{HINT_PREFIX}arguments must be a JSON object. Valid call: {tool_signature}."
    _, problem = box.check(ToolCall(id="hint", function=FunctionCall(name=name, arguments=json.dumps(arguments))))
    if problem is not None:
        return f"{HINT_PREFIX}invalid arguments ({problem}). Valid call: {tool_signature}."
    advice = (
        "this exact call already failed; change the arguments instead of repeating it"
        if repeated
        else "the call is well-formed but the domain rejected it; check each identifier and value against "
        "the results of earlier lookups (or ask the user) before retrying"
    )
    return f"{HINT_PREFIX}{advice}. Valid call: {tool_signature}."
