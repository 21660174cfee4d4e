"""The deployed labelers on the blind sets: the held-out set as a regression gate, the
development sets (the retired first test set included) at their measured figures.

The blind sets were written from the specification by annotators who never read the labeler
code nor saw its output.

* ``blind_test2`` is the held-out set. It was written after ``blind_test`` had been scored and
  was scored once, after the labeler work of 2026-11-22 evening
  (``bench/label_quality.py --set tests/labelers/blind_test2``). Its floors are issue 13's targets
  (P >= 0.95, R >= 0.90) where they were met, the measured figure where they were not (loop
  P 0.94, format_violation R 0.88).
* ``blind_test`` was scored once as the held-out set (2026-11-22 afternoon: premature_success
  P 0.94, wrong_answer R 0.89), then retired into development data: its misses were read and
  the labelers corrected. It and ``blind_dev`` now score 1.00 on every mode and are held there.

Raising a floor is fine; lowering one needs a reason in the commit.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from prefbuild.labelers.evaluation import ModeScore, evaluate_sidecar

HERE = Path(__file__).parent
TARGET_P, TARGET_R = 0.95, 0.90
HELD_OUT_FLOORS = {"loop": (0.94, TARGET_R), "format_violation": (TARGET_P, 0.88)}


Floors = dict[str, tuple[float, float]]


def _below(overall: dict[str, ModeScore], floors: Floors, default: tuple[float, float]) -> list[str]:
    below = []
    for mode, counts in overall.items():
        floor_p, floor_r = floors.get(mode, default)
        if counts.precision < floor_p or counts.recall < floor_r:
            below.append(f"{mode}: P {counts.precision:.2f} R {counts.recall:.2f} (floor {floor_p}/{floor_r})")
    return below


def test_every_mode_holds_its_floor_on_the_held_out_blind_set() -> None:
    overall = evaluate_sidecar(HERE / "blind_test2" / "labels.jsonl")["all"]
    assert not _below(overall, HELD_OUT_FLOORS, (TARGET_P, TARGET_R))


@pytest.mark.parametrize("name", ["blind_dev", "blind_test"])
def test_the_development_blind_sets_stay_fully_labelled(name: str) -> None:
    overall = evaluate_sidecar(HERE / name / "labels.jsonl")["all"]
    assert not _below(overall, {}, (1.0, 1.0))
