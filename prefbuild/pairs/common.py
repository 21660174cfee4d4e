"""Shared building blocks of the built-in pair strategies.

Why one module: every strategy must produce pairs the same way (stable ids derived from
content and source, validation through the records model, counted reasons for every
candidate that did not become a pair), and the pipeline must be able to feed several
strategies from one pass over a trajectory file. ``IncrementalStrategy`` gives both.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from pydantic import ValidationError

from prefbuild.envs import Protocol, get_env, get_protocol
from prefbuild.pairs.base import PairStrategy
from prefbuild.pairs.teacher_bridge import TeacherRunner
from prefbuild.records import FailureMode, Label, Message, Pair, PairSource, Role, Trajectory
from prefbuild.teachers.base import Sampling

# Labels about the text of a turn, not about the action it performed.
STYLE_MODES: frozenset[FailureMode] = frozenset({FailureMode.verbose_filler, FailureMode.overlong})


class InvalidPair(ValueError):
    """A candidate pair the records model refuses; ``why`` is a short countable reason."""

    def __init__(self, why: str, detail: str = "") -> None:
        self.why = why
        self.detail = detail
        super().__init__(f"{why}: {detail}" if detail else why)


@dataclass
class StrategyStats:
    """What a strategy did with its input: pairs built, candidates dropped or invalid, and why."""

    built: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    invalid: Counter[str] = field(default_factory=Counter)

    def merge_into(self, other: StrategyStats) -> None:
        other.built += self.built
        other.dropped.update(self.dropped)
        other.invalid.update(self.invalid)


def canonical_json(value: Any) -> str:
    """Compact, key-sorted JSON: the same data always hashes the same."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def digest(*parts: str, size: int = 16) -> str:
    """A short, stable hex digest of ``parts`` (blake2b; independent of ``PYTHONHASHSEED``)."""
    hasher = hashlib.blake2b(digest_size=size)
    for part in parts:
        hasher.update(part.encode("utf-8"))
        hasher.update(b"\x1f")
    return hasher.hexdigest()


def messages_payload(messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [message.model_dump(mode="json", exclude_none=True) for message in messages]


def content_hash(prompt: Sequence[Message], chosen: Sequence[Message], rejected: Sequence[Message]) -> str:
    """Hash of what a trainer sees; two pairs with the same hash are exact duplicates."""
    payload = {
        "prompt": messages_payload(prompt),
        "chosen": messages_payload(chosen),
        "rejected": messages_payload(rejected),
    }
    return digest(canonical_json(payload))


def pair_id(
    strategy: str, prompt: Sequence[Message], chosen: Sequence[Message], rejected: Sequence[Message], source: PairSource
) -> str:
    """Stable id from content and source: re-running a recipe gives the same ids in any order."""
    return "pair-" + digest(strategy, content_hash(prompt, chosen, rejected), canonical_json(source.model_dump()))


def assistant(content: str) -> Message:
    return Message(role=Role.assistant, content=content)


def source_for(trajectory: Trajectory, step: int | None, *, chosen_trajectory_id: str | None = None) -> PairSource:
    return PairSource(
        trajectory_id=trajectory.id,
        step=step,
        task_id=trajectory.task.id,
        task_type=trajectory.task.type or None,
        env=trajectory.env.name,
        teacher_model=trajectory.teacher.model,
        chosen_trajectory_id=chosen_trajectory_id,
    )


def make_pair(
    strategy: str,
    *,
    prompt: list[Message],
    chosen: list[Message],
    rejected: list[Message],
    source: PairSource,
    reason: FailureMode | None,
    evidence: str | None = None,
    scores: dict[str, float] | None = None,
) -> Pair:
    """Build and validate one pair; ``InvalidPair`` says in a few words why it cannot exist."""
    if messages_payload(chosen) == messages_payload(rejected):
        raise InvalidPair("pair: chosen and rejected are identical", f"{source.trajectory_id} step {source.step}")
    try:
        return Pair(
            id=pair_id(strategy, prompt, chosen, rejected, source),
            strategy=strategy,
            prompt=prompt,
            chosen=chosen,
            rejected=rejected,
            reason=reason,
            evidence=evidence,
            source=source,
            scores=scores,
        )
    except ValidationError as error:
        raise InvalidPair(why_invalid(error), f"{source.trajectory_id} step {source.step}") from None


def why_invalid(error: ValidationError) -> str:
    """A countable reason: the field path and pydantic's message (``pair: chosen and rejected are identical``)."""
    first = error.errors()[0]
    location = ".".join(str(part) for part in first.get("loc", ())) or "pair"
    message = str(first.get("msg", "invalid")).removeprefix("Value error, ")
    return f"{location}: {message}"


def primary_label(labels: Iterable[Label], *, exclude: frozenset[FailureMode] = frozenset()) -> Label | None:
    """The label that names a step's failure: highest confidence, ties broken by enum order."""
    order = {mode: position for position, mode in enumerate(FailureMode)}
    candidates = [label for label in labels if label.mode not in exclude]
    if not candidates:
        return None
    return min(candidates, key=lambda label: (-label.confidence, order[label.mode]))


@lru_cache(maxsize=64)
def protocol_for(env_name: str, protocol_name: str, dialect: str | None = None) -> Protocol:
    """The protocol a trajectory was played with, so chosen turns are written and parsed the same way.

    The recorded dialect is passed where the protocol takes one, as the rollout does.
    """
    protocol_class = get_env(env_name).protocols.get(protocol_name)
    if dialect is not None and protocol_class is not None and "dialect" in inspect.signature(protocol_class).parameters:
        return get_protocol(env_name, protocol_name, dialect=dialect)
    return get_protocol(env_name, protocol_name)


def trajectory_protocol(trajectory: Trajectory) -> Protocol:
    return protocol_for(trajectory.env.name, trajectory.env.protocol, trajectory.env.dialect)


def same_action(left: str | None, right: str | None) -> bool:
    """Actions compare after trimming whitespace (the env trims them too)."""
    return left is not None and right is not None and left.strip() == right.strip()


class IncrementalStrategy(PairStrategy):
    """A strategy that can be fed one trajectory at a time.

    The pipeline runs several strategies over one pass of a trajectory file: it calls
    ``feed`` for every trajectory and ``finish`` once at the end. ``pairs`` (the plug-in
    contract) is the same thing over a whole iterable. Candidates that do not become a
    pair are counted in ``stats`` with a short reason, never silently lost.
    """

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.stats = StrategyStats()

    def feed(self, trajectory: Trajectory) -> Iterator[Pair]:
        raise NotImplementedError

    def finish(self) -> Iterator[Pair]:
        """Pairs held back until the input ends (strategies that group trajectories)."""
        return iter(())

    runner: TeacherRunner | None = None

    def setup_teacher_writing(self, *, needed: bool, what: str) -> None:
        """Settings of strategies whose chosen turn the teacher may write (``what`` names the option).

        The teacher itself comes in the ``teacher`` parameter; it is run on a private event
        loop by a ``TeacherRunner`` that ``close()`` stops.
        """
        self.max_attempts = int(self.param("max_attempts", 3))
        self.seed = int(self.param("seed", 0))
        self.max_thought_chars = int(self.param("max_thought_chars", 200))
        self.sampling = Sampling(**{"temperature": 0.7, "max_tokens": 128, **dict(self.param("sampling", {}))})
        self.runner = None
        if needed:
            teacher = self.param("teacher", None)
            if teacher is None:
                raise ValueError(f"strategy {self.name!r} with {what} needs a teacher")
            self.runner = TeacherRunner(teacher)

    def close(self) -> None:
        """Release resources (a teacher event loop); safe to call twice."""
        if self.runner is not None:
            self.runner.close()

    def pairs(self, trajectories: Iterable[Trajectory]) -> Iterator[Pair]:
        try:
            for trajectory in trajectories:
                yield from self.feed(trajectory)
            yield from self.finish()
        finally:
            self.close()

    def emit(self, build: Callable[[], Pair]) -> Iterator[Pair]:
        """Run a ``make_pair`` call, counting an ``InvalidPair`` instead of raising it."""
        try:
            pair = build()
        except InvalidPair as error:
            self.stats.invalid[error.why] += 1
            return
        self.stats.built += 1
        yield pair

    def param(self, name: str, default: Any) -> Any:
        return self.params.get(name, default)

    def check_params(self, known: Iterable[str]) -> None:
        """Unknown parameters are a user error (a typo must not be silently ignored)."""
        unknown = sorted(set(self.params) - set(known))
        if unknown:
            raise ValueError(
                f"strategy {self.name!r}: unknown parameter(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
            )
