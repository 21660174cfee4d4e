"""Text normalisation and small helpers shared by the built-in labelers.

Comparable forms of actions and texts, completion-claim detection, a tokenizer-free size
estimate, whether the env met the goal at a step, and evidence formatting.
"""

from __future__ import annotations

import re
from functools import lru_cache

from prefbuild.records import Step, Trajectory

NOTHING_HAPPENS = "nothing happens"
# The verbs of household commands (both ALFWorld dialects), as a regex group.
HOUSEHOLD_VERBS = r"(?:go to|open|close|take|put|move|heat|cool|clean|use|slice|examine|inventory|look|help)"
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


# Actions and feedback repeat a lot across steps and episodes; bounded caches keep memory flat.
@lru_cache(maxsize=4096)
def normalize_action(action: str | None) -> str | None:
    """The comparable form of an action: lower-case, single spaces, no quotes, prompts or final period."""
    if action is None:
        return None
    text = _SPACES.sub(" ", _ACTION_EDGE.sub("", action.strip().split("\n", 1)[0])).lower()
    return text or None


_PUT_SPELLINGS = re.compile(r"^(?:put|place) ([a-z]+ \d+) (?:in|on|into|onto|in/on|to) (.+)$")
_MOVE_SPELLING = re.compile(r"^move ([a-z]+ \d+) (?:to|in|on|into|onto|in/on) (.+)$")


@lru_cache(maxsize=4096)
def canonical_command(action: str | None) -> str | None:
    """One spelling per household command, so dialects and harmless variants compare equal.

    ``move X to Y``, ``put X in Y``, ``put X on Y`` and ``put X in/on Y`` are the same command
    (the two ALFWorld dialects and the preposition a harness forgives); case, a ``> `` prompt
    marker, quotes and a final period do not matter.

    Args:
        action: a written or executed command (None for a turn without one).

    Returns:
        The canonical form, or None when there is no command.

    Example:
        >>> canonical_command("Move mug 1 to shelf 2.") == canonical_command("put mug 1 in shelf 2")
        True
    """
    text = normalize_action(action)
    if text is None:
        return None
    match = _PUT_SPELLINGS.match(text) or _MOVE_SPELLING.match(text)
    if match:
        return f"put {match.group(1)} in/on {match.group(2)}"
    return text


def executed_command(step: Step) -> str | None:
    """The canonical command the env ran at ``step``: the harness's executed one, else the written one."""
    executed = step.facts.executed_action
    return canonical_command(executed if executed is not None else step.action)


_TASK_START = "you are in the middle of a room"


def task_observation(text: str) -> str:
    """The part of a first observation that describes this episode's room and task.

    A ReAct prompt turn holds few-shot transcripts before the real task; their rooms and
    objects are not this episode's. The last room description starts the real one; an
    AgentBench ``AVAILABLE ACTIONS`` list after it is left out.

    Example:
        >>> task_observation("You are in the middle of a room. A. You are in the middle of a room. B.")
        'You are in the middle of a room. B.'
    """
    return _task_observation(text)


# Several labelers read the same first observation of an episode: a small bounded cache shares the cut.
@lru_cache(maxsize=1024)
def _task_observation(text: str) -> str:
    position = text.lower().rfind(_TASK_START)
    text = text[position:] if position > 0 else text
    return text.split("AVAILABLE ACTIONS", 1)[0]  # AgentBench's command list names nothing new


def normalize_text(text: str) -> str:
    # str.split() splits at exactly the characters the regex \s matches (Py_UNICODE_ISSPACE), so this is
    # _SPACES.sub(" ", text).strip(): the words joined by single spaces.
    return " ".join(text.split()).lower()


_NOTHING = (NOTHING_HAPPENS, "nothing happened")


def is_nothing_happens(feedback: str | None) -> bool:
    """The household env's answer to an inadmissible command (also "Nothing happened")."""
    if not feedback:
        return False
    first = feedback[0]
    if first not in "nN" and not first.isspace():
        return False  # only "n" and "N" lower-case to a text that starts with "n"
    return feedback[:40].lstrip().lower().startswith(_NOTHING)


@lru_cache(maxsize=4096)
def is_completion_claim(action: str | None) -> bool:
    """The action declares the task finished ("Task succeeded.", "done", "Final Answer: ...")."""
    text = normalize_action(action)
    return bool(text) and bool(_CLAIM_ACTION.search(text))


def token_count(text: str) -> int:
    """A tokenizer-free size estimate: words for spaced scripts, one token per CJK character."""
    if text.isascii():
        return len(text.split())  # no CJK here, and a word is a run of non-space characters as str.split() cuts them
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
    flat = " ".join(text.split())  # as normalize_text
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
    "HOUSEHOLD_VERBS",
    "canonical_command",
    "executed_command",
    "format_steps",
    "goal_known_unmet",
    "is_completion_claim",
    "is_nothing_happens",
    "normalize_action",
    "normalize_text",
    "short",
    "step_won",
    "task_observation",
    "token_count",
]
