"""The stated-figure rule of ``hallucinated_tool_output`` held at what it scores on each probe set
(message level: a message marked invented vs a message it says states a figure nothing returned)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.labelers.stated_score import score

HERE = Path(__file__).resolve().parent

# (precision, recall) floors. stated_probe: development data since its first score (P 0.44 R 0.73 on
# 2026-11-29, its README); the rule's changes were made reading its 14 false alarms and 4 misses.
# stated_probe2: held out until its first score (P 0.71 R 0.48, 2026-11-29, its README); then its four false
# alarms and one miss were read (fares under "prices" keys, a difference per passenger times the
# passengers, a number the message computes from its own, clock times); 7 of its 10 misses are facts
# told in words, which the figure checks do not read.
FLOORS = {
    "stated_probe": (1.0, 1.0),
    "stated_probe2": (0.91, 0.52),
}


@pytest.mark.parametrize("name", sorted(FLOORS))
def test_every_probe_holds_its_floors(name: str) -> None:
    result = score(HERE / name)
    floor_p, floor_r = FLOORS[name]
    assert result.precision is not None and result.precision >= floor_p, result.misses
    assert result.recall is not None and result.recall >= floor_r, result.misses


def test_every_probe_is_gated() -> None:
    assert {path.parent.name for path in HERE.glob("stated_probe*/marks.jsonl")} == set(FLOORS)
