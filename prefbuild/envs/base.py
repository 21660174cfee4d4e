"""The environment plug-in contract, in the spirit of Gymnasium's ``Env``.

An env owns its tasks, its state machine, an optional oracle (``expert_action``) and its
prompt protocols. Text in, text out: the rollout engine never needs to know which env it
drives. Third-party envs register through the ``prefbuild.envs`` entry point.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from prefbuild.records import Message, StepFacts, TaskInfo, ToolCall


@dataclass(frozen=True)
class EnvTask:
    """One task an env can reset to. ``payload`` is env-private (a scene, a table...)."""

    info: TaskInfo
    payload: Any = None


@dataclass(frozen=True)
class StepResult:
    """What ``Env.step`` returns: the Gymnasium 4-tuple plus typed facts.

    ``valid`` says whether the env accepted the action (None: it cannot tell); ``facts`` carry
    what labelers rely on (won, executed SQL, tool calls, progress). ``info`` is for display
    extras only: nothing downstream reads it for decisions.
    """

    observation: str
    reward: float
    done: bool
    info: dict[str, Any] = field(default_factory=dict)
    facts: StepFacts | None = None
    valid: bool | None = None
    # Gymnasium's ``truncated``: the env cut the episode at a limit of its own (BFCL's per-turn step
    # limit), not the agent; the episode then stops with ``max_steps``.
    truncated: bool = False
    # Tool envs answer with messages: one ``tool`` message per call (with ``tool_call_id``),
    # optionally followed by a ``user`` turn (tau2's simulated user). ``observation`` then holds
    # their text joined for display; None means the reply is the single turn ``observation``.
    messages: list[Message] | None = None

    @property
    def won(self) -> bool:
        return bool(self.facts is not None and self.facts.won)


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
    """How an env talks to a model: system prompt, few-shot turns, observation turns, parser.

    The rollout engine drives an episode like this::

        prefix = protocol.prefix_messages(task)                       # stored in Trajectory.messages
        turn = protocol.observation_turn(obs, first=True, task=task, admissible=env.admissible_actions())
        ... model answers text ...
        parsed = protocol.parse(text)
        if parsed.action is None: reply = protocol.unparsed_reply(parsed)  # None: the episode stops
        else: env.step(protocol.executed_action(parsed.action, env.admissible_actions()))
        turn = protocol.observation_turn(result.observation, first=False, ...)
        old turns are shown as protocol.history_turn(turn) in later prompts
    """

    name: ClassVar[str]
    # Role of observation turns: "user", or "tool" for tool-calling protocols.
    observation_role: ClassVar[str] = "user"
    # Tool-calling protocols show the task itself as a user turn (chat templates reject a
    # tool turn straight after the system prompt) and answer a turn without a tool call as
    # the user, not as a tool result. None means ``observation_role``.
    first_observation_role: ClassVar[str | None] = None
    unparsed_reply_role: ClassVar[str | None] = None

    def turn_role(self, *, first: bool = False, unparsed_reply: bool = False) -> str:
        """The role of an observation turn: the task turn, an env reply, or a reply to a turn without action."""
        if first and self.first_observation_role:
            return self.first_observation_role
        if unparsed_reply and self.unparsed_reply_role:
            return self.unparsed_reply_role
        return self.observation_role

    @abstractmethod
    def prefix_messages(self, task: EnvTask) -> list[Message]:
        """System prompt and few-shot turns: the fixed prefix stored in ``Trajectory.messages``."""

    @abstractmethod
    def observation_turn(
        self, observation: str, *, first: bool, task: EnvTask, admissible: Sequence[str] | None = None
    ) -> str:
        """The exact turn text that shows ``observation`` (and, where the protocol lists them, the
        admissible commands) to the model."""

    def history_turn(self, turn: str) -> str:
        """How an observation turn reads once it is no longer the newest (AgentBench cuts old
        turns at ``AVAILABLE ACTIONS``). Default: unchanged."""
        return turn

    @abstractmethod
    def parse(self, text: str) -> ParsedOutput:
        """Read one model turn; never raises on any string."""

    def executed_action(self, action: str, admissible: Sequence[str] | None) -> str:
        """The command the benchmark harness would actually send to the env for ``action``
        (AgentBench snaps near misses to an admissible command by BLEU). Default: unchanged."""
        return action

    def unparsed_reply(self, parsed: ParsedOutput) -> str | None:
        """The reply to a turn with no action (ETO answers ``Observation: Error Input...``), or
        None when the benchmark ends the episode there (AgentBench)."""
        return None

    def parse_completion(self, text: str, tool_calls: Sequence[ToolCall] = ()) -> ParsedOutput:
        """Read one model turn that may carry the server's structured ``tool_calls`` (vLLM's
        ``--tool-call-parser``). Default: the calls are written back as Hermes text after
        ``text`` and parsed, so a protocol gets the same action either way. Tool protocols
        override it to keep the server's call ids."""
        if not tool_calls:
            return self.parse(text)
        from prefbuild.tooluse.hermes import render_tool_turn

        return self.parse(render_tool_turn(list(tool_calls), content=text or None))

    @abstractmethod
    def render(self, action: str, thought: str | None = None) -> str:
        """Write an assistant turn that performs ``action`` (chosen turns, scripted teacher)."""

    def final_turn(self, answer: str | None = None) -> str | None:
        """An assistant turn that declares the task finished (``ACTION: Task succeeded.``,
        ``Final Answer: ...``), or None where the protocol has none. Parsing it gives final=True."""
        return None

    def tools(self) -> list[dict[str, Any]] | None:
        """OpenAI ``tools`` definitions for tool-calling protocols; None for text protocols."""
        return None

    def stop_reason(self, outputs: Sequence[str]) -> str | None:
        """A protocol's own stop rule over the raw outputs so far (e.g. three identical outputs)."""
        return None


class Env(ABC):
    """A text environment. One instance plays one episode at a time; create one per episode.

    Example:
        >>> from prefbuild.envs import make_env
        >>> env = make_env("household")
        >>> task = next(env.tasks("train", 1, seed=0))
        >>> observation, info = env.reset(task)
        >>> result = env.step(env.expert_action())
        >>> result.valid, result.done
        (True, False)
    """

    name: ClassVar[str]
    dialects: ClassVar[tuple[str, ...]] = ()
    protocols: ClassVar[dict[str, type[Protocol]]] = {}
    default_split: ClassVar[str] = "train"  # the split ``prefbuild envs play`` draws from unless told
    # True for an in-memory state machine whose ``step`` takes microseconds and never blocks:
    # the rollout then calls it directly instead of handing it to a worker thread (the hop
    # costs more than such a step). Envs that run SQL, code or I/O keep False.
    fast_step: ClassVar[bool] = False

    @abstractmethod
    def tasks(
        self, split: str, n: int, seed: int, task_types: Sequence[str] | None = None
    ) -> Iterator[EnvTask]:
        """The first ``n`` tasks of ``split``, generated lazily.

        Args:
            split: a task split (``train``, ``test``, an env-specific one).
            n: how many tasks.
            seed: the recipe seed; the same arguments always yield the same tasks.
            task_types: only these task types, where the env has several.

        Returns:
            An iterator of ``EnvTask``; build each task only when it is asked for.
        """

    @abstractmethod
    def reset(self, task: EnvTask) -> tuple[str, dict[str, Any]]:
        """Start an episode on ``task``.

        Args:
            task: one of this env's tasks.

        Returns:
            The first observation and a dict of display extras.
        """

    @abstractmethod
    def step(self, action: str) -> StepResult:
        """Apply one action; never raises on any action string.

        Args:
            action: the command (the protocol's parsed action, as the harness executes it).

        Returns:
            A ``StepResult``: the reply, reward, done, validity and typed ``StepFacts``.
        """

    def expert_action(self) -> str | None:
        """A good next action from the current state, or None where the env has no oracle."""
        return None

    def searcher_action(self) -> str | None:
        """The next action of an expert that knows only what the episode has seen, or None where
        the env has none. The oracle (``expert_action``) may walk straight to what is hidden; this
        one searches, so a policy can imitate it. Recorded on every step (``Step.searcher_action``)
        so that pair strategies need not replay the episode to ask it."""
        return None

    def admissible_actions(self) -> list[str] | None:
        """Every command the env accepts now, or None where the env cannot enumerate them."""
        return None

    def progress(self) -> float | None:
        """Fraction of the task done, in [0, 1], where the env can tell."""
        return None
