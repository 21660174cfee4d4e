"""The ``hermes`` protocol of the ``bfcl`` env: Qwen/Hermes tool calls, one user question per turn.

BFCL serves FC models the task's function docs as tools and no system prompt of its own. Tools
differ per task, so this protocol writes them into the system prompt the way Qwen3's chat
template does (``tools_in_prompt``, the default); a native tool-calling setup turns that off
and passes ``tools_for(task)`` to the server instead. As in BFCL's inference loop, a model turn
without a decodable call ends the user turn (it is sent to the env as a message action).
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from prefbuild.envs.base import EnvTask, ParsedOutput
from prefbuild.envs.bfcl.calls import CallRejected, CallSpec, parse_python_calls
from prefbuild.envs.bfcl.data import BfclEntry, entry_function_docs
from prefbuild.envs.bfcl.expert import as_tool_call
from prefbuild.envs.bfcl.tools import PYTHON_HINT, entry_tools
from prefbuild.records import Message, Role
from prefbuild.tooluse.actions import decode_action, encode_action
from prefbuild.tooluse.hermes import parse_tool_turn
from prefbuild.tooluse.protocol import ToolUseProtocol

QWEN_TOOLS_HEADER = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
QWEN_TOOLS_FOOTER = (
    "</tools>\n\nFor each function call, return a json object with function name and arguments within "
    '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n'
    "</tool_call>"
)


def tools_block(tools: list[dict[str, Any]]) -> str:
    """The tools section of a system prompt as Qwen3's chat template writes it.

    Args:
        tools: OpenAI tool definitions.

    Returns:
        The ``# Tools`` block with one JSON definition per line.

    Example:
        >>> tools_block([{"type": "function", "function": {"name": "f"}}]).splitlines()[4]
        '{"type": "function", "function": {"name": "f"}}'
    """
    lines = "\n".join(json.dumps(tool, ensure_ascii=False) for tool in tools)
    return f"{QWEN_TOOLS_HEADER}\n{lines}\n{QWEN_TOOLS_FOOTER}"


class BfclHermesProtocol(ToolUseProtocol):
    """Hermes tool calls for BFCL tasks.

    Args:
        system_prompt: text placed before the tools block (none by default, as BFCL's FC mode).
        tools_in_prompt: write the task's tools into the system prompt.

    Example:
        >>> protocol = BfclHermesProtocol()
        >>> protocol.parse("Which file do you mean?").action
        '{"message": "Which file do you mean?"}'
    """

    name: ClassVar[str] = "hermes"
    message_is_final: ClassVar[bool] = False

    def __init__(self, system_prompt: str | None = None, tools_in_prompt: bool = True) -> None:
        super().__init__(tools=[], system_prompt=system_prompt)
        self.tools_in_prompt = tools_in_prompt

    def tools(self) -> list[dict[str, Any]] | None:
        """None: the tools depend on the task (``tools_for``)."""
        return None

    def tools_for(self, task: EnvTask) -> list[dict[str, Any]]:
        """The OpenAI tools offered at the start of ``task`` (held-out functions excluded)."""
        if not isinstance(task.payload, BfclEntry):
            raise ValueError(f"bfcl protocol: task {task.info.id!r} carries no BFCL entry")
        offered, _ = entry_tools(task.payload)
        return json.loads(json.dumps(offered))

    def prefix_messages(self, task: EnvTask) -> list[Message]:
        parts = [self.system_prompt] if self.system_prompt else []
        if self.tools_in_prompt:
            parts.append(tools_block(self.tools_for(task)))
        return [Message(role=Role.system, content="\n\n".join(parts))] if parts else []

    def parse(self, text: str) -> ParsedOutput:
        parsed = super().parse(text)
        if parsed.action is not None:
            return parsed
        # BFCL ends the user turn on an output it cannot decode; so does this protocol.
        content = parse_tool_turn(text).content if isinstance(text, str) else ""
        return ParsedOutput(
            parsed.thought, encode_action(message=content), False, parsed.normalized, False, parsed.problems
        )


def bfcl_system_prompt(docs: list[dict[str, Any]]) -> str:
    """BFCL's default system prompt for prompting (non-FC) models, built from the package's own
    templates (plaintext, classic style, Python call format, JSON function docs), as
    ``formulate_system_prompt`` does with ``DEFAULT_SYSTEM_PROMPT_FORMAT``.

    Args:
        docs: BFCL function docs (the Python-syntax note is added here, as BFCL does).

    Returns:
        The system prompt text.
    """
    from bfcl_eval.constants.default_prompts import (
        OUTPUT_FORMAT_MAPPING,
        PARAM_TYPE_MAPPING,
        PROMPT_STYLE_TEMPLATES,
        PROMPT_TEMPLATE_MAPPING,
    )

    style = PROMPT_STYLE_TEMPLATES["classic"]
    described = [{**doc, "description": doc["description"] + PYTHON_HINT} for doc in docs]
    return PROMPT_TEMPLATE_MAPPING["plaintext"].format(
        persona=style["persona"],
        task=style["task"],
        tool_call_format=style["tool_call_no_tag"].format(
            output_format=OUTPUT_FORMAT_MAPPING["python"], param_types=PARAM_TYPE_MAPPING["python"]
        ),
        multiturn_behavior=style["multiturn_behavior"],
        available_tools=style["available_tools"].format(format="json", functions=json.dumps(described, indent=4)),
    )


class BfclPythonProtocol(BfclHermesProtocol):
    """BFCL's prompting format: the model answers ``[func(a=1), other(b='x')]`` as plain text.

    Calls are read with ``calls.parse_python_calls`` (``ast``, literal arguments only, keyword
    arguments only since the format names every parameter); text that is no such list is a
    message and ends the user turn, as a failed decode does in BFCL.

    Example:
        >>> BfclPythonProtocol().parse("[cd(folder='document')]").action
        '{"tool_calls": [{"id": "call_0", "name": "cd", "arguments": {"folder": "document"}}]}'
    """

    name: ClassVar[str] = "python"

    def prefix_messages(self, task: EnvTask) -> list[Message]:
        if not isinstance(task.payload, BfclEntry):
            raise ValueError(f"bfcl protocol: task {task.info.id!r} carries no BFCL entry")
        offered, _ = entry_function_docs(task.payload)
        parts = [bfcl_system_prompt(offered)] + ([self.system_prompt] if self.system_prompt else [])
        return [Message(role=Role.system, content="\n\n".join(parts))]

    def parse(self, text: str) -> ParsedOutput:
        body = text.strip("`\n ") if isinstance(text, str) else ""
        if not body.startswith("["):
            body = "[" + body
        if not body.endswith("]"):
            body = body + "]"
        try:
            calls = parse_python_calls(body)
            if any(call.args for call in calls):
                raise CallRejected("positional arguments: name every parameter")
        except CallRejected as error:
            message = text.strip() if isinstance(text, str) else ""
            problems = () if not _looks_like_calls(message) else (f"unreadable calls: {error}",)
            return ParsedOutput(None, encode_action(message=message), not problems, (), False, problems)
        if not calls:
            return ParsedOutput(None, encode_action(message=""), True, (), False, ())
        tool_calls = [as_tool_call(f"call_{index}", call.name, call.kwargs) for index, call in enumerate(calls)]
        return ParsedOutput(None, encode_action(tool_calls), True, (), False, ())

    def render(self, action: str, thought: str | None = None) -> str:
        decoded = decode_action(action)
        if not decoded.calls:
            return decoded.message or ""
        calls = [CallSpec(call.function.name, (), json.loads(call.function.arguments)) for call in decoded.calls]
        return "[" + ", ".join(call.text() for call in calls) + "]"


def _looks_like_calls(text: str) -> bool:
    return text.startswith("[") or ("(" in text and text.rstrip().endswith(")"))
