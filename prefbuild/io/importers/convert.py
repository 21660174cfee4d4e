"""Shared construction of Trajectory records from external logs."""

from __future__ import annotations

from typing import Any

from prefbuild.errors import PrefbuildError
from prefbuild.labelers.text import is_nothing_happens
from prefbuild.records import Message, Outcome, Role, Step, StepFacts

AVAILABLE_ACTIONS = "AVAILABLE ACTIONS"


class ExternalLogError(PrefbuildError, ValueError):
    """An external log record is not in the expected layout; the message names file, line and field."""


def role_of(raw: Any, where: str) -> Role:
    """Chat roles of external logs: AgentBench writes ``agent`` for the model, ShareGPT ``gpt`` and
    ``human``, and LLaMA-Factory ``observation`` for a tool's reply."""
    name = str(raw).lower()
    if name in ("agent", "assistant", "model", "gpt"):
        return Role.assistant
    if name in ("user", "human", "environment", "env"):
        return Role.user
    if name in ("system", "tool"):
        return Role(name)
    if name == "observation":
        return Role.tool
    raise ExternalLogError(f"{where}: unknown chat role {raw!r}")


def messages_of(history: Any, where: str) -> list[Message]:
    """Chat turns as Messages: OpenAI ``{"role", "content"}`` or ShareGPT ``{"from", "value"}`` objects.

    Example:
        >>> [m.role.value for m in messages_of([{"from": "human", "value": "hi"}, {"from": "gpt", "value": "ok"}], "x")]
        ['user', 'assistant']
    """
    if not isinstance(history, list):
        raise ExternalLogError(f"{where}: expected a list of chat turns, got {type(history).__name__}")
    found: list[Message] = []
    for position, turn in enumerate(history):
        if isinstance(turn, dict) and "role" in turn:
            role, content = turn["role"], turn.get("content")
        elif isinstance(turn, dict) and "from" in turn:
            role, content = turn["from"], turn.get("value")
        else:
            raise ExternalLogError(
                f"{where}[{position}]: expected an object with 'role' and 'content' (or ShareGPT 'from' and 'value')"
            )
        text = "" if content is None else str(content)
        found.append(Message(role=role_of(role, f"{where}[{position}]"), content=text))
    return found


def bare_observation(turn: str) -> str:
    """The env's text of an AgentBench observation turn: everything before `` AVAILABLE ACTIONS``."""
    cut = turn.split(AVAILABLE_ACTIONS, 1)[0]
    return cut.rstrip()


def household_step(
    index: int,
    observation: str,
    raw_output: str,
    fields: dict[str, Any],
    feedback: str,
    *,
    observation_in_history: str | None = None,
    executed: str | None = None,
    admissible: list[str] | None = None,
    done: bool = False,
) -> Step:
    """One household step from a parsed turn (``parsing.step_fields``) and what the env answered."""
    facts: StepFacts = fields.get("facts") or StepFacts()
    facts = facts.model_copy(
        update={"executed_action": executed, "admissible": list(admissible) if admissible is not None else None}
    )
    valid: bool | None = None
    if executed is not None:
        # The env's verdict on the command it ran; a snapped command is reported by its own check.
        valid = not is_nothing_happens(feedback)
    return Step(
        index=index,
        observation=observation,
        observation_in_history=observation_in_history if observation_in_history != observation else None,
        raw_output=raw_output,
        thought=fields.get("thought"),
        action=fields.get("action"),
        format_ok=bool(fields.get("format_ok", True)),
        normalized=list(fields.get("normalized") or []),
        valid=valid,
        feedback=feedback,
        done=done,
        facts=facts,
    )


def finish(steps: list[Step], outcome: Outcome) -> list[Step]:
    """Mark the last step done (and rewarded) on a success, as the records contract requires."""
    if outcome.success and steps:
        steps[-1] = steps[-1].model_copy(update={"done": True, "reward": 1.0})
    return steps


def recorded_success(record: dict[str, Any]) -> bool | None:
    """``success`` / ``won`` (bool) or ``reward`` >= 1 of a chat-log record; None when it records none.

    Example:
        >>> recorded_success({"reward": 1.0}), recorded_success({"won": False}), recorded_success({})
        (True, False, None)
    """
    success: bool | None = None
    for key in ("success", "won"):
        if isinstance(record.get(key), bool):
            success = record[key]
    if success is None and isinstance(record.get("reward"), int | float) and not isinstance(record["reward"], bool):
        success = record["reward"] >= 1
    return success
