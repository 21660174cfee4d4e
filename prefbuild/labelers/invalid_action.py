"""Invalid actions: commands the env cannot execute, including names the agent made up.

The plain signal is the env's own verdict (``Step.valid is False``, or the household
answer "Nothing happens."). It is not enough on benchmark logs: the AgentBench harness
snaps an inadmissible command to the closest admissible one by BLEU, so the env never says
"Nothing happens." and a hallucinated ``take knife 3 from drawer 9`` runs as some other
command. Hence three more checks on what the agent *wrote*:

* it differs from the command the harness executed (``facts.executed_action``);
* it is not among the admissible commands, where they were recorded;
* it names an object or receptacle the agent has never been shown, or uses an object it
  does not hold (``put``/``heat``/``cool``/``clean``/``examine`` of something not in hand).

A completion claim ("Task succeeded.") is premature_success's business; it is labelled here
too only when the game answered it "Nothing happens." (it was sent as a command and did
nothing). A turn with no parsable command that the game answered "Nothing happens." (a ReAct
line with another protocol's tags) is invalid. Two commands written in one line ("go to
drawer 1 and open it") that AgentBench ran as the first one are a format violation, not an
invalid command. ReAct ``think:`` turns are thoughts. SQL errors are sql_error's domain.
"""

from __future__ import annotations

import re
from typing import ClassVar

from prefbuild.envs.household.catalog import RECEPTACLE_TYPES
from prefbuild.labelers.base import Labeler
from prefbuild.labelers.format_violation import two_commands
from prefbuild.labelers.household_text import entities, entity_type, held_after
from prefbuild.labelers.text import (
    HOUSEHOLD_VERBS,
    canonical_command,
    is_completion_claim,
    is_nothing_happens,
    short,
)
from prefbuild.records import FailureMode, Label, Step, Trajectory

# Commands whose first object must be in the agent's hand.
_HELD_COMMANDS = re.compile(r"^(?:put|move|heat|cool|clean)\s+([a-z]+ \d+)\b")
_EXAMINE = re.compile(r"^examine ([a-z]+ \d+)$")
_HOUSEHOLD_VERBS = re.compile(rf"^{HOUSEHOLD_VERBS}\b")


class InvalidActionLabeler(Labeler):
    """Labels inadmissible actions, hallucinated names and uses of objects not in hand."""

    name: ClassVar[str] = "invalid_action"
    mode: ClassVar[str] = FailureMode.invalid_action.value
    version: ClassVar[int] = 3
    # SQL statements that fail are labelled by sql_error.
    excluded_envs: ClassVar[tuple[str, ...]] = ("sql",)
    defaults: ClassVar[dict[str, object]] = {
        "hallucinated_names": True,
        "not_in_hand": True,
        "executed_mismatch": True,
    }

    def label(self, trajectory: Trajectory) -> list[Label]:
        if not self.applies_to(trajectory):
            return []
        steps = trajectory.steps
        seen: _SeenNames | None = None  # built for the first step that needs a check
        hand: _Hand | None = None
        labels: list[Label] = []
        for position, step in enumerate(steps):
            facts = step.facts
            # Accepted by the env as written, no snap, no admissible list, no "Nothing happens.": no check fires.
            if step.valid is True and facts.executed_action is None:
                admissible, feedback = facts.admissible, step.feedback
                if (not admissible or not isinstance(admissible, list)) and (
                    # is_nothing_happens() is False for a reply that starts with neither "n", "N" nor a space
                    not feedback
                    or (feedback[0] not in "nN" and not feedback[0].isspace())
                    or not is_nothing_happens(feedback)
                ):
                    continue
            if seen is None or hand is None:
                seen, hand = _SeenNames(steps), _Hand(steps)
            label = self._step(step, seen, hand, position)
            if label is not None:
                labels.append(label)
        return labels

    @staticmethod
    def _accepted(step: Step, written: str, snapped: bool) -> bool:
        """The env ran exactly this command: it said so, or its reply names everything the command names."""
        if snapped or is_nothing_happens(step.feedback):
            return False
        if step.valid is not None:
            return step.valid
        return entities(written) <= entities(step.feedback)

    def _step(self, step: Step, seen: _SeenNames, hand: _Hand, position: int) -> Label | None:
        written = canonical_command(step.action)
        if written is None or is_completion_claim(step.action):
            executed = step.facts.executed_action
            ran = canonical_command(executed) if isinstance(executed, str) else None
            what = f"'{short(step.action, 60)}'" if step.action else "the turn (no command could be read)"
            if is_nothing_happens(step.feedback) or (step.valid is False and written is not None):
                return self.make_label(step, 0.9, f'{what} was sent to the game, which answered "Nothing happens."')
            if written is not None and ran is not None and ran != written and self.config["executed_mismatch"]:
                return self.make_label(step, 0.9, f"{what}: the harness executed '{short(executed, 50)}' instead")
            return None
        if written.startswith("think"):
            return None
        reasons: list[str] = []
        confidence = 0.0
        executed = step.facts.executed_action
        executed_command = canonical_command(executed) if isinstance(executed, str) else None
        # the harness ran the first of two commands written on one line ("put ..., then go to ...")
        tail = written[len(executed_command) :] if executed_command and written.startswith(executed_command) else ""
        if tail and not tail[0].isalnum() and two_commands(written):
            written = executed_command  # the harness ran the first of two commands: a format violation
        if executed_command and numbers_filled_in(written, executed_command):
            written = executed_command  # only the number of the one fridge filled in: the same command
        snapped = self.config["executed_mismatch"] and executed_command not in (None, written)
        admissible = step.facts.admissible
        if step.valid is False:
            reasons.append("the env rejected the action")
            confidence = 0.95
        if is_nothing_happens(step.feedback):
            reasons.append('the env answered "Nothing happens."')
            confidence = max(confidence, 0.95)
        if snapped:
            reasons.append(f"the harness executed '{short(executed, 50)}' instead")
            confidence = max(confidence, 0.9)
        if (
            isinstance(admissible, list)
            and admissible
            and not snapped
            and not any(isinstance(command, str) and canonical_command(command) == written for command in admissible)
        ):
            reasons.append("not among the admissible commands")
            confidence = max(confidence, 0.9)
        household = bool(_HOUSEHOLD_VERBS.match(written))
        if household and not self._accepted(step, written, snapped):
            if self.config["hallucinated_names"]:
                unknown = sorted(seen.unknown(entities(written), position))
                if unknown:
                    reasons.append("refers to " + ", ".join(f"'{name}'" for name in unknown) + ", never seen so far")
                    confidence = max(confidence, 0.9)
            obj = _object_in_hand(written) if self.config["not_in_hand"] else None
            holding = hand.before(position) if obj is not None else None
            if obj is not None and obj != holding:
                reasons.append(f"uses '{obj}' but holds " + (f"'{holding}'" if holding else "nothing"))
                confidence = max(confidence, 0.85)
        if not reasons:
            return None
        return self.make_label(step, confidence, f"'{short(step.action or '', 60)}': " + "; ".join(reasons))


def numbers_filled_in(written: str, executed: str) -> bool:
    """The harness ran the written command with only instance numbers the agent left out filled in
    (``cool lettuce 1 with fridge`` ran as ``cool lettuce 1 with fridge 1``): the same command.

    Example:
        >>> numbers_filled_in("cool lettuce 1 with fridge", "cool lettuce 1 with fridge 1")
        True
        >>> numbers_filled_in("take apple 1 from countertop 1", "take apple 2 from countertop 1")
        False
    """
    wrote, ran = written.split(), executed.split()
    position = 0
    for index, token in enumerate(ran):
        if position < len(wrote) and wrote[position] == token:
            position += 1
        elif not (token.isdigit() and index > 0 and not ran[index - 1].isdigit()):
            return False
    return position == len(wrote) and len(ran) > len(wrote)


def _object_in_hand(command: str) -> str | None:
    """The object a command needs in hand: put/heat/cool/clean X, or examine X when X is not a receptacle."""
    match = _HELD_COMMANDS.match(command)
    if match:
        return match.group(1)
    match = _EXAMINE.match(command)
    if match and entity_type(match.group(1)) not in RECEPTACLE_TYPES:
        return match.group(1)
    return None


class _SeenNames:
    """Entity names the agent has been shown, looked up only when a check needs them, and then only
    the names asked about (most actions are accepted by the env and need no name check)."""

    def __init__(self, steps: list[Step]) -> None:
        self._steps = steps
        self._observations = 0  # observations of steps[:observations] are in the text
        self._replies = 0  # replies of steps[:replies] are in the text
        # The texts read so far, lower-case, one per line: a line break is no part of a name and stands
        # where a text's edge stood, so a name is mentioned in the text exactly when it is in one of them.
        self._text = ""
        self._names: set[str] = set()  # names found in the text so far

    def unknown(self, names: frozenset[str], position: int) -> frozenset[str]:
        """The entity ``names`` that no text shown before the action of ``steps[position]`` mentions
        (the observations up to it, the replies before it); asked in increasing ``position``."""
        missing = names - self._names
        if not missing:
            return missing
        steps = self._steps
        self._text = "\n".join(
            [
                self._text,
                *[step.observation.lower() for step in steps[self._observations : position + 1]],
                *[step.feedback.lower() for step in steps[self._replies : position]],
            ]
        )
        self._observations, self._replies = position + 1, position
        found = {name for name in missing if mentions(self._text, name)}
        self._names |= found
        return missing - found


def mentions(lowered: str, name: str) -> bool:
    """``name in entities(lowered)`` for an entity name (a type word and a number, as ``entities``
    finds them) and a lower-case text, without reading the text's other names: the name stands
    there as a word of its own (no letter, digit or underscore touching it), which is exactly where
    the entity pattern (``\\b[a-z]+ \\d+\\b``) finds it.

    Example:
        >>> mentions("on the cabinet 10, you see a cup 1.", "cabinet 1"), mentions("go to cabinet 1", "cabinet 1")
        (False, True)
    """
    end = len(lowered)
    start = lowered.find(name)
    while start >= 0:
        after = start + len(name)
        if (start == 0 or not _is_word(lowered[start - 1])) and (after == end or not _is_word(lowered[after])):
            return True
        start = lowered.find(name, start + 1)
    return False


def _is_word(char: str) -> bool:
    """A character the regex word boundary ``\\b`` counts as part of a word."""
    return char.isalnum() or char == "_"


class _Hand:
    """What the agent holds before each step, read from the env's replies up to it only when asked."""

    def __init__(self, steps: list[Step]) -> None:
        self._steps = steps
        self._read = 0  # replies of steps[:read] are applied
        self._holding: str | None = None

    def before(self, index: int) -> str | None:
        """What the agent holds before ``steps[index]`` (asked in increasing order)."""
        while self._read < index:
            self._holding = held_after(self._steps[self._read], self._holding)
            self._read += 1
        return self._holding
