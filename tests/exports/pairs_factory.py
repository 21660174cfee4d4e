"""Pairs built directly from records, covering the layouts exports must handle."""

from __future__ import annotations

from prefbuild.records import FailureMode, FunctionCall, Message, Pair, PairSource, Role, ToolCall

SOURCE = PairSource(trajectory_id="traj-1", step=2, task_id="task-1", env="household", teacher_model="m")


def message(role: str, content: str, **extra) -> Message:
    return Message(role=Role(role), content=content, **extra)


def stepwise_pair(reason: FailureMode = FailureMode.premature_success, *, system: bool = False) -> Pair:
    prompt = [
        message("user", "Interact with a household to solve a task."),
        message("assistant", "OK."),
        message("user", "Here is your task. You are in the middle of a room."),
        message("assistant", "ACTION: go to shelf 1"),
        message("user", "On the shelf 1, you see nothing."),
    ]
    if system:
        prompt.insert(0, message("system", "You are a household agent."))
    return Pair(
        id="pair-1",
        strategy="stepwise",
        prompt=prompt,
        chosen=[message("assistant", "ACTION: go to cabinet 1")],
        rejected=[message("assistant", "ACTION: Task succeeded.")],
        reason=reason,
        source=SOURCE,
    )


def multi_turn_pair() -> Pair:
    return Pair(
        id="pair-2",
        strategy="trajectory",
        prompt=[message("user", "Your task is to: put a mug in shelf.")],
        chosen=[
            message("assistant", "ACTION: go to cabinet 1"),
            message("user", "You see a mug 1."),
            message("assistant", "ACTION: take mug 1 from cabinet 1"),
        ],
        rejected=[message("assistant", "ACTION: go to bed 1")],
        reason=FailureMode.task_failure,
        source=SOURCE,
    )


def tool_pair() -> Pair:
    call = ToolCall(id="call-1", function=FunctionCall(name="act", arguments='{"action": "go to shelf 1"}'))
    return Pair(
        id="pair-3",
        strategy="stepwise",
        prompt=[
            message("system", "Use the act tool."),
            message("user", "Your task is to: put a mug in shelf."),
            message("assistant", "", tool_calls=[call]),
            message("tool", "On the shelf 1, you see nothing.", tool_call_id="call-1"),
        ],
        chosen=[message("assistant", "ACTION: go to cabinet 1")],
        rejected=[message("assistant", "ACTION: go to bed 1")],
        reason=FailureMode.implausible_location,
        source=SOURCE,
    )
