"""Steps of a tool-calling conversation, shared by the importers of tool logs (tau2-bench results
files, OpenAI / Hermes / ShareGPT chat logs).

Each importer reads its own layout into ``ChatTurn`` objects; ``conversation_steps`` makes the
steps exactly as prefbuild's own tool envs record them: one step per assistant turn, the user
turn or tool results before it as its observation (one ``tool`` message per result), the turn's
calls as ``tool_calls`` (structured ones with ``native_tool_calls``; Hermes ``<tool_call>`` text
read with the env's protocol where the log's harness ran such calls), and one ``ToolCallFacts``
per call that got a result: ``ok`` / ``error`` from the result, ``offered`` from the tool list
where the log has one.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from prefbuild.envs.base import ParsedOutput, Protocol
from prefbuild.records import (
    FunctionCall,
    Message,
    Role,
    Step,
    StepFacts,
    StopReason,
    ToolCall,
    ToolCallFacts,
    Usage,
    UsageTotals,
)
from prefbuild.tooluse.actions import decode_action
from prefbuild.tooluse.dispatch import ToolBox


@dataclass(frozen=True)
class RawCall:
    """One structured call as a log wrote it.

    Attributes:
        id: the call id (the log's, or ``call_<n>`` where it has none).
        name: the tool name.
        arguments: the arguments; None where the model's text is not a JSON object.
        encoded: the arguments as ``FunctionCall.arguments`` holds them (JSON text, or the model's
            own text where it is not JSON).
        problem: why the arguments could not be read (``arguments of 'f' are not valid JSON``), or None.
    """

    id: str
    name: str
    arguments: dict[str, Any] | None
    encoded: str
    problem: str | None = None


@dataclass(frozen=True)
class ChatTurn:
    """One turn of a tool-calling conversation, whatever layout the log keeps it in.

    Attributes:
        role: ``system``, ``user``, ``assistant`` or ``tool``.
        content: the text (empty for none).
        calls: an assistant turn's structured calls.
        call_id: a tool result's call id; None where the log names none (matched by position).
        name: a tool result's tool name, where the log gives it.
        failed: a tool result that says its call failed.
        error: why, as ``ToolCallFacts.error`` records it.
        not_offered: a tool result that says the tool does not exist (tau2's ``Tool 'x' not found.``).
        usage: an assistant turn's token counts, where the log has them.
        finish_reason: why the model stopped, where the log says.
    """

    role: str
    content: str
    calls: tuple[RawCall, ...] = ()
    call_id: str | None = None
    name: str | None = None
    failed: bool = False
    error: str | None = None
    not_offered: bool = False
    usage: Usage | None = None
    finish_reason: str | None = None


@dataclass(frozen=True)
class Offered:
    """The tools a log says the model was offered.

    Attributes:
        names: their names; None where the log lists none (nothing is known about other names).
        box: their schemas, to check arguments against here; None where the labelers check them
            against ``Trajectory.tools`` (the tools went with the requests) or the log has none.
    """

    names: frozenset[str] | None = None
    box: ToolBox | None = None


def message_of(turn: ChatTurn) -> Message:
    """A turn as a prefbuild Message (structured calls kept with their ids).

    Example:
        >>> message_of(ChatTurn(role="tool", content="42", call_id="c1")).tool_call_id
        'c1'
    """
    if turn.role == "tool":
        return Message(role=Role.tool, content=turn.content, tool_call_id=turn.call_id or "", name=turn.name)
    return Message(role=Role(turn.role), content=turn.content, tool_calls=record_calls(turn) or None)


def record_calls(turn: ChatTurn) -> list[ToolCall]:
    """A turn's structured calls as OpenAI-style tool calls.

    Example:
        >>> call = RawCall(id="c1", name="f", arguments={"x": 1}, encoded='{"x": 1}')
        >>> record_calls(ChatTurn(role="assistant", content="", calls=(call,)))[0].function.arguments
        '{"x": 1}'
    """
    return [ToolCall(id=call.id, function=FunctionCall(name=call.name, arguments=call.encoded)) for call in turn.calls]


def conversation_steps(
    turns: Sequence[ChatTurn], parser: Protocol, offered: Offered, *, text_calls: bool
) -> list[Step]:
    """One step per assistant turn; the turns before it are its observation.

    Args:
        turns: the conversation after the fixed prompt prefix.
        parser: the env protocol that reads a turn's text (``parse`` / ``parse_completion``).
        offered: the tools the model was offered.
        text_calls: Hermes ``<tool_call>`` text in a turn without structured calls is a call the
            log's harness ran (chat logs of Hermes models); False where the harness only ran
            structured calls (tau2: such text was a message to the customer).

    Returns:
        The steps, indexed from 0.

    Example:
        >>> from prefbuild.io.importers.parsing import protocol
        >>> turns = [ChatTurn("user", "2+2?"), ChatTurn("assistant", "4")]
        >>> [step.action for step in conversation_steps(turns, protocol("tau2", "hermes"), Offered(), text_calls=True)]
        ['{"message": "4"}']
    """
    steps: list[Step] = []
    pending: list[ChatTurn] = []
    position = 0
    while position < len(turns):
        turn = turns[position]
        position += 1
        if turn.role != "assistant":
            pending.append(turn)
            continue
        after: list[ChatTurn] = []
        while position < len(turns) and turns[position].role != "assistant":
            after.append(turns[position])
            position += 1
        step, pending = _step(len(steps), pending, turn, after, parser, offered, text_calls)
        steps.append(step)
    return steps


def observation_of(turns: Sequence[ChatTurn]) -> tuple[str, str, list[Message] | None]:
    """``(observation, observation_role, observation_messages)`` of the turns before a step, as
    prefbuild's tool envs record them: one user turn is the plain observation; tool results are
    one ``tool`` message each (the observation is their texts).

    Args:
        turns: the turns between the previous assistant turn (or the prompt) and the step.

    Returns:
        The observation text, its role and its messages (None for one plain user turn).

    Example:
        >>> observation_of([ChatTurn(role="tool", content="18 C", call_id="c1")])[:2]
        ('18 C', 'tool')
    """
    if not turns:
        return "", "user", None
    if len(turns) == 1 and turns[0].role == "user":
        return turns[0].content, "user", None
    messages = [message_of(turn) for turn in turns]
    role = "tool" if turns[0].role == "tool" else "user"
    return "\n\n".join(message.content for message in messages), role, messages


def _step(
    index: int,
    before: list[ChatTurn],
    turn: ChatTurn,
    after: list[ChatTurn],
    parser: Protocol,
    offered: Offered,
    text_calls: bool,
) -> tuple[Step, list[ChatTurn]]:
    """The step of one assistant turn and the turns after it with the call ids of their results filled in."""
    text = turn.content
    structured = record_calls(turn)
    parsed = parser.parse_completion(text, structured) if structured else parser.parse(text)
    calls, raw = structured, list(turn.calls)
    if not calls and text_calls and parsed.action is not None:
        calls = decode_action(parsed.action).calls
        raw = [_read_back(call) for call in calls]
    after = _answered(after, raw)
    facts = _call_facts(raw, after, offered)
    observation, role, observation_messages = observation_of(before)
    if calls:
        valid: bool | None = all(fact.ok for fact in facts) if facts else None
    else:
        valid = parsed.action is not None
    step = Step(
        index=index,
        observation=observation,
        observation_role=role,
        observation_messages=observation_messages,
        raw_output=text,
        tool_calls=calls or None,
        native_tool_calls=bool(structured),
        thought=parsed.thought,
        action=parsed.action,
        format_ok=parsed.format_ok,
        normalized=list(parsed.normalized),
        valid=valid,
        feedback="\n\n".join(later.content for later in after),
        usage=turn.usage,
        facts=_facts(parsed, facts, turn.finish_reason),
    )
    return step, after


def _facts(parsed: ParsedOutput, tools: list[ToolCallFacts], finish_reason: str | None) -> StepFacts:
    return StepFacts(problems=list(parsed.problems), final=parsed.final, tools=tools, finish_reason=finish_reason)


def _read_back(call: ToolCall) -> RawCall:
    """A call the protocol read from Hermes text (its arguments always a JSON object)."""
    arguments = json.loads(call.function.arguments)
    return RawCall(id=call.id, name=call.function.name, arguments=arguments, encoded=call.function.arguments)


def _answered(after: list[ChatTurn], calls: list[RawCall]) -> list[ChatTurn]:
    """The turns after a step, each tool result that names none of the step's calls given the id of
    the call it answers by position among the results: the results of Hermes text calls name none,
    or an id of the log's harness that the text never carried."""
    ids = {call.id for call in calls}
    taken = {turn.call_id for turn in after if turn.role == "tool" and turn.call_id in ids}
    free = [call.id for call in calls if call.id not in taken]
    filled: list[ChatTurn] = []
    for turn in after:
        if turn.role == "tool" and turn.call_id not in ids and free:
            turn = replace(turn, call_id=free.pop(0))
        filled.append(turn)
    return filled


def _call_facts(calls: list[RawCall], after: list[ChatTurn], offered: Offered) -> list[ToolCallFacts]:
    """How each call went, from the tool result that answered it. A call without a result (the
    log ended first) gets no facts."""
    results = {turn.call_id: turn for turn in after if turn.role == "tool" and turn.call_id}
    facts = []
    for call in calls:
        result = results.get(call.id)
        if result is None:
            continue
        failed = result.failed or call.problem is not None
        error = call.problem or (result.error if result.failed else None)
        known = offered.names is not None and call.name in offered.names
        facts.append(
            ToolCallFacts(
                call_id=call.id,
                name=call.name,
                arguments=call.arguments,
                ok=not failed,
                error=error,
                offered=False if result.not_offered else (known if offered.names is not None else None),
                schema_error=_schema_error(call, offered) if known else None,
            )
        )
    return facts


def _schema_error(call: RawCall, offered: Offered) -> str | None:
    """Where the call's arguments break its tool's schema, checked here where the tools are not
    the trajectory's (they sat in the prompt text, as BFCL records them); None otherwise."""
    if offered.box is None or call.arguments is None:
        return None
    return offered.box.check(ToolCall(id=call.id, function=FunctionCall(name=call.name, arguments=call.encoded)))[1]


def usage_of(value: Any) -> Usage | None:
    """A message's ``usage`` (``prompt_tokens``, ``completion_tokens``) where both are counts.

    Example:
        >>> usage_of({"prompt_tokens": 10, "completion_tokens": 3}).completion_tokens
        3
    """
    if not isinstance(value, dict):
        return None
    counts = {key: value.get(key) for key in ("prompt_tokens", "completion_tokens")}
    if not all(isinstance(count, int) and not isinstance(count, bool) and count >= 0 for count in counts.values()):
        return None
    return Usage(**counts)


def first_user_text(turns: Sequence[ChatTurn]) -> str:
    """The task of a conversation: its first user turn's text ("" without one)."""
    return next((turn.content.strip() for turn in turns if turn.role == "user"), "")


def unfinished_stop(steps: Sequence[Step]) -> StopReason:
    """Why a failed or ungraded conversation stopped: ``agent_finished`` where its last turn answered (a
    message, no call), else ``max_steps`` (it ended on a call)."""
    last = steps[-1] if steps else None
    answered = last is not None and not last.tool_calls and last.action is not None
    return StopReason.agent_finished if answered else StopReason.max_steps


def usage_totals(steps: Sequence[Step]) -> UsageTotals:
    """The token counts of ``steps`` added up."""
    usage = UsageTotals()
    for step in steps:
        usage.add(step.usage)
    return usage
