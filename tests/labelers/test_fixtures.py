"""Precision and recall of every built-in labeler on the hand-labelled fixture set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prefbuild.labelers import BUILTIN_LABELERS, build_labelers, label_trajectory
from prefbuild.labelers.evaluation import evaluate_trajectories, format_table
from prefbuild.records import Trajectory
from tests.labelers.fixtures.build import build

FIXTURES = Path(__file__).parent / "fixtures"
MIN_PRECISION = 0.95
MIN_RECALL = 0.90


def _load() -> tuple[list[Trajectory], dict[str, dict[str, list[int]]]]:
    trajectories = [
        Trajectory.model_validate_json(line)
        for line in (FIXTURES / "trajectories.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    expected = {
        entry["id"]: entry["labels"]
        for entry in map(json.loads, (FIXTURES / "expected.jsonl").read_text(encoding="utf-8").splitlines())
    }
    return trajectories, expected


TRAJECTORIES, EXPECTED = _load()


def test_fixture_files_match_their_source() -> None:
    trajectories, expected = build()
    assert [t.model_dump(mode="json") for t in trajectories] == [t.model_dump(mode="json") for t in TRAJECTORIES]
    assert {entry["id"]: entry["labels"] for entry in expected} == EXPECTED


def test_fixture_set_is_large_and_covers_every_labeler_both_ways() -> None:
    assert len(TRAJECTORIES) >= 60
    for name in BUILTIN_LABELERS:
        positive = [t.id for t in TRAJECTORIES if EXPECTED[t.id].get(name)]
        negative = [t.id for t in TRAJECTORIES if not EXPECTED[t.id].get(name)]
        assert len(positive) >= 4, f"{name}: only {len(positive)} positive trajectories"
        assert len(negative) >= 10, f"{name}: only {len(negative)} negative trajectories"


def _score(name: str) -> tuple[int, int, int, list[str]]:
    """Scores failure mode ``name`` as deployed: the default labeler set of each trajectory's env."""
    mode = BUILTIN_LABELERS[name].mode
    tp = fp = fn = 0
    misses: list[str] = []
    for trajectory in TRAJECTORIES:
        labelled = label_trajectory(trajectory, build_labelers(None, env=trajectory.env.name))
        found = {label.step for label in labelled.labels if label.mode == mode}
        wanted = set(EXPECTED[trajectory.id].get(name, []))
        tp += len(found & wanted)
        fp += len(found - wanted)
        fn += len(wanted - found)
        misses += (
            [f"{trajectory.id} FP {sorted(found - wanted)} FN {sorted(wanted - found)}"] if found != wanted else []
        )
    return tp, fp, fn, misses


@pytest.mark.parametrize("name", sorted(BUILTIN_LABELERS))
def test_precision_and_recall(name: str) -> None:
    tp, fp, fn, misses = _score(name)
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    assert tp > 0
    assert precision >= MIN_PRECISION, f"{name}: precision {precision:.3f}; {misses}"
    assert recall >= MIN_RECALL, f"{name}: recall {recall:.3f}; {misses}"


def test_development_scores_are_reported(capsys: pytest.CaptureFixture[str]) -> None:
    scores = evaluate_trajectories(FIXTURES / "trajectories.jsonl", EXPECTED)
    assert scores["loop"].tp > 0
    with capsys.disabled():
        print("\n" + format_table("development fixtures, labelers as deployed", scores))


def test_labels_carry_mode_version_and_evidence() -> None:
    for name, cls in BUILTIN_LABELERS.items():
        labeler = cls()
        for trajectory in TRAJECTORIES:
            for label in labeler.label(trajectory):
                assert label.mode == cls.mode
                assert label.labeler == f"{name}@{cls.version}"
                assert label.evidence.strip()
                assert 0.0 < label.confidence <= 1.0
