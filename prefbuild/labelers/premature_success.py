"""Premature success: the agent says the task is done while the environment says it is not.

Shapes common in real logs:

* the action itself is a completion claim ("ACTION: Task succeeded.", "done", "Final
  Answer: ...") at a step that did not win — the episode went on, or ended in failure;
* a thought asserts the task done ("The task is complete.") while the goal is unmet;
* most often, a thought asserts the goal's *final step* done ("Now I put the apple in
  diningtable 1.", "I have put two soapbars in the garbagecan.") although the env never
  confirmed it: no successful put of a goal object into a goal receptacle (fewer than two
  for ``put two``), whatever the reply before was ("Nothing happens." or ``OK.``).

SQL episodes have their own labeler for this mode (``sql_premature_success``), which
replaces this one on the ``sql`` env.

Exports that follow the seed round-wise vocabulary call this ``task_succeeded_negative``.
"""

from __future__ import annotations

import re
from typing import ClassVar

from prefbuild.labelers.base import Labeler
from prefbuild.labelers.household_state import HouseState
from prefbuild.labelers.household_text import Goal, entity_type, task_goal
from prefbuild.labelers.text import (
    canonical_command,
    goal_known_unmet,
    is_completion_claim,
    short,
    step_won,
    task_observation,
)
from prefbuild.records import FailureMode, Label, Step, StopReason, Trajectory

# Assertive claims only: "the task is complete", "I have completed the task", "task succeeded".
_THOUGHT_CLAIM = re.compile(
    r"\btask\s+(?:has\s+been\s+|is\s+(?:now\s+)?|was\s+)?(?:successfully\s+)?"
    r"(?:succeeded|completed|complete|done|finished|accomplished|solved)\b"
    r"|\b(?:i|we)\s*(?:have|'ve)\s+(?:now\s+)?(?:successfully\s+)?(?:completed|finished|accomplished|solved)\s+the\s+task\b"
    r"|\b(?:successfully\s+completed|mission\s+accomplished)\b"
    r"|タスク(?:は|を)?(?:完了|達成|成功)",
    re.IGNORECASE,
)
# Words before a claim that turn it into a plan or a condition ("once the task is done").
_HEDGES_BEFORE = re.compile(
    r"\b(?:not|n't|never|until|once|after|before|when|if|need|needs|will|would|should|must|can|could|"
    r"going\s+to|in\s+order|how|whether|unless|to\s+make\s+sure|check|next|then|later|let\s+me|plan|"
    r"want|try|trying|i'll|we'll)\b|n't\b",
    re.IGNORECASE,
)
_HEDGES_AFTER = re.compile(r"^\W*(?:yet|once|when|after|if|until|unless)\b", re.IGNORECASE)
_CLAIM_WORDS = re.compile(r"task|accomplished|completed|タスク", re.IGNORECASE)
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?。！？])\s+|\n+")
def thought_claim(text: str | None) -> str | None:
    """The sentence of ``text`` that asserts the task is finished, if any."""
    if not text or not _CLAIM_WORDS.search(text):
        return None
    for sentence in _SENTENCE_SPLIT.split(text):
        match = _THOUGHT_CLAIM.search(sentence)
        if (
            match
            and not _HEDGES_BEFORE.search(sentence[: match.start()])
            and not _HEDGES_AFTER.search(sentence[match.end() :])
        ):
            return sentence.strip()
    return None


# "Now I put the apple in diningtable 1.", "I have put two soapbars in the garbagecan."
_PUT_CLAIM = re.compile(
    r"\b(?:i|we)\s*(?:(?:have|'ve|just|now|successfully|finally|already)\s+)*(?:put|placed|moved|dropped)\b"
    r"(?P<rest>[^.!?\n]*)",
    re.IGNORECASE,
)
# "Now I look at the cd under the desklamp.", "I have turned on the desklamp."
_LOOK_CLAIM = re.compile(
    r"\b(?:i|we)\s*(?:(?:have|'ve|just|now|successfully|finally|already)\s+)*"
    r"(?:looked\s+at|look\s+at|examined|turned\s+on|used)\b(?P<rest>[^.!?\n]*)",
    re.IGNORECASE,
)
_TWO = re.compile(r"\b(?:two|both|2|second|all)\b", re.IGNORECASE)
_ONE = re.compile(r"\b(?:first|one|1st)\b", re.IGNORECASE)


def _mentions(rest: str, word: str) -> bool:
    compact = re.sub(r"[\s/]+", "", rest.lower())
    return word in compact


def final_step_claim(text: str | None, goal: Goal) -> tuple[str, int] | None:
    """A sentence of ``text`` asserting the goal's final step done, and how many goal puts it claims.

    Args:
        text: a thought.
        goal: the parsed household goal.

    Returns:
        (the sentence, puts claimed) or None; plans and conditions ("Next, I need to put it
        in ...") are not claims.

    Example:
        >>> from prefbuild.labelers.household_text import parse_goal
        >>> final_step_claim("I have put two soapbars in the garbagecan.", parse_goal("put two soapbar in garbagecan"))
        ('I have put two soapbars in the garbagecan.', 2)
    """
    if not text:
        return None
    compact = text.lower().replace(" ", "")
    if ("lamp" if goal.kind == "examine" else goal.receptacle) not in compact:
        return None  # no sentence can name the goal's final step
    for sentence in _SENTENCE_SPLIT.split(text):
        if goal.kind == "examine":
            match = _LOOK_CLAIM.search(sentence)
            wanted = ("lamp",)
        else:
            match = _PUT_CLAIM.search(sentence)
            wanted = (goal.receptacle,)
        if match is None or _HEDGES_BEFORE.search(sentence[: match.start()]):
            continue
        rest = match.group("rest")
        if _HEDGES_AFTER.search(rest) or not all(_mentions(rest, word) for word in wanted):
            continue
        if goal.kind != "examine" and not (
            _mentions(rest, goal.obj) or re.search(r"\b(?:it|them)\b", rest, re.IGNORECASE)
        ):
            continue
        if _ONE.search(rest):
            count = 1
        elif _TWO.search(rest) or (goal.kind == "puttwo" and _mentions(rest, goal.obj + "s")):
            count = 2
        else:
            count = 1
        return sentence.strip(), count
    return None


def _goal_puts(state: HouseState, goal: Goal) -> int:
    """Distinct goal objects the env confirmed put into a goal receptacle."""
    return len(
        {
            obj
            for obj, place in state.puts
            if entity_type(obj) == goal.obj and entity_type(place) == goal.receptacle
            and state.where.get(obj) == place
        }
    )


def _goal_needed(goal: Goal) -> int:
    return 2 if goal.kind == "puttwo" else 1


def _goal_done(state: HouseState, goal: Goal) -> bool:
    if goal.kind == "examine":
        return any(kind == "on" for kind, _ in state.done)
    return _goal_puts(state, goal) >= _goal_needed(goal)


class PrematureSuccessLabeler(Labeler):
    """Labels a step that claims the goal (or its final step) done while the env says it is not."""

    name: ClassVar[str] = "premature_success"
    mode: ClassVar[str] = FailureMode.premature_success.value
    version: ClassVar[int] = 2
    # The sql env has its own labeler for this mode (``sql_premature_success``).
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
        goal = task_goal(trajectory.task, task_observation(steps[0].observation))
        state = HouseState()
        for step in steps:
            label = self._step(trajectory, step, goal, state)
            if label is not None:
                labels.append(label)
            state.apply(step.feedback)
        return labels

    def _step(self, trajectory: Trajectory, step: Step, goal: Goal | None, state: HouseState) -> Label | None:
        last = len(trajectory.steps) - 1
        thought = step.thought or (step.action if _is_think(step.action) else None)
        claims = is_completion_claim(step.action)
        if not claims and step.index != last and not (thought and self.config["thought_claims"]):
            return None  # nothing here could claim anything
        if step_won(trajectory, step):
            return None
        unmet = goal_known_unmet(trajectory, step)
        if goal is not None:
            unmet = unmet or not _goal_done(state, goal)
        if not unmet:
            return None
        after = (
            "the episode went on"
            if step.index < last
            else f"the episode ended with {trajectory.outcome.stop_reason.value}"
        )
        if claims and goal_known_unmet(trajectory, step):
            return self.make_label(
                step,
                0.95,
                f"claims completion with action '{short(step.action or '', 60)}' but the goal is not met ({after})",
            )
        if self.config["thought_claims"]:
            label = self._thought(step, thought, goal, state)
            if label is not None:
                return label
        if (
            self.config["agent_finished"]
            and step.index == last
            and trajectory.outcome.stop_reason is StopReason.agent_finished
            and not trajectory.outcome.success
            and trajectory.task.meta.get("outcome_known") is not False
        ):
            return self.make_label(step, 0.8, "the agent ended the episode but the environment did not report success")
        return None

    def _thought(self, step: Step, thought: str | None, goal: Goal | None, state: HouseState) -> Label | None:
        if not thought:
            return None
        command = canonical_command(step.action) or ""
        # "Now I put it on the sofa." beside "go to sofa 1" narrates this turn's move: a plan.
        narrates = goal is not None and (
            command.startswith(f"go to {goal.receptacle} ") or command.startswith("put ")
        )
        if goal is not None and goal.kind != "examine" and not narrates:
            claim = final_step_claim(thought, goal)
            confirmed = _goal_puts(state, goal)
            if claim is not None and confirmed < claim[1]:
                return self.make_label(
                    step,
                    0.85,
                    f"thought claims '{short(claim[0], 70)}' but the env confirmed "
                    f"{confirmed} put of {_a(goal.obj)} into {_a(goal.receptacle)}"
                    + (f" (the goal needs {_goal_needed(goal)})" if _goal_needed(goal) > 1 else ""),
                )
        elif goal is not None and goal.kind == "examine":
            claim = final_step_claim(thought, goal)
            if claim is not None:
                return self.make_label(
                    step, 0.8, f"thought claims '{short(claim[0], 70)}' but the env never confirmed a lamp turned on"
                )
        claimed = thought_claim(thought)
        if claimed:
            why = (
                f"the env confirmed {_goal_puts(state, goal)} put of {_a(goal.obj)} into {_a(goal.receptacle)}"
                if goal is not None and goal.kind != "examine"
                else "the env did not report the goal met"
            )
            return self.make_label(step, 0.85, f"thought claims '{short(claimed, 70)}' but {why}")
        return None


def _a(noun: str) -> str:
    return f"an {noun}" if noun[:1] in "aeiou" else f"a {noun}"


def _is_think(action: str | None) -> bool:
    return bool(action) and action.strip().lower().startswith("think:")
