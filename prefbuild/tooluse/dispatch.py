"""Run a turn's tool calls: check each against its tool's JSON Schema, call the handler,
and produce the ``tool`` messages and the typed ``ToolCallFacts`` labelers read.

Argument checking uses the ``jsonschema`` library (the schema dialect each tool declares,
Draft 2020-12 when it declares none), so "missing required argument", "wrong type" and
"unexpected argument" read the same in every tool env.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

import jsonschema
from jsonschema.exceptions import best_match

from prefbuild.records import Message, Role, ToolCall, ToolCallFacts


class ToolError(Exception):
    """A tool's own failure; its text becomes the tool result shown to the model.

    ``hinted`` marks an error text that tells the model how to fix the call.
    """

    def __init__(self, text: str, *, hinted: bool = False) -> None:
        super().__init__(text)
        self.text = text
        self.hinted = hinted


@dataclass(frozen=True)
class ToolOutput:
    """What a handler returns when a plain string is not enough.

    Attributes:
        text: The tool result shown to the model.
        error: Why the call failed (e.g. the program raised); None when it ran cleanly.
        hinted: The text carries an actionable hint.
    """

    text: str
    error: str | None = None
    hinted: bool = False


Handler = Callable[[dict[str, Any]], "str | ToolOutput"]


@dataclass(frozen=True)
class ToolReply:
    """One call's result: the ``tool`` message for the transcript and its facts."""

    message: Message
    facts: ToolCallFacts


def tool_name(tool: Mapping[str, Any]) -> str:
    """The function name of an OpenAI tool definition (``{"type": "function", "function": {...}}``)."""
    function = tool.get("function", tool)
    return str(function["name"])


@dataclass(frozen=True)
class ToolBox:
    """A set of OpenAI tool definitions with their argument validators.

    Example:
        >>> box = ToolBox([{"type": "function", "function": {"name": "f", "parameters": {
        ...     "type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}}}])
        >>> box.check(ToolCall(id="c0", function={"name": "f", "arguments": '{"x": "1"}'}))
        ({'x': '1'}, "argument 'x': '1' is not of type 'integer'")
    """

    tools: Sequence[Mapping[str, Any]]

    @cached_property
    def validators(self) -> dict[str, jsonschema.protocols.Validator]:
        found: dict[str, jsonschema.protocols.Validator] = {}
        for tool in self.tools:
            function = tool.get("function", tool)
            schema = function.get("parameters") or {"type": "object"}
            validator_class = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
            validator_class.check_schema(schema)
            found[str(function["name"])] = validator_class(schema)
        return found

    @property
    def names(self) -> list[str]:
        return [tool_name(tool) for tool in self.tools]

    def check(self, call: ToolCall) -> tuple[dict[str, Any] | None, str | None]:
        """The call's arguments when they satisfy its tool's schema, else (arguments or None, error).

        Args:
            call: One decoded call.

        Returns:
            ``(arguments, None)`` for a valid call; ``(arguments or None, error text)`` otherwise.
        """
        try:
            arguments = json.loads(call.function.arguments)
        except (ValueError, RecursionError):  # handled: reported to the model as the call's error
            return None, f"arguments of {call.function.name!r} are not valid JSON"
        if not isinstance(arguments, dict):
            return None, f"arguments of {call.function.name!r} are not a JSON object"
        validator = self.validators.get(call.function.name)
        if validator is None:
            known = ", ".join(self.names) or "none"
            return arguments, f"unknown tool {call.function.name!r}; available tools: {known}"
        error = best_match(validator.iter_errors(arguments))
        if error is None:
            return arguments, None
        where = ".".join(str(part) for part in error.absolute_path)
        return arguments, (f"argument {where!r}: {error.message}" if where else f"arguments: {error.message}")


def run_call(call: ToolCall, box: ToolBox, handlers: Mapping[str, Handler]) -> ToolReply:
    """Check and run one call; every failure becomes an error tool result, never an exception.

    Args:
        call: The call to run.
        box: The tool definitions to check it against.
        handlers: Tool name -> function of the checked arguments returning ``str`` or ``ToolOutput``
            (or raising ``ToolError``).

    Returns:
        The ``tool`` message (with ``tool_call_id`` and ``name``) and its ``ToolCallFacts``.
    """
    arguments, error = box.check(call)
    hinted = False
    if error is not None:
        text = f"Error: {error}"
    else:
        assert arguments is not None
        try:
            output = handlers[call.function.name](arguments)
        except ToolError as failure:
            output = ToolOutput(text=failure.text, error=failure.text, hinted=failure.hinted)
        if isinstance(output, str):
            output = ToolOutput(text=output)
        text, error, hinted = output.text, output.error, output.hinted
    facts = ToolCallFacts(
        call_id=call.id, name=call.function.name, arguments=arguments, ok=error is None, error=error, hinted=hinted
    )
    message = Message(role=Role.tool, content=text, tool_call_id=call.id, name=call.function.name)
    return ToolReply(message=message, facts=facts)


def run_calls(calls: Sequence[ToolCall], box: ToolBox, handlers: Mapping[str, Handler]) -> list[ToolReply]:
    """``run_call`` for each call of a turn, in order (parallel calls run one after another)."""
    return [run_call(call, box, handlers) for call in calls]


def joined_observation(replies: Sequence[ToolReply]) -> str:
    """The tool results of one turn joined for display (``StepResult.observation``)."""
    if len(replies) == 1:
        return replies[0].message.content
    return "\n\n".join(f"[{reply.facts.name}] {reply.message.content}" for reply in replies)


_last_tools: list[Any] = [None, None]  # [the tools list last asked about, its ToolBox or why it is unusable]


def checked_toolbox(tools: Sequence[Mapping[str, Any]]) -> ToolBox | str:
    """``tools`` as a ToolBox whose validators are built, or why its definitions are unusable.

    Checking a schema costs milliseconds a tool and a run offers the same few tool lists in every
    episode, so each distinct list is checked once and its ToolBox shared (also kept for the list
    object last asked about: the labelers of one trajectory ask in turn). The shared box holds its
    own copy of the definitions, as a tuple: a caller must not change them (copy them to edit).

    Args:
        tools: OpenAI tool definitions.

    Returns:
        The shared ToolBox, or the first line of the schema error.

    Example:
        >>> tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
        >>> checked_toolbox(tools) is checked_toolbox([dict(tools[0])])
        True
    """
    if _last_tools[0] is tools:
        return _last_tools[1]
    checked = _checked_by_content(json.dumps(tools, default=str))  # key order kept: it orders schema errors
    _last_tools[:] = [tools, checked]
    return checked


@lru_cache(maxsize=64)
def _checked_by_content(tools_json: str) -> ToolBox | str:
    try:
        box = ToolBox(tuple(json.loads(tools_json)))  # shared by every caller: not to be grown in place
        box.validators  # noqa: B018 - a broken schema is found here, once
    except (jsonschema.SchemaError, KeyError, TypeError, AttributeError) as error:
        # handled: returned as the reason the definitions are unusable, for the caller to report
        return f"{type(error).__name__}: {error}".splitlines()[0]
    return box
