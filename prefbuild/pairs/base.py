"""The pair-strategy plug-in contract: labelled trajectories in, preference pairs out.

Strategies stream: they take an iterable of trajectories and yield ``Pair`` records, so
memory stays flat in the number of episodes (strategies that must group by task keep one
task's trajectories at a time).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

from prefbuild.records import Pair, Trajectory


class PairStrategy(ABC):
    name: ClassVar[str]

    def __init__(self, **params: Any) -> None:
        self.params = params

    @abstractmethod
    def pairs(self, trajectories: Iterable[Trajectory]) -> Iterator[Pair]:
        """Yield pairs; ids must be stable (derived from content and source, not from order)."""
