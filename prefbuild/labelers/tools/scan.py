"""Whether a trajectory is a tool trajectory, asked by every tool labeler in turn: kept light
(no schema validator imported) because the label stage asks it of every trajectory."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from prefbuild.records import Trajectory

TOOL_ENVS: frozenset[str] = frozenset({"code", "bfcl", "tau2"})


def is_tool_trajectory(trajectory: Trajectory) -> bool:
    """A trajectory of a tool env, or one whose steps made or recorded tool calls."""
    if trajectory.env.name in TOOL_ENVS or trajectory.tools:
        return True
    scope = _SCAN_SCOPE.get()
    if scope is None or scope[0] is not trajectory:
        return _has_tool_steps(trajectory)
    if scope[1] is None:
        scope[1] = _has_tool_steps(trajectory)
    return scope[1]


def _has_tool_steps(trajectory: Trajectory) -> bool:
    return any(step.tool_calls or step.facts.tools for step in trajectory.steps)


@contextmanager
def one_scan(trajectory: Trajectory) -> Iterator[None]:
    """Within the block, ``is_tool_trajectory(trajectory)`` scans its steps once: every labeler
    asks in turn whether it applies. The answer is not kept after the block, so a trajectory
    edited between two labellings is scanned again."""
    token = _SCAN_SCOPE.set([trajectory, None])
    try:
        yield
    finally:
        _SCAN_SCOPE.reset(token)


# [trajectory, its scan or None before the first question], inside one_scan
_SCAN_SCOPE: ContextVar[list[Any] | None] = ContextVar("prefbuild_tool_scan", default=None)
