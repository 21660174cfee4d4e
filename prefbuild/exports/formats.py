"""Pairs and trajectories as rows in the layout each trainer loads without changes.

- ``trl``: TRL's conversational preference layout, ``prompt`` / ``chosen`` / ``rejected`` as
  lists of ``{"role", "content"}`` messages (``DPOTrainer`` applies the chat template itself).
- ``roundwise``: the published round-wise agent layout: ``messages`` (the prompt), ``chosen``
  and ``rejected`` as assistant strings, ``reason`` in the seed datasets' vocabulary
  (``premature_success`` is ``task_succeeded_negative``).
- ``llamafactory``: LLaMA-Factory's sharegpt preference layout: ``conversations`` (from/value,
  roles human/gpt/observation/function_call), ``system``, ``chosen`` and ``rejected`` as one
  message each; register it with ``llamafactory_dataset_info``.
- ``swift``: ms-swift's RLHF layout: ``messages`` ending with the chosen assistant turn and
  ``rejected_response`` as a string (tool results as ``tool_response`` turns, structured
  calls as ``tool_call`` turns, as in ms-swift's agent format).
- ``sft``: successful trajectories as ``messages`` for rejection-sampling fine-tuning
  (``sft_rows``); ``pass_at_k`` gives the per-task success estimate that goes with it.

Functions take plain records and yield plain dicts, so any writer (JSONL, parquet, the Hub)
can store them. A pair a format cannot express (a multi-turn continuation in a single-turn
format) raises ``ExportError`` naming the pair, unless ``skip_unsupported`` is set, in which
case it is counted in ``ExportStats``.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from math import comb
from typing import Any

from prefbuild.errors import PrefbuildError
from prefbuild.records import FailureMode, Message, Pair, Role, Trajectory, prompt_messages

EXPORT_FORMATS: tuple[str, ...] = ("trl", "roundwise", "llamafactory", "swift", "sft")
PAIR_FORMATS: tuple[str, ...] = ("trl", "roundwise", "llamafactory", "swift")

# prefbuild failure-mode names -> the names used by published round-wise datasets.
ROUNDWISE_REASONS: dict[str, str] = {FailureMode.premature_success.value: "task_succeeded_negative"}

SHAREGPT_ROLES: dict[Role, str] = {
    Role.user: "human",
    Role.assistant: "gpt",
    Role.tool: "observation",
    Role.system: "system",
}


class ExportError(PrefbuildError):
    """A pair or trajectory that the requested format cannot express; the message names it."""


@dataclass
class ExportStats:
    """Rows written and records skipped (with why) by one export."""

    rows: int = 0
    skipped: Counter[str] = field(default_factory=Counter)


def message_dict(message: Message) -> dict[str, Any]:
    """A message as OpenAI/TRL chat dict: ``role`` and ``content``, tool fields only when set."""
    row: dict[str, Any] = {"role": message.role.value, "content": message.content}
    if message.tool_calls:
        row["tool_calls"] = [call.model_dump(mode="json") for call in message.tool_calls]
    if message.tool_call_id is not None:
        row["tool_call_id"] = message.tool_call_id
    if message.name is not None:
        row["name"] = message.name
    return row


def roundwise_reason(reason: FailureMode | str | None) -> str | None:
    """A failure mode in the seed datasets' vocabulary (``premature_success`` -> ``task_succeeded_negative``)."""
    if reason is None:
        return None
    value = reason if isinstance(reason, FailureMode) else str(reason)
    return ROUNDWISE_REASONS.get(value, value)


def _single_turn(pair: Pair, fmt: str) -> tuple[Message, Message]:
    if len(pair.chosen) != 1 or len(pair.rejected) != 1:
        raise ExportError(
            f"pair {pair.id} (strategy {pair.strategy}) has a multi-turn continuation "
            f"({len(pair.chosen)} chosen / {len(pair.rejected)} rejected turns); the {fmt} format holds one "
            "assistant turn each: export it with --format trl, or build it with a per-step strategy"
        )
    return pair.chosen[0], pair.rejected[0]


def trl_row(pair: Pair) -> dict[str, Any]:
    return {
        "prompt": [message_dict(m) for m in pair.prompt],
        "chosen": [message_dict(m) for m in pair.chosen],
        "rejected": [message_dict(m) for m in pair.rejected],
        "id": pair.id,
        "reason": pair.reason if pair.reason is not None else None,
    }


def roundwise_row(pair: Pair) -> dict[str, Any]:
    chosen, rejected = _single_turn(pair, "roundwise")
    return {
        "messages": [message_dict(m) for m in pair.prompt],
        "chosen": chosen.content,
        "rejected": rejected.content,
        "reason": roundwise_reason(pair.reason),
    }


def _sharegpt_message(message: Message, where: str) -> dict[str, str]:
    if message.tool_calls:
        if len(message.tool_calls) != 1:
            raise ExportError(f"{where}: sharegpt holds one function call per turn, not {len(message.tool_calls)}")
        call = message.tool_calls[0].function
        try:
            arguments: Any = json.loads(call.arguments)
        except json.JSONDecodeError:
            arguments = call.arguments
        return {"from": "function_call", "value": json.dumps({"name": call.name, "arguments": arguments})}
    return {"from": SHAREGPT_ROLES[message.role], "value": message.content}


def llamafactory_row(pair: Pair) -> dict[str, Any]:
    """LLaMA-Factory sharegpt ranking row; human/observation turns at odd positions, gpt at even."""
    chosen, rejected = _single_turn(pair, "llamafactory")
    prompt = list(pair.prompt)
    system = ""
    if prompt and prompt[0].role is Role.system:
        system = prompt.pop(0).content
    conversations = []
    for position, message in enumerate(prompt):
        where = f"pair {pair.id} prompt[{position}]"
        if message.role is Role.system:
            raise ExportError(f"{where}: a system turn after the start cannot be expressed in sharegpt")
        turn = _sharegpt_message(message, where)
        expects_user = position % 2 == 0
        if (turn["from"] in ("human", "observation")) != expects_user:
            raise ExportError(
                f"{where}: sharegpt needs user/tool and assistant turns to alternate, found {turn['from']!r}"
            )
        conversations.append(turn)
    return {
        "conversations": conversations,
        "system": system,
        "chosen": _sharegpt_message(chosen, f"pair {pair.id} chosen"),
        "rejected": _sharegpt_message(rejected, f"pair {pair.id} rejected"),
    }


def llamafactory_dataset_info(name: str, file_name: str) -> dict[str, Any]:
    """The ``dataset_info.json`` entry that registers a ``llamafactory`` export as a ranking dataset."""
    return {
        name: {
            "file_name": file_name,
            "formatting": "sharegpt",
            "ranking": True,
            "columns": {"messages": "conversations", "system": "system", "chosen": "chosen", "rejected": "rejected"},
            "tags": {
                "role_tag": "from",
                "content_tag": "value",
                "user_tag": "human",
                "assistant_tag": "gpt",
                "observation_tag": "observation",
                "function_tag": "function_call",
                "system_tag": "system",
            },
        }
    }


def _swift_messages(message: Message) -> list[dict[str, str]]:
    """ms-swift's agent layout: tool results are ``tool_response`` turns, structured calls ``tool_call`` turns."""
    if message.role is Role.tool:
        return [{"role": "tool_response", "content": message.content}]
    if message.tool_calls:
        turns = [{"role": "assistant", "content": message.content}] if message.content else []
        for call in message.tool_calls:
            try:
                arguments: Any = json.loads(call.function.arguments)
            except json.JSONDecodeError:
                arguments = call.function.arguments
            turns.append(
                {"role": "tool_call", "content": json.dumps({"name": call.function.name, "arguments": arguments})}
            )
        return turns
    return [{"role": message.role.value, "content": message.content}]


def swift_row(pair: Pair) -> dict[str, Any]:
    chosen, rejected = _single_turn(pair, "swift")
    for turn, name in ((chosen, "chosen"), (rejected, "rejected")):
        if turn.tool_calls:
            raise ExportError(
                f"pair {pair.id}: the {name} turn is a structured tool call; ms-swift's "
                "rejected_response and final response are text"
            )
    messages = [turn for m in [*pair.prompt, chosen] for turn in _swift_messages(m)]
    return {"messages": messages, "rejected_response": rejected.content}


_ROW_BUILDERS = {"trl": trl_row, "roundwise": roundwise_row, "llamafactory": llamafactory_row, "swift": swift_row}


def to_rows(
    pairs: Iterable[Pair], fmt: str, *, skip_unsupported: bool = False, stats: ExportStats | None = None
) -> Iterator[dict[str, Any]]:
    """Yield one row per pair in format ``fmt`` (see ``EXPORT_FORMATS``; ``sft`` takes trajectories: ``sft_rows``)."""
    if fmt == "sft":
        raise ExportError("the sft format exports successful trajectories, not pairs: use sft_rows(trajectories)")
    if fmt not in _ROW_BUILDERS:
        raise ExportError(f"unknown export format {fmt!r}; known: {', '.join(EXPORT_FORMATS)}")
    builder = _ROW_BUILDERS[fmt]
    stats = stats if stats is not None else ExportStats()
    for pair in pairs:
        try:
            row = builder(pair)
        except ExportError:
            if not skip_unsupported:
                raise
            stats.skipped[f"{pair.strategy}:unsupported_by_{fmt}"] += 1
            continue
        stats.rows += 1
        yield row


def sft_rows(trajectories: Iterable[Trajectory], *, stats: ExportStats | None = None) -> Iterator[dict[str, Any]]:
    """Successful trajectories as chat ``messages`` (what the model saw at its last step plus its last turn)."""
    stats = stats if stats is not None else ExportStats()
    for trajectory in trajectories:
        if not trajectory.outcome.success:
            stats.skipped["not_successful"] += 1
            continue
        last = trajectory.steps[-1]
        messages = [*prompt_messages(trajectory, last.index), Message(role=Role.assistant, content=last.raw_output)]
        stats.rows += 1
        yield {
            "messages": [message_dict(m) for m in messages],
            "id": trajectory.id,
            "task_id": trajectory.task.id,
        }


def pass_at_k(trajectories: Iterable[Trajectory], k: int) -> dict[str, float]:
    """Unbiased pass@k per task id: ``1 - C(n - c, k) / C(n, k)`` over its n episodes, c successful.

    Tasks with fewer than ``k`` episodes have no unbiased estimate and are left out.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for trajectory in trajectories:
        entry = totals[trajectory.task.id]
        entry[0] += 1
        entry[1] += int(trajectory.outcome.success)
    result: dict[str, float] = {}
    for task_id, (n, c) in totals.items():
        if n < k:
            continue
        result[task_id] = 1.0 if n - c < k else 1.0 - comb(n - c, k) / comb(n, k)
    return result
