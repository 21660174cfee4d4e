"""The labeler plug-in contract: a pure function from a trajectory to labels.

Each labeler finds one failure mode, explains every label with evidence a human can check,
and never raises on a trajectory the records model accepts. Third-party labelers register
through the ``prefbuild.labelers`` entry point.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

from prefbuild.records import FailureMode, Label, Trajectory


class Labeler(ABC):
    """Finds one failure mode. ``params`` come from the recipe's ``labelers`` section."""

    name: ClassVar[str]
    mode: ClassVar[FailureMode]
    version: ClassVar[int] = 1
    # Env names this labeler understands; empty = every env.
    envs: ClassVar[tuple[str, ...]] = ()

    def __init__(self, **params: Any) -> None:
        self.params: Mapping[str, Any] = params

    @property
    def tag(self) -> str:
        """``name@version``, recorded on every label so re-labelling is traceable."""
        return f"{self.name}@{self.version}"

    def applies_to(self, trajectory: Trajectory) -> bool:
        return not self.envs or trajectory.env.name in self.envs

    @abstractmethod
    def label(self, trajectory: Trajectory) -> list[Label]:
        """Labels for ``trajectory``; pure, no I/O, never raises on a valid record."""
