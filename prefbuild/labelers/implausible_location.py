"""Implausible search locations: looking for a knife in the toilet.

While the agent is still searching for the goal object (hand empty), every ``go to R`` or
``open R`` is an exploration choice. Choosing a receptacle type that cannot hold the goal
object type (the env's plausibility priors, ALFRED's placement rules) wastes steps and is
exactly the habit a preference pair can push down. Moves that the task itself needs are
never labelled: the target receptacle, the task's appliance (sinkbasin / microwave /
fridge), the place where a lamp or the object was seen, and anything after the object is
in hand.

The ALFRED table is graded (``placement``): a clearly odd place (an egg on the toilet) is
labelled; a conceivable one the table forbids (an apple in a cabinet) only with
``conceivable: true``, at ``conceivable_confidence``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import ClassVar

from prefbuild.labelers.base import Labeler
from prefbuild.labelers.household_text import (
    command_target,
    entity_type,
    held_after,
    object_locations,
    task_goal,
)
from prefbuild.labelers.phantom_object import claimed_take
from prefbuild.labelers.placement import placement
from prefbuild.labelers.text import canonical_command, is_nothing_happens, task_observation
from prefbuild.records import FailureMode, Label, Step, Trajectory

_LAMPS = ("desklamp", "floorlamp")


class ImplausibleLocationLabeler(Labeler):
    """Labels exploratory moves to receptacle types that cannot contain the goal object."""

    name: ClassVar[str] = "implausible_location"
    mode: ClassVar[str] = FailureMode.implausible_location.value
    version: ClassVar[int] = 2
    envs: ClassVar[tuple[str, ...]] = ("household",)
    defaults: ClassVar[dict[str, object]] = {
        "verbs": ["go to", "open"],  # which commands count as exploring a receptacle
        "exempt": [],  # receptacle types never labelled (in addition to the task's own)
        "conceivable": False,  # also label places the ALFRED table forbids but a person might try
        "conceivable_confidence": 0.4,
    }

    def label(self, trajectory: Trajectory) -> list[Label]:
        steps = trajectory.steps
        if not steps:
            return []
        # task_goal reads the first observation only when the task's goal text names no goal.
        first: str | None = None
        goal = task_goal(trajectory.task)
        if goal is None:
            first = task_observation(steps[0].observation)
            goal = task_goal(trajectory.task, first)
            if goal is None:
                return []
        verbs = set(self.config["verbs"])
        exempt = {goal.receptacle, *self.config["exempt"]}
        if goal.appliance:
            exempt.add(goal.appliance)
        conceivable = self.config["conceivable"]
        wanted = ("odd", "conceivable") if conceivable else ("odd",)
        # The exploring moves this labeler could flag, by action: (verb, receptacle, receptacle type, odd).
        flagged: dict[str | None, tuple[str, str, str, bool]] = {}
        for action in {step.action for step in steps}:
            if action and (move := _exploring_move(action)) is not None and move[0] in verbs:
                kind = move[2]
                if kind not in exempt and (grade := placement(goal.obj, kind)) in wanted:
                    flagged[action] = (move[0], move[1], kind, grade == "odd")
        if not flagged:
            return []  # no exploring move to a place this labeler could flag
        last = len(steps) - 1
        while steps[last].action not in flagged:
            last -= 1  # the steps after the last flaggable move cannot be labelled
        # Only whether a flaggable receptacle is known matters; a receptacle is only learnt from a reply naming it.
        places = {move[1] for move in flagged.values()}
        examine = goal.kind == "examine"
        known: set[str] = set()  # receptacles where the goal object or the task's lamp was seen
        holding: str | None = None
        believed: str | None = None  # what the agent says it took, confirmed or not (errands are not searches)
        labels: list[Label] = []
        if first is None:
            first = task_observation(steps[0].observation)
        for item, receptacle in object_locations(first):
            if entity_type(item) in (goal.obj, goal.receptacle):
                known.add(receptacle)
        for step in steps[: last + 1]:
            action = step.action
            believed = _believed_after(step, believed)
            move = flagged.get(action)
            if (
                move is not None
                and holding is None
                and believed is None
                and move[1] not in known
                # "Go to laundryhamper 1" that did nothing in a ReAct run visited nothing
                and not is_nothing_happens(step.feedback)
            ):
                verb, receptacle, kind, odd = move
                labels.append(
                    self.make_label(
                        step,
                        0.9 if odd else float(self.config["conceivable_confidence"]),
                        f"searching for {_a(goal.obj)} (hand empty), the agent chose '{verb} {receptacle}'; "
                        + (
                            f"{_a(kind)} is a clearly odd place for {_a(goal.obj)}"
                            if odd
                            else f"ALFRED never puts {_a(goal.obj)} in {_a(kind)} (conceivable to a person)"
                        ),
                    )
                )
            feedback = step.feedback
            lowered = feedback.lower()
            if (goal.obj in lowered or (examine and "lamp" in lowered)) and any(place in lowered for place in places):
                for item, receptacle in object_locations(feedback):
                    kind = entity_type(item)
                    if kind == goal.obj or (examine and (kind == goal.receptacle or kind in _LAMPS)):
                        known.add(receptacle)
            holding = held_after(step, holding)
        return labels


@lru_cache(maxsize=16384)  # the actions of a whole run (a few thousand distinct) stay cached
def _exploring_move(action: str) -> tuple[str, str, str] | None:
    """``command_target(action)`` with the receptacle's type: ``("go to", "cabinet 3", "cabinet")``."""
    target = command_target(action)
    return None if target is None else (target[0], target[1], entity_type(target[1]))


def _believed_after(step: Step, believed: str | None) -> str | None:
    """The object the agent believes it holds when acting at ``step`` (its take, or "I take X")."""
    claimed = claimed_take(step.thought)
    if claimed:
        return claimed
    change = _belief_change(step.action)
    return believed if change is _KEEP else change


_KEEP = "\0keep"


@lru_cache(maxsize=8192)  # actions repeat across episodes
def _belief_change(action: str | None) -> str | None:
    """What a command makes the agent believe it holds: the object of a take, None after a put, else _KEEP."""
    command = canonical_command(action)
    if command is None:
        return _KEEP
    if command.startswith("take "):
        return command.split(" from ", 1)[0][len("take ") :]
    if command.startswith("put "):
        return None
    return _KEEP


def _a(noun: str) -> str:
    return f"an {noun}" if noun[:1] in "aeiou" else f"a {noun}"
