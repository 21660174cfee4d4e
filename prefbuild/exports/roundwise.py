"""The published round-wise agent layout: ``messages`` (the prompt), ``chosen`` and ``rejected``
as assistant strings, ``reason`` in the seed datasets' vocabulary."""

from __future__ import annotations

from typing import Any, ClassVar

from prefbuild.exports.base import Consumes, ExportFormat, message_dict, single_turn
from prefbuild.records import Pair

# prefbuild failure-mode names -> the names used by published round-wise datasets.
ROUNDWISE_REASONS: dict[str, str] = {"premature_success": "task_succeeded_negative"}


def roundwise_reason(reason: Any) -> str | None:
    """A failure mode in the seed datasets' vocabulary.

    Example:
        >>> roundwise_reason("premature_success")
        'task_succeeded_negative'
        >>> roundwise_reason("loop")
        'loop'
    """
    if reason is None:
        return None
    value = str(reason)
    return ROUNDWISE_REASONS.get(value, value)


class RoundwiseFormat(ExportFormat):
    """Rows ``{"messages", "chosen", "rejected", "reason"}``, one assistant turn per side.

    Example:
        >>> RoundwiseFormat().consumes
        'pairs'
    """

    name: ClassVar[str] = "roundwise"
    consumes: ClassVar[Consumes] = "pairs"
    summary: ClassVar[str] = "round-wise agent preference (messages, chosen / rejected strings, reason)"

    def row(self, record: Pair) -> dict[str, Any]:
        chosen, rejected = single_turn(record, self.name)
        return {
            "messages": [message_dict(m) for m in record.prompt],
            "chosen": chosen.content,
            "rejected": rejected.content,
            "reason": roundwise_reason(record.reason),
        }
