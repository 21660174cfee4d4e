"""What tool labelers read from a trajectory: the offered tools, the result each call got
(whether it is a tool trajectory at all: ``scan``)."""

from __future__ import annotations

import json
import logging
from functools import lru_cache
from typing import Any

from prefbuild.records import Role, Step, ToolCallFacts, Trajectory
from prefbuild.tooluse.dispatch import ToolBox, checked_toolbox

logger = logging.getLogger(__name__)


def toolbox(trajectory: Trajectory) -> ToolBox | None:
    """The offered tools with their argument validators, or None where the record has none.

    Each distinct tool list is checked once (``checked_toolbox``): a run offers the same few."""
    if not trajectory.tools:
        return None
    checked = checked_toolbox(trajectory.tools)
    if isinstance(checked, str):
        _warn_unusable_tools(trajectory.id, checked)  # logged once per trajectory
        return None
    return checked


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
