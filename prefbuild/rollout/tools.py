"""Tool calls in the episode loop: which tools a request offers, and which calls a turn made.

Tools come from the protocol (``Protocol.tools()``, the same for every task) or, where they
differ per task (BFCL), from the protocol's ``tools_for(task)`` or the env's reset info
``"tools"``; an env that reveals functions later sends the grown list in
``StepResult.info["tools"]``. A protocol that writes the tools into its system prompt
(``tools_in_prompt``) gets none in the request, so the model does not see them twice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from prefbuild.envs.base import EnvTask, ParsedOutput, Protocol
from prefbuild.records import ToolCall
from prefbuild.tooluse.actions import decode_action
from prefbuild.tooluse.protocol import ToolUseProtocol

TOOL_PARSER_ARGS: tuple[str, ...] = ("--enable-auto-tool-choice", "--tool-call-parser", "hermes")


def request_tools(protocol: Protocol, task: EnvTask, reset_info: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The OpenAI ``tools`` to send with the first request of an episode.

    Args:
        protocol: The episode's protocol.
        task: The task the env was reset to.
        reset_info: The info ``Env.reset`` returned (may hold ``"tools"``).

    Returns:
        The tool definitions, or None for a text protocol or one that shows tools in its prompt.

    Example:
        >>> from prefbuild.tooluse.protocol import ToolUseProtocol
        >>> class Echo(ToolUseProtocol):
        ...     name = "echo"
        >>> request_tools(Echo(tools=[{"type": "function", "function": {"name": "f"}}]), None, {})[0]["type"]
        'function'
    """
    declared = protocol.tools()
    if declared is not None:
        return declared
    if getattr(protocol, "tools_in_prompt", False):
        return None
    tools_for = getattr(protocol, "tools_for", None)
    if callable(tools_for):
        return list(tools_for(task))
    from_env = reset_info.get("tools")
    return list(from_env) if isinstance(from_env, list) else None


def updated_tools(current: list[dict[str, Any]] | None, step_info: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The tools for the next request: the env's grown list when it sent one (BFCL's held-out
    functions), else unchanged. A protocol that sends no tools keeps sending none."""
    grown = step_info.get("tools")
    if current is None or not isinstance(grown, list):
        return current
    return list(grown)


def declares_tools(protocol: Protocol) -> bool:
    """Whether a protocol's model acts through tool calls (so the server needs a tool parser)."""
    return protocol.tools() is not None or isinstance(protocol, ToolUseProtocol)


def with_tool_parser(args: Sequence[str]) -> list[str]:
    """``vllm serve`` arguments with the Hermes tool parser switched on (kept when already set).

    Example:
        >>> with_tool_parser(["--max-model-len", "4096"])[-3:]
        ['--enable-auto-tool-choice', '--tool-call-parser', 'hermes']
    """
    args = list(args)
    if "--enable-auto-tool-choice" not in args:
        args.append("--enable-auto-tool-choice")
    if not any(arg == "--tool-call-parser" or arg.startswith("--tool-call-parser=") for arg in args):
        args.extend(["--tool-call-parser", "hermes"])
    return args


def turn_calls(
    protocol: Protocol, parsed: ParsedOutput, native: Sequence[ToolCall]
) -> tuple[list[ToolCall] | None, bool]:
    """The tool calls one turn made and whether they came structured from the server.

    Calls parsed from Hermes text are read back from the action, so their ids are the ones the
    env answers in its ``tool`` messages.

    Args:
        protocol: The episode's protocol.
        parsed: The protocol's reading of the turn.
        native: The completion's structured ``tool_calls``.

    Returns:
        ``(calls or None, native)``.
    """
    if native:
        return list(native), True
    if not isinstance(protocol, ToolUseProtocol) or parsed.action is None:
        return None, False
    calls = decode_action(parsed.action).calls
    return (calls or None), False
