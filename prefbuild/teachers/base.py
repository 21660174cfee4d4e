"""The teacher plug-in contract: an async model that completes chat message lists.

A request is one message list plus sampling parameters; the answer is ``n`` completions
with token counts and latency. Backends: ``openai`` (any OpenAI-compatible server),
``vllm`` (prefbuild launches ``vllm serve``), ``transformers`` (embedded CPU model),
``scripted`` (a deterministic noisy expert: a simulation, for tests and demos).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from prefbuild.envs.base import Env, Protocol
from prefbuild.errors import PrefbuildError
from prefbuild.records import Message, ToolCall


@dataclass(frozen=True)
class Sampling:
    """Sampling parameters; ``extra_body`` passes vLLM extensions through unchanged."""

    temperature: float = 0.7
    top_p: float = 1.0
    max_tokens: int = 256
    n: int = 1
    stop: tuple[str, ...] = ()
    seed: int | None = None
    extra_body: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Completion:
    text: str
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    # Tool calls of this turn, from the server's native ``tool_calls`` or parsed from Hermes
    # ``<tool_call>`` text in ``text`` (which keeps the raw output either way).
    tool_calls: tuple[ToolCall, ...] = ()
    # True when ``tool_calls`` were read from Hermes text that is still inside ``text`` (the
    # transformers backend): the assistant turn in history is then ``text`` alone.
    calls_in_text: bool = False
    # A simulated teacher names the behaviour it played (``expert`` or a failure mode); it is
    # recorded as ``StepFacts.simulated``, ground truth for measuring labelers. None for models.
    simulated: str | None = None


@dataclass(frozen=True)
class EnvView:
    """The live state of one episode, for teachers that act from the env rather than the prompt.

    Only teachers with ``reads_env_state = True`` receive it (an oracle, a human at a
    terminal, the scripted simulation); model backends see the messages alone. ``seed``,
    ``episode_id`` and ``step_index`` let such a teacher make reproducible choices.
    """

    env: Env
    protocol: Protocol
    step_index: int
    previous_outputs: Sequence[str] = ()
    seed: int = 0
    episode_id: str = ""


@dataclass(frozen=True)
class TeacherRequest:
    messages: Sequence[Message]
    sampling: Sampling
    tools: list[dict[str, Any]] | None = None
    # OpenAI ``tool_choice`` ("auto", "required", "none" or a named function); None: the server's default.
    tool_choice: str | dict[str, Any] | None = None
    # The episode's live state; set only for teachers that read it (``Teacher.reads_env_state``).
    env_view: EnvView | None = None


class TeacherError(PrefbuildError):
    """A teacher request failed for good (after retries), or the teacher cannot start; the
    message says why and where (the command line prints it as one ``error:`` line)."""


class ContextLimitError(TeacherError):
    """The server refused the request because the conversation no longer fits the model's context
    window (HTTP 400 "maximum context length"): the episode ends there, with ``context_limit``."""


class Teacher(ABC):
    """Async teacher. Use as ``async with teacher:`` so servers and clients are cleaned up.

    Example:
        >>> import asyncio
        >>> from prefbuild.teachers import make_teacher
        >>> teacher = make_teacher({"backend": "openai", "model": "m", "base_urls": ["http://127.0.0.1:8000/v1"]})
        >>> teacher.backend
        'openai'
    """

    backend: str = "abstract"
    model: str = ""
    # True for teachers that act from the env's state (``TeacherRequest.env_view``), not the prompt.
    reads_env_state: ClassVar[bool] = False
    # True where the outputs are not a model's (a simulation): recorded so cards and reports say so.
    simulated: ClassVar[bool] = False

    async def __aenter__(self) -> Teacher:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:  # noqa: B027 - optional hook
        """Acquire resources (start a server, load a model)."""

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources; must be safe to call twice."""

    @abstractmethod
    async def complete(self, request: TeacherRequest) -> list[Completion]:
        """Complete one chat request.

        Args:
            request: the messages, sampling (``n`` completions), tools and, for teachers that
                read env state, the episode's ``env_view``.

        Returns:
            ``request.sampling.n`` completions with token counts, latency and tool calls.

        Raises:
            TeacherError: the request failed for good (after the backend's retries).
        """
