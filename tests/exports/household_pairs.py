"""Stepwise pairs from the household env played by the scripted teacher, for the export tests."""

from __future__ import annotations

from prefbuild.pairs import build_pairs
from prefbuild.records import Pair
from tests.pairs.household import cached


def household_pairs(*, protocol: str = "agentbench", fewshot: bool = True) -> list[Pair]:
    trajectories = cached(tasks=6, samples=2, seed=3, protocol=protocol, fewshot=fewshot)
    return build_pairs(trajectories, [{"name": "stepwise"}], test_fraction=0.0).collect()


def shortest(pairs: list[Pair], count: int) -> list[Pair]:
    """The ``count`` pairs with the shortest prompts (tiny sequences keep CPU training fast)."""
    return sorted(pairs, key=lambda p: (sum(len(m.content) for m in p.prompt), p.id))[:count]
