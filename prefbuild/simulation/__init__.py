"""Simulation: the scripted teacher and the per-env mistake makers it uses.

This is the only package that knows about simulated behaviour. Envs, the rollout, labelers
and pairs treat a simulated teacher like any other (its outputs are recorded with
``StepFacts.simulated`` and its trajectories with ``teacher.backend == "scripted"``, so cards
and reports can say the data is simulated).

Mistake makers are looked up by env name: ``failure_action(env, mode, rng)`` returns a
command from the env's current state that shows failure ``mode``, or None. A plug-in env
adds its own through the ``prefbuild.simulation`` entry point (name = env name, value = the
function).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import cache
from importlib import import_module
from importlib.metadata import entry_points
from typing import Any

MistakeMaker = Callable[[Any, str, random.Random], "str | None"]

BUILTIN_MISTAKES: dict[str, str] = {
    "household": "prefbuild.simulation.household_mistakes:failure_action",
    "sql": "prefbuild.simulation.sql_mistakes:failure_action",
    "code": "prefbuild.simulation.code_mistakes:failure_action",
    "bfcl": "prefbuild.simulation.bfcl_mistakes:failure_action",
    "tau2": "prefbuild.simulation.tau2_mistakes:failure_action",
}


_REGISTERED: dict[str, MistakeMaker] = {}


def register_mistake_maker(env_name: str, maker: MistakeMaker) -> None:
    """Use ``maker`` for env ``env_name`` in this process (notebooks, tests, envs defined inline).

    Example:
        >>> register_mistake_maker("docs_example_env", lambda env, mode, rng: None)
    """
    _REGISTERED[env_name] = maker
    mistake_maker.cache_clear()


@cache
def mistake_maker(env_name: str) -> MistakeMaker | None:
    """The mistake maker for ``env_name`` (registered, built-in or plug-in), or None."""
    if env_name in _REGISTERED:
        return _REGISTERED[env_name]
    target = BUILTIN_MISTAKES.get(env_name)
    if target is None:
        target = next((e.value for e in entry_points(group="prefbuild.simulation") if e.name == env_name), None)
    if target is None:
        return None
    module, _, attribute = target.partition(":")
    return getattr(import_module(module), attribute)


def failure_action(env: Any, mode: str, rng: random.Random) -> str | None:
    """A command showing failure ``mode`` from ``env``'s current state, or None.

    Args:
        env: a live env (its class ``name`` picks the mistake maker).
        mode: a failure mode name (``implausible_location``, ``invalid_action``, ...).
        rng: the random stream of this step.

    Returns:
        The command, or None when the env cannot show that mode from here.

    Example:
        >>> failure_action(object(), "loop", random.Random(0)) is None
        True
    """
    maker = mistake_maker(str(getattr(env, "name", "")))
    return None if maker is None else maker(env, mode, rng)
