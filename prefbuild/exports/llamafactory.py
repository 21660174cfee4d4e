"""LLaMA-Factory's sharegpt preference layout: ``conversations`` (from/value; roles
human/gpt/observation/function_call), ``system``, ``tools`` (JSON text, empty without tools),
``chosen`` and ``rejected`` as one message each, registered by a ``dataset_info.json`` written
next to the data. Parallel calls are one ``function_call`` turn holding a list; their results
one ``observation`` turn."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any, ClassVar

from prefbuild.exports.base import Consumes, ExportError, ExportFormat, single_turn
from prefbuild.exports.swift import call_arguments
from prefbuild.exports.tooling import export_messages, tools_column
from prefbuild.records import Message, Pair, Role

DATASET_INFO = "dataset_info.json"
TOOL_CALL_WORDS = ("<tool_call>", "</tool_call>")  # LLaMA-Factory's default template ``tool_call_words``
SHAREGPT_ROLES: dict[Role, str] = {
    Role.user: "human",
    Role.assistant: "gpt",
    Role.tool: "observation",
    Role.system: "system",
}


def sharegpt_message(message: Message, where: str) -> dict[str, str]:
    """One message as a sharegpt turn; structured calls become a ``function_call`` turn (one call
    as an object, parallel calls as a list, which LLaMA-Factory's function formatter reads).

    Text the model wrote beside its calls is kept: LLaMA-Factory's ``FunctionFormatter`` reads the
    calls between its ``<tool_call>`` words and puts the text around them before the formatted
    calls, so ``"I look it up.\n<tool_call>{...}</tool_call>"`` trains on that text too (a pair whose
    only difference is that text would otherwise lose it).
    """
    if message.tool_calls:
        calls = [
            {"name": call.function.name, "arguments": call_arguments(call.function.arguments)}
            for call in message.tool_calls
        ]
        value = json.dumps(calls[0] if len(calls) == 1 else calls, ensure_ascii=False)
        if message.content.strip():
            value = f"{message.content.rstrip()}\n{TOOL_CALL_WORDS[0]}{value}{TOOL_CALL_WORDS[1]}"
        return {"from": "function_call", "value": value}
    return {"from": SHAREGPT_ROLES[message.role], "value": message.content}


def merged_tool_results(messages: Sequence[Message]) -> list[Message]:
    """Consecutive ``tool`` messages (the results of parallel calls) as one observation turn, as
    sharegpt alternates one observation with one function call."""
    merged: list[Message] = []
    for message in messages:
        if message.role is Role.tool and merged and merged[-1].role is Role.tool:
            merged[-1] = merged[-1].model_copy(update={"content": f"{merged[-1].content}\n{message.content}"})
        else:
            merged.append(message)
    return merged


def llamafactory_dataset_info(name: str, file_name: str) -> dict[str, Any]:
    """The ``dataset_info.json`` entry that registers a ``llamafactory`` export as a ranking dataset.

    Example:
        >>> llamafactory_dataset_info("prefbuild_train", "train.jsonl")["prefbuild_train"]["ranking"]
        True
    """
    return {
        name: {
            "file_name": file_name,
            "formatting": "sharegpt",
            "ranking": True,
            "columns": {
                "messages": "conversations",
                "system": "system",
                "tools": "tools",
                "chosen": "chosen",
                "rejected": "rejected",
            },
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


class LlamaFactoryFormat(ExportFormat):
    """Rows ``{"conversations", "system", "chosen", "rejected"}``; human/observation turns at odd
    positions, gpt/function_call turns at even ones.

    Example:
        >>> LlamaFactoryFormat().sidecar_files({"train": ["llamafactory/train.jsonl"]}).keys()
        dict_keys(['dataset_info.json'])
    """

    name: ClassVar[str] = "llamafactory"
    consumes: ClassVar[Consumes] = "pairs"
    summary: ClassVar[str] = "LLaMA-Factory sharegpt ranking (conversations, chosen / rejected turns)"

    def row(self, record: Pair) -> dict[str, Any]:
        chosen, rejected = export_messages(single_turn(record, self.name), record.tools)
        prompt = merged_tool_results(export_messages(record.prompt, record.tools))
        system = ""
        if prompt and prompt[0].role is Role.system:
            system = prompt.pop(0).content
        conversations = []
        for position, message in enumerate(prompt):
            where = f"pair {record.id} prompt[{position}]"
            if message.role is Role.system:
                raise ExportError(f"{where}: a system turn after the start cannot be expressed in sharegpt")
            turn = sharegpt_message(message, where)
            expects_user = position % 2 == 0
            if (turn["from"] in ("human", "observation")) != expects_user:
                raise ExportError(
                    f"{where}: sharegpt needs user/tool and assistant turns to alternate, found {turn['from']!r}"
                )
            conversations.append(turn)
        return {
            "conversations": conversations,
            "system": system,
            "chosen": sharegpt_message(chosen, f"pair {record.id} chosen"),
            "rejected": sharegpt_message(rejected, f"pair {record.id} rejected"),
            # Always present (empty without tools): dataset_info.json maps the column for every split.
            "tools": tools_column(record.tools).get("tools", ""),
        }

    def sidecar_files(self, files: Mapping[str, Sequence[str]]) -> dict[str, str]:
        """``dataset_info.json`` with one entry per split; a split in several shards is named by its folder."""
        info: dict[str, Any] = {}
        for split, split_files in files.items():
            file_name = split_files[0] if len(split_files) == 1 else str(PurePosixPath(split_files[0]).parent)
            info.update(llamafactory_dataset_info(f"prefbuild_{split}", file_name))
        return {DATASET_INFO: json.dumps(info, indent=2) + "\n"} if info else {}

    def loading_snippet(self, repo_id: str, config: str) -> str:
        return "\n".join([
            f"Train with LLaMA-Factory: `{DATASET_INFO}` at the top of this repo registers the `{config}` "
            "splits as sharegpt ranking datasets (`prefbuild_train`, `prefbuild_test`); put the repo in "
            "LLaMA-Factory's `dataset_dir` and set `stage: dpo`, `dataset: prefbuild_train`.",
        ])
