"""Text conventions every household protocol shares with the ALFWorld benchmark harnesses.

ReAct, AgentBench and ETO post-process the game text the same way (drop the TextWorld
banner, drop the classic ``You arrive at loc N. `` prefix); doing it here, idempotently,
lets the protocols accept either the raw engine text or the already-cleaned form.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ARRIVAL_PREFIX = "You arrive at loc "
BANNER_PREFIX = "-= Welcome to TextWorld"

# Task-type names (ALFWorld internal names, the benchmarks' folder prefixes and short names)
# mapped to the short kind the benchmarks use to pick in-context examples.
_KIND_PREFIXES: tuple[tuple[str, str], ...] = (
    ("pick_and_place", "put"),
    ("pick_clean_then_place", "clean"),
    ("pick_heat_then_place", "heat"),
    ("pick_cool_then_place", "cool"),
    ("look_at_obj", "examine"),
    ("pick_two_obj", "puttwo"),
)
KINDS: tuple[str, ...] = ("put", "clean", "heat", "cool", "examine", "puttwo")
KIND_TO_TYPE: dict[str, str] = {
    "put": "pick_and_place_simple",
    "examine": "look_at_obj_in_light",
    "clean": "pick_clean_then_place_in_recep",
    "heat": "pick_heat_then_place_in_recep",
    "cool": "pick_cool_then_place_in_recep",
    "puttwo": "pick_two_obj_and_place",
}
_KIND_ALIASES = {"look": "examine", "pick_and_place_simple": "put", "two": "puttwo", "put_two": "puttwo"}
COMPLETION_RE = re.compile(r"^\W*task\W+succeeded\W*$", re.IGNORECASE)


def task_kind(task_type: str) -> str:
    """The benchmark's short kind ("put", "clean", ...) for an ALFWorld task-type name or game folder.

    Raises ``ValueError`` naming the known kinds when ``task_type`` is none of them.
    """
    for name in task_type.strip().lower().replace("\\", "/").split("/"):
        if name in KINDS:
            return name
        if name in _KIND_ALIASES:
            return _KIND_ALIASES[name]
        for prefix, kind in _KIND_PREFIXES:
            if name.startswith(prefix):
                return kind
    raise ValueError(f"unknown household task type {task_type!r}; known: {', '.join(KIND_TO_TYPE.values())}")


def strip_arrival(observation: str) -> str:
    """AgentBench/ReAct/ETO ``process_ob``: drop ``You arrive at loc N. `` (classic dialect only)."""
    if observation.startswith(ARRIVAL_PREFIX):
        return observation[observation.find(". ") + 2 :]
    return observation


def benchmark_intro(observation: str) -> str:
    """The intro as the harnesses show it: banner block dropped, blocks joined with one newline.

    Accepts the raw reset text (``-= Welcome ... =-\\n\\n<room>\\n\\n<task>``) or an intro that is
    already in benchmark form; the result is the same either way.
    """
    blocks = observation.strip("\n").split("\n\n")
    if blocks and blocks[0].lstrip().startswith(BANNER_PREFIX):
        blocks = blocks[1:]
    return "\n".join(blocks)


def available_actions(admissible: list[str] | tuple[str, ...] | None) -> str:
    """AgentBench's ``get_available_actions``: `` AVAILABLE ACTIONS: a\\nb\\n``."""
    return " AVAILABLE ACTIONS: " + "\n".join(admissible or ()) + "\n"


def is_completion_claim(action: str | None) -> bool:
    """True for ``Task succeeded.`` in any case or punctuation."""
    return action is not None and bool(COMPLETION_RE.match(action))


@dataclass
class ActionCleanup:
    """An action string after the cosmetic tolerances, with what was applied."""

    action: str
    normalized: list[str]


def clean_action(raw: str) -> ActionCleanup:
    """Apply the cosmetic tolerances every parser shares: surrounding quotes or backticks, a
    leading ``> `` (the ReAct transcript marker) and one trailing period. A completion claim
    keeps its period: ``Task succeeded.`` is the protocol's own spelling."""
    notes: list[str] = []
    action = raw.strip()
    if action.startswith(">"):
        action = action.lstrip(">").strip()
        notes.append("leading '> '")
    if len(action) >= 2 and action[0] == action[-1] and action[0] in "`'\"":
        action = action[1:-1].strip()
        notes.append("quoted action")
    if action.endswith(".") and not is_completion_claim(action) and not action.endswith(".."):
        action = action[:-1].rstrip()
        notes.append("trailing period")
    return ActionCleanup(action=action, normalized=notes)
