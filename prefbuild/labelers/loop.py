"""Loops: the agent repeats an action, or replays a whole script of actions, and learns nothing.

Small fine-tuned agents rarely loop as A-A-A; they replay a memorised script of 4-10
commands (fridge -> take -> sink -> clean -> cabinet -> put -> "Task succeeded." -> fridge
...) until the step limit. So this labeler looks for any block of up to ``max_cycle``
actions that is immediately replayed, and calls it a loop only when the replay brought
nothing new: no entity the agent had not seen before, no receptacle looked into for the
first time. Revisiting a place after learning something is ordinary search, not a loop.

Only the repetitions are labelled, never the first occurrence: the first time through
the script is the behaviour the agent meant; the replays are what DPO should push down.
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from prefbuild.labelers.base import Labeler
from prefbuild.labelers.household_text import entities
from prefbuild.labelers.text import (
    format_steps,
    is_nothing_happens,
    normalize_action,
    normalize_text,
    short,
)
from prefbuild.records import FailureMode, Label, Trajectory

# "On the desk 1, you see", "The fridge 1 is open. In it, you see", "The cabinet 2 is closed."
_CONTENTS_RE = re.compile(r"(?:on the ([a-z]+ \d+), you see|the ([a-z]+ \d+) is (?:open|closed))")


def _info_keys(feedback: str) -> set[Hashable]:
    """What a feedback text tells the agent: entity names and which receptacles it described.

    Text without any entity (SQL results, tool output) is its own piece of information;
    "Nothing happens." tells nothing about the world.
    """
    if is_nothing_happens(feedback):
        return set()
    lowered = feedback.lower()
    keys: set[Hashable] = set(entities(lowered))
    for match in _CONTENTS_RE.finditer(lowered):
        keys.add(("contents", match.group(1) or match.group(2)))
    if not keys and lowered.strip():
        keys.add(("text", normalize_text(lowered)))
    return keys


def _minimal_period(block: list[str | None]) -> int:
    size = len(block)
    for period in range(1, size):
        if size % period == 0 and all(block[i] == block[i % period] for i in range(size)):
            return period
    return size


class LoopLabeler(Labeler):
    """Labels steps that repeat the previous ``k``-1 identical actions or replay a cycle of up to ``max_cycle``."""

    name: ClassVar[str] = "loop"
    mode: ClassVar[str] = FailureMode.loop.value
    version: ClassVar[int] = 1
    defaults: ClassVar[dict[str, object]] = {
        "k": 3,  # the same action this many times in a row is a loop
        "max_cycle": 10,  # longest replayed script (in actions) that is looked for
        "min_cycle_repeats": 2,  # occurrences of a multi-action script (2 = replayed once)
    }

    class Params(BaseModel):
        """Loop parameters with their bounds (``loop.k=-3`` is refused, not read as 2)."""

        model_config = ConfigDict(extra="forbid")
        k: int = Field(default=3, ge=2, description="The same action this many times in a row is a loop.")
        max_cycle: int = Field(default=10, ge=1, description="Longest replayed script (in actions) looked for.")
        min_cycle_repeats: int = Field(default=2, ge=2, description="Occurrences of a script (2 = replayed once).")

    def label(self, trajectory: Trajectory) -> list[Label]:
        steps = trajectory.steps
        keys = [normalize_action(step.action) for step in steps]
        k = max(2, int(self.config["k"]))
        max_cycle = max(1, int(self.config["max_cycle"]))
        repeats = max(2, int(self.config["min_cycle_repeats"]))
        positions: dict[str, list[int]] = {}
        distances: set[int] = set()
        for j, key in enumerate(keys):
            if key is None:
                continue
            earlier = positions.setdefault(key, [])
            for previous in reversed(earlier):
                if j - previous > max_cycle:
                    break
                distances.add(j - previous)
            earlier.append(j)
        if not distances:
            return []
        novel = self._novelty(trajectory)
        found: dict[int, Label] = {}
        # A replayed block of length L repeats some action at distance L.
        for period in sorted(distances):
            needed = k - 1 if period == 1 else period * (repeats - 1)
            run_start = None
            for j in range(period, len(keys) + 1):
                matched = j < len(keys) and keys[j] is not None and keys[j] == keys[j - period] and not novel[j]
                if matched and run_start is None:
                    run_start = j
                if not matched and run_start is not None:
                    run = list(range(run_start, j))
                    run_start = None
                    block = keys[run[0] - period : run[0]]
                    if len(run) < needed or _minimal_period(block) != period:
                        continue
                    self._add(found, trajectory, period, run, block)
        return [found[index] for index in sorted(found)]

    @staticmethod
    def _novelty(trajectory: Trajectory) -> list[bool]:
        steps = trajectory.steps
        seen: set[Hashable] = set(entities(steps[0].observation)) if steps else set()
        novel: list[bool] = []
        for step in steps:
            keys = _info_keys(step.feedback)
            novel.append(bool(keys - seen))
            seen |= keys
        return novel

    def _add(
        self, found: dict[int, Label], trajectory: Trajectory, period: int, run: list[int], block: list[str | None]
    ) -> None:
        first = run[0] - period
        if period == 1:
            steps = [first, *run]
            same_feedback = len({normalize_text(trajectory.steps[i].feedback) for i in run}) == 1
            evidence = (
                f"same action '{short(block[0] or '', 60)}' at steps {format_steps(steps)} "
                f"with {'unchanged observation' if same_feedback else 'nothing new seen'}"
            )
            confidence = 0.95 if same_feedback else 0.9
        else:
            script = " -> ".join(f"'{short(action or '', 40)}'" for action in block[:4])
            if period > 4:
                script += f" -> ... ({period} actions)"
            times = 1 + len(run) / period
            evidence = (
                f"cycle of {period} actions {script} from steps {format_steps(list(range(first, run[0])))} "
                f"replayed at steps {format_steps(run)} ({times:.1f} times in all) with nothing new seen"
            )
            confidence = 0.95 if len(run) >= 2 * period else 0.9
        for index in run:
            if index not in found:
                found[index] = self.make_label(index, confidence, evidence)
