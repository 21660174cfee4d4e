"""Calling an async teacher from the synchronous, streaming pair strategies.

Strategies are plain iterators (the plug-in contract), teachers are async. A
``TeacherRunner`` owns one private event loop in a background thread: the teacher is
started on that loop at first use and closed there at the end, so clients bound to a loop
(httpx, a vLLM server handle) never cross loops, and the strategies work the same whether
the caller is inside ``asyncio.run`` or not.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from prefbuild.envs.base import Protocol
from prefbuild.records import Message, Trajectory, prompt_messages
from prefbuild.teachers.base import Completion, EnvView, Sampling, Teacher, TeacherError, TeacherRequest

T = TypeVar("T")


class TeacherRunner:
    """Runs ``teacher.complete`` requests on a private event loop; use ``close()`` when done."""

    def __init__(self, teacher: Teacher, *, start: bool = True) -> None:
        self.teacher = teacher
        self._start = start
        self._started = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="prefbuild-teacher-loop", daemon=True)
            thread.start()
            self._loop, self._thread = loop, thread
        return self._loop

    def _run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self._ensure_loop()).result()

    def complete_many(self, requests: Sequence[TeacherRequest]) -> list[list[Completion] | TeacherError]:
        """Send ``requests`` concurrently; each answer is the completions or the ``TeacherError``."""
        if not requests:
            return []

        async def gather() -> list[list[Completion] | TeacherError]:
            if self._start and not self._started:
                await self.teacher.start()
                self._started = True
            results = await asyncio.gather(*(self.teacher.complete(r) for r in requests), return_exceptions=True)
            answers: list[list[Completion] | TeacherError] = []
            for result in results:
                if isinstance(result, TeacherError):
                    answers.append(result)
                elif isinstance(result, BaseException):
                    raise result
                else:
                    answers.append(result)
            return answers

        return self._run(gather())

    def close(self) -> None:
        """Close the teacher (if this runner started it) and stop the loop; safe to call twice."""
        if self._loop is None:
            return
        if self._started:
            self._run(self.teacher.close())
            self._started = False
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._loop.close()
        self._loop = None
        self._thread = None


_SENTENCE_END = re.compile(r"[.!?](?:\s+|$)")

THOUGHT_INSTRUCTION = (
    "\n\n(For this turn the correct next action is exactly: {action}\n"
    "Reply in the usual format: one short sentence of reasoning, then exactly that action.)"
)


def one_sentence(thought: str, max_chars: int) -> bool:
    """True for a single sentence of at most ``max_chars`` characters."""
    text = thought.strip()
    if not text or len(text) > max_chars or "\n" in text:
        return False
    return len(_SENTENCE_END.findall(text)) <= 1


def env_view(
    teacher: Teacher, trajectory: Trajectory, step_index: int, *, protocol: Protocol, seed: int, attempt: int = 0
) -> EnvView | None:
    """``TeacherRequest.env_view`` for a request at ``step_index`` of a recorded episode.

    Model backends read only the messages (None). A teacher that acts from the env's state
    (``reads_env_state``) gets the env replayed to that step; ``attempt`` changes the seed, so
    a retry can give another answer.
    """
    if not teacher.reads_env_state:
        return None
    from prefbuild.pairs.replay import replay

    return EnvView(
        env=replay(trajectory, step_index),
        protocol=protocol,
        step_index=step_index,
        previous_outputs=tuple(step.raw_output for step in trajectory.steps[:step_index]),
        seed=seed * 1_000_003 + attempt,
        episode_id=trajectory.id,
    )


@dataclass(frozen=True)
class ThoughtJob:
    """Ask for a one-sentence thought that ends in ``action`` at ``step_index`` of ``trajectory``."""

    trajectory: Trajectory
    step_index: int
    action: str


def teacher_thought_turns(
    runner: TeacherRunner,
    protocol: Protocol,
    jobs: Sequence[ThoughtJob],
    *,
    sampling: Sampling,
    max_attempts: int,
    max_thought_chars: int,
    seed: int = 0,
) -> list[str | None]:
    """Assistant turns ``protocol.render(action, thought)`` with a teacher-written thought, or None.

    The teacher sees the prompt with a hint naming the action. A reply counts only when its
    parsed action is exactly the given action and its thought is one short sentence;
    otherwise it is asked again (another seed), up to ``max_attempts`` times.
    """
    turns: list[str | None] = [None] * len(jobs)
    pending = list(range(len(jobs)))
    for attempt in range(max_attempts):
        if not pending:
            break
        requests = []
        for position in pending:
            job = jobs[position]
            messages = prompt_messages(job.trajectory, job.step_index)
            last = messages[-1]
            hinted = Message(role=last.role, content=last.content + THOUGHT_INSTRUCTION.format(action=job.action))
            request_seed = None if sampling.seed is None else sampling.seed + attempt
            requests.append(
                TeacherRequest(
                    messages=[*messages[:-1], hinted],
                    sampling=replace(sampling, n=1, seed=request_seed),
                    env_view=env_view(
                        runner.teacher, job.trajectory, job.step_index, protocol=protocol, seed=seed, attempt=attempt
                    ),
                )
            )
        still: list[int] = []
        for position, answer in zip(pending, runner.complete_many(requests), strict=True):
            if isinstance(answer, Exception) or not answer:
                still.append(position)
                continue
            parsed = protocol.parse(answer[0].text)
            thought = (parsed.thought or "").strip()
            action = jobs[position].action
            if (
                parsed.action is not None
                and parsed.action.strip() == action.strip()
                and one_sentence(thought, max_thought_chars)
            ):
                turns[position] = protocol.render(action, thought=thought)
            else:
                still.append(position)
        pending = still
    return turns
