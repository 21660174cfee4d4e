"""Pair strategies: registry of built-in and plug-in strategies, and the streaming pipeline.

Built in: ``stepwise`` (the default: expert action vs labelled bad action, per step),
``trajectory`` (success vs failure on the same task), ``style`` (concise vs verbose turn
with the same action), ``best_of_n`` (n teacher samples at a state ranked by progress).
Third-party strategies register through the ``prefbuild.pairs`` entry point.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from prefbuild import registry
from prefbuild.pairs.base import PairStrategy
from prefbuild.pairs.pipeline import PairCounts, PairReport, build_pairs

__all__ = [
    "PairCounts",
    "PairReport",
    "PairStrategy",
    "available_strategies",
    "build_pairs",
    "build_strategy",
    "get_strategy",
    "needs_teacher",
]

# Which params switch a strategy to needing a teacher.
_TEACHER_NEEDED: dict[str, Any] = {
    "stepwise": lambda params: params.get("chosen") == "teacher",
    "style": lambda params: params.get("rewrite") == "teacher",
    "best_of_n": lambda params: True,
}


def needs_teacher(name: str, params: Mapping[str, Any] | None = None) -> bool:
    """Whether built-in strategy ``name`` with ``params`` asks a teacher (plug-ins bring their own)."""
    return bool(_TEACHER_NEEDED.get(name, lambda _: False)(dict(params or {})))


def available_strategies() -> dict[str, str]:
    """Every strategy name with where it comes from (built-in module or entry point)."""
    return registry.targets("pairs")


def get_strategy(name: str) -> type[PairStrategy]:
    """The strategy class registered under ``name``; ``UnknownPluginError`` lists the known names."""
    return registry.load("pairs", name)


def build_strategy(
    name: str, params: Mapping[str, Any] | None = None, *, teacher: Any = None, seed: int | None = None
) -> PairStrategy:
    """An instance of strategy ``name`` with ``params``.

    ``teacher`` is passed to a built-in strategy whose params need one (and do not carry
    one); ``seed`` fills a strategy's ``seed`` param when the recipe did not set it.
    ``ValueError`` names a missing teacher or an unknown parameter.
    """
    cls = get_strategy(name)
    merged = dict(params or {})
    if needs_teacher(name, merged) and merged.get("teacher") is None:
        if teacher is None:
            raise ValueError(f"strategy {name!r} with these params needs a teacher; none was given")
        merged["teacher"] = teacher
    if seed is not None and "seed" in getattr(cls, "PARAMS", ()) and "seed" not in merged:
        merged["seed"] = seed
    return cls(**merged)
