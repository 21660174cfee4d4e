"""Phantom objects: errands run with an object the agent only believes it holds.

Agents often write ``take egg 1 from fridge 1``, see it fail (``Nothing happens.``) or get
snapped by AgentBench to another object, then walk to the microwave and ``heat egg 1``.
That is not a search and not an ordinary invalid command: the agent's picture of its hand
is wrong. This labeler tracks two hands side by side:

* the **confirmed** hand: what the env said was picked up (``You pick up the X``), minus
  what it said was put down;
* the **claimed** hand: the object of the agent's last written ``take X from Y`` or its own
  thought "I take X" / "Now I take a X (1)".

A ``put``/``move``/``heat``/``cool``/``clean``/``slice`` command on the claimed object while
the confirmed hand does not hold it is labelled, with both hands in the evidence.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import ClassVar

from prefbuild.labelers.base import Labeler
from prefbuild.labelers.household_state import effects
from prefbuild.labelers.text import canonical_command, short
from prefbuild.records import FailureMode, Label, Trajectory

_TAKE = re.compile(r"^take ([a-z]+(?: \d+)?) from ")  # "take mug from ..." claims a mug, whichever
# The object a command needs in hand: the tool of a slice, the first object of the others ("cool apple with
# fridge 1" without a number too).
_USES_HELD = re.compile(
    r"^(?:slice [a-z]+(?: \d+)? with ([a-z]+(?: \d+)?)|(?:put|heat|cool|clean|slice) ([a-z]+(?: \d+)?))\b"
)
# "Now I take a mug (1).", "I picked up the egg 2", "I have the tomato 3 now", "I'm holding the soapbar 4".
_THOUGHT_TAKE = re.compile(
    r"\b(?:now\s+)?i\s+(?:(?:have|just|now)\s+)*(?:take|took|picked\s+up|pick\s+up|grab|grabbed)\s+"
    r"(?:the|a|an)\s+([a-z]+)\s*\(?(\d+)\)?"
    r"|\bi\s*(?:now\s+)?(?:have|'ve\s+got|am\s+(?:now\s+)?(?:holding|carrying)|'m\s+(?:now\s+)?(?:holding|carrying))\s+"
    r"(?:the|a|an)\s+([a-z]+)\s*\(?(\d+)\)?",
    re.IGNORECASE,
)


def claimed_take(thought: str | None) -> str | None:
    """The object a thought says the agent takes ("Now I take a mug (1)." -> ``mug 1``).

    Example:
        >>> claimed_take("Now I take a mug (1). Next, I need to go to microwave (1).")
        'mug 1'
    """
    return _claimed_take(thought) if thought else None


@lru_cache(maxsize=4096)  # thoughts repeat, and two labelers read each one
def _claimed_take(thought: str) -> str | None:
    if thought.isascii():
        # Every match of _THOUGHT_TAKE holds one of these words; in an ASCII text its case-insensitive match is
        # plain ASCII case, which lower() undoes (other texts may fold "K" or "ı" into them, so they skip this).
        lowered = thought.lower()
        if not (
            "take" in lowered
            or "took" in lowered
            or "pick" in lowered
            or "grab" in lowered
            or "have" in lowered
            or "'ve" in lowered
            or "holding" in lowered
            or "carrying" in lowered
        ):
            return None
    match = _THOUGHT_TAKE.search(thought)
    if match is None:
        return None
    name, number = (match.group(1), match.group(2)) if match.group(1) else (match.group(3), match.group(4))
    return f"{name.lower()} {number}"


def _believed(used: str, claimed: str | None, held: str | None) -> bool:
    """``used`` is the object the agent claims to hold (an instance, or any of a type it named without
    a number) and the env's hand holds no such object."""
    if claimed is None:
        return False
    if used == claimed and held != claimed:
        return True
    # The hand holds nothing of the claimed type: any of that type is believed held ("take bread 1" did
    # nothing, then "cool bread 2"; "take apple from ..." then "cool apple with ...").
    kind = claimed.split(" ", 1)[0]
    return used.split(" ", 1)[0] == kind and (held is None or held.split(" ", 1)[0] != kind)


_NO_OBJECTS: tuple[str | None, str | None, str | None] = (None, None, None)
_VERBS = ("take", "put", "heat", "cool", "clean", "slice", "move", "place")


@lru_cache(maxsize=8192)  # actions repeat across episodes
def _command_objects(action: str | None) -> tuple[str | None, str | None, str | None]:
    """What a written command takes, the object it needs in hand, and the tool it names with a number.

    ``("mug 1", None, None)`` for ``take mug 1 from shelf 1``; ``(None, "knife 1", "knife 1")`` for
    ``slice apple 1 with knife 1``; ``(None, "apple 1", None)`` for ``heat apple 1 with microwave 1``.
    """
    if action is None:
        return _NO_OBJECTS
    lowered = action.lower()
    # Exact: a command canonical_command spells "take ..." or "put/heat/cool/clean/slice ..." holds its verb (or
    # "move"/"place", spelt "put") in the lower-cased action, as normalizing only drops and joins characters.
    if not any(verb in lowered for verb in _VERBS):
        return _NO_OBJECTS
    written = canonical_command(action)
    if not written:
        return _NO_OBJECTS
    take = _TAKE.match(written)
    use = _USES_HELD.match(written)
    tool = use.group(1) if use else None
    return (
        take.group(1) if take else None,
        (tool or use.group(2)) if use else None,
        tool if tool and " " in tool else None,
    )


# Long replies rarely repeat: read them without the cache, as HouseState does.
_effects_uncached = getattr(effects, "__wrapped__", effects)


class PhantomObjectLabeler(Labeler):
    """Labels commands that use an object the agent claims to hold but the env never gave it."""

    name: ClassVar[str] = "phantom_object"
    mode: ClassVar[str] = FailureMode.phantom_object.value
    version: ClassVar[int] = 5
    envs: ClassVar[tuple[str, ...]] = ("household",)
    defaults: ClassVar[dict[str, object]] = {"thought_claims": True}

    def label(self, trajectory: Trajectory) -> list[Label]:
        steps = trajectory.steps
        objects = [_command_objects(step.action) for step in steps]
        # Only a command that needs an object in hand is labelled: the hands after the last such step do not matter.
        last = len(objects) - 1
        while last >= 0 and objects[last][1] is None:
            last -= 1
        if last < 0:
            return []
        thought_claims = self.config["thought_claims"]
        held: str | None = None  # the confirmed hand: the env's last pick-up, until it puts that object down
        claimed: str | None = None
        labels: list[Label] = []
        for step, (taken, used, tool) in zip(steps[: last + 1], objects[: last + 1], strict=True):
            if thought_claims:
                thought = step.thought
                if thought:
                    claimed = _claimed_take(thought) or claimed
            if taken:
                claimed = taken
            # The knife of a slice is claimed in hand by the command itself.
            if used and _believed(used, tool or claimed, held):
                labels.append(
                    self.make_label(
                        step,
                        0.9,
                        f"'{short(step.action or '', 60)}' acts on '{tool or claimed}', which the agent believes it "
                        f"holds, but the env confirmed " + (f"'{held}' in hand" if held else "an empty hand"),
                    )
                )
            feedback = step.feedback
            lowered = feedback.lower()
            # Exact: effects() reads the lower-cased reply, and its pick-ups and puts start "you pick up the ",
            # "you put the " or "you move the " (only they change the hand).
            if "you p" not in lowered and "you move the " not in lowered:
                continue
            for effect in effects(feedback) if len(feedback) <= 512 else _effects_uncached(feedback):
                if effect.kind == "pick":
                    held = effect.obj
                elif effect.kind == "put" and effect.obj == held:
                    held = None
        return labels
