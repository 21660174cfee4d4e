"""Shared helpers for the tau2 env tests: play an episode with the env's expert."""

from __future__ import annotations

from typing import Any

from prefbuild.envs.base import EnvTask, StepResult
from prefbuild.envs.tau2.env import Tau2Env

MAX_TURNS = 60


def task_by_id(env: Tau2Env, split: str, tau2_id: str) -> EnvTask:
    for task in env.tasks(split, 10_000, 0):
        if task.payload.task.id == tau2_id:
            return task
    raise KeyError(tau2_id)


def play_expert(env: Tau2Env, task: EnvTask) -> tuple[list[StepResult], dict[str, Any]]:
    """Reset and follow the expert to the end; returns the step results and tau2's verdict."""
    env.reset(task)
    results = []
    for _ in range(MAX_TURNS):
        action = env.expert_action()
        assert action is not None, f"{task.info.id}: the expert stopped before the end"
        result = env.step(action)
        results.append(result)
        if result.done:
            return results, result.info["tau2"]
    raise AssertionError(f"{task.info.id}: no end after {MAX_TURNS} turns")
