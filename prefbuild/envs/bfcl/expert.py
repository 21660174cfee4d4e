"""The BFCL expert: the ground-truth calls of each turn, one call per step, then a closing message.

Turns without ground truth (a function or a parameter is missing) are answered by asking,
which is what BFCL expects of a model there.
"""

from __future__ import annotations

import json
from typing import Any

from prefbuild.envs.bfcl.calls import CallSpec, parse_python_calls
from prefbuild.records import FunctionCall, ToolCall

TURN_DONE = "Done: the request is complete."
ASK_MISSING_FUNCTION = (
    "None of the available functions can do this part of the request. "
    "Could you provide a function for it, or tell me how you would like to proceed?"
)
ASK_MISSING_PARAMETER = (
    "I need more information before I can do this: the request leaves out a required detail. "
    "Could you tell me exactly which one you mean?"
)


def ground_truth_calls(texts: list[str]) -> list[CallSpec]:
    """A turn's ground-truth call strings as calls (parsed safely, never evaluated).

    Args:
        texts: e.g. ``["cd(folder='document')", "mkdir(dir_name='temp')"]``.

    Returns:
        One ``CallSpec`` per string.

    Example:
        >>> ground_truth_calls(["sort('report.pdf')"])[0].args
        ('report.pdf',)
    """
    calls: list[CallSpec] = []
    for text in texts:
        calls.extend(parse_python_calls(text))
    return calls


def as_tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> ToolCall:
    """A named-argument call as a ``records.ToolCall``.

    Args:
        call_id: the call id.
        name: the function name.
        arguments: arguments by parameter name.

    Returns:
        The tool call with JSON-encoded arguments.

    Example:
        >>> as_tool_call("c0", "ls", {"a": True}).function.arguments
        '{"a": true}'
    """
    return ToolCall(id=call_id, function=FunctionCall(name=name, arguments=json.dumps(arguments, ensure_ascii=False)))


def asking_message(category: str) -> str:
    """What the expert says in a turn it cannot serve (no ground-truth calls).

    Args:
        category: the BFCL category.

    Returns:
        A request for the missing function (``miss_func``) or detail (otherwise).

    Example:
        >>> asking_message("miss_func").startswith("None of the available functions")
        True
    """
    return ASK_MISSING_FUNCTION if category == "miss_func" else ASK_MISSING_PARAMETER


def expert_batch(remaining: list[CallSpec], steps_left: int) -> list[CallSpec]:
    """The calls the expert makes in its next step: the run of consecutive calls of the same
    function, or more when the remaining runs would not fit in the steps left of the turn.

    Args:
        remaining: the turn's ground-truth calls not made yet.
        steps_left: model steps left in the turn before BFCL's force quit (one is kept for the
            closing message).

    Returns:
        A non-empty prefix of ``remaining``.

    Example:
        >>> [call.name for call in expert_batch(ground_truth_calls(["rm('a')", "rm('b')", "ls()"]), 10)]
        ['rm', 'rm']
    """
    runs: list[list[CallSpec]] = []
    for call in remaining:
        if runs and runs[-1][0].name == call.name:
            runs[-1].append(call)
        else:
            runs.append([call])
    if len(runs) <= max(steps_left, 1):
        return runs[0]
    size = -(-len(remaining) // max(steps_left, 1))
    return remaining[:size]
