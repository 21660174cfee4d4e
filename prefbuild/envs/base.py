"""The environment plug-in contract, in the spirit of Gymnasium's ``Env``.

An env owns its tasks, its state machine, an optional oracle (``expert_action``) and its
prompt protocols. Text in, text out: the rollout engine never needs to know which env it
drives. Third-party envs register through the ``prefbuild.envs`` entry point.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from prefbuild.records import Message, TaskInfo


@dataclass(frozen=True)
class EnvTask:
    """One task an env can reset to. ``payload`` is env-private (a scene, a table...)."""

    info: TaskInfo
    payload: Any = None


@dataclass(frozen=True)
class StepResult:
    """What ``Env.step`` returns: the Gymnasium 4-tuple plus a typed ``valid`` flag."""

    observation: str
    reward: float
    done: bool
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def won(self) -> bool:
        return bool(self.info.get("won", False))

    @property
    def valid(self) -> bool | None:
        return self.info.get("valid")


@dataclass(frozen=True)
class ParsedOutput:
    """The protocol parser's reading of one model turn.

    ``format_ok`` is True only when the text followed the protocol exactly once;
    ``normalized`` lists every tolerance the parser applied ("lower-case tag", "leading '> '").
    ``final`` marks an answer that ends the episode (``Final Answer:``, ``task succeeded``).
    """

    thought: str | None
    action: str | None
    format_ok: bool
    normalized: tuple[str, ...] = ()
    final: bool = False
    problems: tuple[str, ...] = ()


class Protocol(ABC):
    """How an env talks to a model: system prompt, few-shot turns, observation turns, parser."""

    name: ClassVar[str]

    @abstractmethod
    def prefix_messages(self, task: EnvTask) -> list[Message]:
        """System prompt and few-shot turns: the fixed prefix stored in ``Trajectory.messages``."""

    @abstractmethod
    def observation_turn(self, observation: str, *, first: bool, task: EnvTask) -> str:
        """The exact user-turn text that shows ``observation`` to the model."""

    @abstractmethod
    def parse(self, text: str) -> ParsedOutput:
        """Read one model turn; never raises on any string."""

    @abstractmethod
    def render(self, action: str, thought: str | None = None) -> str:
        """Write an assistant turn that performs ``action`` (used for chosen turns and scripted teachers)."""

    def stop_reason(self, outputs: Sequence[str]) -> str | None:
        """A protocol's own stop rule over the outputs so far (e.g. three identical outputs)."""
        return None


class Env(ABC):
    """A text environment. One instance plays one episode at a time; create one per episode."""

    name: ClassVar[str]
    dialects: ClassVar[tuple[str, ...]] = ()
    protocols: ClassVar[dict[str, type[Protocol]]] = {}

    @abstractmethod
    def tasks(
        self, split: str, n: int, seed: int, task_types: Sequence[str] | None = None
    ) -> Iterator[EnvTask]:
        """Deterministic: the same (split, n, seed, task_types) yields the same tasks."""

    @abstractmethod
    def reset(self, task: EnvTask) -> tuple[str, dict[str, Any]]:
        """Start an episode; returns the first observation and info."""

    @abstractmethod
    def step(self, action: str) -> StepResult:
        """Apply one action; never raises on any action string."""

    def expert_action(self) -> str | None:
        """A good next action from the current state, or None where the env has no oracle."""
        return None

    def admissible_actions(self) -> list[str] | None:
        """Every command the env accepts now, or None where the env cannot enumerate them."""
        return None

    def failure_action(self, mode: str, rng: random.Random) -> str | None:
        """An action from the current state that shows failure ``mode`` (a ``FailureMode`` value).

        Used by the scripted teacher to simulate bad behaviour the env understands (an
        implausible search location, a hallucinated object, a premature finish). None where
        the env cannot produce one from this state.
        """
        return None

    def progress(self) -> float | None:
        """Fraction of the task done, in [0, 1], where the env can tell."""
        return None
