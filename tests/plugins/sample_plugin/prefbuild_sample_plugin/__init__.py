"""A third-party prefbuild plug-in package, as a user would write one.

It registers, through entry points only, one member of four families plus its simulated
mistakes: an env (``lights``: switch on the lights of a row of rooms), a labeler with a
failure mode prefbuild does not know (``dark_room``), a pair strategy that groups
trajectories by task (``fewest_steps``) and an export format (``plain``).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from prefbuild.envs.base import Env, EnvTask, ParsedOutput, Protocol, StepResult
from prefbuild.exports.base import ExportFormat
from prefbuild.labelers.base import Labeler
from prefbuild.pairs.base import PairStrategy
from prefbuild.pairs.common import make_pair, source_for
from prefbuild.records import Label, Message, Pair, Role, StepFacts, TaskInfo, Trajectory


class LightsProtocol(Protocol):
    name: ClassVar[str] = "lights"

    def prefix_messages(self, task: EnvTask) -> list[Message]:
        return [Message(role=Role.system, content="Switch on every light. Answer 'ACTION: <command>'.")]

    def observation_turn(self, observation: str, *, first: bool, task: EnvTask,
                         admissible: Sequence[str] | None = None) -> str:
        return f"{observation} Commands: {', '.join(admissible or [])}"

    def parse(self, text: str) -> ParsedOutput:
        if not isinstance(text, str) or not text.startswith("ACTION: "):
            return ParsedOutput(None, None, False, problems=("no ACTION:",))
        return ParsedOutput(None, text.removeprefix("ACTION: ").strip(), True)

    def render(self, action: str, thought: str | None = None) -> str:
        return f"ACTION: {action}"


class LightsEnv(Env):
    name: ClassVar[str] = "lights"
    protocols: ClassVar[dict[str, type[Protocol]]] = {"lights": LightsProtocol}

    def __init__(self, rooms: int = 3) -> None:
        self.rooms = rooms
        self.position = 0
        self.lit: set[int] = set()

    def tasks(self, split: str, n: int, seed: int, task_types: Sequence[str] | None = None) -> Iterator[EnvTask]:
        for index in range(n):
            yield EnvTask(TaskInfo(id=f"lights/{split}/{index}", type="lights", goal="light every room",
                                   split=split, seed=seed), payload=index)

    def reset(self, task: EnvTask) -> tuple[str, dict[str, Any]]:
        self.position, self.lit = 0, set()
        return "You are in room 0. It is dark.", {}

    def admissible_actions(self) -> list[str]:
        return ["switch on", "go right", "wait"]

    def expert_action(self) -> str | None:
        if len(self.lit) == self.rooms:
            return None
        return "switch on" if self.position not in self.lit else "go right"

    def step(self, action: str) -> StepResult:
        if action == "switch on":
            self.lit.add(self.position)
        elif action == "go right" and self.position < self.rooms - 1:
            self.position += 1
        elif action != "wait":
            return StepResult("Nothing happens.", 0.0, False, facts=StepFacts(won=False), valid=False)
        won = len(self.lit) == self.rooms
        state = "lit" if self.position in self.lit else "dark"
        return StepResult(f"You are in room {self.position}. It is {state}.", float(won), won,
                          facts=StepFacts(won=won), valid=True)


def lights_mistakes(env: LightsEnv, mode: str, rng: random.Random) -> str | None:
    """The scripted teacher's mistakes in the lights env: waiting in a dark room."""
    return "wait" if mode == "invalid_action" else None


class DarkRoomLabeler(Labeler):
    """Labels waiting in a room whose light is off (a failure mode only this plug-in knows)."""

    name: ClassVar[str] = "dark_room"
    mode: ClassVar[str] = "dark_room"
    envs: ClassVar[tuple[str, ...]] = ("lights",)

    def label(self, trajectory: Trajectory) -> list[Label]:
        return [
            self.make_label(step, 0.9, "waited in a dark room")
            for step in trajectory.steps
            if step.action == "wait" and "It is dark" in step.observation
        ]


class FewestStepsStrategy(PairStrategy):
    """Per task, the shortest successful episode against the longest one: groups trajectories by task."""

    name: ClassVar[str] = "fewest_steps"

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.by_task: dict[str, list[Trajectory]] = {}

    def feed(self, trajectory: Trajectory) -> Iterator[Pair]:
        self.by_task.setdefault(trajectory.task.id, []).append(trajectory)
        return iter(())

    def finish(self) -> Iterator[Pair]:
        for group in self.by_task.values():
            ranked = sorted(group, key=lambda t: (not t.outcome.success, len(t.steps), t.id))
            best, worst = ranked[0], ranked[-1]
            if best is worst or len(best.steps) == len(worst.steps):
                continue
            prompt = [*best.messages, Message(role=Role.user, content=best.steps[0].observation)]
            yield from self.emit(lambda best=best, worst=worst, prompt=prompt: make_pair(
                self.name,
                prompt=prompt,
                chosen=[Message(role=Role.assistant, content=best.steps[0].raw_output)],
                rejected=[Message(role=Role.assistant, content=f"{worst.steps[0].raw_output} (then "
                                  f"{len(worst.steps) - 1} more steps)")],
                source=source_for(worst, 0, chosen_trajectory_id=best.id),
                reason="dark_room" if any(label.mode == "dark_room" for label in worst.labels) else None,
            ))


class PlainFormat(ExportFormat):
    name = "plain"
    consumes = "pairs"

    def row(self, record: Pair) -> dict[str, Any]:
        return {"strategy": record.strategy, "chosen": record.chosen[-1].content,
                "rejected": record.rejected[-1].content, "reason": record.reason}
