"""A tiny counting env and a programmable teacher: real implementations of the two contracts,
small enough that every rollout-engine rule can be checked exactly."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar

from prefbuild.envs.base import Env, EnvTask, ParsedOutput, Protocol, StepResult
from prefbuild.records import Message, StepFacts, TaskInfo
from prefbuild.teachers.base import Completion, Teacher, TeacherError, TeacherRequest


class CountProtocol(Protocol):
    name = "count"

    def prefix_messages(self, task: EnvTask) -> list[Message]:
        return [Message(role="system", content=f"Reach {task.payload}. Answer 'ACTION: inc' or 'ACTION: done'.")]

    def observation_turn(self, observation: str, *, first: bool, task: EnvTask,
                         admissible: Sequence[str] | None = None) -> str:
        return f"{observation} AVAILABLE ACTIONS: {', '.join(admissible or [])}"

    def history_turn(self, turn: str) -> str:
        return turn.split(" AVAILABLE ACTIONS:")[0]

    def parse(self, text: str) -> ParsedOutput:
        if "ACTION:" not in text:
            return ParsedOutput(None, None, False, problems=("no action",))
        action = text.split("ACTION:", 1)[1].strip().splitlines()[0] if text.split("ACTION:", 1)[1].strip() else ""
        return ParsedOutput(None, action, True, final=action == "done")

    def render(self, action: str, thought: str | None = None) -> str:
        return f"ACTION: {action}"

    def stop_reason(self, outputs: Sequence[str]) -> str | None:
        if len(outputs) > 3 and len(set(outputs[-3:])) == 1 and outputs[-1] == "ACTION: wait":
            return "three identical outputs"
        return None


class CountEnv(Env):
    name = "count"
    protocols: ClassVar[dict[str, type[Protocol]]] = {"count": CountProtocol}

    def __init__(self, **options: Any) -> None:
        self.value = 0
        self.target = 0

    def tasks(self, split: str, n: int, seed: int, task_types: Sequence[str] | None = None) -> Iterator[EnvTask]:
        for index in range(n):
            target = 2 + (seed + index) % 3
            yield EnvTask(TaskInfo(id=f"count/{split}/{index}", type="count", goal=f"reach {target}", split=split,
                                   seed=seed), payload=target)

    def reset(self, task: EnvTask) -> tuple[str, dict[str, Any]]:
        self.value, self.target = 0, task.payload
        return "value 0", {}

    def step(self, action: str) -> StepResult:
        if action == "inc":
            self.value += 1
            won = self.value == self.target
            return StepResult(f"value {self.value}", 1.0 if won else 0.0, won, facts=StepFacts(won=won), valid=True)
        return StepResult("Nothing happens.", 0.0, False, facts=StepFacts(won=False), valid=False)

    def expert_action(self) -> str | None:
        return "inc" if self.value < self.target else None

    def admissible_actions(self) -> list[str]:
        return ["done", "inc"]

    def progress(self) -> float:
        return self.value / self.target


class ProgrammedTeacher(Teacher):
    """Answers with ``policy(messages, call_number)``; records every request it got."""

    backend = "programmed"

    def __init__(self, policy: Callable[[list[Message], int], str], model: str = "toy") -> None:
        self.policy = policy
        self.model = model
        self.requests: list[list[Message]] = []

    async def complete(self, request: TeacherRequest) -> list[Completion]:
        self.requests.append(list(request.messages))
        await asyncio.sleep(0)
        text = self.policy(list(request.messages), len(self.requests))
        if text == "<fail>":
            raise TeacherError("all endpoints down: http://127.0.0.1:9/v1 (connection refused)")
        return [Completion(text=text, finish_reason="stop", prompt_tokens=len(request.messages),
                           completion_tokens=len(text.split()), latency_s=0.0)]
