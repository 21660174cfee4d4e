"""Tool definitions of chat logs, in the OpenAI form prefbuild records (``Trajectory.tools``).

Logs keep them in three ways: OpenAI's ``tools`` request parameter (``[{"type": "function",
"function": {"name", "description", "parameters"}}]``), LLaMA-Factory's ``tools`` column (JSON
*text* of a list of bare function definitions ``{"name", "description", "parameters"}``), and
the system prompt of a Hermes / Qwen3 model, where the chat template wrote one JSON definition a
line between ``<tools>`` and ``</tools>``.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from prefbuild.io.importers.located import JsonPath, Locate, fail

logger = logging.getLogger(__name__)

_TOOLS_BLOCK = re.compile(r"<tools>(?P<body>.*?)</tools>", re.DOTALL)
_DECODER = json.JSONDecoder()


def openai_tool(value: Any, locate: Locate, path: JsonPath) -> dict[str, Any]:
    """One tool definition in OpenAI's form; a bare function definition is wrapped.

    Example:
        >>> openai_tool({"name": "f", "parameters": {"type": "object"}}, str, ())
        {'type': 'function', 'function': {'name': 'f', 'parameters': {'type': 'object'}}}
    """
    if not isinstance(value, dict):
        raise fail(locate, path, f"expected a tool definition object, got {type(value).__name__}")
    function = value.get("function") if isinstance(value.get("function"), dict) else value
    where = (*path, "function") if function is not value else path
    name = function.get("name")
    if not isinstance(name, str) or not name.strip():
        raise fail(locate, (*where, "name"), "a tool definition needs a function name")
    parameters = function.get("parameters")
    if parameters is not None and not isinstance(parameters, dict):
        raise fail(locate, (*where, "parameters"), f"expected a JSON Schema object, got {type(parameters).__name__}")
    if function is value:
        return {"type": "function", "function": dict(value)}
    return dict(value)


def tools_of(value: Any, locate: Locate, path: JsonPath) -> list[dict[str, Any]] | None:
    """A record's ``tools`` (a list, or JSON text of one as LLaMA-Factory keeps it) in OpenAI's form;
    None where the record has none.

    Args:
        value: the record's ``tools`` value.
        locate: ``file:line`` of a JSON path.
        path: the path of ``value`` (``("tools",)``).

    Returns:
        The definitions (an empty list where the log offered no tools), or None.

    Raises:
        ExternalLogError: not a list of tool definitions.

    Example:
        >>> [tool["function"]["name"] for tool in tools_of('[{"name": "f"}, {"name": "g"}]', str, ("tools",))]
        ['f', 'g']
    """
    if value is None:
        return None
    if isinstance(value, str):
        if not value.strip():
            return []
        try:
            value = json.loads(value)
        except (ValueError, RecursionError) as error:
            raise fail(locate, path, f"not JSON text of a tool list ({error})") from None
    if not isinstance(value, list):
        raise fail(locate, path, f"expected a list of tool definitions, got {type(value).__name__}")
    return [openai_tool(tool, locate, (*path, position)) for position, tool in enumerate(value)]


def prompt_tools(text: str) -> list[dict[str, Any]] | None:
    """The tool definitions a Hermes / Qwen3 chat template wrote into a system prompt between
    ``<tools>`` and ``</tools>`` (one JSON object a line, or one JSON list); None where the
    prompt has no such block.

    Example:
        >>> tool = '{"type": "function", "function": {"name": "f"}}'
        >>> prompt = f"Tools within <tools></tools> XML tags:\\n<tools>\\n{tool}\\n</tools>"
        >>> [tool["function"]["name"] for tool in prompt_tools(prompt)]
        ['f']
    """
    for match in _TOOLS_BLOCK.finditer(text):
        body = match.group("body").strip()
        if not body:
            continue  # "within <tools></tools> XML tags": the template's own words
        found = _definitions(body)
        if found:
            return found
        logger.warning("a system prompt's <tools> block holds no JSON tool definition: %r", body[:80])
    return None


def _definitions(body: str) -> list[dict[str, Any]]:
    """The JSON tool definitions of a ``<tools>`` block; the ones that are not are left out."""
    values: list[Any] = []
    position = 0
    while position < len(body):
        while position < len(body) and body[position] in " \t\r\n,":
            position += 1
        if position >= len(body):
            break
        try:
            value, position = _DECODER.raw_decode(body, position)
        except (ValueError, RecursionError):  # handled: the rest of the block is no JSON; warned by the caller if empty
            break
        values.extend(value if isinstance(value, list) else [value])
    tools = []
    for value in values:
        function = value.get("function", value) if isinstance(value, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str) and function["name"].strip():
            tools.append(value if function is not value else {"type": "function", "function": value})
    return tools
