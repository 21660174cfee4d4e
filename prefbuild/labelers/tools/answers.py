"""Labelers of how a tool episode answers: without any tool, with invented tool output, wrongly."""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar

from prefbuild.labelers.service_success import closing_message, is_message, said_text, tau2_failed_parts
from prefbuild.labelers.text import short
from prefbuild.labelers.tools.calls import ToolLabeler, broken_call_problems, tool_steps
from prefbuild.labelers.tools.stated import Sources, read_sources, unsupported_statement
from prefbuild.records import FailureMode, Label, Role, Step, Trajectory

_RESPONSE_TAG = re.compile(r"<\s*/?\s*tool_response\s*>", re.IGNORECASE)
_AFTER_CALL_OUTPUT = re.compile(
    r"</tool_call>\s*(?:```\s*output|(?:output|result|observation)\s*:)", re.IGNORECASE
)
_QUOTED_RESULT = re.compile(
    r"\b(?:the\s+)?(?:code|program|tool|interpreter|call|function|output|result)\s+"
    r"(?:printed|prints|returned|returns|outputs|output|gave|gives|shows|showed|is|was)\s*:?\s*"
    r"[`'\"]?(?P<value>-?[\w./]+)",
    re.IGNORECASE,
)


def tool_results_before(trajectory: Trajectory, step: Step) -> list[str]:
    """Every tool result the model had been shown when it wrote ``step``."""
    texts: list[str] = []
    for earlier in trajectory.steps[: step.index + 1]:
        for message in earlier.observation_messages or []:
            if message.role is Role.tool:
                texts.append(message.content)
        if earlier.observation_messages is None and earlier.observation_role == "tool":
            texts.append(earlier.observation)
    return texts


class NoToolUseLabeler(ToolLabeler):
    """The episode answered without calling any tool, in an env whose recipe requires tool use
    (the cards' tool-call reward). ``required_envs`` lists those envs."""

    name: ClassVar[str] = "no_tool_use"
    mode: ClassVar[str] = FailureMode.no_tool_use.value
    defaults: ClassVar[dict[str, Any]] = {"required_envs": ["code"], "confidence": 0.9}

    def label(self, trajectory: Trajectory) -> list[Label]:
        if trajectory.env.name not in self.config["required_envs"] or not trajectory.steps:
            return []
        if tool_steps(trajectory):
            return []
        answer = next((step for step in reversed(trajectory.steps) if step.facts.final or step.done), None)
        if answer is None:
            return []
        outcome = "correct" if trajectory.outcome.success else "not correct"
        evidence = f"answered ({outcome}) without a single tool call: '{short(answer.raw_output, 80)}'"
        return [self.make_label(answer, self.config["confidence"], evidence)]


class HallucinatedToolOutputLabeler(ToolLabeler):
    """The model wrote tool output itself: a ``<tool_response>`` block, an output block right
    after its own call, a quoted result that no tool returned, or, in a message to a person
    (``stated_envs``), an amount, an id, a date or a read content that nothing it was shown holds
    (``tools.stated``)."""

    name: ClassVar[str] = "hallucinated_tool_output"
    mode: ClassVar[str] = FailureMode.hallucinated_tool_output.value
    version: ClassVar[int] = 3  # 3: a message is read as the protocol read it (said_text)
    defaults: ClassVar[dict[str, Any]] = {
        "tag_confidence": 0.95,
        "after_call_confidence": 0.85,
        "quoted_confidence": 0.7,
        "stated_confidence": 0.65,
        "stated_envs": ["tau2", "bfcl"],  # envs whose messages go to a person, who takes what they state as found
    }

    def _quoted(self, trajectory: Trajectory, step: Step) -> str | None:
        results = tool_results_before(trajectory, step)
        for match in _QUOTED_RESULT.finditer(step.raw_output):
            value = match.group("value").strip(".")
            if not any(ch.isdigit() for ch in value):
                continue  # numbers are what models invent; words give too many false alarms
            if not any(value in result for result in results):
                return f"'{short(match.group(0), 60)}' quotes {value!r}, which no tool returned"
        return None

    def label(self, trajectory: Trajectory) -> list[Label]:
        labels: list[Label] = []
        sources: Sources | None = None
        if trajectory.env.name in self.config["stated_envs"]:
            sources = read_sources(message.content for message in trajectory.messages)
            if trajectory.tools:  # the tool definitions were shown too (a fee or a limit in a description)
                sources.add(json.dumps(trajectory.tools, ensure_ascii=False, default=str))
        for step in trajectory.steps:
            text = step.raw_output
            if sources is not None:  # what the agent was shown before writing this turn
                sources.add(step.observation)
                for message in step.observation_messages or []:
                    sources.add(message.content)
            if (tag := _RESPONSE_TAG.search(text)) is not None:
                evidence = f"the turn writes a tool response itself: '{short(text[tag.start():], 80)}'"
                labels.append(self.make_label(step, self.config["tag_confidence"], evidence))
            elif (match := _AFTER_CALL_OUTPUT.search(text)) is not None:
                evidence = f"output written right after its own call: '{short(text[match.start():], 80)}'"
                labels.append(self.make_label(step, self.config["after_call_confidence"], evidence))
            elif (quoted := self._quoted(trajectory, step)) is not None:
                labels.append(self.make_label(step, self.config["quoted_confidence"], quoted))
            elif sources is not None and is_message(step) and (
                stated := unsupported_statement(said_text(step), sources)
            ):
                evidence = f"the message states {stated}"
                labels.append(self.make_label(step, self.config["stated_confidence"], evidence))
            if sources is not None:
                sources.add(text)  # its own words are a source from now on: a figure is flagged where it first appears
        return labels


class ToolWrongAnswerLabeler(ToolLabeler):
    """The final answer of a tool episode that the env graded wrong: the final, graded step
    (``facts.won`` False) of a code episode; in tau2, the last message to the customer where tau2's
    ``COMMUNICATE`` check failed (what it told was wrong or missing). Episodes without an answer
    are not labelled here, nor is a last turn that tried a call in a broken form; BFCL grades
    calls and state, never the text of an answer, so it has no wrong answers (a claim of work
    its checks failed is ``service_premature_success``'s)."""

    name: ClassVar[str] = "tool_wrong_answer"
    mode: ClassVar[str] = FailureMode.wrong_answer.value
    # 2: the answer is the message before the agent's own stop (tau2's ###STOP###); 3: in tau2, the message that
    # stated a figure where the customer was to be told one
    version: ClassVar[int] = 3
    narrows: ClassVar[tuple[str, ...]] = (FailureMode.premature_success.value,)
    excluded_envs: ClassVar[tuple[str, ...]] = ("sql", "bfcl")
    defaults: ClassVar[dict[str, Any]] = {"confidence": 0.9}

    def label(self, trajectory: Trajectory) -> list[Label]:
        if trajectory.outcome.success or not trajectory.steps:
            return []
        verdict = trajectory.steps[-1]  # where the env (or the importer) kept the grader's verdict
        last = closing_message(trajectory.steps)  # the agent's own stop (tau2's ###STOP###) answers nothing
        if last.tool_calls or broken_call_problems(last):
            return []  # a call, or an attempt at one: not an answer
        failed = tau2_failed_parts(verdict) if trajectory.env.name == "tau2" else None
        if failed is not None:
            if "COMMUNICATE" not in failed or not is_message(last):
                return []
            missing = _untold(verdict)
            answer = _answering_message(trajectory.steps[: last.index + 1], missing) or last
            which = "last message" if answer is last else "message"
            told = short(said_text(answer), 60)
            untold = "not told " + ", ".join(repr(short(info, 40)) for info in missing) if missing else "failed"
            evidence = f"the {which} '{told}' fails tau2's communicate check: {untold}"
            return [self.make_label(answer, self.config["confidence"], evidence)]
        if not last.facts.final or last.facts.won is not False or last.valid is False:
            return []
        evidence = f"answer '{short(last.raw_output, 60)}' graded wrong: {short(last.feedback, 100)}"
        return [self.make_label(last, self.config["confidence"], evidence)]


def _untold(step: Step) -> list[str]:
    """What tau2's communicate checks found missing from the agent's messages."""
    reward_info = step.info["tau2"]["reward_info"]
    return [
        str(check.get("info"))
        for check in reward_info.get("communicate_checks") or []
        if isinstance(check, dict) and check.get("met") is False
    ]


def _answering_message(steps: list[Step], missing: list[str]) -> Step | None:
    """The message that gave the customer a figure in place of a missing one: where every missing piece is a
    figure (holds a digit), the last message to the customer that states one ("12 variants" where tau2 wanted
    "10"); None where no message does, or a missing piece is words (the closing message answers then)."""
    if not missing or not all(any(char.isdigit() for char in info) for info in missing):
        return None
    return next(
        (step for step in reversed(steps) if is_message(step) and any(char.isdigit() for char in said_text(step))),
        None,
    )
