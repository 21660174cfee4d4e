"""Hand-built household trajectories in the AgentBench protocol, for fast unit tests."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from prefbuild.records import (
    EnvInfo,
    Label,
    Message,
    Outcome,
    Role,
    Step,
    StopReason,
    TaskInfo,
    TeacherInfo,
    Trajectory,
)

FIRST_OBSERVATION = "Here is your task. You are in the middle of a room.\nYour task is to: put a mug in shelf."
PREFIX = [
    Message(role=Role.user, content="Interact with a household to solve a task."),
    Message(role=Role.assistant, content="OK. I'll follow your instructions and try my best to solve the task."),
]


@dataclass
class S:
    """One step: what the model wrote, the parsed action, the oracle action, labels as (mode, confidence)."""

    raw: str
    action: str | None
    expert: str | None = None
    thought: str | None = None
    valid: bool | None = True
    labels: Sequence[tuple[str, float]] = field(default_factory=tuple)
    observation: str | None = None


def trajectory(
    steps: Sequence[S],
    *,
    traj_id: str = "traj-1",
    task_id: str = "task-1",
    success: bool = False,
    protocol: str = "agentbench",
    first_observation: str = FIRST_OBSERVATION,
) -> Trajectory:
    records = []
    for index, item in enumerate(steps):
        observation = item.observation or (first_observation if index == 0 else f"Observation {index}.")
        records.append(
            Step(
                index=index,
                observation=observation,
                raw_output=item.raw,
                thought=item.thought,
                action=item.action,
                valid=item.valid,
                expert_action=item.expert,
                done=success and index == len(steps) - 1,
                labels=[
                    Label(
                        mode=mode,
                        step=index,
                        confidence=confidence,
                        evidence=f"{mode} here",
                        labeler="t@1",
                    )
                    for mode, confidence in item.labels
                ],
            )
        )
    return Trajectory(
        id=traj_id,
        task=TaskInfo(id=task_id, type="pick_and_place_simple", goal="put a mug in shelf", split="train"),
        env=EnvInfo(name="household", dialect="classic", protocol=protocol),
        teacher=TeacherInfo(backend="scripted", model="scripted-expert"),
        messages=list(PREFIX),
        steps=records,
        outcome=Outcome(
            success=success, stop_reason=StopReason.success if success else StopReason.max_steps, reward=float(success)
        ),
    )


def act(action: str, thought: str | None = None) -> str:
    return f"THOUGHT: {thought}\n ACTION: {action}" if thought else f"ACTION: {action}"
