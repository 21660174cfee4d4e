"""LLaMA-Factory's sharegpt preference layout: ``conversations`` (from/value; roles
human/gpt/observation/function_call), ``system``, ``chosen`` and ``rejected`` as one message each,
registered by a ``dataset_info.json`` written next to the data."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any, ClassVar

from prefbuild.exports.base import Consumes, ExportError, ExportFormat, single_turn
from prefbuild.exports.swift import call_arguments
from prefbuild.records import Message, Pair, Role

DATASET_INFO = "dataset_info.json"
SHAREGPT_ROLES: dict[Role, str] = {
    Role.user: "human",
    Role.assistant: "gpt",
    Role.tool: "observation",
    Role.system: "system",
}


def sharegpt_message(message: Message, where: str) -> dict[str, str]:
    """One message as a sharegpt turn; a structured call becomes a ``function_call`` turn."""
    if message.tool_calls:
        if len(message.tool_calls) != 1:
            raise ExportError(f"{where}: sharegpt holds one function call per turn, not {len(message.tool_calls)}")
        call = message.tool_calls[0].function
        return {"from": "function_call",
                "value": json.dumps({"name": call.name, "arguments": call_arguments(call.arguments)})}
    return {"from": SHAREGPT_ROLES[message.role], "value": message.content}


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
        chosen, rejected = single_turn(record, self.name)
        prompt = list(record.prompt)
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
