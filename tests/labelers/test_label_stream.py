"""The label stage's loop (``label_trajectories``) labels as ``label_trajectory`` does, records and structs alike."""

from __future__ import annotations

import glob
from collections import Counter
from pathlib import Path
from typing import ClassVar

from prefbuild.io.fast_records import to_struct
from prefbuild.io.sources import read_trajectories
from prefbuild.labelers import build_labelers, label_trajectories, label_trajectory
from prefbuild.labelers.loop import LoopLabeler
from prefbuild.labelers.stage import LabelCounts
from prefbuild.records import Trajectory
from tests.tooluse.test_tool_labelers import answer_step, call, tool_step, trajectory

ROOT = Path(__file__).resolve().parents[2]


class _OnlyEvenIds(LoopLabeler):
    """A plug-in style labeler whose applies_to reads the trajectory, not only its env."""

    name: ClassVar[str] = "loop"

    def applies_to(self, trajectory: Trajectory) -> bool:
        return super().applies_to(trajectory) and len(trajectory.steps) % 2 == 0


def _inputs() -> list[Trajectory]:
    files = sorted(glob.glob(str(ROOT / "tests/labelers/fixtures/trajectories.jsonl")))
    files += sorted(glob.glob(str(ROOT / "tests/labelers/blind_test*/*.jsonl")))[:6]
    found = [t for f in files if not f.endswith("labels.jsonl") for t in read_trajectories(Path(f))]
    c = call({"code": "print(6*7)"})
    tools = [
        trajectory([tool_step(0, [c], ["42"]), answer_step(1, "\\boxed{41}", won=False)], success=False),
        trajectory([answer_step(0, "\\boxed{42}", won=True)], success=True),
        # A household trajectory with a tool call: the tool labelers apply to it, not to its neighbours.
        trajectory(
            [tool_step(0, [c], ["42"]), answer_step(1, "\\boxed{41}", won=False)], success=False, env="household"
        ),
    ]
    return found[:40] + tools[:2] + found[40:80] + tools[2:] + found[80:120]


def _dump(records: list[Trajectory]) -> list[list[list[tuple[str, int, float, str, str]]]]:
    return [
        [[(x.mode, x.step, x.confidence, x.evidence, x.labeler) for x in step.labels] for step in t.steps]
        for t in records
    ]


def test_stream_labels_exactly_as_one_by_one() -> None:
    inputs = _inputs()
    assert {t.env.name for t in inputs} >= {"household", "sql", "code"}
    for labelers in (build_labelers(None, env=None), [*build_labelers(None, env=None), _OnlyEvenIds(k=3)]):
        one_by_one = [label_trajectory(t, labelers) for t in inputs]
        assert _dump(list(label_trajectories(inputs, labelers))) == _dump(one_by_one)
        structs = [to_struct(t) for t in inputs]
        assert _dump(list(label_trajectories(structs, labelers))) == _dump(one_by_one)


def test_counts_are_those_of_counters() -> None:
    labelled = list(label_trajectories(_inputs(), build_labelers(None, env=None)))
    counts = LabelCounts()
    labels: Counter[str] = Counter()
    trajectories_with: Counter[str] = Counter()
    for t in labelled:
        counts.add(t)
        modes = Counter(label.mode for step in t.steps for label in step.labels)
        labels.update(modes)
        trajectories_with.update(modes.keys())
    assert counts.labels and list(counts.labels.items()) == list(labels.items())
    assert list(counts.trajectories_with.items()) == list(trajectories_with.items())
    assert counts.steps == sum(len(t.steps) for t in labelled) and counts.trajectories == len(labelled)
