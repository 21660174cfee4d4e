"""Shared building blocks of the built-in pair strategies.

Why one module: every strategy must produce pairs the same way (stable ids derived from
content and source, validation through the records model, counted reasons for every
candidate that did not become a pair), and the pipeline must be able to feed several
strategies from one pass over a trajectory file (``PairStrategy.feed``/``finish``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

from pydantic import ValidationError

from prefbuild.envs import Protocol, cached_protocol
from prefbuild.errors import describe_validation_error
from prefbuild.pairs.base import InvalidPair, PairStrategy
from prefbuild.pairs.teacher_bridge import TeacherRunner
from prefbuild.records import FailureMode, Label, Message, Pair, PairSource, Role, Trajectory, failure_modes
from prefbuild.teachers.base import Sampling

# Labels about the text of a turn, not about the action it performed.
STYLE_MODES: frozenset[FailureMode] = frozenset({FailureMode.verbose_filler, FailureMode.overlong})


def mode_names(strategy: str, value: object) -> frozenset[str]:
    """The ``modes`` parameter of a strategy as registered failure-mode names (plug-in modes too).

    Raises:
        ValueError: a name no labeler registers, naming the strategy and the known names.
    """
    if isinstance(value, str) or not isinstance(value, list | tuple | set | frozenset):
        raise ValueError(f"strategy {strategy!r}: modes must be a list of failure-mode names")
    known = failure_modes()
    unknown = sorted(str(name) for name in value if str(name) not in known)
    if unknown:
        raise ValueError(f"strategy {strategy!r}: unknown failure mode(s) {', '.join(unknown)}; "
                         f"registered: {', '.join(sorted(known))}")
    return frozenset(str(name) for name in value)


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
    tools: list[dict[str, Any]] | None = None,
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
            tools=tools,
        )
    except ValidationError as error:
        raise InvalidPair(why_invalid(error), f"{source.trajectory_id} step {source.step}") from None


def why_invalid(error: ValidationError) -> str:
    """A countable reason: the field path and pydantic's message (``pair: chosen and rejected are identical``)."""
    location, message = describe_validation_error(error, count_more=False)
    return f"{'pair' if location == '<record>' else location}: {message}"


def primary_label(labels: Iterable[Label], *, exclude: frozenset[FailureMode] = frozenset()) -> Label | None:
    """The label that names a step's failure: highest confidence; ties go to the built-in mode
    listed first, then to plug-in modes by name."""
    order = {mode.value: position for position, mode in enumerate(FailureMode)}
    candidates = [label for label in labels if label.mode not in exclude]
    if not candidates:
        return None
    return min(candidates, key=lambda label: (-label.confidence, order.get(label.mode, len(order)), label.mode))


def trajectory_protocol(trajectory: Trajectory) -> Protocol:
    return cached_protocol(trajectory.env.name, trajectory.env.protocol, trajectory.env.dialect)


def same_action(left: str | None, right: str | None) -> bool:
    """Actions compare after trimming whitespace (the env trims them too)."""
    return left is not None and right is not None and left.strip() == right.strip()


class TeacherWriting(PairStrategy):
    """A strategy whose chosen turn a teacher may write (``stepwise`` with ``chosen: teacher``,
    ``style`` with ``rewrite: teacher``, ``best_of_n``).

    The teacher comes in the ``teacher`` parameter; it runs on a private event loop of a
    ``TeacherRunner`` that ``close()`` stops.
    """

    # Parameters every teacher-writing strategy takes, besides its own.
    TEACHER_PARAMS: ClassVar[tuple[str, ...]] = ("teacher", "max_attempts", "sampling", "max_thought_chars", "seed")
    runner: TeacherRunner | None = None

    def setup_teacher_writing(self, *, needed: bool, what: str) -> None:
        """Read the teacher-writing settings (``what`` names the option that asks for a teacher)."""
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
        if self.runner is not None:
            self.runner.close()
