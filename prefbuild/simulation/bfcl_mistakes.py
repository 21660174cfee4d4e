"""Simulated BFCL mistakes for the scripted teacher. Only the simulation uses this; the env
knows nothing of it.

Modes (registered failure-mode names):
- ``wrong_argument``: the next ground-truth call with one argument changed.
- ``unknown_function`` (also ``invalid_action``): the next ground-truth call under a name no
  offered function has.
- ``skipped_call`` (also ``premature_success``): end the user turn while ground-truth calls remain.
- ``guessed_parameter``: in a turn that should be answered with a question (``miss_param`` /
  ``miss_func``), call a function anyway with a guessed argument.
"""

from __future__ import annotations

import random
from typing import Any

from prefbuild.envs.bfcl.calls import CallSpec
from prefbuild.envs.bfcl.env import BfclEnv
from prefbuild.envs.bfcl.expert import TURN_DONE, as_tool_call
from prefbuild.tooluse.actions import encode_action

MODES: tuple[str, ...] = ("wrong_argument", "unknown_function", "skipped_call", "guessed_parameter")
ALIASES = {"invalid_action": "unknown_function", "premature_success": "skipped_call"}
NAME_VARIANTS = ("{}s", "get_{}", "{}_all", "do_{}", "{}_v2")


def _wrong_value(value: Any, rng: random.Random) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + rng.choice((1, 2, 10)) if value == 0 else value * rng.choice((2, 10)) + 1
    if isinstance(value, str):
        return rng.choice((f"{value}_old", f"new_{value}", value[::-1] if len(value) > 1 else f"{value}x", "temp"))
    if isinstance(value, list) and value:
        return value[:-1] if len(value) > 1 else [_wrong_value(value[0], rng)]
    return None


def _with_wrong_argument(env: BfclEnv, call: CallSpec, rng: random.Random) -> dict[str, Any] | None:
    arguments = env.named_arguments(call)
    keys = [key for key, value in arguments.items() if _wrong_value(value, random.Random(0)) is not None]
    if not keys:
        return None
    key = rng.choice(keys)
    changed = dict(arguments)
    changed[key] = _wrong_value(arguments[key], rng)
    return changed if changed != arguments else None


def _call_action(env: BfclEnv, name: str, arguments: dict[str, Any]) -> str:
    return encode_action([as_tool_call(f"call_{env.turn}_x", name, arguments)])


def failure_action(env: BfclEnv, mode: str, rng: random.Random) -> str | None:
    """An action from the current state that shows failure ``mode``, or None where it cannot.

    Args:
        env: the running ``bfcl`` env.
        mode: one of ``MODES`` (or an alias in ``ALIASES``).
        rng: the scripted teacher's random source.

    Returns:
        A JSON tool action (``prefbuild.tooluse.actions``), or None.

    Example:
        >>> env = BfclEnv()
        >>> _ = env.reset(next(env.tasks("test", 1, 0, ["base"])))
        >>> failure_action(env, "skipped_call", random.Random(0))
        '{"message": "Done: the request is complete."}'
    """
    mode = ALIASES.get(mode, mode)
    if env.finished or env.entry is None:
        return None
    remaining = env.remaining_expert_calls()
    if mode == "skipped_call":
        return encode_action(message=TURN_DONE) if remaining else None
    if mode == "wrong_argument" and remaining:
        changed = _with_wrong_argument(env, remaining[0], rng)
        return _call_action(env, remaining[0].name, changed) if changed is not None else None
    if mode == "unknown_function" and remaining:
        offered = set(env.offered_functions)
        names = [variant.format(remaining[0].name) for variant in NAME_VARIANTS]
        names = [name for name in names if name not in offered]
        return _call_action(env, rng.choice(names), env.named_arguments(remaining[0])) if names else None
    if mode == "guessed_parameter" and not env.turn_ground_truth(env.turn):
        # The call the user will ask for once they supply the missing detail, with a guess for it.
        wanted = env.turn_ground_truth(env.turn + 1)
        if not wanted:
            return None
        changed = _with_wrong_argument(env, wanted[0], rng)
        return _call_action(env, wanted[0].name, changed if changed is not None else env.named_arguments(wanted[0]))
    return None
