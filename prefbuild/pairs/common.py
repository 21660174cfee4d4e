"""Shared building blocks of the built-in pair strategies.

Why one module: every strategy must produce pairs the same way (stable ids derived from
content and source, validation through the records model, counted reasons for every
candidate that did not become a pair), and the pipeline must be able to feed several
strategies from one pass over a trajectory file (``PairStrategy.feed``/``finish``).
"""

from __future__ import annotations

import hashlib
import json
import math
import pickle
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache, partial
from operator import attrgetter
from typing import Any, ClassVar

from pydantic import TypeAdapter, ValidationError

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
    Step,
    Trajectory,
    as_message,
    assistant_turn,
    failure_modes,
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
    return "pair-" + digest(strategy, content, source_json(source))


def source_json(source: PairSource) -> str:
    """``canonical_json(source.model_dump())``, written out for a ``PairSource`` whose values are
    plain (str, int or None, as validation leaves them); any other goes through ``canonical_json``.

    Example:
        >>> source_json(PairSource(trajectory_id="t", task_id="k", env="e", teacher_model="m"))
        '{"chosen_trajectory_id":null,"env":"e","step":null,"task_id":"k","task_type":null,"teacher_model":"m","trajectory_id":"t"}'
    """
    chosen, env, step, task_id, task_type, teacher, trajectory_id = _SOURCE_VALUES(source)
    if not (
        _SOURCE_WRITTEN_OUT and type(source) is PairSource
        and type(env) is str and type(task_id) is str and type(teacher) is str and type(trajectory_id) is str
        and (chosen is None or type(chosen) is str) and (task_type is None or type(task_type) is str)
        and (step is None or type(step) is int)
    ):
        return canonical_json(source.model_dump())
    return (
        f'{{"chosen_trajectory_id":{"null" if chosen is None else _encode_string(chosen)},'
        f'"env":{_encode_string(env)},"step":{"null" if step is None else int.__repr__(step)},'
        f'"task_id":{_encode_string(task_id)},"task_type":{"null" if task_type is None else _encode_string(task_type)},'
        f'"teacher_model":{_encode_string(teacher)},"trajectory_id":{_encode_string(trajectory_id)}}}'
    )


_SOURCE_KEYS = ("chosen_trajectory_id", "env", "step", "task_id", "task_type", "teacher_model", "trajectory_id")
_SOURCE_VALUES = attrgetter(*_SOURCE_KEYS)
_SOURCE_WRITTEN_OUT = tuple(sorted(PairSource.model_fields)) == _SOURCE_KEYS  # a new field: canonical_json


# One prompt turn before it is built: its message_json, its role, and the Message itself or how to build it.
_Turn = tuple[str, Any, "Message | None", "Callable[[], Message] | None"]


class TrajectoryPrompts:
    """``prompt_messages`` of several steps of one trajectory, each earlier turn done once.

    The prompts of one episode's pairs repeat its history; here each history turn is
    serialised once, in order, and shared by every prompt that shows it (the system prompt
    and few-shot turns, the same in every episode of a run, once per run). ``window`` gives a
    prompt's JSON (for the pair's hash and id) and builds its ``Message`` records only when
    asked: the pipeline builds them only for the pairs it keeps. Each prompt is the same list
    of messages (by value) as ``prompt_messages(trajectory, step_index)``.

    Example:
        >>> # TrajectoryPrompts(trajectory).at(3) == prompt_messages(trajectory, 3)
    """

    def __init__(self, trajectory: Trajectory) -> None:
        self.trajectory = trajectory
        self._prefix = _prefix_of(trajectory.messages)
        self._turns: list[_Turn] = []  # the history turns of the steps added so far, in order
        self._jsons: list[str] = []  # their message_json
        self._odd: list[int] = []  # positions of turns a Pair would refuse (tool calls off an assistant turn)
        self._ends: list[int] = [0]  # _ends[i]: len(_turns) once the turns of steps[:i] are in

    def at(self, step_index: int) -> list[Message]:
        """The messages the model saw before acting at ``step_index`` (as ``prompt_messages``)."""
        return self.window(step_index).messages()

    def with_json(self, step_index: int) -> tuple[list[Message], str]:
        """``at(step_index)`` and its ``turns_json`` (``make_pair``'s ``prompt_json``)."""
        view = self.window(step_index)
        return view.messages(), view.json

    def window(self, step_index: int) -> PromptView:
        """The prompt at ``step_index`` as its JSON, its messages built when ``PromptView.messages`` asks.

        Raises:
            IndexError: the trajectory has no such step (as ``prompt_messages``).
        """
        steps = self.trajectory.steps
        if not 0 <= step_index < len(steps) or steps[step_index].facts.history_start > step_index:
            return PromptView.of_messages(prompt_messages(self.trajectory, step_index))  # its IndexError, or empty
        self._add_steps_before(step_index)
        start, end = self._ends[steps[step_index].facts.history_start], self._ends[step_index]
        last = _observation_turns(steps[step_index], in_history=False)
        prefix = self._prefix
        parts = [prefix.json] if prefix.json else []
        if end > start:
            parts.append(",".join(self._jsons[start:end]))
        parts.extend(turn[0] for turn in last)
        last_role = last[-1][1] if last else self._turns[end - 1][1] if end > start else prefix.last_role
        plain = prefix.plain and not (self._odd and any(start <= position < end for position in self._odd))
        for _, _, message, _ in last:
            plain = plain and (message is None or _plainly_valid_turn(message))
        return PromptView(",".join(parts), last_role, plain, partial(self._messages, start, end, last))

    def _add_steps_before(self, step_index: int) -> None:
        """Add the history turns (observation, then assistant turn) of every step before ``step_index``."""
        steps, ends, turns, jsons = self.trajectory.steps, self._ends, self._turns, self._jsons
        while len(ends) <= step_index:
            step = steps[len(ends) - 1]
            added = _observation_turns(step, in_history=True)
            added.append(_assistant_turn(step))
            for turn in added:
                if turn[2] is not None and not _plainly_valid_turn(turn[2]):
                    self._odd.append(len(turns))
                turns.append(turn)
                jsons.append(turn[0])
            ends.append(len(turns))

    def _messages(self, start: int, end: int, last: list[_Turn]) -> list[Message]:
        """The prompt's messages: the prefix, history turns ``start:end`` (built once, then shared), ``last``."""
        turns = self._turns
        history: list[Message] = []
        for position in range(start, end):
            text, role, message, maker = turns[position]
            if message is None:
                assert maker is not None
                message = maker()
                turns[position] = (text, role, message, None)
            history.append(message)
        return [*self._prefix.messages, *history, *(_built(turn) for turn in last)]


def _built(turn: _Turn) -> Message:
    """The ``Message`` of a turn (built now if it was not)."""
    message, maker = turn[2], turn[3]
    if message is not None:
        return message
    assert maker is not None
    return maker()


@dataclass(frozen=True, slots=True)
class _Prefix:
    """A trajectory's fixed prompt prefix (system prompt, few-shot turns), serialised and built."""

    json: str  # turns_json of the messages
    messages: tuple[Message, ...]
    last_role: Any  # None: no message
    plain: bool  # no message carries tool calls off an assistant turn


def _prefix_of(values: Sequence[Any]) -> _Prefix:
    """The ``_Prefix`` of ``Trajectory.messages`` (records or structs), made once per distinct prefix:
    every episode of a run starts with the same system prompt and few-shot turns."""
    key = tuple(map(_PREFIX_KEY, values))
    try:
        prefix = _PREFIXES.get(key)
    except TypeError:  # handled: tool calls (a list) in the key: made for this trajectory alone
        return _make_prefix(values)
    if prefix is None:
        if len(_PREFIXES) >= _PREFIXES_LIMIT:
            _PREFIXES.clear()
        prefix = _PREFIXES[key] = _make_prefix(values)
    return prefix


def _make_prefix(values: Sequence[Any]) -> _Prefix:
    turns = [_value_turn(value) for value in values]
    messages = tuple(_built(turn) for turn in turns)
    return _Prefix(
        json=",".join(turn[0] for turn in turns),
        messages=messages,
        last_role=messages[-1].role if messages else None,
        plain=all(_plainly_valid_turn(message) for message in messages),
    )


# Prefixes of plain turns by their fields (_PREFIX_KEY; tool_calls None); a few per run.
_PREFIX_KEY = attrgetter("role", "content", "name", "tool_call_id", "tool_calls")
_PREFIXES: dict[tuple[tuple[Any, ...], ...], _Prefix] = {}
_PREFIXES_LIMIT = 64


def _value_turn(value: Any) -> _Turn:
    """A trajectory's message (a record or its struct) as a turn; a plain one is built on demand."""
    if isinstance(value, Message):
        return message_json(value), value.role, value, None
    if value.tool_calls is None:
        text = _plain_message_json(value.role, value.content, value.name, value.tool_call_id)
        return text, value.role, None, partial(as_message, value)
    message = as_message(value)
    return message_json(message), message.role, message, None


def _observation_turns(step: Step, *, in_history: bool) -> list[_Turn]:
    """``observation_turns(step, in_history=...)`` as turns, each built on demand."""
    if step.observation_messages is not None:
        return [_value_turn(message) for message in step.observation_messages]
    shown = step.observation if not in_history or step.observation_in_history is None else step.observation_in_history
    role = _ROLES.get(step.observation_role) or Role(step.observation_role)
    return [(_plain_message_json(role, shown, None, None), role, None, partial(_observation_message, role, shown))]


_ROLES: dict[str, Role] = {role.value: role for role in Role}


def _observation_message(role: Role, content: str) -> Message:
    """The one observation turn ``observation_turns`` builds."""
    return Message(role=role, content=content)


def _assistant_turn(step: Step) -> _Turn:
    """``assistant_turn(step)`` as a turn; one without structured tool calls is built on demand."""
    if step.native_tool_calls and step.tool_calls:
        message = assistant_turn(step)
        return message_json(message), _ASSISTANT, message, None
    return _plain_message_json(_ASSISTANT, step.raw_output, None, None), _ASSISTANT, None, partial(assistant_turn, step)


def _plainly_valid_turn(message: Message) -> bool:
    """What ``Message``'s own validator checks, for a message a ``Pair`` would take as it is."""
    return not (message.tool_calls and message.role is not _ASSISTANT)


@dataclass(frozen=True, slots=True)
class PromptView:
    """A pair's prompt as ``TrajectoryPrompts.window`` gives it: what its hash and its checks need,
    and ``messages()`` to build the records.

    ``json`` is ``turns_json`` of the messages; ``last_role`` the role of the last one (None: no
    message); ``plain`` says no message carries tool calls on a non-assistant turn.
    """

    json: str
    last_role: Any
    plain: bool
    build: Callable[[], list[Message]]

    def messages(self) -> list[Message]:
        """The prompt's messages (a new list; the history ``Message`` objects are shared)."""
        return self.build()

    @classmethod
    def of_messages(cls, messages: list[Message]) -> PromptView:
        """The view of messages built already."""
        return cls(
            turns_json(messages),
            messages[-1].role if messages else None,
            all(_plainly_valid_turn(message) for message in messages),
            partial(list, messages),
        )


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
    pair = _validated_pair(
        id=_pair_id(strategy, content, source), strategy=strategy, prompt=prompt, chosen=chosen, rejected=rejected,
        reason=reason, evidence=evidence, source=source, scores=scores, tools=tools,
    )
    _VALIDATED[id(pair)] = (pair, content)
    return pair


def _validated_pair(**fields: Any) -> Pair:
    """``Pair(**fields)``; a refusal is an ``InvalidPair`` naming the field and the error."""
    try:
        return Pair(**fields)
    except ValidationError as error:
        source = fields["source"]
        raise InvalidPair(why_invalid(error), f"{source.trajectory_id} step {source.step}") from None


class PairDraft:
    """A pair a built-in strategy made, checked but not yet built as a ``Pair`` record.

    The pipeline reads what it decides on (``id``, ``content``, ``strategy``, ``reason``,
    ``source``) and calls ``pair()`` only for the pairs it keeps: most candidates of a run with
    ``max_per_reason`` are sampled out, and building their records (prompt messages included)
    would be wasted. ``draft_pair`` makes a draft only of a candidate that ``Pair`` accepts, so
    ``pair()`` validates it (once) and never refuses it. A bottom-k sample spools a kept draft
    as the JSON of its turns (``spooled``) and validates the record when it reads it back
    (``restore``).
    """

    __slots__ = ("_fields", "_jsons", "_pair", "_prompt", "content", "id", "reason", "source", "strategy")

    def __init__(self, content: str, prompt: PromptView, fields: dict[str, Any], jsons: tuple[str, str, str]) -> None:
        self.id: str = fields["id"]
        self.content = content  # content_hash: the exact-dedup key
        self.strategy: str = fields["strategy"]
        self.reason: str | None = fields["reason"]
        self.source: PairSource = fields["source"]
        self._prompt = prompt
        self._fields = fields
        self._jsons = jsons  # turns_json of chosen and rejected, source_json of source
        self._pair: Pair | None = None

    def pair(self) -> Pair:
        """The validated ``Pair`` (built on the first call), exactly what ``make_pair`` returns."""
        if self._pair is None:
            self._pair = Pair(prompt=self._prompt.messages(), **self._fields)
        return self._pair

    def spooled(self) -> bytes | None:
        """The draft as bytes ``restore`` reads back as its ``Pair``; None once the record is built
        (spool the record then). The turns and the source travel as the JSON the hash was made of."""
        if self._pair is not None:
            return None
        fields = self._fields
        chosen, rejected, source = self._jsons
        plain = tuple(fields[name] for name in ("id", "strategy", "reason", "evidence", "scores", "tools"))
        return pickle.dumps((plain, self._prompt.json, chosen, rejected, source), protocol=pickle.HIGHEST_PROTOCOL)

    @staticmethod
    def restore(data: bytes) -> Pair:
        """The ``Pair`` of ``spooled`` bytes, validated: equal to the draft's ``pair()``."""
        (pair_id, strategy, reason, evidence, scores, tools), prompt, chosen, rejected, source = pickle.loads(data)
        return Pair(
            id=pair_id, strategy=strategy, reason=reason, evidence=evidence, scores=scores, tools=tools,
            prompt=_TURNS.validate_json(f"[{prompt}]"), chosen=_TURNS.validate_json(f"[{chosen}]"),
            rejected=_TURNS.validate_json(f"[{rejected}]"), source=PairSource.model_validate_json(source),
        )


_TURNS: TypeAdapter[list[Message]] = TypeAdapter(list[Message])


def as_pair(candidate: Pair | PairDraft) -> Pair:
    """The ``Pair`` of a pair or a draft."""
    return candidate.pair() if isinstance(candidate, PairDraft) else candidate


def draft_pair(
    strategy: str,
    *,
    prompt: PromptView,
    chosen: list[Message],
    rejected: list[Message],
    source: PairSource,
    reason: FailureMode | str | None,
    evidence: str | None = None,
    scores: dict[str, float] | None = None,
    tools: list[dict[str, Any]] | None = None,
) -> PairDraft:
    """``make_pair`` for a prompt from ``TrajectoryPrompts.window``, as a ``PairDraft``.

    The same id, hash and refusals (``InvalidPair``, with the same why) as ``make_pair``; a
    candidate that ``plainly_valid`` cannot vouch for is validated at once, as there.
    """
    chosen_json, rejected_json = turns_json(chosen), turns_json(rejected)
    if chosen_json == rejected_json:
        raise InvalidPair("pair: chosen and rejected are identical", f"{source.trajectory_id} step {source.step}")
    content = _content_digest(prompt.json, chosen_json, rejected_json)
    origin = source_json(source)
    fields: dict[str, Any] = {
        "id": "pair-" + digest(strategy, content, origin), "strategy": strategy, "chosen": chosen,
        "rejected": rejected, "reason": reason, "evidence": evidence, "source": source, "scores": scores,
        "tools": tools,
    }
    draft = PairDraft(content, prompt, fields, (chosen_json, rejected_json, origin))
    if not plainly_valid(prompt, fields):
        draft._pair = _validated_pair(prompt=prompt.messages(), **fields)
    return draft


def plainly_valid(prompt: PromptView, fields: dict[str, Any]) -> bool:
    """Whether ``Pair`` surely accepts these fields (``draft_pair``'s), unchanged, without building it.

    True only for plain values a ``Pair`` takes as they are (records of the exact model, str,
    finite float, built-in failure modes), checked with ``Pair``'s own invariants; False means
    "ask pydantic", never "refused". ``tests/pairs/test_fast_paths.py`` holds it to ``Pair``.
    """
    strategy, pair_id, reason, evidence = fields["strategy"], fields["id"], fields["reason"], fields["evidence"]
    chosen, rejected = fields["chosen"], fields["rejected"]
    return (
        type(strategy) is str and strategy != "" and type(pair_id) is str and pair_id != ""
        and (reason is None or (type(reason) is str and reason in _BUILTIN_MODE_NAMES))
        and (evidence is None or type(evidence) is str)
        and type(fields["source"]) is PairSource
        and prompt.plain and prompt.last_role in _PROMPT_END_ROLES
        and _plain_turns(chosen) and _plain_turns(rejected) and _differ(chosen, rejected)
        and _plain_scores(fields["scores"]) and _plain_tools(fields["tools"])
    )


_BUILTIN_MODE_NAMES = frozenset(mode.value for mode in FailureMode)
_PROMPT_END_ROLES = (Role.user, Role.tool)
_ASSISTANT, _SYSTEM = Role.assistant, Role.system


def _plain_turns(turns: object) -> bool:
    """A chosen or rejected list ``Pair`` accepts: ``Message`` records, assistant turns at both
    ends, no system turn (``Pair._invariants``), no tool calls off an assistant turn."""
    if type(turns) is not list or not turns:
        return False
    for turn in turns:
        if type(turn) is not Message or turn.role is _SYSTEM or (turn.tool_calls and turn.role is not _ASSISTANT):
            return False
    return turns[0].role is _ASSISTANT and turns[-1].role is _ASSISTANT


def _differ(chosen: list[Message], rejected: list[Message]) -> bool:
    """``Pair``'s "chosen and rejected are not identical" (their ``model_dump``), from the texts
    where they tell (a str field dumps as itself)."""
    if len(chosen) != len(rejected):
        return True
    for left, right in zip(chosen, rejected, strict=True):
        if type(left.content) is str and type(right.content) is str and left.content != right.content:
            return True
    return [message.model_dump() for message in chosen] != [message.model_dump() for message in rejected]


def _plain_scores(scores: object) -> bool:
    """Scores ``Pair`` takes with equal values: None, or finite floats by str keys."""
    if scores is None:
        return True
    if type(scores) is not dict:
        return False
    for key, value in scores.items():
        if type(key) is not str or type(value) is not float or not math.isfinite(value):
            return False
    return True


def _plain_tools(tools: object) -> bool:
    """Tool definitions ``Pair`` takes with equal values: None, or a list of dicts with str keys."""
    if tools is None:
        return True
    return type(tools) is list and all(
        type(tool) is dict and all(type(key) is str for key in tool) for tool in tools
    )


class Drafting(PairStrategy):
    """A built-in strategy that makes ``PairDraft`` objects; ``feed`` gives their ``Pair`` records.

    The pipeline calls ``drafts`` directly (for prefbuild's own classes) and builds the records
    of the pairs it keeps; anyone else gets validated pairs from ``feed``, as from any strategy.
    """

    def drafts(self, trajectory: Trajectory) -> Iterator[PairDraft]:
        """The drafts of ``trajectory``'s pairs (``feed``, before the records are built)."""
        raise NotImplementedError(f"strategy {type(self).__name__} must implement drafts()")

    def feed(self, trajectory: Trajectory) -> Iterator[Pair]:
        for draft in self.drafts(trajectory):
            yield draft.pair()


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
