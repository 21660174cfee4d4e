"""Plain chat logs of household and DBBench runs (one ``{"messages": [...]}`` per line, or
ShareGPT ``{"conversations": [{"from", "value"}, ...]}``) as Trajectory records.

Many people keep their agent runs as OpenAI-style message lists (SFT and DPO datasets,
chat-completion logs). The steps are rebuilt from the turns: the last user turn that
states the task ("Your task is to: ...") starts the episode, every assistant turn after
it is one step, and the user turn that follows is the env's feedback. Turns in the ETO
style (``Thought:`` / ``Action:``, ``Observation: ...``) and the AgentBench style
(``THOUGHT:`` / ``ACTION:``) are both read. A log that opens with the DBBench instruction is
read as the AgentBench importer reads a DBBench ``runs.jsonl`` history.

Optional top-level fields: ``id``, ``success`` / ``won`` (bool) or ``reward`` (number),
``model``. Without an outcome the trajectory is marked ``task.meta['outcome_known'] = False``.
A chat log of a tool-calling agent (tools, tool calls, tool results) is read by ``tool_chat``, a
slime tau2 pipeline trajectory (``prompt`` turns with ``[ACTION]`` / ``<tool_call>`` actions) by ``slime``.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from prefbuild.io.importers.agentbench import KIND_TO_TYPE, dbbench_trajectory, is_dbbench_opening
from prefbuild.io.importers.convert import (
    ExternalLogError,
    bare_observation,
    finish,
    household_step,
    messages_of,
    recorded_success,
)
from prefbuild.io.importers.located import Locate
from prefbuild.io.importers.parsing import parse_turn, step_fields
from prefbuild.io.importers.slime import slime_trajectory
from prefbuild.io.importers.slime_turns import is_slime_record
from prefbuild.io.importers.tool_chat import tool_chat_trajectory, tool_log_evidence
from prefbuild.labelers.household_text import parse_goal
from prefbuild.labelers.text import is_completion_claim
from prefbuild.records import (
    EXTERNAL_SPLIT,
    EnvInfo,
    Message,
    Outcome,
    Role,
    Step,
    StopReason,
    TaskInfo,
    TeacherInfo,
    Trajectory,
)

_OBSERVATION_PREFIX = "Observation:"
logger = logging.getLogger(__name__)


# Where chat logs keep their turns: OpenAI-style ``messages``, ShareGPT-style ``conversations``.
CHAT_KEYS = ("messages", "conversations")


def is_messages_record(record: Any) -> bool:
    """A chat log's record: ``messages`` or ``conversations`` (whatever they hold: the importer says
    what is wrong with them), or a slime tau2 trajectory's ``prompt`` (``slime_turns.is_slime_record``),
    and no prefbuild ``steps``."""
    return isinstance(record, dict) and "steps" not in record and (
        any(key in record for key in CHAT_KEYS) or is_slime_record(record))


_REACT_LINE = re.compile(
    r"^\s*(?:>\s*)?(?:think:|(?:go to|open|close|take|put|move|heat|cool|clean|use|slice|examine)\b)", re.IGNORECASE
)
_REACT_PROMPT = re.compile(r"^> (?:think: |go to )", re.MULTILINE)


def detect_protocol(turns: list[Message]) -> str:
    """``react``, ``eto`` or ``agentbench``: the household protocol a chat log was written in.

    ReAct logs show ``> `` transcripts in the prompt and answer with one bare line per turn
    (``think: ...`` or a command); ETO turns carry ``Action:``, AgentBench ones ``ACTION:``.

    Args:
        turns: the chat turns from the task turn on (the prompt turn included).

    Returns:
        The protocol name as ``prefbuild.envs.get_protocol`` knows it.

    Example:
        >>> detect_protocol([Message(role=Role.assistant, content="think: I need a mug.")])
        'react'
    """
    replies = [m.content for m in turns if m.role is Role.assistant]
    upper = sum("ACTION:" in reply for reply in replies)
    eto = sum("Action:" in reply for reply in replies)
    react = sum(bool(_REACT_LINE.match(reply)) and "ACTION:" not in reply for reply in replies)
    prompted = any(_REACT_PROMPT.search(m.content) for m in turns if m.role is not Role.assistant)
    if react > max(upper, eto) or (prompted and react >= max(upper, eto)):
        return "react"
    return "eto" if eto > upper else "agentbench"


def _household_or_dbbench(history: list[Any]) -> bool:
    """Does a chat log state a household task ("Your task is to:") or open with the DBBench instruction?"""
    texts = [
        turn.get("content", turn.get("value")) if isinstance(turn, dict) else None for turn in history
    ]
    if texts and isinstance(texts[0], str) and is_dbbench_opening(texts[0]):
        return True
    return any(isinstance(text, str) and "Your task is to:" in text for text in texts)


def _warn_if_unparsed(steps: list[Step], protocol: str, where: str) -> None:
    """Most turns without an action (ReAct thoughts aside) means the log was read in the wrong protocol."""
    empty = sum(1 for step in steps if step.action is None and not (protocol == "react" and step.thought))
    if steps and empty * 2 > len(steps):
        logger.warning(
            "%s: %d of %d turns parse to no action with the %r protocol; is this log in another format?",
            where,
            empty,
            len(steps),
            protocol,
        )


def _feedback(text: str) -> str:
    text = bare_observation(text)
    if text.startswith(_OBSERVATION_PREFIX):
        text = text[len(_OBSERVATION_PREFIX) :].strip()
    return text


def _dbbench(record: dict[str, Any], turns: list[Message], *, default_id: str, model: str, where: str) -> Trajectory:
    """A DBBench conversation kept as a chat log (the instruction first)."""
    trajectory = dbbench_trajectory(
        turns, {}, "completed", str(record.get("id") or default_id), str(record.get("model") or model), where
    )
    meta = {**trajectory.task.meta, "source": "messages"}
    success = recorded_success(record)
    if success is None:
        return trajectory.model_copy(update={"task": trajectory.task.model_copy(update={"meta": meta})})
    meta["outcome_known"] = True
    outcome = (
        Outcome(success=True, reward=1.0, stop_reason=StopReason.success) if success else trajectory.outcome
    )
    steps = finish(list(trajectory.steps), outcome)
    return trajectory.model_copy(
        update={"task": trajectory.task.model_copy(update={"meta": meta}), "outcome": outcome, "steps": steps}
    )


def _outcome(record: dict[str, Any], last: Step | None) -> tuple[Outcome, bool]:
    success = recorded_success(record)
    if success:
        return Outcome(success=True, reward=1.0, stop_reason=StopReason.success), True
    claimed = last is not None and is_completion_claim(last.action)
    reason = StopReason.agent_finished if claimed else StopReason.max_steps
    return Outcome(success=False, stop_reason=reason), success is not None


def messages_trajectory(
    record: dict[str, Any], *, default_id: str, model: str, where: str, locate: Locate | None = None
) -> Trajectory:
    """One ``{"messages": [...]}`` (or ShareGPT ``{"conversations": [...]}``) record as a household,
    DBBench or tool Trajectory; ``ExternalLogError`` on bad input.

    A slime tau2 trajectory (``prompt`` or ``messages`` with the pipeline's ``[ACTION]`` / result
    text, ``slime_turns.is_slime_record``) is read by ``slime``. A record with tools, structured
    tool calls or ``function_call`` turns is a tool-calling log (``tool_chat``); one with only
    Hermes tool text or tool results is one unless it states a household task or opens with the
    DBBench instruction (a household model may write a ``<tool_call>`` by mistake). ``locate``
    gives ``file:line`` of a JSON path in the record (default: ``where``).
    """
    if is_slime_record(record):
        return slime_trajectory(record, default_id=default_id, model=model, locate=locate or (lambda _: where))
    key = next((key for key in CHAT_KEYS if key in record), None)
    if key is None:
        raise ExternalLogError(f"{where}: no 'messages' (or ShareGPT 'conversations') list of chat turns")
    evidence = tool_log_evidence(record)
    if evidence == "strong" or (evidence == "weak" and not _household_or_dbbench(record[key])):
        return tool_chat_trajectory(record, default_id=default_id, model=model, locate=locate or (lambda _: where))
    turns = messages_of(record[key], f"{where}: {key}")
    start = next(
        (
            i
            for i in range(len(turns) - 1, -1, -1)
            if turns[i].role is Role.user and "Your task is to:" in turns[i].content
        ),
        None,
    )
    if start is None:
        if turns and is_dbbench_opening(turns[0].content):
            return _dbbench(record, turns, default_id=default_id, model=model, where=where)
        raise ExternalLogError(
            f"{where}: {key} has no user turn with 'Your task is to:' and does not open with the DBBench "
            "instruction (neither a household nor a DBBench run), and no tools, tool calls or tool results "
            "(not a tool-calling log)"
        )
    protocol = detect_protocol(turns[start:])
    steps: list[Step] = []
    observation = turns[start].content
    position = start + 1
    while position < len(turns):
        turn = turns[position]
        if turn.role is not Role.assistant:
            observation = turn.content
            position += 1
            continue
        following = turns[position + 1] if position + 1 < len(turns) else None
        feedback_turn = following.content if following is not None and following.role is not Role.assistant else ""
        steps.append(
            household_step(
                len(steps),
                observation,
                turn.content,
                step_fields(parse_turn("household", protocol, turn.content)),
                _feedback(feedback_turn),
            )
        )
        observation = feedback_turn
        position += 2
    _warn_if_unparsed(steps, protocol, where)
    outcome, known = _outcome(record, steps[-1] if steps else None)
    # The task turn may hold few-shot transcripts first (ReAct): the real task is the last one.
    goal_text = bare_observation(turns[start].content.rsplit("Your task is to:", 1)[1]).strip().split("\n", 1)[0]
    goal = parse_goal(goal_text)
    trajectory_id = str(record.get("id") or default_id)
    return Trajectory(
        id=trajectory_id,
        task=TaskInfo(
            id=trajectory_id,
            type=KIND_TO_TYPE.get(goal.kind, "unknown") if goal else "unknown",
            goal=goal_text,
            split=EXTERNAL_SPLIT,
            meta={"source": "messages", "outcome_known": known},
        ),
        env=EnvInfo(name="household", dialect="classic", protocol=protocol),
        teacher=TeacherInfo(backend="external", model=str(record.get("model") or model)),
        messages=turns[:start],
        steps=finish(steps, outcome),
        outcome=outcome,
    )
