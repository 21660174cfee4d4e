"""Implausible search locations: looking for a knife in the toilet.

While the agent is still searching for the goal object (hand empty), every ``go to R`` or
``open R`` is an exploration choice. Choosing a receptacle type that cannot hold the goal
object type (the env's plausibility priors, ALFRED's placement rules) wastes steps and is
exactly the habit a preference pair can push down. Moves that the task itself needs are
never labelled: the target receptacle, the task's appliance (sinkbasin / microwave /
fridge), the place where a lamp or the object was seen, and anything after the object is
in hand.
"""

from __future__ import annotations

from typing import ClassVar

from prefbuild.envs.household.priors import is_plausible
from prefbuild.labelers.base import Labeler
from prefbuild.labelers.household_text import (
    command_target,
    entity_type,
    held_after,
    object_locations,
    task_goal,
)
from prefbuild.records import FailureMode, Label, Trajectory

_LAMPS = ("desklamp", "floorlamp")


class ImplausibleLocationLabeler(Labeler):
    """Labels exploratory moves to receptacle types that cannot contain the goal object."""

    name: ClassVar[str] = "implausible_location"
    mode: ClassVar[str] = FailureMode.implausible_location.value
    version: ClassVar[int] = 1
    envs: ClassVar[tuple[str, ...]] = ("household",)
    defaults: ClassVar[dict[str, object]] = {
        "verbs": ["go to", "open"],  # which commands count as exploring a receptacle
        "exempt": [],  # receptacle types never labelled (in addition to the task's own)
    }

    def label(self, trajectory: Trajectory) -> list[Label]:
        if not trajectory.steps:
            return []
        goal = task_goal(trajectory.task, trajectory.steps[0].observation)
        if goal is None:
            return []
        verbs = set(self.config["verbs"])
        exempt = {goal.receptacle, *self.config["exempt"]}
        if goal.appliance:
            exempt.add(goal.appliance)
        known: set[str] = set()  # receptacles where the goal object or the task's lamp was seen
        holding: str | None = None
        labels: list[Label] = []
        for item, receptacle in object_locations(trajectory.steps[0].observation):
            if entity_type(item) in (goal.obj, goal.receptacle):
                known.add(receptacle)
        for step in trajectory.steps:
            target = command_target(step.action) if step.action else None
            if target is not None and holding is None:
                verb, receptacle = target
                kind = entity_type(receptacle)
                if (
                    verb in verbs
                    and kind not in exempt
                    and receptacle not in known
                    and not is_plausible(goal.obj, kind)
                ):
                    labels.append(
                        self.make_label(
                            step,
                            0.9,
                            f"searching for {_a(goal.obj)} (hand empty), the agent chose '{verb} {receptacle}'; "
                            f"{_a(kind)} cannot hold {_a(goal.obj)}",
                        )
                    )
            feedback = step.feedback.lower()
            mentions = goal.obj in feedback or (goal.kind == "examine" and "lamp" in feedback)
            for item, receptacle in object_locations(step.feedback) if mentions else ():
                kind = entity_type(item)
                if kind == goal.obj or (goal.kind == "examine" and (kind == goal.receptacle or kind in _LAMPS)):
                    known.add(receptacle)
            holding = held_after(step, holding)
        return labels


def _a(noun: str) -> str:
    return f"an {noun}" if noun[:1] in "aeiou" else f"a {noun}"
