"""ms-swift's RLHF layout: ``messages`` ending with the chosen assistant turn and
``rejected_response`` as a string; tool results as ``tool_response`` turns, structured calls as
``tool_call`` turns (ms-swift's agent format)."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from prefbuild.exports.base import Consumes, ExportError, ExportFormat, single_turn
from prefbuild.exports.tooling import export_messages, tools_column
from prefbuild.records import Message, Pair, Role
from prefbuild.tooluse.hermes import render_tool_turn


def call_arguments(arguments: str) -> Any:
    """A tool call's JSON-encoded arguments decoded, or the raw string when it is not JSON."""
    try:
        return json.loads(arguments)
    except json.JSONDecodeError:  # handled: arguments that are not JSON are exported as the text the model wrote
        return arguments


def swift_messages(message: Message) -> list[dict[str, str]]:
    """One message as ms-swift agent turns (a structured call becomes ``tool_call`` turns)."""
    if message.role is Role.tool:
        return [{"role": "tool_response", "content": message.content}]
    if message.tool_calls:
        # ms-swift joins an assistant turn and the tool_call turn after it with nothing between: the
        # newline Qwen/Hermes templates put before <tool_call> (render_tool_turn, the rejected side) goes here.
        text = message.content.rstrip()
        turns = [{"role": "assistant", "content": f"{text}\n"}] if text else []
        for call in message.tool_calls:
            payload = {"name": call.function.name, "arguments": call_arguments(call.function.arguments)}
            turns.append({"role": "tool_call", "content": json.dumps(payload, ensure_ascii=False)})
        return turns
    return [{"role": str(message.role), "content": message.content}]


class SwiftFormat(ExportFormat):
    """Rows ``{"messages", "rejected_response"}`` for ``swift rlhf --rlhf_type dpo``.

    Example:
        >>> SwiftFormat().name
        'swift'
    """

    name: ClassVar[str] = "swift"
    consumes: ClassVar[Consumes] = "pairs"
    summary: ClassVar[str] = "ms-swift RLHF (messages ending with chosen, rejected_response)"

    def row(self, record: Pair) -> dict[str, Any]:
        chosen, rejected = single_turn(record, self.name)
        if rejected.tool_calls:
            if record.tools is None:
                raise ExportError(
                    f"pair {record.id}: the rejected turn is a structured tool call without tool definitions; "
                    "ms-swift's rejected_response is text"
                )
            # ms-swift's hermes agent template writes calls as <tool_call> text: so does the rejected side.
            rejected = rejected.model_copy(
                update={"content": render_tool_turn(rejected.tool_calls, content=rejected.content), "tool_calls": None}
            )
        prompt = export_messages(record.prompt, record.tools)
        (chosen,) = export_messages([chosen], record.tools)
        messages = [turn for m in [*prompt, chosen] for turn in swift_messages(m)]
        return {"messages": messages, "rejected_response": rejected.content, **tools_column(record.tools)}

    def loading_snippet(self, repo_id: str, config: str) -> str:
        return "\n".join([
            f"Train with ms-swift (the `{config}` config is in its RLHF layout):",
            "",
            "```bash",
            f"swift rlhf --rlhf_type dpo --model Qwen/Qwen3-4B --use_hf true --dataset {repo_id}:{config}",
            "```",
        ])
