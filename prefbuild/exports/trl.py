"""TRL's conversational preference layout: ``prompt`` / ``chosen`` / ``rejected`` message lists.

``DPOTrainer`` applies the model's chat template itself, so rows keep the structured
messages (tool calls and tool results included) rather than rendered text.
"""

from __future__ import annotations

from typing import Any, ClassVar

from prefbuild.exports.base import Consumes, ExportFormat, message_dict, reason_name
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
        return {
            "prompt": [message_dict(m) for m in record.prompt],
            "chosen": [message_dict(m) for m in record.chosen],
            "rejected": [message_dict(m) for m in record.rejected],
            "id": record.id,
            "reason": reason_name(record.reason),
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
            "trainer = DPOTrainer(",
            "    model=model,",
            '    args=DPOConfig(output_dir="dpo-agent", beta=0.1),',
            '    train_dataset=dataset["train"],',
            '    eval_dataset=dataset.get("test"),',
            "    processing_class=tokenizer,",
            ")",
            "trainer.train()",
            "```",
        ])
