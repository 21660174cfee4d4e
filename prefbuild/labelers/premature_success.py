"""Premature success: the agent says the task is done while the environment says it is not.

Three shapes are common in real logs:

* the action itself is a completion claim ("ACTION: Task succeeded.", "done", "Final
  Answer: ...") at a step that did not win — the episode went on, or ended in failure;
* the claim is inside the thought right after the env answered "Nothing happens." (the
  agent did not notice its put or heat failed and narrates success anyway).

SQL episodes have their own labeler for this mode (``sql_premature_success``), which
replaces this one on the ``sql`` env.

Exports that follow the seed round-wise vocabulary call this ``task_succeeded_negative``.
"""

from __future__ import annotations

import re
from typing import ClassVar

from prefbuild.labelers.base import Labeler
from prefbuild.labelers.text import (
    goal_known_unmet,
    is_completion_claim,
    is_nothing_happens,
    short,
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
    r"going\s+to|in\s+order|how|whether|unless|to\s+make\s+sure|check)\b|n't\b",
    re.IGNORECASE,
)
_HEDGES_AFTER = re.compile(r"^\W*(?:yet|once|when|after|if|until|unless)\b", re.IGNORECASE)
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?。！？])\s+|\n+")
def thought_claim(text: str | None) -> str | None:
    """The sentence of ``text`` that asserts the task is finished, if any."""
    if not text:
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


class PrematureSuccessLabeler(Labeler):
    """Labels the step where the agent claims completion of a goal the env says is not met."""

    name: ClassVar[str] = "premature_success"
    mode: ClassVar[str] = FailureMode.premature_success.value
    version: ClassVar[int] = 1
    # The sql env has its own labeler for this mode (``sql_premature_success``).
    excluded_envs: ClassVar[tuple[str, ...]] = ("sql",)
    defaults: ClassVar[dict[str, object]] = {
        "thought_claims": True,  # also claims inside a thought right after "Nothing happens."
        "agent_finished": True,  # the last step of an episode the agent ended without success
    }

    def label(self, trajectory: Trajectory) -> list[Label]:
        labels: list[Label] = []
        previous_feedback = ""
        last = len(trajectory.steps) - 1
        for step in trajectory.steps:
            label = self._step(trajectory, step, previous_feedback, last)
            if label is not None:
                labels.append(label)
            previous_feedback = step.feedback
        return labels

    def _step(self, trajectory: Trajectory, step: Step, previous_feedback: str, last: int) -> Label | None:
        if not goal_known_unmet(trajectory, step):
            return None
        after = (
            "the episode went on"
            if step.index < last
            else f"the episode ended with {trajectory.outcome.stop_reason.value}"
        )
        if is_completion_claim(step.action):
            return self.make_label(
                step,
                0.95,
                f"claims completion with action '{short(step.action or '', 60)}' but the goal is not met ({after})",
            )
        if self.config["thought_claims"] and is_nothing_happens(previous_feedback or step.observation):
            claim = thought_claim(step.thought) or (thought_claim(step.action) if _is_think(step.action) else None)
            if claim:
                return self.make_label(
                    step, 0.85, f"thought claims '{short(claim, 70)}' right after the env said \"Nothing happens.\""
                )
        if (
            self.config["agent_finished"]
            and step.index == last
            and trajectory.outcome.stop_reason is StopReason.agent_finished
            and not trajectory.outcome.success
        ):
            return self.make_label(step, 0.8, "the agent ended the episode but the environment did not report success")
        return None


def _is_think(action: str | None) -> bool:
    return bool(action) and action.strip().lower().startswith("think:")
