"""Trajectory and pair records built with the records models, shaped like household-env output."""

from __future__ import annotations

import random
from typing import Any

from prefbuild.records import (
    EnvInfo,
    FailureMode,
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
    UsageTotals,
)

TASK_TYPES = ("pick_and_place", "pick_clean_then_place", "look_at_obj")
REASONS = (FailureMode.loop, FailureMode.invalid_action, FailureMode.premature_success)
SYSTEM = "Interact with a household to solve a task. Reply with THOUGHT: ... and ACTION: ..."


def make_trajectory(index: int, *, task_type: str | None = None, success: bool | None = None,
                    samples: int = 1, model: str = "smollm2-135m-instruct") -> Trajectory:
    """An episode with a few steps; failed episodes carry a loop label on their last step."""
    rng = random.Random(index)
    task_type = task_type or TASK_TYPES[index % len(TASK_TYPES)]
    success = rng.random() < 0.4 if success is None else success
    n_steps = 2 + rng.randrange(4)
    steps = []
    for position in range(n_steps):
        last = position == n_steps - 1
        action = f"go to countertop {position + 1}"
        labels = []
        if last and not success:
            labels.append(Label(mode=FailureMode.loop, step=position, confidence=0.9,
                                evidence=f"action '{action}' repeated 3 times", labeler="loop@1"))
        steps.append(Step(
            index=position,
            observation=f"You arrive at countertop {position}. On it you see a apple {index}, a knife 1.",
            raw_output=f"THOUGHT: I should look further.\nACTION: {action}",
            thought="I should look further.",
            action=action,
            valid=True,
            expert_action=f"take apple {index} from countertop {position}",
            feedback="Nothing happens." if labels else "You arrive somewhere.",
            done=last and success,
            reward=1.0 if last and success else 0.0,
            labels=labels,
        ))
    return Trajectory(
        id=f"traj-{index:04d}",
        task=TaskInfo(id=f"task-{index // samples:03d}", type=task_type, goal=f"put apple {index} in fridge",
                      split="train", seed=index),
        env=EnvInfo(name="household", dialect="classic", protocol="agentbench"),
        teacher=TeacherInfo(backend="transformers", model=model, sampling={"temperature": 0.7}),
        sample_index=index % samples,
        messages=[Message(role="system", content=SYSTEM)],
        steps=steps,
        outcome=Outcome(success=success, reward=1.0 if success else 0.0,
                        stop_reason=StopReason.success if success else StopReason.max_steps),
        usage=UsageTotals(requests=n_steps, prompt_tokens=100 * n_steps, completion_tokens=12 * n_steps),
    )


def make_pair(index: int, *, split: str = "train", reason: FailureMode | None = None,
              strategy: str | None = None, task_type: str | None = None) -> Pair:
    """A stepwise-style pair: the expert action is chosen, a labelled bad action rejected."""
    reason = reason or REASONS[index % len(REASONS)]
    strategy = strategy or ("stepwise" if index % 4 else "trajectory")
    task_type = task_type or TASK_TYPES[index % len(TASK_TYPES)]
    bad = {
        FailureMode.loop: "go to countertop 1",
        FailureMode.invalid_action: "fly to the moon",
        FailureMode.premature_success: "Task succeeded.",
    }.get(reason, "look")
    return Pair(
        id=f"pair-{index:04d}",
        strategy=strategy,
        prompt=[
            Message(role="system", content=SYSTEM),
            Message(role="user", content=f"Your task is to: put apple {index} in fridge. " + "You see a fridge. " * 3),
        ],
        chosen=[Message(role="assistant", content=f"THOUGHT: the apple is on the table.\nACTION: go to table {index}")],
        rejected=[Message(role="assistant", content=f"THOUGHT: keep going.\nACTION: {bad}")],
        reason=reason,
        evidence=f"action '{bad}' was labelled {reason}",
        source=PairSource(trajectory_id=f"traj-{index:04d}", step=1, task_id=f"task-{index:03d}",
                          task_type=task_type, env="household", teacher_model="smollm2-135m-instruct"),
        split=split,
    )


def make_pairs(n: int, test_every: int = 4) -> list[Pair]:
    return [make_pair(i, split="test" if i % test_every == 0 else "train") for i in range(n)]


def trl_rows(pairs: list[Pair]) -> dict[str, list[dict[str, Any]]]:
    """Conversational TRL rows per split (what the trl export produces), for dataset-dir tests."""
    rows: dict[str, list[dict[str, Any]]] = {}
    for pair in pairs:
        rows.setdefault(pair.split, []).append({
            "id": pair.id,
            "prompt": [{"role": m.role.value, "content": m.content} for m in pair.prompt],
            "chosen": [{"role": m.role.value, "content": m.content} for m in pair.chosen],
            "rejected": [{"role": m.role.value, "content": m.content} for m in pair.rejected],
            "reason": pair.reason if pair.reason else None,
            "strategy": pair.strategy,
        })
    return rows


def sft_rows(pairs: list[Pair]) -> dict[str, list[dict[str, Any]]]:
    """A second, flat config: prompt text and the chosen completion only."""
    rows: dict[str, list[dict[str, Any]]] = {}
    for pair in pairs:
        rows.setdefault(pair.split, []).append(
            {"id": pair.id, "prompt": pair.prompt[-1].content, "completion": pair.chosen[-1].content})
    return rows
