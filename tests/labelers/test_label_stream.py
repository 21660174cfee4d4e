"""The label stage's loop (``label_trajectories``) labels as ``label_trajectory`` does, records and structs alike."""

from __future__ import annotations

import glob
from collections import Counter
from pathlib import Path
from typing import ClassVar

from prefbuild.io.fast_records import replace_record, struct_of, to_struct
from prefbuild.io.sources import read_trajectories
from prefbuild.labelers import _applicable, _Chooser, build_labelers, label_trajectories, label_trajectory
from prefbuild.labelers.loop import LoopLabeler
from prefbuild.labelers.stage import LabelCounts
from prefbuild.labelers.tools.calls import ToolLabeler
from prefbuild.labelers.tools.scan import is_tool_trajectory
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


def test_the_stream_chooses_the_labelers_each_trajectory_would_ask_for() -> None:
    """``_Chooser`` decides once per (env, tool trajectory) what ``_applicable`` asks every labeler of every
    trajectory: the same labelers, in the same order, on every kind of input (household with and without
    tool calls, sql, code, a plug-in env), and every labeler asked where one overrides ``applies_to``."""
    inputs = _inputs()
    inputs.append(replace_record(inputs[0], env=replace_record(inputs[0].env, name="my_plugin_env")))
    sets = [
        build_labelers(None, env=None),
        build_labelers([{"name": "loop"}, {"name": "premature_success"}], env=None),
        [labeler for labeler in build_labelers(None, env=None) if labeler.tool_trajectories_only],
        [],
        [*build_labelers(None, env=None), _OnlyEvenIds(k=3)],
    ]
    for labelers in sets:
        choose = _Chooser(labelers)
        for record in inputs:
            for kind in (record, to_struct(record)):
                assert choose(kind) == _applicable(labelers, kind)
    assert any(is_tool_trajectory(t) and t.env.name == "household" for t in inputs)


def test_tool_labelers_apply_only_to_tool_trajectories() -> None:
    """``tool_trajectories_only`` is what ``ToolLabeler`` asked in its own ``applies_to`` before."""
    household = [t for t in _inputs() if t.env.name == "household"]
    for labeler in build_labelers(None, env=None):
        assert labeler.tool_trajectories_only == isinstance(labeler, ToolLabeler)
        if isinstance(labeler, ToolLabeler):
            assert {labeler.applies_to(t) for t in household} == {True, False}
            assert all(labeler.applies_to(t) == is_tool_trajectory(t) for t in household)


def test_struct_of_a_label_is_its_struct() -> None:
    """``struct_of`` (built from the record's fields) reads as ``to_struct`` (through its JSON) does."""
    labelled = [label for t in label_trajectories(_inputs(), build_labelers(None, env=None)) for label in t.labels]
    assert labelled
    for label in labelled:
        assert struct_of(label) == to_struct(label)
