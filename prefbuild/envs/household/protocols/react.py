"""ReAct household protocol (Yao et al.), as a chat protocol.

ReAct prompts a completion model with ``Interact with a household to solve a task. Here are
two examples.\\n`` + two ``> ``-transcripts of the task's kind + ``\\nHere is the task.\\n`` +
intro, and reads one line per turn. Here the instruction and the two transcripts form the
system prompt, the first user turn is ``Here is the task.\\n`` + intro, and each assistant
turn is one line: a command or a ``think: ...`` thought.

ReAct steps the game with thoughts too (they produce ``Nothing happens.``, which changes
nothing) and shows ``OK.`` instead. A thought therefore parses to ``action=None`` with its
``thought`` set, and ``unparsed_reply`` answers ``OK.`` without stepping the env; the turn
still counts against the step budget, as in ReAct.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from prefbuild.envs.base import EnvTask, ParsedOutput, Protocol
from prefbuild.envs.household.protocols.common import (
    benchmark_intro,
    clean_action,
    is_completion_claim,
    strip_arrival,
)
from prefbuild.records import Message, Role
from prefbuild.tooluse.hermes import strip_fence_lines

INSTRUCTION = "Interact with a household to solve a task. Here are two examples.\n"
TASK_PREFIX = "Here is the task.\n"
THOUGHT_REPLY = "OK."
INVALID_REPLY = "Nothing happens."
_THINK = re.compile(r"^(?P<tag>(?:think|thought|thinking)\s*:)\s*(?P<body>.*)$", re.IGNORECASE | re.DOTALL)
_ACT = re.compile(r"^(?P<tag>(?:action|act)\s*:)\s*(?P<body>.*)$", re.IGNORECASE | re.DOTALL)
# Another protocol's markup: <tool_call>...</tool_call>, <action>, a JSON call.
_MARKUP = re.compile(r"</?[a-z_]+>|^\{\s*\"", re.IGNORECASE)
_MARKDOWN = re.compile(r"\*\*|__|`")


class ReActProtocol(Protocol):
    """ReAct's ``think:`` / ``> `` convention with two expert examples of the task's kind."""

    name: ClassVar[str] = "react"

    def __init__(self, dialect: str = "classic", fewshot: bool = True) -> None:
        self.dialect = dialect
        self.fewshot = fewshot

    def prefix_messages(self, task: EnvTask) -> list[Message]:
        content = INSTRUCTION
        if self.fewshot:
            from prefbuild.envs.household.fewshot import react_examples

            content += react_examples(task.info.type, self.dialect)
        return [Message(role=Role.system, content=content)]

    def observation_turn(
        self, observation: str, *, first: bool, task: EnvTask, admissible: Sequence[str] | None = None
    ) -> str:
        if first:
            return TASK_PREFIX + benchmark_intro(observation)
        return strip_arrival(observation)

    def parse(self, text: str) -> ParsedOutput:
        if not isinstance(text, str) or not text.strip():
            return ParsedOutput(thought=None, action=None, format_ok=False, problems=("empty output",))
        normalized: list[str] = []
        problems: list[str] = []
        body, fenced = strip_fence_lines(text)
        if fenced:
            normalized.append("markdown fence")
            problems.append("markdown fence")
        lines = [line.strip() for line in body.split("\n") if line.strip()]
        if not lines:
            return ParsedOutput(None, None, False, tuple(normalized), False, (*problems, "empty output"))
        if len(lines) > 1:
            problems.append(f"{len(lines)} lines; ReAct reads only the first")
        line = lines[0]
        if line.startswith(">"):
            line = line.lstrip(">").strip()
            normalized.append("leading '> '")
        think = _THINK.match(line)
        if think:
            tag = think.group("tag").replace(" ", "")
            if tag != "think:":
                normalized.append(f"thought tag {tag!r} read as 'think:'")
                problems.append(f"wrong thought tag {tag!r}")
            thought = think.group("body").strip()
            return ParsedOutput(thought, None, not problems, tuple(normalized), False, tuple(problems))
        act = _ACT.match(line)
        if act:
            normalized.append(f"action tag {act.group('tag')!r} dropped")
            problems.append(f"unexpected action tag {act.group('tag')!r}")
            line = act.group("body")
        if _MARKUP.search(line):
            problems.append("markup of another protocol (tags or a JSON call) in a ReAct command")
        if _MARKDOWN.search(line):
            problems.append("markdown around the command (the game reads it as written)")
        cleaned = clean_action(line)
        normalized.extend(note for note in cleaned.normalized if note not in normalized)
        if not cleaned.action:
            return ParsedOutput(None, None, False, tuple(normalized), False, (*problems, "empty action"))
        return ParsedOutput(
            thought=None,
            action=cleaned.action,
            format_ok=not problems,
            normalized=tuple(normalized),
            final=is_completion_claim(cleaned.action),
            problems=tuple(problems),
        )

    def unparsed_reply(self, parsed: ParsedOutput) -> str | None:
        return THOUGHT_REPLY if parsed.thought is not None else INVALID_REPLY

    def render(self, action: str, thought: str | None = None) -> str:
        """One ReAct line performs one thing: the command. A thought is its own turn
        (``render_thought``), because ReAct reads a single line per turn."""
        return action

    def render_thought(self, thought: str) -> str:
        return f"think: {thought}"
