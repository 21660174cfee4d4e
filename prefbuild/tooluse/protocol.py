"""``ToolUseProtocol``: the base of every protocol whose model acts through tool calls.

The model writes Hermes text (``<tool_call>{...}</tool_call>``); ``parse`` turns it into the
JSON action of ``prefbuild.tooluse.actions`` that the env's ``step`` decodes, and ``render``
writes an action back as the text a Qwen/Hermes chat template shows. Observation turns are
``tool`` results, except the task itself and the reply to a turn that made no usable call,
which are ``user`` turns (chat templates reject a tool turn straight after the system prompt).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any, ClassVar

from prefbuild.envs.base import EnvTask, ParsedOutput, Protocol
from prefbuild.records import Message, Role, ToolCall
from prefbuild.tooluse.actions import decode_action, encode_action
from prefbuild.tooluse.hermes import parse_tool_turn, render_tool_turn

NO_TOOL_CALL_REPLY = "No executable tool calls found. Please call a tool instead"


class ToolUseProtocol(Protocol):
    """A tool-calling protocol over Hermes text.

    Subclasses set ``name`` and usually override ``prefix_messages`` (system prompt) and
    ``observation_turn`` (how the task is shown). A turn without calls but with text is a
    message action (an answer, a reply to a user); ``message_is_final`` says whether such a
    turn ends the episode.

    Example:
        >>> class Echo(ToolUseProtocol):
        ...     name = "echo"
        >>> protocol = Echo(tools=[{"type": "function", "function": {"name": "f", "parameters": {}}}])
        >>> protocol.parse('<tool_call>{"name": "f", "arguments": {}}</tool_call>').action
        '{"tool_calls": [{"id": "call_0", "name": "f", "arguments": {}}]}'
    """

    name: ClassVar[str] = "tooluse"
    observation_role: ClassVar[str] = "tool"
    first_observation_role: ClassVar[str | None] = "user"
    unparsed_reply_role: ClassVar[str | None] = "user"
    message_is_final: ClassVar[bool] = True
    no_tool_call_reply: ClassVar[str] = NO_TOOL_CALL_REPLY

    def __init__(self, tools: Sequence[dict[str, Any]], system_prompt: str | None = None) -> None:
        self._tools = [copy.deepcopy(dict(tool)) for tool in tools]
        self.system_prompt = system_prompt

    def tools(self) -> list[dict[str, Any]] | None:
        return copy.deepcopy(self._tools)

    def prefix_messages(self, task: EnvTask) -> list[Message]:
        return [Message(role=Role.system, content=self.system_prompt)] if self.system_prompt else []

    def observation_turn(
        self, observation: str, *, first: bool, task: EnvTask, admissible: Sequence[str] | None = None
    ) -> str:
        return observation

    def parse(self, text: str) -> ParsedOutput:
        if not isinstance(text, str) or not text.strip():
            return ParsedOutput(thought=None, action=None, format_ok=False, problems=("empty output",))
        turn = parse_tool_turn(text)
        problems = list(turn.problems)
        if turn.calls:
            thought = "\n".join(part for part in (turn.thought, turn.content) if part) or None
            action = encode_action(turn.calls)
            return ParsedOutput(thought, action, not problems, tuple(turn.normalized), False, tuple(problems))
        if turn.content and not problems:
            action = encode_action(message=turn.content)
            return ParsedOutput(turn.thought, action, True, tuple(turn.normalized), self.message_is_final, ())
        problems.append("no tool call")
        return ParsedOutput(turn.thought, None, False, tuple(turn.normalized), False, tuple(problems))

    def parse_completion(self, text: str, tool_calls: Sequence[ToolCall] = ()) -> ParsedOutput:
        """A turn with the server's structured calls: the action carries them with their ids
        (the env answers each id), the text is the thought. Calls written in the text as well
        are a problem (a server without a tool parser would have run them twice)."""
        if not tool_calls:
            return self.parse(text)
        turn = parse_tool_turn(text or "")
        thought = "\n".join(part for part in (turn.thought, turn.content) if part) or None
        problems = list(turn.problems)
        if turn.calls:
            problems.append("tool calls both structured and written in the text")
        action = encode_action(list(tool_calls))
        return ParsedOutput(thought, action, not problems, tuple(turn.normalized), False, tuple(problems))

    def unparsed_reply(self, parsed: ParsedOutput) -> str | None:
        return self.no_tool_call_reply

    def render(self, action: str, thought: str | None = None) -> str:
        decoded = decode_action(action)
        if decoded.calls:
            content = "\n".join(part for part in (thought, decoded.message) if part) or None
            return render_tool_turn(decoded.calls, content=content)
        return "\n".join(part for part in (thought, decoded.message) if part)

    def final_turn(self, answer: str | None = None) -> str | None:
        return answer if answer else None
