"""Tool-calling chat logs (OpenAI ``messages`` with ``tool_calls``, Hermes / Qwen3 ``<tool_call>``
text, LLaMA-Factory ShareGPT ``function_call`` / ``observation`` turns) as tool trajectories.

One record a conversation::

    {"messages": [system, user, {"role": "assistant", "content": null, "tool_calls": [...]},
                  {"role": "tool", "tool_call_id": ..., "content": ...}, assistant, ...],
     "tools": [{"type": "function", "function": {...}}, ...],        # optional
     "id": ..., "success": true | "reward": 1.0, "model": ..., "env": "tau2" | "bfcl" | "code"}

or ShareGPT ``{"conversations": [{"from": "human" | "gpt" | "function_call" | "observation", "value"}],
"system": ..., "tools": "<JSON text>"}``. The steps are built as prefbuild's own tool envs record
them (``tool_steps``): one step per assistant turn, the tool results or the user turn after it
as the next step's observation, one ``ToolCallFacts`` per call with ``ok`` / ``error`` read from
its result (``chat_turns.call_failure``) and ``offered`` from the tool list where the log has one.

Tools: a ``tools`` list (or LLaMA-Factory's JSON text of one) went with the requests and becomes
``Trajectory.tools``, so exports carry it and ``invalid_arguments`` checks the arguments against
its schemas. Tools that only stand in the system prompt (a Hermes ``<tools>`` block) stay there, as
prefbuild's BFCL env records them: ``Trajectory.tools`` is None (an export would otherwise show them
twice) and each call's ``offered`` and ``schema_error`` are read from the block here. Without either,
nothing is known of which tools exist: ``unknown_tool`` then relies on the results' error texts.

The env: the record's ``env`` where it names a tool env (``tau2``, ``bfcl``, ``code``), else
``tau2``. Labelers and pair strategies key on the env name: ``tau2``'s protocol reads a turn without
a call as a message to the user that does not end the conversation (a chat log's user may answer),
``verbose_filler`` reads such turns as messages to a person (``user_envs``), ``no_tool_use`` leaves
it alone (``required_envs``: ``code``), and ``stats`` counts the episodes under ``tau2/chat``
(``task.type`` is the record's ``domain`` where it names one). ``code`` makes a turn without a call
the final answer, graded by the record's outcome. ``task.meta["source"]`` is ``chat_tools`` and
``task.meta["shape"]`` the layout (``openai``, ``hermes``, ``sharegpt``).

Outcome: ``success`` / ``won`` (bool) or ``reward`` >= 1 succeeds; without any the outcome is
unknown (``task.meta["outcome_known"] = False``: left out of success rates, no label that needs it).
A failed or unknown episode ended by the agent's answer stops as ``agent_finished``, else (it ended
on a call) as ``max_steps``.
"""

from __future__ import annotations

import logging
from typing import Any

from prefbuild.io.importers.chat_turns import chat_turns
from prefbuild.io.importers.convert import ExternalLogError, finish, recorded_success
from prefbuild.io.importers.located import Locate, fail, get_field
from prefbuild.io.importers.parsing import protocol
from prefbuild.io.importers.squashed import sequential_turns
from prefbuild.io.importers.tool_defs import prompt_tools, tools_of
from prefbuild.io.importers.tool_steps import (
    ChatTurn,
    Offered,
    conversation_steps,
    first_user_text,
    message_of,
    unfinished_stop,
    usage_totals,
)
from prefbuild.labelers.tools.scan import TOOL_ENVS
from prefbuild.records import (
    EXTERNAL_SPLIT,
    EnvInfo,
    Outcome,
    Step,
    StopReason,
    TaskInfo,
    TeacherInfo,
    Trajectory,
)
from prefbuild.tooluse.dispatch import ToolBox, checked_toolbox

logger = logging.getLogger(__name__)

DEFAULT_ENV = "tau2"
PROTOCOL = "hermes"  # the tool protocol of every built-in tool env
CHAT_KEYS = ("messages", "conversations")
_TAGS = ("<tool_call>", "<tool_response>", "<tools>")  # Hermes / Qwen3 tool text


def tool_log_evidence(record: dict[str, Any]) -> str | None:
    """How surely a chat-log record is a tool-calling log: ``strong`` (``tools`` other than null or
    blank text, a tool env named in ``env``, structured calls, ``function_call`` turns), ``weak`` (``<tool_call>`` text,
    tool results, ``<tool_response>`` or a ``<tools>`` block: a household model may write a Hermes
    call by mistake, and a household harness may call its replies observations), or None.

    Example:
        >>> tool_log_evidence({"messages": [{"role": "assistant", "content": "<tool_call>{}</tool_call>"}]})
        'weak'
        >>> tool_log_evidence({"messages": [], "tools": []})
        'strong'
        >>> tool_log_evidence({"messages": [{"role": "user", "content": "Your task is to: ..."}]}) is None
        True
    """
    env = record.get("env")
    if has_tools(record.get("tools")) or (isinstance(env, str) and env in TOOL_ENVS):
        return "strong"
    turns = next((record[key] for key in CHAT_KEYS if isinstance(record.get(key), list)), [])
    weak = False
    for turn in turns:
        if not isinstance(turn, dict):
            continue
        role = turn.get("role", turn.get("from"))
        if turn.get("tool_calls") or role == "function_call":
            return "strong"
        text = _loose_text(turn.get("content", turn.get("value")))
        weak = weak or role in ("tool", "observation") or any(tag in text for tag in _TAGS)
    return "weak" if weak else None


def has_tools(value: Any) -> bool:
    """Does a record's ``tools`` say tools went with the requests? Datasets with one schema for every
    row (LLaMA-Factory's ``tools`` column) keep null or ``""`` where none did; an empty list says the
    log is a tool log that offered none.

    Example:
        >>> has_tools(None), has_tools(" "), has_tools([]), has_tools('[{"name": "f"}]')
        (False, False, True, True)
    """
    return value is not None and not (isinstance(value, str) and not value.strip())


def _loose_text(content: Any) -> str:
    """A turn's text for detection only (no checks: the importer checks every field it reads)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") if isinstance(part, dict) and isinstance(part.get("text"), str) else ""
                       for part in content)
    return ""


def tool_chat_trajectory(record: dict[str, Any], *, default_id: str, model: str, locate: Locate) -> Trajectory:
    """One tool-calling chat-log record as a tool trajectory (see the module doc for the layout).

    Args:
        record: the decoded record.
        default_id: the trajectory id where the record has no ``id`` (``<source>#<position>``).
        model: the model name where the record names none.
        locate: ``file:line`` of a JSON path in the record (for error messages).

    Returns:
        The Trajectory.

    Raises:
        ExternalLogError: a field is not of a tool chat log's form, naming ``file:line field``.

    Example:
        >>> record = {"messages": [{"role": "user", "content": "Weather in Paris?"},
        ...     {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
        ...      "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
        ...     {"role": "tool", "tool_call_id": "c1", "content": "18 C"},
        ...     {"role": "assistant", "content": "It is 18 C."}], "success": True}
        >>> trajectory = tool_chat_trajectory(record, default_id="log#1", model="m", locate=lambda path: "log:1")
        >>> [(fact.name, fact.ok) for step in trajectory.steps for fact in step.facts.tools]
        [('get_weather', True)]
    """
    key = next((key for key in CHAT_KEYS if key in record), None)
    if key is None:
        raise ExternalLogError(f"{locate(())}: no 'messages' (or ShareGPT 'conversations') list of chat turns")
    env = _env(record, locate)
    turns = chat_turns(record[key], key, locate)
    system = get_field(record, "system", str, locate, (), required=False)
    if system:
        turns.insert(0, ChatTurn(role="system", content=system))
    tools = tools_of(record.get("tools"), locate, ("tools",))
    in_prompt = prompt_tools(turns[0].content) if tools is None and turns and turns[0].role == "system" else None
    cut = _prefix_end(turns)
    played, split = sequential_turns(turns[cut:], "\n".join(turn.content for turn in turns[:cut]))
    if split:
        logger.warning(
            "%s: %d assistant message(s) call a tool with an id that only an earlier call of the same message "
            "returned (the agent ran them one after another and the log joined them): read as one step per call",
            locate(()), split,
        )
    steps = conversation_steps(played, protocol(env, PROTOCOL), _offered(tools, in_prompt), text_calls=True)
    outcome, known = _outcome(record, steps)
    steps = _closed(steps, outcome, known)
    trajectory_id = str(record.get("id") or default_id)
    domain = get_field(record, "domain", str, locate, (), required=False)
    meta: dict[str, Any] = {"source": "chat_tools", "shape": _shape(key, turns, in_prompt), "outcome_known": known}
    if domain:
        meta["domain"] = domain
    usage = usage_totals(steps)
    return Trajectory(
        id=trajectory_id,
        task=TaskInfo(id=trajectory_id, type=domain or "chat", goal=first_user_text(turns[cut:]), split=EXTERNAL_SPLIT,
                      meta=meta),
        env=EnvInfo(name=env, protocol=PROTOCOL),
        teacher=TeacherInfo(backend="external", model=str(record.get("model") or model)),
        messages=[message_of(turn) for turn in turns[:cut]],
        tools=tools or None,
        steps=steps,
        outcome=outcome,
        usage=usage,
    )


def _env(record: dict[str, Any], locate: Locate) -> str:
    """The record's ``env`` where it names a tool env, else ``DEFAULT_ENV``."""
    env = get_field(record, "env", str, locate, (), required=False)
    if env is None:
        return DEFAULT_ENV
    if env not in TOOL_ENVS:
        known = ", ".join(sorted(TOOL_ENVS))
        raise fail(locate, ("env",), f"{env!r} is not a tool env; a tool chat log is one of {known}")
    return env


def _offered(tools: list[dict[str, Any]] | None, in_prompt: list[dict[str, Any]] | None) -> Offered:
    """The offered tools: a ``tools`` list is checked against by the labelers (it becomes the
    trajectory's); a system prompt's are checked here."""
    if tools is not None:
        return Offered(names=frozenset(tool["function"]["name"] for tool in tools))
    if in_prompt is not None:
        return Offered(names=frozenset(tool["function"]["name"] for tool in in_prompt), box=_usable_box(in_prompt))
    return Offered()


def _usable_box(tools: list[dict[str, Any]]) -> ToolBox | None:
    """The prompt's tools with their validators, or None where a schema is broken (left unchecked,
    as the labelers leave a trajectory's broken tool definitions)."""
    checked = checked_toolbox(tools)
    if isinstance(checked, str):
        logger.warning("the tools of a system prompt are unusable (%s); calls are not checked against schemas", checked)
        return None
    return checked


def _prefix_end(turns: list[ChatTurn]) -> int:
    """How many leading turns form the fixed prompt: the system turns and any turn the model did not
    write in reply to the user (a harness's greeting), up to the first user or tool turn."""
    for position, turn in enumerate(turns):
        if turn.role in ("user", "tool"):
            return position
    return len(turns)


def _shape(key: str, turns: list[ChatTurn], in_prompt: list[dict[str, Any]] | None) -> str:
    """``sharegpt``, ``hermes`` (calls or tools in the text) or ``openai``."""
    if key == "conversations":
        return "sharegpt"
    hermes = in_prompt is not None or any(
        turn.role == "assistant" and not turn.calls and "<tool_call>" in turn.content for turn in turns
    )
    return "hermes" if hermes else "openai"


def _outcome(record: dict[str, Any], steps: list[Step]) -> tuple[Outcome, bool]:
    """The record's verdict and whether it records one."""
    success = recorded_success(record)
    if success:
        return Outcome(success=True, reward=1.0, progress=1.0, stop_reason=StopReason.success), True
    reward = record.get("reward")
    value = float(reward) if isinstance(reward, int | float) and not isinstance(reward, bool) else 0.0
    return Outcome(success=False, reward=value, stop_reason=unfinished_stop(steps)), success is not None


def _closed(steps: list[Step], outcome: Outcome, known: bool) -> list[Step]:
    """The last step done and rewarded on a success; where the log records the outcome, its
    ``facts.won`` says it (a code answer graded wrong is then ``tool_wrong_answer``'s)."""
    steps = finish(steps, outcome)
    if known and steps:
        last = steps[-1]
        steps[-1] = last.model_copy(update={"facts": last.facts.model_copy(update={"won": outcome.success})})
    return steps
