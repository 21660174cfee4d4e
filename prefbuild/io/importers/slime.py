"""SFT / RL trajectories of the slime framework's tau2 pipeline ("Tau2-RL-Pipeline", e.g. the Hub
dataset ``tau2-sft-final``) as tau2 tool trajectories.

One record a line::

    {"task_id": "[airline]12[sample_0]", "prompt": [system, user, assistant, user, ...], "response": "",
     "metadata": {"domain": "airline", "tau2_task_id": "12", "success": false, "partial_score": 0.5,
                  "tool_sequence": ["get_user_details", ...], "reward_info": {...}}}

The conversation is under ``prompt`` (``messages`` in some of the pipeline's files, and where a
record has both); ``response`` repeats the assistant turns and is not read. Each assistant turn is
one action (``tooluse.slime``): a native ``<tool_call>`` or a legacy ``[ACTION]`` block,
``respond(content=...)`` a message to the customer and ``done()`` the agent's end of the episode
(tau2's ``###STOP###``). Tool results are user turns (``slime_turns``), the customer's other user
turns.

The steps are built as prefbuild's own tau2 env records them (``tool_steps``): one step per
assistant turn, each call a structured ``ToolCall`` with its JSON arguments (the model's text stays
in ``raw_output``), one ``tool`` message per result in the next step's observation (the customer's
reply that came with it after it), a ``respond`` turn a message to the customer, a turn whose
action cannot be read a broken call (``malformed_tool_call``). The env is ``tau2``, its protocol
``slime`` (native turns) or ``slime-action`` (legacy turns, where most of the record's are),
so chosen turns of the ``style`` strategy are written in the record's own form.

Tools: a ``tools`` list where the record has one, else the installed tau2's tools of the domain
(``tau2.installed_domain_tools``; warned once per domain where tau2 is not installed: the tool
labelers then read unknown tools and bad arguments from tau2's error texts).

Task: type = ``metadata.domain`` (else the ``[domain]`` of ``task_id``; ``chat`` without either),
id ``tau2-<domain>-<tau2_task_id>`` as prefbuild's tau2 env names its tasks, ``task.meta`` keeping
``tau2_task_id``, ``partial_score`` and the record's ``task_id``; the trajectory id is the record's
``task_id`` and its ``sample_index`` the ``[sample_N]`` of it. Outcome: ``metadata.success`` (its
absence is an unknown outcome: ``task.meta["outcome_known"] = False``), ``partial_score`` its
``progress``; tau2's ``reward_info``, where the pipeline kept it, goes on the last step as tau2
results files put it (``info["tau2"]``), so the labelers read which of tau2's checks failed.
"""

from __future__ import annotations

import re
from typing import Any

from prefbuild.envs import cached_protocol
from prefbuild.io.importers.convert import ExternalLogError, finish
from prefbuild.io.importers.located import Locate, fail, get_field
from prefbuild.io.importers.slime_turns import slime_turns
from prefbuild.io.importers.tau2 import installed_domain_tools
from prefbuild.io.importers.tool_defs import tools_of
from prefbuild.io.importers.tool_steps import (
    ChatTurn,
    Offered,
    conversation_steps,
    first_user_text,
    message_of,
    unfinished_stop,
    usage_totals,
)
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
from prefbuild.tooluse.slime import LEGACY, NATIVE, parse_slime_turn

SOURCE = "slime"
PROTOCOLS = {NATIVE: "slime", LEGACY: "slime-action"}
_TASK_ID = re.compile(r"^\[(?P<domain>[^\[\]]+)\](?P<task>.*?)(?:\[sample_(?P<sample>\d+)\])?$")


def slime_trajectory(record: dict[str, Any], *, default_id: str, model: str, locate: Locate) -> Trajectory:
    """One slime tau2 trajectory record as a tau2 tool trajectory (see the module doc for the layout).

    Args:
        record: the decoded record.
        default_id: the trajectory id where the record has no ``task_id`` (``<source>#<position>``).
        model: the model name where the record names none.
        locate: ``file:line`` of a JSON path in the record (for error messages).

    Returns:
        The Trajectory.

    Raises:
        ExternalLogError: a field is not of the pipeline's form, naming ``file:line field``.

    Example:
        >>> record = {"task_id": "[mock]t1[sample_2]", "metadata": {"success": True}, "prompt": [
        ...     {"role": "system", "content": "Help the customer."}, {"role": "user", "content": "Hi, I am u1."},
        ...     {"role": "assistant", "content": '[ACTION]\\nget_user(user_id="u1")\\n[/ACTION]'},
        ...     {"role": "user", "content": '[TOOL_RESULT]\\nget_user(user_id="u1")\\n{"name": "Ann"}\\n'
        ...                                 '[/TOOL_RESULT]'},
        ...     {"role": "assistant", "content": '[ACTION]\\nrespond(content="Hello Ann.")\\n[/ACTION]'}],
        ...     "tools": []}
        >>> trajectory = slime_trajectory(record, default_id="log#1", model="m", locate=lambda path: "log:1")
        >>> [(step.tool_calls[0].function.name if step.tool_calls else step.action) for step in trajectory.steps]
        ['get_user', '{"message": "Hello Ann."}']
        >>> trajectory.env.protocol, trajectory.task.id, trajectory.sample_index
        ('slime-action', 'tau2-mock-t1', 2)
    """
    key = "messages" if "messages" in record else "prompt"  # as detected: a record with both is read by its messages
    if key not in record:
        raise ExternalLogError(f"{locate(())}: no 'prompt' (or 'messages') list of chat turns")
    metadata = get_field(record, "metadata", dict, locate, (), required=False) or {}
    record_id = get_field(record, "task_id", str, locate, (), required=False)
    parts = _TASK_ID.match(record_id) if record_id else None
    domain = get_field(metadata, "domain", str, locate, ("metadata",), required=False) or (
        parts.group("domain") if parts else None)
    tau2_id = get_field(metadata, "tau2_task_id", (str, int), locate, ("metadata",), required=False)
    tau2_id = str(tau2_id) if tau2_id is not None else (parts.group("task") or None if parts else None)
    success = get_field(metadata, "success", bool, locate, ("metadata",), required=False)
    partial = _partial_score(metadata, locate)
    reward_info = get_field(metadata, "reward_info", dict, locate, ("metadata",), required=False)
    turns = slime_turns(record[key], key, locate)
    tools = tools_of(record.get("tools"), locate, ("tools",))
    if tools is None and domain:
        tools = installed_domain_tools(domain)
    cut = _prefix_end(turns)
    form = _form(turns[cut:])
    protocol_name = PROTOCOLS[form]
    names = frozenset(tool["function"]["name"] for tool in tools) if tools is not None else None
    steps = conversation_steps(turns[cut:], cached_protocol("tau2", protocol_name), Offered(names=names),
                               text_calls=True)
    outcome = _outcome(success, partial, steps)
    steps = _closed(steps, outcome, success is not None, reward_info)
    trajectory_id = record_id or str(record.get("id") or default_id)
    meta: dict[str, Any] = {"source": SOURCE, "shape": f"slime-{form}",
                            "outcome_known": success is not None}
    for name, value in (("domain", domain), ("tau2_task_id", tau2_id), ("partial_score", partial),
                        ("task_id", record_id)):
        if value is not None:
            meta[name] = value
    usage = usage_totals(steps)
    return Trajectory(
        id=trajectory_id,
        task=TaskInfo(id=f"tau2-{domain}-{tau2_id}" if domain and tau2_id else trajectory_id, type=domain or "chat",
                      goal=first_user_text(turns[cut:]), split=EXTERNAL_SPLIT, meta=meta),
        env=EnvInfo(name="tau2", protocol=protocol_name, options={"domain": domain} if domain else {}),
        teacher=TeacherInfo(backend="external", model=str(record.get("model") or model)),
        sample_index=int(parts.group("sample")) if parts and parts.group("sample") else 0,
        messages=[message_of(turn) for turn in turns[:cut]],
        tools=tools,
        steps=steps,
        outcome=outcome,
        usage=usage,
    )


def _partial_score(metadata: dict[str, Any], locate: Locate) -> float | None:
    """``metadata.partial_score``: a number from 0 to 1, or None where absent."""
    value = get_field(metadata, "partial_score", (int, float), locate, ("metadata",), required=False)
    if value is None:
        return None
    if not 0.0 <= value <= 1.0:
        raise fail(locate, ("metadata", "partial_score"), f"expected a number from 0 to 1, got {value}")
    return float(value)


def _prefix_end(turns: list[ChatTurn]) -> int:
    """How many leading turns form the fixed prompt: the system turns up to the customer's first message."""
    for position, turn in enumerate(turns):
        if turn.role != "system":
            return position
    return len(turns)


def _form(turns: list[ChatTurn]) -> str:
    """``action`` where most of the agent's readable turns are ``[ACTION]`` blocks, else ``native``."""
    forms = [parse_slime_turn(turn.content).form for turn in turns if turn.role == "assistant"]
    return LEGACY if forms.count(LEGACY) > forms.count(NATIVE) else NATIVE


def _outcome(success: bool | None, partial: float | None, steps: list[Step]) -> Outcome:
    """The record's verdict: success from ``metadata.success``, progress from ``partial_score``; a failed
    or unknown episode ended by a message or ``done()`` stops as ``agent_finished``, else ``max_steps``."""
    if success:
        return Outcome(success=True, reward=1.0, progress=1.0 if partial is None else partial,
                       stop_reason=StopReason.success)
    return Outcome(success=False, reward=0.0, progress=partial, stop_reason=unfinished_stop(steps))


def _closed(steps: list[Step], outcome: Outcome, known: bool, reward_info: dict[str, Any] | None) -> list[Step]:
    """The last step as prefbuild's tau2 env ends an episode: done where it succeeded or the agent
    ended it (``done()``); where the record says how it went, ``facts.won`` / ``progress`` and tau2's
    verdict in ``info["tau2"]`` (with ``reward_info`` where kept)."""
    steps = finish(steps, outcome)
    if not steps:
        return steps
    last = steps[-1]
    update: dict[str, Any] = {}
    if last.facts.final and not last.done:
        update["done"] = True
    if known:
        update["facts"] = last.facts.model_copy(update={"won": outcome.success, "progress": outcome.progress})
        verdict = {"reward": outcome.reward, "success": outcome.success, "reward_info": reward_info}
        update["info"] = {**last.info, "tau2": verdict}
    steps[-1] = last.model_copy(update=update)
    return steps
