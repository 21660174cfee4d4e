"""What tool labelers read from a trajectory: which steps are tool turns, the offered tools,
the result each call got."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from typing import Any

import jsonschema

from prefbuild.records import Role, Step, ToolCallFacts, Trajectory
from prefbuild.tooluse.dispatch import ToolBox

TOOL_ENVS: frozenset[str] = frozenset({"code", "bfcl", "tau2"})
logger = logging.getLogger(__name__)


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


def toolbox(trajectory: Trajectory) -> ToolBox | None:
    """The offered tools with their argument validators, or None where the record has none."""
    if not trajectory.tools:
        return None
    try:
        box = ToolBox(trajectory.tools)
        box.validators  # noqa: B018 - a broken schema is found here, once
    except (jsonschema.SchemaError, KeyError, TypeError, AttributeError) as error:
        # A broken tool definition: its calls cannot be checked against schemas; logged once per trajectory.
        _warn_unusable_tools(trajectory.id, f"{type(error).__name__}: {error}".splitlines()[0])
        return None
    return box


@lru_cache(maxsize=1024)
def _warn_unusable_tools(trajectory_id: str, reason: str) -> None:
    logger.warning(
        "trajectory %r: its tool definitions are unusable (%s); tool calls are not checked against schemas",
        trajectory_id, reason,
    )


def call_results(trajectory: Trajectory, step: Step) -> dict[str, str]:
    """Tool result text per call id of ``step``: the ``tool`` messages shown at the next step,
    or the step's feedback for a single call when the record has no messages."""
    following = trajectory.steps[step.index + 1] if step.index + 1 < len(trajectory.steps) else None
    results: dict[str, str] = {}
    if following is not None and following.observation_messages:
        for message in following.observation_messages:
            if message.role is Role.tool and message.tool_call_id:
                results[message.tool_call_id] = message.content
    if not results and len(step.facts.tools) == 1 and step.facts.tools[0].call_id:
        results[step.facts.tools[0].call_id] = step.feedback
    return results


def canonical_call(fact: ToolCallFacts) -> str:
    """``name(arguments)`` with key-sorted JSON arguments: equal calls read the same."""
    arguments: Any = fact.arguments if fact.arguments is not None else "<unparsed>"
    return f"{fact.name}({json.dumps(arguments, sort_keys=True, ensure_ascii=False)})"
