"""Premature success: the agent says the task is done while the environment says it is not.

Shapes common in real logs:

* the action itself is a completion claim ("ACTION: Task succeeded.", "done", "Final
  Answer: ...") at a step that did not win — the episode went on, or ended in failure;
* a thought (or a free-text action) asserts the task done ("The task is complete.", "I have
  completed the task.", "Done!") while the goal is unmet;
* most often, it asserts the goal or its *final step* done ("Now I put the apple in
  diningtable 1.", "Done, the apple is now in the fridge.", "I've heated the egg and placed
  it on the diningtable.", "I have put two soapbars in the garbagecan.") although the env
  never confirmed the goal, whatever the reply before was ("Nothing happens." or ``OK.``).

The goal counts as confirmed (``goal_progress``) when the env reported a put of a goal object
into a goal receptacle that is still there, with the processing the task asks for confirmed
on that object along the episode ("You heat the egg 1 using the microwave 1."; cooling
undoes heating and the other way round; a cleaned object stays clean), two different
objects in the same receptacle for ``put two``, a lamp turned on while holding the object
for ``look at``. Reading the claims is ``success_claims``'s job.

SQL episodes have their own labeler for this mode (``sql_premature_success``), which
replaces this one on the ``sql`` env.

An episode its user ended (a plug-in env's customer says "###STOP###") and the env graded a failure
is labelled at its last step only when that message tells the user the work is done ("All set!",
"I've processed the return"): a refusal the grader disagrees with claims nothing. tau2 and BFCL have
their own labeler for this mode (``service_premature_success``), which reads their graders' parts.

Exports that follow the seed round-wise vocabulary call this ``task_succeeded_negative``.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

from prefbuild.labelers.base import Labeler
from prefbuild.labelers.household_state import HouseState
from prefbuild.labelers.household_text import Goal, entity_type, object_locations, task_goal
from prefbuild.labelers.service_claims import work_done_claim
from prefbuild.labelers.success_claims import GOAL, LAMP, LAMP_ON, TASK, Claim, find_claims
from prefbuild.labelers.text import (
    HOUSEHOLD_VERBS,
    canonical_command,
    goal_known_unmet,
    is_completion_claim,
    short,
    step_won,
    task_observation,
)
from prefbuild.records import FailureMode, Label, Step, StopReason, Trajectory

_PROCESSING = {"heat": ("heat", "heated"), "cool": ("cool", "cooled"), "clean": ("clean", "cleaned")}
_BARE_COMMAND = re.compile(rf"^{HOUSEHOLD_VERBS}\b")
_COMMAND = re.compile(rf"^(?:{HOUSEHOLD_VERBS}|think)\b")


@dataclass(frozen=True)
class GoalProgress:
    """How far the env confirmed the goal: ``done`` and a sentence saying what it confirmed."""

    done: bool
    placed: int
    summary: str
    lamp_on: bool = False


def goal_progress(state: HouseState, goal: Goal) -> GoalProgress:
    """What the env confirmed of ``goal`` so far, from the confirmed ``state``.

    Args:
        state: the household state read from the env's replies up to now.
        goal: the parsed task goal.

    Returns:
        ``done`` when the confirmed state meets the goal; ``placed`` counts the goal objects
        in one goal receptacle (processed as the task asks); ``summary`` is evidence text.

    Example:
        >>> from prefbuild.labelers.household_text import parse_goal
        >>> state = HouseState()
        >>> _ = state.apply("You pick up the egg 1 from the fridge 1.")
        >>> _ = state.apply("You put the egg 1 in/on the diningtable 1.")
        >>> goal_progress(state, parse_goal("heat some egg and put it in diningtable")).summary
        'the env confirmed egg 1 put into diningtable 1 but never confirmed it heated'
    """
    if goal.kind == "examine":
        held = state.hand
        lamp_on = any(kind == "on" for kind, _ in state.done)
        holding = held is not None and entity_type(held) == goal.obj
        # the lamp must stand where the agent is (a lamp switched on elsewhere, then left, does not count)
        here = not state.lit or any(place is None or place == state.at for place in state.lit.values())
        if lamp_on and holding and not here:
            lamps = ", ".join(map(str, state.lit.values()))
            where = f"the env confirmed {held} in hand and a lamp on at {lamps}, but the agent stands at {state.at}"
            return GoalProgress(False, 0, where, lamp_on=True)
        done = lamp_on and holding
        if done:
            return GoalProgress(True, 1, f"the env confirmed a lamp turned on with {held} in hand", lamp_on=True)
        if lamp_on:
            return GoalProgress(
                False, 0, f"the env confirmed a lamp turned on but not {_a(goal.obj)} in hand", lamp_on=True
            )
        return GoalProgress(False, 0, "the env never confirmed a lamp turned on")
    placed = [
        (obj, place)
        for obj, place in state.placed.items()
        if entity_type(obj) == goal.obj and entity_type(place) == goal.receptacle
    ]
    processing = _PROCESSING.get(goal.kind)
    ready = [(obj, place) for obj, place in placed if processing is None or state.processed(processing[0], obj)]
    per_place = Counter(place for _, place in ready)
    best = max(per_place.values(), default=0)
    needed = 2 if goal.kind == "puttwo" else 1
    if best >= needed:
        return GoalProgress(True, best, f"the env confirmed the goal ({', '.join(obj for obj, _ in ready)} placed)")
    if processing is not None and placed and not ready:
        obj, place = placed[-1]
        return GoalProgress(
            False, 0, f"the env confirmed {obj} put into {place} but never confirmed it {processing[1]}"
        )
    summary = f"the env confirmed {best} put of {_a(goal.obj)} into {_a(goal.receptacle)}"
    if needed > 1:
        summary += f" (the goal needs {needed} in the same one)"
    return GoalProgress(False, best, summary)


class PrematureSuccessLabeler(Labeler):
    """Labels a step that claims the goal (or its final step) done while the env never confirmed it."""

    name: ClassVar[str] = "premature_success"
    mode: ClassVar[str] = FailureMode.premature_success.value
    version: ClassVar[int] = 4
    # The sql env has its own labeler for this mode (``sql_premature_success``), tau2 and bfcl theirs
    # (``service_premature_success``).
    excluded_envs: ClassVar[tuple[str, ...]] = ("sql",)
    defaults: ClassVar[dict[str, object]] = {
        "thought_claims": True,  # claims inside thoughts (task done, or the goal's final step done)
        "agent_finished": True,  # the last step of an episode the agent ended without success
    }

    def label(self, trajectory: Trajectory) -> list[Label]:
        labels: list[Label] = []
        steps = trajectory.steps
        if not steps:
            return labels
        # task_goal reads the first observation only when task.goal does not parse: skip cutting it out then
        goal = task_goal(trajectory.task) or task_goal(trajectory.task, task_observation(steps[0].observation))
        replay = _Replay(steps, goal)
        last = len(steps) - 1
        read_claims = self.config["thought_claims"]
        for step in steps:
            claims, action_text = _action_facts(step.action)
            claim = self._claim(trajectory, step, goal, action_text) if read_claims else None
            if not claims and claim is None and step.index != last:
                continue  # nothing here could claim anything
            label = self._step(trajectory, step, goal, replay, claims, claim)
            if label is not None:
                labels.append(label)
        return labels

    def _step(
        self,
        trajectory: Trajectory,
        step: Step,
        goal: Goal | None,
        replay: _Replay,
        claims: bool,
        claim: Claim | None,
    ) -> Label | None:
        """The label of a step whose action claims completion (``claims``), whose text holds ``claim``, or
        that ends the episode."""
        if step_won(trajectory, step):
            return None
        if claims or claim is not None:  # only a claim is judged against the replayed state
            label = self._claimed(trajectory, step, goal, replay, claims, claim)
            if label is not None:
                return label
        if (
            self.config["agent_finished"]
            and step.index == len(trajectory.steps) - 1
            and trajectory.outcome.stop_reason is StopReason.agent_finished
            and not trajectory.outcome.success
            and trajectory.task.meta.get("outcome_known") is not False
        ):
            if not (step.done and not step.facts.final):
                return self.make_label(
                    step, 0.8, "the agent ended the episode but the environment did not report success"
                )
            # Its user ended it (tau2's "###STOP###"): only a last message that says the work is done claims it.
            said = work_done_claim(step.raw_output)
            if said is not None:
                return self.make_label(
                    step, 0.8, f"the last message says '{short(said, 60)}' but the environment did not report success"
                )
        return None

    def _claimed(
        self,
        trajectory: Trajectory,
        step: Step,
        goal: Goal | None,
        replay: _Replay,
        claims: bool,
        claim: Claim | None,
    ) -> Label | None:
        """The label of a step (not won) whose action claims completion (``claims``) or whose text holds
        ``claim``, judged against what the env confirmed so far; None where the claim holds. The episode's
        state is replayed this far only here: a last step that claims nothing needs none of it."""
        known_unmet = goal_known_unmet(trajectory, step)
        state, shown = replay.through(step.index)  # a claim is judged with this turn's own command done
        progress = goal_progress(state, goal) if goal is not None else None
        unconfirmed = progress is not None and not progress.done
        if claims and (known_unmet or unconfirmed):
            why = progress.summary if progress is not None and unconfirmed else "the goal is not met"
            after = (
                "the episode went on"
                if step.index < len(trajectory.steps) - 1
                else f"the episode ended with {trajectory.outcome.stop_reason.value}"
            )
            return self.make_label(
                step,
                0.95 if known_unmet else 0.85,
                f"claims completion with action '{short(step.action or '', 60)}' but {why} ({after})",
            )
        if claim is not None:
            return self._judge(step, claim, goal, progress, known_unmet, state, shown)
        return None

    def _claim(self, trajectory: Trajectory, step: Step, goal: Goal | None, action_text: str | None) -> Claim | None:
        """The success claim of this turn's thought, ``think:`` line or free-text action (``action_text``), if
        any."""
        invented = _invented_put(step.raw_output, goal)
        if invented is not None:
            return invented
        thought = step.thought
        # A plain state claims only after a put was tried, so reading with after_put finds every candidate.
        read_thought = bool(thought) and bool(find_claims(thought, goal, after_put=True))
        read_action = bool(action_text) and bool(find_claims(action_text, goal, after_put=True))
        if not read_thought and not read_action:
            return None  # no sentence here could claim anything (the common case: no earlier steps read)
        texts = [text for text, read in ((thought, read_thought), (action_text, read_action)) if read]
        command = canonical_command(step.action) or ""
        put_tried = _put_tried(trajectory, step)
        for text in texts:
            for claim in find_claims(text, goal, after_put=put_tried):
                # a narrated put is a plan, but a task claim after it still claims ("... The task is complete.")
                if claim.kind == TASK or goal is None or not _narrates(claim, command, put_tried):
                    return claim
        return None

    def _judge(
        self,
        step: Step,
        claim: Claim,
        goal: Goal | None,
        progress: GoalProgress | None,
        known_unmet: bool,
        state: HouseState,
        shown: list[str],
    ) -> Label | None:
        quoted = f"'{short(claim.sentence, 70)}'"
        if claim.kind == GOAL and goal is not None and _seen_in_place(claim.sentence, goal, shown):
            return None  # "The pillow 1 is already on the sofa 1.": the env listed it there
        if claim.kind == LAMP_ON:
            if progress is None or progress.lamp_on:
                return None  # true: a lamp is on (whether the object is looked at is another claim)
            return self.make_label(step, 0.85, f"claims {quoted} but {progress.summary}")
        if claim.kind in (GOAL, LAMP):
            if progress is None:
                return None
            if progress.done if claim.kind == LAMP else claim.count <= progress.placed:
                return None  # the claim states what the env confirmed ("I put the first egg in ...")
            if (
                claim.kind == GOAL
                and goal is not None
                and claim.count <= _puts_of_goal_objects(state, goal)
                and not _says_processed(claim.sentence, goal)
            ):
                return None  # "I put the apple on the countertop": true, though it was never cooled
            return self.make_label(step, 0.85, f"claims {quoted} but {progress.summary}")
        # A claim about the whole task.
        if progress is not None and not progress.done:
            return self.make_label(step, 0.85, f"claims {quoted} but {progress.summary}")
        if known_unmet:
            return self.make_label(step, 0.85, f"claims {quoted} but the env did not report the goal met")
        return None


class _Replay:
    """The household state read from the env's replies, and the replies that name the goal object, caught
    up to a step only when one is judged (most steps claim nothing, and a won last step is not judged)."""

    def __init__(self, steps: list[Step], goal: Goal | None) -> None:
        self.steps = steps
        self.obj = goal.obj if goal is not None else None
        self.state = HouseState(track_location=goal is not None and goal.kind == "examine")
        self.shown: list[str] = []  # the replies that name the goal object
        self.read = 0  # the replies of steps[: self.read] are in

    def through(self, index: int) -> tuple[HouseState, list[str]]:
        """The state and the replies naming the goal object up to and including step ``index``."""
        while self.read <= index:
            feedback = self.steps[self.read].feedback
            self.state.apply(feedback)
            if self.obj is not None and self.obj in feedback:
                self.shown.append(feedback)
            self.read += 1
        return self.state, self.shown


_PROCESSED_WORDS = {
    "heat": re.compile(r"\b(?:hot|heated|warm|warmed|microwaved)\b", re.IGNORECASE),
    "cool": re.compile(r"\b(?:cool|cooled|cold|chilled|refrigerated)\b", re.IGNORECASE),
    "clean": re.compile(r"\b(?:clean|cleaned|washed|rinsed)\b", re.IGNORECASE),
}


_INSTANCE = re.compile(r"\b([a-z]+ \d+)\b")


def _seen_in_place(sentence: str, goal: Goal, shown: list[str]) -> bool:
    """The claim names an instance of the goal object that the env's replies ``shown`` last listed in a goal
    receptacle."""
    named = {name for name in _INSTANCE.findall(sentence.lower()) if entity_type(name) == goal.obj}
    if not named:
        return False
    where = {item: place for reply in shown for item, place in object_locations(reply)}
    return any(entity_type(where.get(name, "")) == goal.receptacle for name in named)


def _says_processed(sentence: str, goal: Goal) -> bool:
    """The claim says the object was heated, cooled or cleaned as the goal asks ("the cool apple")."""
    words = _PROCESSED_WORDS.get(goal.kind)
    return words is not None and words.search(sentence) is not None


def _puts_of_goal_objects(state: HouseState, goal: Goal) -> int:
    """The most goal-type objects the env ever confirmed put into one goal-type receptacle."""
    per_place: dict[str, set[str]] = {}
    for obj, place in state.puts:
        if entity_type(obj) == goal.obj and entity_type(place) == goal.receptacle:
            per_place.setdefault(place, set()).add(obj)
    return max(map(len, per_place.values()), default=0)


_INVENTED_PUT = re.compile(r"^\s*you (?:put|move) the ([a-z]+) \d+ (?:in/on|in|on|to) the ([a-z]+) \d+", re.IGNORECASE)


def _invented_put(raw_output: str, goal: Goal | None) -> Claim | None:
    """A line after the command in which the agent wrote the env's reply itself, saying a goal object
    was put into a goal receptacle ("go to shelf 1\nYou put the cd 1 in/on the shelf 1.")."""
    if goal is None or goal.kind == "examine":
        return None
    cut = raw_output.find("\n")
    if cut < 0:
        return None
    after = raw_output[cut + 1 :]  # the lines after the command
    if after.isascii() and not ("you put" in (lowered := after.lower()) or "you move" in lowered):
        return None  # exact: _INVENTED_PUT needs "you put" or "you move" in a line (ASCII case folding is lower())
    for line in after.split("\n"):
        match = _INVENTED_PUT.match(line)
        if match and match.group(1).lower() == goal.obj and match.group(2).lower() == goal.receptacle:
            return Claim(line.strip(), GOAL)
    return None


def _put_tried(trajectory: Trajectory, step: Step) -> bool:
    """A put (or move) was written before this step."""
    return any(
        (canonical_command(earlier.action) or "").startswith(("put ", "move "))
        for earlier in trajectory.steps[: step.index]
    )


def _narrates(claim: Claim, command: str, put_tried: bool) -> bool:
    """ "Now I put it on the sofa." beside a ``go to`` or a put (or "Now I look at the cd under the
    desklamp." beside ``use desklamp 1``) narrates this turn's command: a plan. A walk narrated as the
    put is an intention whatever place it heads for (the agent may go elsewhere first). Before any
    put was tried, a present-tense put is the plan of the final step (a ReAct thought before the
    walk); after one, repeating it on a put that was tried already claims it done."""
    if re.search(r"\b(?:have|has|had|'ve|already|been|was|were)\b", claim.sentence, re.IGNORECASE):
        return False  # a perfect or passive claim says it is done, not that it is being done
    if claim.kind in (LAMP, LAMP_ON):
        return command.startswith(("use ", "go to ", "take "))
    if command.startswith("go to "):
        return True
    if command.startswith("put ") or not command:  # the put itself, or a thought turn of its own
        return not put_tried
    return False  # beside another command ("examine diningtable 1") it says the put happened


def _a(noun: str) -> str:
    return f"an {noun}" if noun[:1] in "aeiou" else f"a {noun}"


def _is_think(action: str | None) -> bool:
    return bool(action) and action.strip().lower().startswith("think:")


# Actions repeat across steps and episodes (commands above all); a bounded cache keeps memory flat.
@lru_cache(maxsize=4096)
def _action_facts(action: str | None) -> tuple[bool, str | None]:
    """Whether the action claims completion itself (``is_completion_claim``), and the text of it that may
    assert success: a ``think:`` line's thought, or a free-text action (None for a command)."""
    if not action:
        return False, None
    if _BARE_COMMAND.match(action.lstrip("> ").lower()):
        # exact: a bare command normalizes to a command that starts with its verb (no completion claim
        # starts with a household verb) and is no think: line
        return False, None
    if _is_think(action):
        text: str | None = action.split(":", 1)[1]
    elif not _COMMAND.match(canonical_command(action) or ""):
        text = action
    else:
        text = None  # a household command claims nothing
    return is_completion_claim(action), text
