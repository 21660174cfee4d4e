"""The one counter shape for what a stage did with its records: kept, and skipped with why.

Every stage that streams records and may leave some out (an export format that cannot
express a pair, the ``sft`` export skipping failed episodes, a pair strategy leaving out
candidates) reports the same two numbers: how many records it kept and, per reason, how many
it skipped. One class means one ``as_dict`` layout in ``stats.json``, the manifest and the
console, and one API for plug-ins (``stats.keep()``, ``stats.skip("why")``).

The other counters count different things and are not kept/skipped tallies: the rollout's
live ``RolloutStats`` (episodes, successes, token usage, for the progress bar),
``LabelCounts`` (labels per failure mode) and the pair pipeline's ``PairCounts``, which adds
up every strategy's ``Tally`` with the pipeline's own dedup, cap and balance counts.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Tally:
    """Records kept, and records skipped counted per reason.

    Example:
        >>> tally = Tally()
        >>> tally.keep(); tally.skip("not_successful")
        >>> tally.as_dict()
        {'kept': 1, 'skipped': {'not_successful': 1}}
    """

    kept: int = 0
    skipped: Counter[str] = field(default_factory=Counter)

    def keep(self, count: int = 1) -> None:
        """Count ``count`` kept records."""
        self.kept += count

    def skip(self, reason: str, count: int = 1) -> None:
        """Count ``count`` records left out for ``reason`` (a short snake_case key)."""
        self.skipped[reason] += count

    def merge(self, other: Tally) -> Tally:
        """Add ``other``'s counts to this tally; returns ``self``."""
        self.kept += other.kept
        self.skipped.update(other.skipped)
        return self

    def as_dict(self) -> dict[str, Any]:
        """Plain data for JSON: ``{"kept": int, "skipped": {reason: count}}`` (reasons sorted)."""
        return {"kept": self.kept, "skipped": dict(sorted(self.skipped.items()))}
