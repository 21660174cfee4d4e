"""Shared pieces of the built-in labelers: parameter handling and text normalisation.

Labelers are configured from the recipe (``{name, params}``); a typo in a parameter name
should fail when the recipe is loaded, not silently fall back to a default, so every
built-in labeler declares its parameters with defaults and rejects unknown ones.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, ClassVar

from prefbuild.labelers.base import Labeler
from prefbuild.records import Label, Step, Trajectory

NOTHING_HAPPENS = "nothing happens"
_SPACES = re.compile(r"\s+")
_ACTION_EDGE = re.compile(r"^[\s>`'\"*]+|[\s.!`'\"*]+$")
# CJK ideographs, kana and full-width forms count as one token each in token budgets.
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
_WORD = re.compile(r"[^\s\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]+")

# Completion claims written as the action: "Task succeeded.", "task completed", "stop", "Final Answer: ...".
_CLAIM_ACTION = re.compile(
    r"^(?:the\s+)?task\s+(?:has\s+been\s+|is\s+)?(?:now\s+)?(?:successfully\s+)?"
    r"(?:succeeded|success(?:ful)?|completed?|done|finished|accomplished|solved)\b"
    r"|^(?:done|finish(?:ed)?|stop|exit|quit|submit|end(?:\s+episode)?|complete)\W*$"
    r"|^\[?finish\]?\W*$"
    r"|^final\s+answer\b",
    re.IGNORECASE,
)


class ParamError(ValueError):
    """A labeler parameter from the recipe is unknown or has the wrong type."""


class ConfiguredLabeler(Labeler):
    """A labeler with declared parameters: ``defaults`` names every parameter and its default.

    ``self.config`` holds the merged values; unknown names and wrong types raise
    ``ParamError`` naming the labeler, so ``labelers[2].params.kk`` in a recipe is caught early.
    """

    defaults: ClassVar[Mapping[str, Any]] = {}

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        unknown = sorted(set(params) - set(self.defaults))
        if unknown:
            known = ", ".join(sorted(self.defaults)) or "none"
            raise ParamError(f"labeler {self.name!r}: unknown parameter(s) {', '.join(unknown)}; known: {known}")
        config = dict(self.defaults)
        for key, value in params.items():
            config[key] = _coerce(self.name, key, value, self.defaults[key])
        self.config: dict[str, Any] = config

    def make_label(self, step: Step | int, confidence: float, evidence: str) -> Label:
        index = step if isinstance(step, int) else step.index
        return Label(
            mode=self.mode,
            step=index,
            confidence=round(min(1.0, max(0.0, confidence)), 3),
            evidence=evidence,
            labeler=self.tag,
        )


def _coerce(labeler: str, key: str, value: Any, default: Any) -> Any:
    """Check ``value`` against the type of its default (ints accept whole floats, floats accept ints)."""
    if default is None or value is None:
        return value
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
    elif isinstance(default, int):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
    elif isinstance(default, float):
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    elif isinstance(default, list | tuple):
        if isinstance(value, list | tuple) and all(isinstance(item, str) for item in value):
            return list(value)
    elif isinstance(default, str):
        if isinstance(value, str):
            return value
    else:
        return value
    raise ParamError(
        f"labeler {labeler!r}: parameter {key!r} must be {type(default).__name__}, got {type(value).__name__} {value!r}"
    )


# Actions and feedback repeat a lot across steps and episodes; bounded caches keep memory flat.
@lru_cache(maxsize=4096)
def normalize_action(action: str | None) -> str | None:
    """The comparable form of an action: lower-case, single spaces, no quotes, prompts or final period."""
    if action is None:
        return None
    text = _SPACES.sub(" ", _ACTION_EDGE.sub("", action.strip().split("\n", 1)[0])).lower()
    return text or None


def normalize_text(text: str) -> str:
    return _SPACES.sub(" ", text).strip().lower()


def is_nothing_happens(feedback: str | None) -> bool:
    """The household env's answer to an inadmissible command (also "Nothing happened")."""
    if not feedback:
        return False
    head = feedback[:40].lstrip().lower()
    return head.startswith(NOTHING_HAPPENS) or head.startswith("nothing happened")


@lru_cache(maxsize=4096)
def is_completion_claim(action: str | None) -> bool:
    """The action declares the task finished ("Task succeeded.", "done", "Final Answer: ...")."""
    text = normalize_action(action)
    return bool(text) and bool(_CLAIM_ACTION.search(text))


def token_count(text: str) -> int:
    """A tokenizer-free size estimate: words for spaced scripts, one token per CJK character."""
    return len(_WORD.findall(text)) + len(_CJK.findall(text))


def step_won(trajectory: Trajectory, step: Step) -> bool:
    """The env reported the goal met at this step (``facts.won``, or the final step of a success)."""
    if step.facts.won is True:
        return True
    return trajectory.outcome.success and step.index == len(trajectory.steps) - 1


def goal_known_unmet(trajectory: Trajectory, step: Step) -> bool:
    """The env had not met the goal at this step: the episode went on after it, or ended in failure.

    Benchmarks stop at the win, so any step that is followed by more steps was not a win.
    External logs whose outcome is unknown (``task.meta['outcome_known'] is False``) only
    count the first reason.
    """
    if step_won(trajectory, step):
        return False
    if step.index < len(trajectory.steps) - 1:
        return True
    if trajectory.task.meta.get("outcome_known") is False:
        return False
    return not trajectory.outcome.success


def short(text: str, limit: int = 80) -> str:
    """One-line excerpt for evidence strings."""
    flat = _SPACES.sub(" ", text).strip()
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def format_steps(indices: list[int]) -> str:
    """``[3, 4, 5, 9]`` -> ``"3-5, 9"``."""
    parts: list[str] = []
    start = prev = None
    for index in indices:
        if start is None:
            start = prev = index
        elif index == prev + 1:
            prev = index
        else:
            parts.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = prev = index
    if start is not None:
        parts.append(f"{start}" if start == prev else f"{start}-{prev}")
    return ", ".join(parts)


__all__ = [
    "ConfiguredLabeler",
    "ParamError",
    "format_steps",
    "goal_known_unmet",
    "is_completion_claim",
    "is_nothing_happens",
    "normalize_action",
    "normalize_text",
    "short",
    "step_won",
    "token_count",
]
