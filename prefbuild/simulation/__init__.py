"""Simulation: the scripted teacher and the per-env mistake makers it uses.

This is the only package that knows about simulated behaviour. Envs, the rollout, labelers
and pairs treat a simulated teacher like any other (its outputs are recorded with
``StepFacts.simulated`` and its trajectories with ``teacher.backend == "scripted"``, so cards
and reports can say the data is simulated).

Mistake makers are looked up by env name: ``failure_action(env, mode, rng)`` returns a
command from the env's current state that shows failure ``mode``, or None. They are the
registry's ``simulation`` family: a plug-in env adds its own through the
``prefbuild.simulation`` entry point (name = env name, value = the function).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import cache
from typing import Any

from prefbuild import registry

MistakeMaker = Callable[[Any, str, random.Random], "str | None"]

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
    """The mistake maker for ``env_name`` (registered in this process, else the registry's), or None."""
    if env_name in _REGISTERED:
        return _REGISTERED[env_name]
    if env_name not in registry.targets("simulation"):
        return None
    return registry.load("simulation", env_name)


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
