"""AgentBench function-calling edition (2025) of the household task.

One tool, ``take_action(action: str)``. The system prompt is the edition's tool-oriented
instruction (typo ``complete)`` included), the first user turn is ``Here is your task. ``
+ intro + the admissible list, and every tool result carries the observation plus the
list (never cut). A turn without a tool call gets a user message asking for one.

Models served without a tool parser write the call into their text; prefbuild reads the
Qwen3/Hermes form ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` (with
tolerances for unclosed tags, fenced or bare JSON, arguments given as a JSON string) and
renders chosen turns the same way, so the text is what a Qwen/Hermes chat template shows.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, ClassVar

from prefbuild.envs.base import EnvTask, ParsedOutput, Protocol
from prefbuild.envs.household.protocols.bleu import snap_to_admissible
from prefbuild.envs.household.protocols.common import (
    available_actions,
    benchmark_intro,
    clean_action,
    is_completion_claim,
    strip_arrival,
)
from prefbuild.records import Message, Role, ToolCall
from prefbuild.tooluse.hermes import parse_tool_turn, render_tool_turn
from prefbuild.tooluse.protocol import NO_TOOL_CALL_REPLY

INSTRUCTION = (
    "Interact with a household to solve a task. Imagine you are an intelligent agent in a household environment "
    "and your target is to perform actions to complete) the task goal. At the beginning of your interactions, you "
    "will be given the detailed description of the current environment and your goal to accomplish. A tool will be "
    "provided for you to use to submit the action you want to take. This tool is the only tool you should and must "
    "take in order to operate any action in the environment. The way you perform action is to place the action "
    "chosen by you in the arguments field of your tool call. For each of your turn, you will be given a list of "
    "actions which you can choose one to perform in this turn. The action you would like to take should be offered "
    'in this format: "the name of your next action", and you should fill it in the argument field of your tool '
    "call. Note that you should always call a tool to operate an action from the given choices. After your each "
    "turn, the environment will give you immediate feedback based on which you plan your next few steps. if the "
    'environment output "Nothing happened", that means the previous action is invalid and you should try more '
    "options.\n Reminder:\n1. the action must be chosen from the given available actions. Any actions except "
    "provided available actions will be regarded as illegal.\n2. Always call the tool to hand in your next action "
    "and think when necessary."
)
TASK_PREFIX = "Here is your task. "
TOOL_NAME = "take_action"
REPEAT_WINDOW = 3
TOOL_DEFINITION: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": TOOL_NAME,
        "description": "Take one action in the household environment. The action must be one of the available "
        "actions listed in the latest message, written exactly as listed.",
        "parameters": {
            "type": "object",
            "properties": {
                "action": {"type": "string", "description": "The action to take, e.g. 'go to fridge 1'."},
            },
            "required": ["action"],
        },
    },
}
def render_tool_call(action: str) -> str:
    """The Qwen/Hermes text of one ``take_action`` call."""
    return render_tool_turn([{"name": TOOL_NAME, "arguments": {"action": action}}])


def _call_action(call: ToolCall, normalized: list[str], problems: list[str]) -> str | None:
    """The ``action`` argument of one decoded call, the way the harness reads it."""
    arguments = json.loads(call.function.arguments)
    if not arguments:
        problems.append("tool call without arguments")
        return None
    if call.function.name != TOOL_NAME:
        problems.append(f"unknown tool {call.function.name!r}")
    value = arguments.get("action")
    if value is None:
        # The harness takes the first argument whatever its name.
        key, value = next(iter(arguments.items()))
        normalized.append(f"argument {key!r} read as 'action'")
        problems.append(f"argument {key!r} instead of 'action'")
    if not isinstance(value, str):
        problems.append("action argument is not a string")
        return None
    return value


class ToolCallProtocol(Protocol):
    """AgentBench's 2025 function-calling household protocol with one ``take_action`` tool.

    The first observation turn (``Here is your task. ...``) and the no-tool-call reply are user
    turns in the harness; later observations are tool results (``observation_role``).
    """

    name: ClassVar[str] = "toolcall"
    observation_role: ClassVar[str] = "tool"
    first_observation_role: ClassVar[str] = "user"
    unparsed_reply_role: ClassVar[str] = "user"

    def __init__(self, dialect: str = "classic", fewshot: bool = False) -> None:
        self.dialect = dialect
        self.fewshot = fewshot

    def prefix_messages(self, task: EnvTask) -> list[Message]:
        return [Message(role=Role.system, content=INSTRUCTION)]

    def observation_turn(
        self, observation: str, *, first: bool, task: EnvTask, admissible: Sequence[str] | None = None
    ) -> str:
        listing = available_actions(list(admissible) if admissible is not None else None)
        if first:
            return TASK_PREFIX + benchmark_intro(observation) + listing
        return strip_arrival(observation) + listing

    def tools(self) -> list[dict[str, Any]] | None:
        return [json.loads(json.dumps(TOOL_DEFINITION))]

    def parse(self, text: str) -> ParsedOutput:
        if not isinstance(text, str) or not text.strip():
            return ParsedOutput(thought=None, action=None, format_ok=False, problems=("empty output", "no tool call"))
        turn = parse_tool_turn(text)
        normalized, problems = list(turn.normalized), list(turn.problems)
        actions = [value for call in turn.calls if (value := _call_action(call, normalized, problems)) is not None]
        thought = "\n".join(part for part in (turn.thought, turn.content) if part) or None
        if not actions:
            problems.append("no tool call")
            return ParsedOutput(thought, None, False, tuple(normalized), False, tuple(problems))
        if len(turn.calls) > 1:
            problems.append(f"{len(turn.calls)} tool calls")
        cleaned = clean_action(actions[0])
        normalized.extend(cleaned.normalized)
        if not cleaned.action:
            problems.append("empty action")
            return ParsedOutput(thought, None, False, tuple(normalized), False, tuple(problems))
        return ParsedOutput(
            thought=thought,
            action=cleaned.action,
            format_ok=not problems,
            normalized=tuple(normalized),
            final=is_completion_claim(cleaned.action),
            problems=tuple(problems),
        )

    def executed_action(self, action: str, admissible: Sequence[str] | None) -> str:
        return snap_to_admissible(action, list(admissible) if admissible is not None else None)

    def unparsed_reply(self, parsed: ParsedOutput) -> str | None:
        return NO_TOOL_CALL_REPLY

    def render(self, action: str, thought: str | None = None) -> str:
        return render_tool_turn([{"name": TOOL_NAME, "arguments": {"action": action}}], content=thought)

    def stop_reason(self, outputs: Sequence[str]) -> str | None:
        """The harness compares the raw ``action`` arguments of the turns that made a call."""
        arguments = [argument for argument in (_first_argument(text) for text in outputs) if argument is not None]
        if len(arguments) > REPEAT_WINDOW and len(set(arguments[-REPEAT_WINDOW:])) == 1:
            return f"the last {REPEAT_WINDOW} tool calls are identical"
        return None


def _first_argument(text: str) -> str | None:
    calls = parse_tool_turn(text).calls
    return _call_action(calls[0], [], []) if calls else None
