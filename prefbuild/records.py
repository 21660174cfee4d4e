"""The records contract: every stage of prefbuild reads and writes these models.

Trajectories, labels, pairs and the run manifest are strict pydantic v2 models (unknown
fields are rejected) whose validators encode the invariants users rely on when they load
prefbuild output into a trainer: a pair's chosen and rejected differ, the prompt ends with
a user or tool turn, step indices are contiguous, labels point at existing steps.

JSON Schemas of these models are generated into ``schemas/`` by ``prefbuild schema``.
"""

from __future__ import annotations

import re
from enum import StrEnum
from functools import lru_cache
from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from prefbuild import __version__

SCHEMA_VERSION = "1.0"


class Record(BaseModel):
    """Base of every record: unknown fields are an error, not silently dropped.

    A float field refuses NaN and infinities (``NaN``, ``Infinity``, ``1e400``, ``"nan"``):
    JSON has no such numbers and pydantic would write them as ``null``, which the field then
    refuses on the next read.
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False)


class FailureMode(StrEnum):
    """The built-in failure modes (names and meaning are stable).

    Failure modes are *registered names*, not a closed set: a plug-in labeler adds a mode by
    declaring it as its ``mode`` (see ``failure_modes``). Records store plain strings.
    """

    loop = "loop"
    premature_success = "premature_success"
    implausible_location = "implausible_location"
    verbose_filler = "verbose_filler"
    format_violation = "format_violation"
    invalid_action = "invalid_action"
    sql_error = "sql_error"
    wrong_answer = "wrong_answer"
    overlong = "overlong"
    task_failure = "task_failure"
    phantom_object = "phantom_object"
    # tool use
    malformed_tool_call = "malformed_tool_call"
    unknown_tool = "unknown_tool"
    invalid_arguments = "invalid_arguments"
    tool_error = "tool_error"
    repeated_tool_call = "repeated_tool_call"
    no_tool_use = "no_tool_use"
    hallucinated_tool_output = "hallucinated_tool_output"


_MODE_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def failure_modes() -> set[str]:
    """Every registered failure mode: the built-ins plus the modes plug-in labelers declare.

    Returns:
        The set of names a ``Label.mode`` or ``Pair.reason`` may take.

    Example:
        >>> "loop" in failure_modes()
        True
    """
    from prefbuild import registry

    found = {mode.value for mode in FailureMode}
    for cls in registry.load_all("labelers").values():
        declared = getattr(cls, "mode", None)
        if isinstance(declared, str):
            found.add(str(declared))
    return found


def _registered_mode(name: str) -> str:
    if name in _BUILTIN_MODES:
        return name
    if not _MODE_NAME.match(name):
        raise ValueError(f"failure mode {name!r} must be a snake_case name")
    if name not in failure_modes():
        raise ValueError(f"unknown failure mode {name!r}; registered: {', '.join(sorted(failure_modes()))}")
    return name


_BUILTIN_MODES = frozenset(mode.value for mode in FailureMode)
FailureModeName = Annotated[
    str,
    AfterValidator(_registered_mode),
    Field(
        description="A registered failure mode: a built-in (" + ", ".join(sorted(_BUILTIN_MODES)) + ") or one a "
        "plug-in labeler declares.",
        examples=sorted(_BUILTIN_MODES),
    ),
]


class Role(StrEnum):
    system = "system"
    user = "user"
    assistant = "assistant"
    tool = "tool"


class StopReason(StrEnum):
    """Why an episode ended."""

    success = "success"  # the environment says the goal is met
    max_steps = "max_steps"  # a step limit was reached: the recipe's, or the env's own (BFCL's per-turn limit)
    agent_finished = "agent_finished"  # the agent ended the episode (answer, "task succeeded") without success
    protocol_stop = "protocol_stop"  # the protocol's own stop rule (e.g. three identical outputs)
    # the conversation outgrew the teacher's context window (AgentBench's "agent context limit"):
    # a failed episode, kept with every step played, not an error to play again
    context_limit = "context_limit"
    error = "error"  # the teacher or the env failed; ``Outcome.error`` says how


class FunctionCall(Record):
    name: str = Field(min_length=1)
    arguments: str = Field(description="JSON-encoded arguments, as OpenAI-compatible servers send them.")


class ToolCall(Record):
    id: str
    type: Literal["function"] = "function"
    function: FunctionCall


class Message(Record):
    """One chat turn in the OpenAI message layout that TRL and vLLM speak."""

    role: Role
    content: str
    name: str | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None

    @model_validator(mode="after")
    def _tool_calls_only_on_assistant(self) -> Message:
        if self.tool_calls and self.role is not Role.assistant:
            raise ValueError("tool_calls are only allowed on assistant messages")
        return self


class Usage(Record):
    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)


class UsageTotals(Record):
    requests: int = Field(default=0, ge=0)
    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)

    def add(self, usage: Usage | None) -> None:
        """Count one teacher request (``usage`` may be missing for failed requests)."""
        self.requests += 1
        if usage is not None:
            self.prompt_tokens += usage.prompt_tokens
            self.completion_tokens += usage.completion_tokens

    def include(self, other: UsageTotals) -> None:
        """Add another total (an episode's, a shard's, a run's) to this one."""
        self.requests += other.requests
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens


class Label(Record):
    """One piece of rejected behaviour found by a labeler, with evidence a human can check."""

    mode: FailureModeName
    step: int = Field(ge=0)
    confidence: float = Field(ge=0.0, le=1.0)
    evidence: str = Field(min_length=1)
    labeler: str = Field(min_length=1, description="Labeler name and version, e.g. 'loop@1'.")


class SqlFacts(Record):
    """What one turn of a SQL episode did, as the env saw it (or an importer could infer it)."""

    turn: Literal["operation", "answer", "invalid"] | None = Field(
        default=None, description="An SQL operation, the final answer, or a turn in neither form."
    )
    statement: str | None = Field(default=None, description="Kind of the executed statement (query, mutation, ...).")
    executed: str | None = Field(default=None, description="The SQL actually sent to the database.")
    error: str | None = Field(default=None, description="The database error text; None when it ran cleanly.")
    mutated: bool | None = Field(default=None, description="Did the statement change a table; None = unknown.")
    answer: str | None = Field(default=None, description="The final answer submitted at this turn, if any.")
    expected: list[str] | str | None = Field(
        default=None, description="What the grader expected: the label (queries) or the table hash (mutations)."
    )
    table_hash: str | None = Field(default=None, description="Hash of the final table, for mutation items.")
    answer_seen: bool | None = Field(
        default=None, description="Every value of the final answer appeared in some earlier reply; False = unseen."
    )


class ToolCallFacts(Record):
    """What one tool call of a step did: which tool, with what arguments, and how it went."""

    call_id: str | None = None
    name: str = Field(min_length=1)
    arguments: dict[str, Any] | None = Field(default=None, description="Parsed arguments; None when unparseable.")
    ok: bool = Field(description="The call ran and returned without an error.")
    error: str | None = Field(default=None, description="Why the call failed (unknown tool, bad arguments, raised).")
    hinted: bool = Field(default=False, description="The tool result carried an actionable hint from the env.")
    offered: bool | None = Field(
        default=None, description="The tool was offered to the model at this step; None when the env does not say "
        "(False for a BFCL held-out function called before its turn, which BFCL runs all the same)."
    )
    schema_error: str | None = Field(
        default=None, description="Where the arguments break the tool's JSON Schema, as the env checked them; None "
        "when they fit or the env did not check (envs that record the tools leave it to the labelers)."
    )
    changed_state: bool | None = Field(
        default=None, description="The call changed the env's state (BFCL: an attribute of its backend instance, "
        "the current directory included; tau2: a write tool that went through); None when the env does not say."
    )


class StepFacts(Record):
    """Typed facts about one step that labelers, pair strategies and stats rely on.

    Envs fill them through ``StepResult.facts``; importers fill what a log records and leave
    the rest ``None`` (unknown), which labelers must treat as unknown, not as False.

    Example:
        >>> StepFacts(won=False, executed_action="go to shelf 1").executed_action
        'go to shelf 1'
    """

    won: bool | None = Field(default=None, description="The env says the goal is met after this step.")
    executed_action: str | None = Field(
        default=None, description="The command the env actually ran when it differs from the parsed action "
        "(AgentBench snaps near misses to an admissible command)."
    )
    admissible: list[str] | None = Field(default=None, description="Commands the env accepted before this step.")
    final: bool = Field(default=False, description="The turn declared the episode finished (answer, 'succeeded').")
    problems: list[str] = Field(default_factory=list, description="What the parser found wrong with the output.")
    simulated: str | None = Field(
        default=None, description="The behaviour a simulated teacher played at this step (ground truth for "
        "labeler evaluation); None for real model output."
    )
    stop: str | None = Field(default=None, description="Why the episode stopped at this step, if it did.")
    finish_reason: str | None = Field(default=None, description="The teacher's finish reason ('stop', 'length').")
    progress: float | None = Field(default=None, ge=0.0, le=1.0, description="Fraction of the task done after it.")
    history_start: int = Field(default=0, ge=0, description="First earlier step visible in this step's prompt.")
    sql: SqlFacts | None = None
    tools: list[ToolCallFacts] = Field(default_factory=list)


class Step(Record):
    """One agent turn: what the model saw, what it wrote, what the env made of it."""

    index: int = Field(ge=0)
    observation: str = Field(description="Exact content of the user/tool turn shown to the model before it acted.")
    observation_role: Literal["user", "tool"] = "user"
    observation_in_history: str | None = Field(
        default=None,
        description="How this observation turn reads in later prompts, where the protocol shortens old turns "
        "(AgentBench cuts old user turns at 'AVAILABLE ACTIONS'); None means unchanged.",
    )
    observation_messages: list[Message] | None = Field(
        default=None,
        description="The turns shown before acting when the env answered with several messages (one tool "
        "result per call, a user turn); None means the single turn ``observation`` with ``observation_role``.",
    )
    raw_output: str = Field(description="The model's text exactly as generated; it is the assistant turn in history.")
    tool_calls: list[ToolCall] | None = Field(
        default=None,
        description="The turn's tool calls, from the server's structured ``tool_calls`` or parsed from Hermes "
        "text in ``raw_output``; None for a turn without calls.",
    )
    native_tool_calls: bool = Field(
        default=False,
        description="The calls came as the server's structured ``tool_calls``: the assistant turn in history is "
        "``raw_output`` plus ``tool_calls``. Otherwise the calls are text inside ``raw_output``.",
    )
    offered_tools: list[dict[str, Any]] | None = Field(
        default=None,
        description="The tool definitions of this step's request where they differ from the trajectory's "
        "``tools`` (the last request's): an env that reveals functions later (BFCL) grows the list.",
    )
    thought: str | None = None
    action: str | None = Field(default=None, description="Parsed action; None when the parser found none.")
    format_ok: bool = Field(default=True, description="The output followed the protocol exactly.")
    normalized: list[str] = Field(default_factory=list, description="What the parser had to normalise.")
    valid: bool | None = Field(default=None, description="Was the action admissible / accepted by the env.")
    expert_action: str | None = Field(default=None, description="The env oracle's action at this state.")
    searcher_action: str | None = Field(
        default=None,
        description="The action of the env's searching expert at this state: it knows only what the episode "
        "has seen (household). None where the env has none or the recording predates it.",
    )
    feedback: str = Field(default="", description="The env's reply to the action.")
    reward: float = 0.0
    done: bool = False
    usage: Usage | None = None
    latency_s: float | None = Field(default=None, ge=0.0)
    labels: list[Label] = Field(default_factory=list)
    facts: StepFacts = Field(default_factory=lambda: StepFacts(), description="Typed facts labelers rely on.")
    info: dict[str, Any] = Field(
        default_factory=dict, description="Env-specific extras for display only; labelers read ``facts``."
    )

    @model_validator(mode="after")
    def _labels_point_here(self) -> Step:
        for label in self.labels:
            if label.step != self.index:
                raise ValueError(f"label {label.mode} points at step {label.step} but is stored on step {self.index}")
        return self


EXTERNAL_SPLIT = "external"  # the split of tasks imported from other harnesses' logs (they cannot be regenerated)


class TaskInfo(Record):
    id: str = Field(min_length=1)
    type: str
    goal: str
    split: str
    seed: int | None = None
    meta: dict[str, Any] = Field(default_factory=dict)


class EnvInfo(Record):
    name: str
    dialect: str | None = None
    protocol: str
    options: dict[str, Any] = Field(
        default_factory=dict, description="The env options the episode ran with (secrets masked), for replay."
    )


class TeacherInfo(Record):
    backend: str
    model: str
    sampling: dict[str, Any] = Field(default_factory=dict)


class Outcome(Record):
    success: bool
    reward: float = 0.0
    progress: float | None = Field(default=None, ge=0.0, le=1.0)
    stop_reason: StopReason
    error: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Outcome:
        if self.success and self.stop_reason is not StopReason.success:
            raise ValueError(f"a successful outcome must have stop_reason 'success', not {self.stop_reason!r}")
        if self.stop_reason is StopReason.success and not self.success:
            raise ValueError("stop_reason 'success' requires success = true")
        if self.stop_reason is StopReason.error and not self.error:
            raise ValueError("stop_reason 'error' requires the error text")
        return self


class Trajectory(Record):
    """One episode of an agent in an environment, step by step."""

    schema_version: Literal["1.0"] = SCHEMA_VERSION
    id: str = Field(min_length=1)
    task: TaskInfo
    env: EnvInfo
    teacher: TeacherInfo
    sample_index: int = Field(default=0, ge=0)
    messages: list[Message] = Field(
        default_factory=list,
        description="The fixed prompt prefix: system prompt and few-shot turns. Step observations follow it.",
    )
    tools: list[dict[str, Any]] | None = Field(
        default=None,
        description="The OpenAI tool definitions sent with the requests (the last, grown list where the env "
        "revealed functions later); None where the model got no tools in the request.",
    )
    steps: list[Step] = Field(default_factory=list)
    outcome: Outcome
    usage: UsageTotals = Field(default_factory=UsageTotals)
    prefbuild_version: str = __version__

    @model_validator(mode="after")
    def _invariants(self) -> Trajectory:
        for position, step in enumerate(self.steps):
            if step.index != position:
                raise ValueError(f"step indices must be contiguous from 0: position {position} has index {step.index}")
        if self.outcome.success and (not self.steps or not self.steps[-1].done):
            raise ValueError("a successful outcome needs a final step with done = true")
        return self

    @property
    def labels(self) -> list[Label]:
        return [label for step in self.steps for label in step.labels]


PairSplit = Literal["train", "test"]


class PairSource(Record):
    trajectory_id: str
    step: int | None = Field(default=None, ge=0)
    task_id: str
    task_type: str | None = None
    env: str
    teacher_model: str
    chosen_trajectory_id: str | None = None


class Pair(Record):
    """One preference example: the same prompt, a chosen and a rejected continuation."""

    schema_version: Literal["1.0"] = SCHEMA_VERSION
    id: str = Field(min_length=1)
    strategy: str = Field(min_length=1)
    prompt: list[Message] = Field(min_length=1)
    chosen: list[Message] = Field(min_length=1)
    rejected: list[Message] = Field(min_length=1)
    reason: FailureModeName | None = None
    evidence: str | None = None
    source: PairSource
    scores: dict[str, float] | None = None
    tools: list[dict[str, Any]] | None = Field(
        default=None, description="The OpenAI tool definitions offered in the source episode (tool envs)."
    )
    split: PairSplit = "train"

    @model_validator(mode="after")
    def _invariants(self) -> Pair:
        if self.prompt[-1].role not in (Role.user, Role.tool):
            raise ValueError(f"the prompt must end with a user or tool turn, not {self.prompt[-1].role.value!r}")
        for field in ("chosen", "rejected"):
            turns: list[Message] = getattr(self, field)
            if turns[0].role is not Role.assistant or turns[-1].role is not Role.assistant:
                raise ValueError(f"{field} must start and end with an assistant turn")
            if any(turn.role is Role.system for turn in turns):
                raise ValueError(f"{field} must not contain a system turn")
        if [m.model_dump() for m in self.chosen] == [m.model_dump() for m in self.rejected]:
            raise ValueError("chosen and rejected are identical")
        return self


class Manifest(Record):
    """What a run directory holds and how it was made; rewritten atomically after each stage."""

    schema_version: Literal["1.0"] = SCHEMA_VERSION
    recipe_name: str
    recipe_hash: str
    prefbuild_version: str = __version__
    created_at: str
    updated_at: str
    shard: str | None = None
    versions: dict[str, str] = Field(default_factory=dict)
    counts: dict[str, int] = Field(default_factory=dict)
    timings: dict[str, float] = Field(default_factory=dict)
    usage: UsageTotals = Field(default_factory=UsageTotals)
    stages: list[str] = Field(default_factory=list)


RECORD_MODELS: dict[str, type[Record]] = {
    "message": Message,
    "label": Label,
    "step": Step,
    "trajectory": Trajectory,
    "pair": Pair,
    "manifest": Manifest,
}


RecordT = TypeVar("RecordT", bound=Record)


def as_record(value: Any, model: type[RecordT]) -> RecordT:
    """``value`` as a ``model`` record: itself when it is one, else validated from its attributes.

    The pair stage may read trajectories as their msgspec structs (``prefbuild.io.fast_records``,
    the same fields and values); where a part of one goes into a record (a message into a
    ``Pair``), this makes the record, nested parts included, as reading the JSON would.

    Args:
        value: a record, or an object with the model's fields as attributes.
        model: the record model.

    Returns:
        ``value`` itself, or a new validated record.

    Example:
        >>> turn = Message(role=Role.user, content="hi")
        >>> as_record(turn, Message) is turn
        True
    """
    return value if isinstance(value, model) else model.model_validate(value, from_attributes=True)


def as_message(value: Any) -> Message:
    """``as_record(value, Message)``, with the plain turns of structs made once per text.

    A struct trajectory's system prompt and few-shot turns are the same text in every episode
    of a run; each distinct plain turn (no name, no tool calls) becomes one ``Message``, shared
    by the pairs that show it (the pair stage writes them, never edits them).

    Example:
        >>> as_message(Message(role=Role.user, content="hi")).content
        'hi'
    """
    if isinstance(value, Message):
        return value
    if value.tool_calls is None and value.name is None and value.tool_call_id is None:
        role = value.role
        return _plain_message(role if type(role) is Role else Role(role), value.content)
    return as_record(value, Message)


@lru_cache(maxsize=4096)
def _plain_message(role: Role, content: str) -> Message:
    return Message(role=role, content=content)


def assistant_turn(step: Step) -> Message:
    """The assistant turn of ``step`` exactly as later prompts show it.

    Args:
        step: A recorded step.

    Returns:
        ``raw_output`` as the content, with the structured ``tool_calls`` when the server sent
        them (Hermes calls written as text stay inside the content).

    Example:
        >>> assistant_turn(Step(index=0, observation="hi", raw_output="hello")).content
        'hello'
    """
    calls = structured_calls(step) or None
    return Message(role=Role.assistant, content=step.raw_output, tool_calls=calls)


def structured_calls(step: Step) -> list[ToolCall]:
    """The server's structured tool calls of ``step`` (empty when its calls are Hermes text)."""
    if not step.native_tool_calls or not step.tool_calls:
        return []
    return [as_record(call, ToolCall) for call in step.tool_calls]


def observation_turns(step: Step, *, in_history: bool = False) -> list[Message]:
    """The turns shown to the model before it acted at ``step``.

    Args:
        step: A recorded step.
        in_history: Give the form later prompts show (``observation_in_history``).

    Returns:
        ``observation_messages`` when the env answered with several messages, else the one turn.
    """
    if step.observation_messages is not None:
        return [as_message(message) for message in step.observation_messages]
    shown = step.observation if not in_history or step.observation_in_history is None else step.observation_in_history
    return [Message(role=Role(step.observation_role), content=shown)]


def tools_at(trajectory: Trajectory, step_index: int) -> list[dict[str, Any]] | None:
    """The tool definitions the model was offered at ``step_index``.

    ``Trajectory.tools`` is the list of the last request; an env that grows it (BFCL reveals
    held-out functions) leaves the earlier steps' lists in ``Step.offered_tools``, so a pair at an
    earlier step never shows a function revealed after its decision point.

    Example:
        >>> tools_at(trajectory, 0)  # doctest: +SKIP
        [{'type': 'function', 'function': {'name': 'cd', ...}}]
    """
    offered = trajectory.steps[step_index].offered_tools
    return offered if offered is not None else trajectory.tools


def prompt_messages(trajectory: Trajectory, step_index: int) -> list[Message]:
    """Exactly the messages the model saw before acting at ``step_index``.

    The prefix (system prompt, few-shot turns) is followed by the observation turns and the
    assistant turn of each earlier step, then the observation turns of ``step_index``.
    Protocols that truncate history record the visible window in ``Step.facts.history_start``.

    Args:
        trajectory: a recorded episode.
        step_index: the step whose prompt to rebuild.

    Returns:
        The message list, byte for byte what the teacher received.

    Example:
        >>> # prompt_messages(trajectory, 3)[-1].content == trajectory.steps[3].observation
    """
    if not 0 <= step_index < len(trajectory.steps):
        raise IndexError(f"trajectory {trajectory.id} has no step {step_index}")
    start = trajectory.steps[step_index].facts.history_start
    messages = [as_message(message) for message in trajectory.messages]
    for step in trajectory.steps[start:step_index]:
        messages.extend(observation_turns(step, in_history=True))
        messages.append(assistant_turn(step))
    messages.extend(observation_turns(trajectory.steps[step_index]))
    return messages
