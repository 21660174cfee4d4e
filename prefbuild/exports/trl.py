"""TRL's conversational preference layout: ``prompt`` / ``chosen`` / ``rejected`` message lists.

``DPOTrainer`` applies the model's chat template itself, so rows keep the structured
messages (tool calls and tool results included) rather than rendered text. Pairs from tool
envs add a ``tools`` column (the tool definitions as JSON text, which TRL's trainers pass to
the chat template) and write Hermes-text calls as structured ``tool_calls``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from prefbuild.exports.base import Consumes, ExportFormat, message_dict, reason_name
from prefbuild.exports.tooling import export_messages, tools_column
from prefbuild.records import Pair


class TrlFormat(ExportFormat):
    """Rows ``{"prompt", "chosen", "rejected", "id", "reason"}`` for ``trl.DPOTrainer``.

    Example:
        >>> TrlFormat().name
        'trl'
    """

    name: ClassVar[str] = "trl"
    consumes: ClassVar[Consumes] = "pairs"
    summary: ClassVar[str] = "TRL conversational preference (prompt / chosen / rejected message lists)"

    def row(self, record: Pair) -> dict[str, Any]:
        tools = record.tools
        return {
            "prompt": [message_dict(m) for m in export_messages(record.prompt, tools)],
            "chosen": [message_dict(m) for m in export_messages(record.chosen, tools)],
            "rejected": [message_dict(m) for m in export_messages(record.rejected, tools)],
            "id": record.id,
            "reason": reason_name(record.reason),
            **tools_column(tools),
        }

    def loading_snippet(self, repo_id: str, config: str) -> str:
        config_arg = "" if config == "default" else f', "{config}"'
        return "\n".join([
            f"Train with TRL's `DPOTrainer` (the `{config}` config is in TRL's conversational preference format: "
            "`prompt`, `chosen`, `rejected` message lists):",
            "",
            "```python",
            "from datasets import load_dataset",
            "from transformers import AutoModelForCausalLM, AutoTokenizer",
            "from trl import DPOConfig, DPOTrainer",
            "",
            'model_name = "HuggingFaceTB/SmolLM2-135M-Instruct"',
            "model = AutoModelForCausalLM.from_pretrained(model_name)",
            "tokenizer = AutoTokenizer.from_pretrained(model_name)",
            f'dataset = load_dataset("{repo_id}"{config_arg})',
            "# Agent prompts are long (the instructions, then every turn so far): TRL drops rows whose",
            "# prompt alone fills max_length. On a machine without a GPU add use_cpu=True, bf16=False.",
            'config = DPOConfig(output_dir="dpo-agent", beta=0.1, max_length=8192)',
            "trainer = DPOTrainer(",
            "    model=model,",
            "    args=config,",
            '    train_dataset=dataset["train"],',
            '    eval_dataset=dataset.get("test"),',
            "    processing_class=tokenizer,",
            ")",
            "trainer.train()",
            "```",
        ])
