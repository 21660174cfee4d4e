"""Successful episodes as chat ``messages`` for rejection-sampling fine-tuning (SFT).

A row is what the model saw at its last step plus its last turn; unsuccessful episodes are
left out (counted as ``not_successful``). Tool episodes carry a ``tools`` column and their
calls as structured ``tool_calls``. ``sft`` keeps every successful sample of a task (all
per task); ``sft_first`` only the first successful sample of each task (one per task).
pass@k per task (``prefbuild.analysis.passk``) goes with it in the export's ``stats.json``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from prefbuild.exports.base import Consumes, ExportFormat, message_dict
from prefbuild.exports.tooling import export_messages, tools_column
from prefbuild.records import Trajectory, assistant_turn, prompt_messages


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
        messages = export_messages([*prompt_messages(record, last.index), assistant_turn(last)], record.tools)
        return {
            "messages": [message_dict(m) for m in messages],
            "id": record.id,
            "task_id": record.task.id,
            **tools_column(record.tools),
        }

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


class SftFirstFormat(SftFormat):
    """``sft`` with one successful trajectory per task: the first in file order (the lowest
    sample index, files being in plan order); later successes are counted as ``not_first_for_task``.

    Example:
        >>> SftFirstFormat().name
        'sft_first'
    """

    name: ClassVar[str] = "sft_first"
    summary: ClassVar[str] = "one successful episode per task as chat messages (rejection-sampling SFT)"

    def __init__(self) -> None:
        self._tasks: set[str] = set()

    def skip_reason(self, record: Trajectory) -> str | None:
        reason = super().skip_reason(record)
        if reason is not None:
            return reason
        if record.task.id in self._tasks:
            return "not_first_for_task"
        self._tasks.add(record.task.id)
        return None
