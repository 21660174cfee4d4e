"""Small builders of valid records for foundation tests."""

from __future__ import annotations

from typing import Any

from prefbuild.records import (
    EnvInfo,
    Label,
    Message,
    Outcome,
    Pair,
    PairSource,
    Step,
    StopReason,
    TaskInfo,
    TeacherInfo,
    Trajectory,
)


def make_step(index: int, **overrides: Any) -> Step:
    fields: dict[str, Any] = {
        "index": index,
        "observation": f"You arrive at loc {index}. On the countertop 1, you see a apple 1.",
        "raw_output": "ACTION: go to countertop 1",
        "action": "go to countertop 1",
        "valid": True,
    }
    fields.update(overrides)
    return Step(**fields)


def make_trajectory(n_steps: int = 3, success: bool = False, **overrides: Any) -> Trajectory:
    steps = [make_step(i) for i in range(n_steps)]
    if success:
        steps[-1] = make_step(n_steps - 1, done=True, reward=1.0)
    fields: dict[str, Any] = {
        "id": "traj-1",
        "task": TaskInfo(id="household/train/s0/000001", type="pick_and_place_simple", goal="put some apple on table.",
                         split="train", seed=0),
        "env": EnvInfo(name="household", dialect="classic", protocol="agentbench"),
        "teacher": TeacherInfo(backend="scripted", model="scripted-expert"),
        "messages": [Message(role="user", content="Interact with a household to solve a task.")],
        "steps": steps,
        "outcome": Outcome(success=success, stop_reason=StopReason.success if success else StopReason.max_steps),
    }
    fields.update(overrides)
    return Trajectory(**fields)


def make_pair(**overrides: Any) -> Pair:
    fields: dict[str, Any] = {
        "id": "pair-1",
        "strategy": "stepwise",
        "prompt": [Message(role="system", content="Solve the task."), Message(role="user", content="obs")],
        "chosen": [Message(role="assistant", content="ACTION: go to fridge 1")],
        "rejected": [Message(role="assistant", content="ACTION: go to toilet 1")],
        "reason": "implausible_location",
        "source": PairSource(trajectory_id="traj-1", step=2, task_id="t1", env="household", teacher_model="m"),
    }
    fields.update(overrides)
    return Pair(**fields)


def make_label(step: int, mode: str = "loop") -> Label:
    return Label(mode=mode, step=step, confidence=0.9, evidence="same action three times", labeler="loop@1")
