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
import re
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
    strip_fences,
)
from prefbuild.records import Message, Role

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
NO_TOOL_CALL_REPLY = "No executable tool calls found. Please call a tool instead"
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
_CALL = re.compile(r"<tool_call>(?P<body>.*?)</tool_call>", re.DOTALL | re.IGNORECASE)
_OPEN = re.compile(r"<tool_call>(?P<body>.*)$", re.DOTALL | re.IGNORECASE)
_THINK = re.compile(r"<think>(?P<body>.*?)(?:</think>|$)", re.DOTALL | re.IGNORECASE)


def render_tool_call(action: str) -> str:
    """The Qwen/Hermes text of one ``take_action`` call."""
    payload = json.dumps({"name": TOOL_NAME, "arguments": {"action": action}}, ensure_ascii=False)
    return f"<tool_call>\n{payload}\n</tool_call>"


def _decode_call(body: str, normalized: list[str], problems: list[str]) -> tuple[str | None, str | None]:
    """(tool name, action argument) from one call body; (None, None) when it is not a call."""
    body, fenced = strip_fences(body)
    if fenced:
        normalized.append("markdown fence")
        problems.append("markdown fence")
    try:
        call = json.loads(body.strip())
    except (ValueError, RecursionError):
        problems.append("tool call is not valid JSON")
        return None, None
    if not isinstance(call, dict):
        problems.append("tool call is not a JSON object")
        return None, None
    name = call.get("name")
    arguments = call.get("arguments", call.get("parameters"))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
            normalized.append("arguments given as a JSON string")
        except (ValueError, RecursionError):
            arguments = None
    if not isinstance(arguments, dict) or not arguments:
        problems.append("tool call without arguments")
        return (name if isinstance(name, str) else None), None
    if name != TOOL_NAME:
        problems.append(f"unknown tool {name!r}")
    value = arguments.get("action")
    if value is None:
        # The harness takes the first argument whatever its name.
        key, value = next(iter(arguments.items()))
        normalized.append(f"argument {key!r} read as 'action'")
        problems.append(f"argument {key!r} instead of 'action'")
    if not isinstance(value, str):
        problems.append("action argument is not a string")
        return (name if isinstance(name, str) else None), None
    return (name if isinstance(name, str) else None), value


def _find_calls(text: str, normalized: list[str], problems: list[str]) -> tuple[list[str], str]:
    """Every call body in ``text`` and the text outside the calls."""
    bodies = [match.group("body") for match in _CALL.finditer(text)]
    outside = _CALL.sub("", text)
    unclosed = _OPEN.search(outside)
    if unclosed:
        bodies.append(unclosed.group("body"))
        outside = outside[: unclosed.start()]
        normalized.append("unclosed <tool_call>")
        problems.append("unclosed <tool_call>")
    if not bodies:
        candidate, _ = strip_fences(text)
        candidate = candidate.strip()
        if candidate.startswith("{") and candidate.endswith("}") and '"name"' in candidate:
            bodies.append(candidate)
            outside = ""
            normalized.append("bare JSON tool call")
            problems.append("tool call without <tool_call> tags")
    return bodies, outside


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
        normalized: list[str] = []
        problems: list[str] = []
        thoughts, without_think = _split_thinking(text)
        bodies, outside = _find_calls(without_think, normalized, problems)
        calls = [_decode_call(body, normalized, problems) for body in bodies]
        actions = [value for _, value in calls if value is not None]
        outside = outside.strip()
        thought = "\n".join(part for part in [*thoughts, outside] if part) or None
        if not actions:
            problems.append("no tool call")
            return ParsedOutput(thought, None, False, tuple(normalized), False, tuple(problems))
        if len(bodies) > 1:
            problems.append(f"{len(bodies)} tool calls")
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
        call = render_tool_call(action)
        return f"{thought}\n{call}" if thought else call

    def stop_reason(self, outputs: Sequence[str]) -> str | None:
        """The harness compares the raw ``action`` arguments of the turns that made a call."""
        arguments = [argument for argument in (_first_argument(text) for text in outputs) if argument is not None]
        if len(arguments) > REPEAT_WINDOW and len(set(arguments[-REPEAT_WINDOW:])) == 1:
            return f"the last {REPEAT_WINDOW} tool calls are identical"
        return None


def _first_argument(text: str) -> str | None:
    normalized: list[str] = []
    problems: list[str] = []
    bodies, _ = _find_calls(_split_thinking(text)[1], normalized, problems)
    for body in bodies[:1]:
        _, value = _decode_call(body, normalized, problems)
        return value
    return None


def _split_thinking(text: str) -> tuple[list[str], str]:
    """Reasoning blocks (``<think>...</think>``; a bare leading ``...</think>`` when the chat
    template opened the block) and the text without them."""
    thoughts: list[str] = []
    if "</think>" in text and "<think>" not in text:
        head, _, text = text.partition("</think>")
        thoughts.append(head.strip())
    thoughts.extend(match.group("body").strip() for match in _THINK.finditer(text))
    return [thought for thought in thoughts if thought], _THINK.sub("", text)
