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
from functools import lru_cache
from typing import Any, ClassVar

from pydantic import ValidationError

from prefbuild.envs import Protocol, cached_protocol
from prefbuild.errors import describe_validation_error
from prefbuild.pairs.base import InvalidPair, PairStrategy
from prefbuild.pairs.teacher_bridge import TeacherRunner
from prefbuild.records import (
    FailureMode,
    Label,
    Message,
    Pair,
    PairSource,
    Role,
    Trajectory,
    as_message,
    assistant_turn,
    failure_modes,
    observation_turns,
    prompt_messages,
)
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


def message_json(message: Message) -> str:
    """``canonical_json`` of one message's ``messages_payload`` entry, cached for plain turns.

    The prompts of one episode's pairs share their system prompt, few-shot turns and
    history, so each turn is serialised once instead of once per pair.

    Example:
        >>> message_json(Message(role=Role.user, content="hi"))
        '{"content":"hi","role":"user"}'
    """
    if message.tool_calls is None:
        return _plain_message_json(message.role, message.content, message.name, message.tool_call_id)
    return canonical_json(message.model_dump(mode="json", exclude_none=True))


@lru_cache(maxsize=4096)
def _plain_message_json(role: str, content: str, name: str | None, tool_call_id: str | None) -> str:
    """``canonical_json`` of the message payload, written out: its keys in sorted order, each
    string encoded by the function ``json.dumps(..., ensure_ascii=False)`` itself uses."""
    text = '{"content":' + _encode_string(content)
    if name is not None:
        text += ',"name":' + _encode_string(name)
    text += ',"role":' + _encode_string(str(role))
    if tool_call_id is not None:
        text += ',"tool_call_id":' + _encode_string(tool_call_id)
    return text + "}"


_encode_string = json.encoder.encode_basestring  # what canonical_json applies to every str (ensure_ascii=False)


def content_hash(
    prompt: Sequence[Message],
    chosen: Sequence[Message],
    rejected: Sequence[Message],
    *,
    prompt_json: str | None = None,
) -> str:
    """Hash of what a trainer sees; two pairs with the same hash are exact duplicates.

    It is the digest of ``canonical_json({"prompt": messages_payload(prompt), "chosen": ...,
    "rejected": ...})``, assembled from the cached JSON of each turn. ``prompt_json``, when
    the caller has it, is ``turns_json(prompt)`` (``TrajectoryPrompts.with_json`` gives it).
    """
    if prompt_json is None:
        prompt_json = turns_json(prompt)
    return _content_digest(prompt_json, turns_json(chosen), turns_json(rejected))


def _content_digest(prompt_json: str, chosen_json: str, rejected_json: str) -> str:
    """``content_hash`` from the ``turns_json`` of the prompt, the chosen and the rejected turns."""
    return digest(f'{{"chosen":[{chosen_json}],"prompt":[{prompt_json}],"rejected":[{rejected_json}]}}')


def turns_json(messages: Iterable[Message]) -> str:
    """The ``message_json`` of each message, joined by commas (a JSON array's inside)."""
    return ",".join(map(message_json, messages))


def pair_id(
    strategy: str, prompt: Sequence[Message], chosen: Sequence[Message], rejected: Sequence[Message], source: PairSource
) -> str:
    """Stable id from content and source: re-running a recipe gives the same ids in any order."""
    return _pair_id(strategy, content_hash(prompt, chosen, rejected), source)


def _pair_id(strategy: str, content: str, source: PairSource) -> str:
    return "pair-" + digest(strategy, content, canonical_json(source.model_dump()))


class TrajectoryPrompts:
    """``prompt_messages`` of several steps of one trajectory, each earlier turn built once.

    The prompts of one episode's pairs repeat its history; here the history turns are made
    once, in order, and shared by every prompt that shows them: each prompt is the same list
    of messages (by value) as ``prompt_messages(trajectory, step_index)``.

    Example:
        >>> # TrajectoryPrompts(trajectory).at(3) == prompt_messages(trajectory, 3)
    """

    def __init__(self, trajectory: Trajectory) -> None:
        self.trajectory = trajectory
        self._turns: list[Message] = [as_message(message) for message in trajectory.messages]
        self._jsons: list[str] = [message_json(message) for message in self._turns]  # message_json of each turn
        self._ends: list[int] = [len(self._turns)]  # _ends[i]: len(_turns) once the turns of steps[:i] are in

    def at(self, step_index: int) -> list[Message]:
        """The messages the model saw before acting at ``step_index`` (as ``prompt_messages``)."""
        return self.with_json(step_index)[0]

    def with_json(self, step_index: int) -> tuple[list[Message], str]:
        """``at(step_index)`` and its ``turns_json`` (``make_pair``'s ``prompt_json``)."""
        steps = self.trajectory.steps
        if not 0 <= step_index < len(steps) or steps[step_index].facts.history_start > step_index:
            messages = prompt_messages(self.trajectory, step_index)  # its IndexError, or an empty window
            return messages, turns_json(messages)
        turns, jsons, ends = self._turns, self._jsons, self._ends
        while len(ends) <= step_index:
            step = steps[len(ends) - 1]
            added = [*observation_turns(step, in_history=True), assistant_turn(step)]
            turns.extend(added)
            jsons.extend(map(message_json, added))
            ends.append(len(turns))
        first, start, end = ends[0], ends[steps[step_index].facts.history_start], ends[step_index]
        last = observation_turns(steps[step_index])
        messages = [*turns[:first], *turns[start:end], *last]
        return messages, ",".join([*jsons[:first], *jsons[start:end], *map(message_json, last)])


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
    prompt_json: str | None = None,
) -> Pair:
    """Build and validate one pair; ``InvalidPair`` says in a few words why it cannot exist.

    ``prompt_json``: ``turns_json(prompt)`` when the caller has it (``TrajectoryPrompts.with_json``).
    """
    chosen_json, rejected_json = turns_json(chosen), turns_json(rejected)
    if chosen_json == rejected_json:
        raise InvalidPair("pair: chosen and rejected are identical", f"{source.trajectory_id} step {source.step}")
    if prompt_json is None:
        prompt_json = turns_json(prompt)
    content = _content_digest(prompt_json, chosen_json, rejected_json)
    try:
        pair = Pair(
            id=_pair_id(strategy, content, source),
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
    _VALIDATED[id(pair)] = (pair, content)
    return pair


# Pairs ``make_pair`` validated, by ``id()``, with their ``content_hash``, until the pipeline
# takes them (``validated_content_hash``); the strong reference keeps the id from being
# reused. Cleared when pairs built outside a pipeline pile up.
_VALIDATED: dict[int, tuple[Pair, str]] = {}
_VALIDATED_LIMIT = 10_000


def validated_content_hash(pair: Pair) -> str | None:
    """The ``content_hash`` of a pair ``make_pair`` built and validated, None for any other pair.

    Asked once per pair: the pipeline validates every other pair (plug-in strategies may
    build them with ``model_construct``) and hashes it itself.

    Example:
        >>> validated_content_hash(Pair.model_construct()) is None
        True
    """
    if len(_VALIDATED) > _VALIDATED_LIMIT:
        _VALIDATED.clear()
    entry = _VALIDATED.pop(id(pair), None)
    return entry[1] if entry is not None and entry[0] is pair else None


def forget_validated(pair: Pair) -> None:
    """Drop what ``make_pair`` recorded of ``pair``: ``validated_content_hash`` then gives None and
    the pipeline validates and hashes the pair as it is now."""
    entry = _VALIDATED.get(id(pair))
    if entry is not None and entry[0] is pair:
        del _VALIDATED[id(pair)]


def why_invalid(error: ValidationError) -> str:
    """A countable reason: the field path and pydantic's message (``pair: chosen and rejected are identical``)."""
    location, message = describe_validation_error(error, count_more=False)
    return f"{'pair' if location == '<record>' else location}: {message}"


def primary_label(labels: Iterable[Label], *, exclude: frozenset[FailureMode] = frozenset()) -> Label | None:
    """The label that names a step's failure: highest confidence; ties go to the built-in mode
    listed first, then to plug-in modes by name."""
    candidates = [label for label in labels if label.mode not in exclude]
    if not candidates:
        return None
    if len(candidates) == 1:
        return candidates[0]
    last = len(_MODE_ORDER)
    return min(candidates, key=lambda label: (-label.confidence, _MODE_ORDER.get(label.mode, last), label.mode))


_MODE_ORDER: dict[str, int] = {mode.value: position for position, mode in enumerate(FailureMode)}


def trajectory_protocol(trajectory: Trajectory) -> Protocol:
    return cached_protocol(trajectory.env.name, trajectory.env.protocol, trajectory.env.dialect)


def action_key(action: str) -> str:
    """What an action does: trimmed text, or for tool-action JSON (``encode_action``) the calls
    without their ids (``call_0`` and ``expert_1`` calling the same function are the same action)."""
    text = action.strip()
    if not text.startswith("{"):
        return text
    try:
        payload = json.loads(text)
    except (ValueError, RecursionError):  # handled: not JSON, compared as text
        return text
    if not isinstance(payload, dict) or not isinstance(payload.get("tool_calls"), list):
        return text
    calls = [{k: v for k, v in call.items() if k != "id"} if isinstance(call, dict) else call
             for call in payload["tool_calls"]]
    return canonical_json({**payload, "tool_calls": calls})


def same_action(left: str | None, right: str | None) -> bool:
    """Actions compare after trimming whitespace (the env trims them too); tool calls compare
    by name and arguments, not by their call ids."""
    return left is not None and right is not None and action_key(left) == action_key(right)


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
