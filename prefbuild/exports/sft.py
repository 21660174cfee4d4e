"""Successful episodes as chat ``messages`` for rejection-sampling fine-tuning (SFT).

A row is what the model saw at its last step plus its last turn; unsuccessful episodes are
left out (counted as ``not_successful``). pass@k per task (``prefbuild.analysis.passk``) goes
with it in the export's ``stats.json``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from prefbuild.exports.base import Consumes, ExportFormat, message_dict
from prefbuild.records import Message, Role, Trajectory, prompt_messages


class SftFormat(ExportFormat):
    """Rows ``{"messages", "id", "task_id"}`` from successful trajectories.

    Example:
        >>> SftFormat().consumes
        'trajectories'
    """

    name: ClassVar[str] = "sft"
    consumes: ClassVar[Consumes] = "trajectories"
    summary: ClassVar[str] = "successful episodes as chat messages (rejection-sampling SFT)"

    def skip_reason(self, record: Trajectory) -> str | None:
        return None if record.outcome.success else "not_successful"

    def row(self, record: Trajectory) -> dict[str, Any]:
        last = record.steps[-1]
        messages = [*prompt_messages(record, last.index), Message(role=Role.assistant, content=last.raw_output)]
        return {"messages": [message_dict(m) for m in messages], "id": record.id, "task_id": record.task.id}

    def loading_snippet(self, repo_id: str, config: str) -> str:
        return "\n".join([
            f"Fine-tune on the `{config}` config (chat `messages`) with TRL's `SFTTrainer`:",
            "",
            "```python",
            "from datasets import load_dataset",
            "from trl import SFTConfig, SFTTrainer",
            "",
            f'dataset = load_dataset("{repo_id}", "{config}")',
            'trainer = SFTTrainer(model="HuggingFaceTB/SmolLM2-135M-Instruct", args=SFTConfig(output_dir="sft-agent"),',
            '                     train_dataset=dataset["train"])',
            "trainer.train()",
            "```",
        ])
