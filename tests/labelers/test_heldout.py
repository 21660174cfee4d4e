"""The held-out label-quality set: structure, strict loading, the scorer, and the acceptance figures.

Issue 13's goal is P >= 0.95 and R >= 0.90 per mode on real logs of the three shapes; the
deployed labelers are asserted here at the figures measured on this set (the table is printed
to the terminal, capture disabled, so with or without -s).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prefbuild.labelers.evaluation import (
    SCORED_MODES,
    LabelFileError,
    evaluate_sidecar,
    format_table,
    load_expected,
    score,
)
from tests.labelers.heldout.build import SHAPES, build
from tests.labelers.strict_yaml import FixtureError

HELDOUT = Path(__file__).parent / "heldout"
LABELS = HELDOUT / "labels.jsonl"
NOT_APPLICABLE = {
    "agentbench-dbbench": {"implausible_location", "invalid_action", "phantom_object"},
    "agentbench-household": {"sql_error", "wrong_answer"},
    "react-household": {"sql_error", "wrong_answer"},
}


def test_built_files_match_their_sources() -> None:
    logs, sidecar = build()
    for name, records in logs.items():
        written = [json.loads(line) for line in (HELDOUT / name).read_text(encoding="utf-8").splitlines()]
        assert written == records, f"{name} is stale: run tests/labelers/heldout/build.py"
    assert [json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines()] == sidecar


def test_every_shape_is_large_and_every_applicable_mode_has_positives_and_negatives() -> None:
    episodes = load_expected(LABELS)
    assert len(episodes) >= 60
    for shape, not_applicable in NOT_APPLICABLE.items():
        mine = [episode for episode in episodes if episode.shape == shape]
        assert len(mine) >= 20, shape
        for mode in SCORED_MODES:
            if mode in not_applicable:
                assert not any(label.mode == mode for episode in mine for label in episode.labels), (shape, mode)
                continue
            positive = [e.id for e in mine if any(label.mode == mode for label in e.labels)]
            negative = [e.id for e in mine if not any(label.mode == mode for label in e.labels)]
            assert positive, f"{shape}: no positive {mode}"
            assert len(negative) >= 5, f"{shape}: {len(negative)} negatives for {mode}"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"log": "a.jsonl", "record": 1, "id": "x", "shape": "s", "labels": [], "extra": 1}', "extra"),
        ('{"log": "a.jsonl", "record": 1, "id": "x", "shape": "s", "labels": [{"step": 0, "mode": "lop"}]}', "lop"),
        ('{"log": "a.jsonl", "record": 1, "id": "x", "shape": "s", "labels": [{"step": "1", "mode": "loop"}]}', "step"),
        ('{"log": "a.jsonl", "record": 1, "id": "x", "shape": "s", "labels": [{"step": -1, "mode": "loop"}]}', "step"),
        ('{"log": "a.jsonl", "record": 1, "id": "x", "shape": "s", "labels": [{"step": 1}]}', "mode"),
        ("{not json", "record"),
    ],
)
def test_loader_rejects_a_corrupted_sidecar_naming_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    good = LABELS.read_text(encoding="utf-8").splitlines()[:2]
    path = tmp_path / "labels.jsonl"
    path.write_text("\n".join([*good, line]) + "\n", encoding="utf-8")
    with pytest.raises(LabelFileError, match=rf"^{path}:3 .*{message}"):
        load_expected(path)


def test_loader_rejects_a_record_labelled_twice(tmp_path: Path) -> None:
    first = LABELS.read_text(encoding="utf-8").splitlines()[0]
    path = tmp_path / "labels.jsonl"
    path.write_text(first + "\n" + first + "\n", encoding="utf-8")
    with pytest.raises(LabelFileError, match=rf"^{path}:2 record"):
        load_expected(path)


def test_source_with_an_unquoted_comma_fails_at_its_line(tmp_path: Path) -> None:
    for name in SHAPES:
        (tmp_path / name).write_text((HELDOUT / name).read_text(encoding="utf-8"), encoding="utf-8")
    source = (tmp_path / "react.yaml").read_text(encoding="utf-8").splitlines()
    target = next(i for i, text in enumerate(source) if text.startswith("    - {a: go to fridge 1"))
    source[target] = "    - {a: go to fridge 1, o: The fridge 1 is closed, I think., x: go to fridge 1}"
    (tmp_path / "react.yaml").write_text("\n".join(source) + "\n", encoding="utf-8")
    with pytest.raises(FixtureError, match=rf"react.yaml:{target + 1} .*unknown key 'I think.'"):
        build(tmp_path)


def test_scorer_counts_a_hand_example() -> None:
    scores = score(
        [
            ("a", {(1, "loop"), (2, "loop"), (0, "verbose_filler")}, {(2, "loop"), (3, "loop"), (0, "invalid_action")}),
            ("b", {(4, "loop")}, {(4, "loop")}),
            ("c", set(), {(0, "verbose_filler")}),
        ]
    )
    loop = scores["loop"]
    assert (loop.tp, loop.fp, loop.fn) == (2, 1, 1)
    assert loop.precision == pytest.approx(2 / 3) and loop.recall == pytest.approx(2 / 3)
    filler = scores["verbose_filler"]
    assert (filler.tp, filler.fp, filler.fn) == (0, 1, 1)
    assert filler.f1 is None
    assert (scores["invalid_action"].tp, scores["invalid_action"].fp) == (0, 1)
    assert scores["sql_error"].precision is None and scores["sql_error"].recall is None
    assert scores["loop"].misses == ["a: FP [3] FN [1]"]


# Measured on this set with the labelers as deployed (bench/label_quality.py): every mode at
# P = R = 1.00 but invalid_action at P = 0.96 (22 TP, 1 FP). Issue 13's goal is P >= 0.95,
# R >= 0.90; the asserts hold the measured level. The one difference is a reading of the
# definitions: here a ReAct line with another protocol's tags that the game answered "Nothing
# happens." (re-format-eto-tags, step 0) is a format violation only; the blind evaluation sets
# (tests/labelers/blind_sets.md, written later from the same definitions) label such a line
# invalid_action as well, and the labeler follows them.
MEASURED = {mode: (1.0, 1.0) for mode in SCORED_MODES} | {"invalid_action": (0.95, 1.0)}
BELOW_ONE = {("react-household", "invalid_action")}


def test_deployed_scores_on_the_heldout_set_meet_the_measured_figures(capsys: pytest.CaptureFixture[str]) -> None:
    results = evaluate_sidecar(LABELS)
    labelled = sum(len(e.labels) for e in load_expected(LABELS))
    assert sum(s.tp + s.fn for s in results["all"].values()) == labelled
    tables = "\n\n".join(format_table(f"held-out {shape}, labelers as deployed", s) for shape, s in results.items())
    with capsys.disabled():
        print("\n" + tables)
    for mode, (precision, recall) in MEASURED.items():
        counts = results["all"][mode]
        assert counts.tp + counts.fn > 0, f"{mode} has no positive example"
        assert (counts.precision or 0.0) >= precision, f"{mode}: {counts.misses}"
        assert (counts.recall or 0.0) >= recall, f"{mode}: {counts.misses}"
        for shape, scores in results.items():
            counted = scores[mode].tp + scores[mode].fp + scores[mode].fn
            if shape != "all" and counted and (shape, mode) not in BELOW_ONE:
                assert scores[mode].precision == scores[mode].recall == 1.0, f"{shape} {mode}: {scores[mode].misses}"
