"""The labeler registry: names, recipe configs, env-specific replacement, plug-ins, re-labelling."""

from __future__ import annotations

from importlib.metadata import EntryPoint
from typing import ClassVar

import pytest

from prefbuild import registry
from prefbuild.labelers import available_labelers, build_labelers, label_trajectory
from prefbuild.labelers.base import Labeler
from prefbuild.labelers.loop import LoopLabeler
from prefbuild.records import EnvInfo, FailureMode, Label, Outcome, Step, StopReason, TaskInfo, TeacherInfo, Trajectory


def _trajectory(env: str = "household", actions: tuple[str, ...] = ("go to cabinet 3",) * 4) -> Trajectory:
    steps = [
        Step(index=i, observation="", raw_output=f"ACTION: {a}", action=a, feedback="Nothing happens.")
        for i, a in enumerate(actions)
    ]
    return Trajectory(
        id="t1",
        task=TaskInfo(id="t1", type="pick_and_place_simple", goal="put some knife on drawer.", split="train"),
        env=EnvInfo(name=env, protocol="agentbench" if env == "household" else "dbbench"),
        teacher=TeacherInfo(backend="scripted", model="m"),
        steps=steps,
        outcome=Outcome(success=False, stop_reason=StopReason.max_steps),
    )


def test_builtins_are_registered_under_their_names() -> None:
    found = available_labelers()
    for name in ("loop", "premature_success", "implausible_location", "verbose_filler", "format_violation"):
        assert found[name].name == name
    assert found["invalid_action"].mode == FailureMode.invalid_action


def test_defaults_for_household_exclude_sql_only_labelers() -> None:
    names = {labeler.name for labeler in build_labelers(None, env="household")}
    assert {"loop", "premature_success", "implausible_location", "invalid_action"} <= names
    assert not any(labeler.envs == ("sql",) for labeler in build_labelers(None, env="household"))


def test_sql_specific_labelers_replace_generic_ones_on_sql() -> None:
    labelers = build_labelers(None, env="sql")
    modes = [labeler.mode for labeler in labelers]
    assert len(modes) == len(set(modes)), "one labeler per failure mode"
    loop = next(labeler for labeler in labelers if labeler.mode == FailureMode.loop)
    assert loop.envs == ("sql",)
    assert {"verbose_filler", "format_violation"} <= {labeler.name for labeler in labelers}
    assert "invalid_action" not in {labeler.name for labeler in labelers}


def test_configs_set_params_and_unknown_entries_fail_clearly() -> None:
    (loop,) = build_labelers([{"name": "loop", "params": {"k": 4, "max_cycle": 6}}], env="household")
    assert isinstance(loop, LoopLabeler) and loop.config["k"] == 4 and loop.config["max_cycle"] == 6
    with pytest.raises(KeyError, match=r"labelers\[0\].name: unknown labeler 'lop'"):
        build_labelers([{"name": "lop"}], env="household")
    with pytest.raises(ValueError, match=r"labelers\[1\] \(loop\): .*unknown parameter 'kk'; known: k, max_cycle"):
        build_labelers([{"name": "verbose_filler"}, {"name": "loop", "params": {"kk": 1}}], env="household")
    with pytest.raises(ValueError, match="parameter 'k': Input should be a valid integer"):
        build_labelers([{"name": "loop", "params": {"k": "three"}}], env="household")


def test_generic_config_brings_its_sql_counterpart_for_mixed_files() -> None:
    labelers = build_labelers([{"name": "loop", "params": {"k": 5}}], env=None)
    assert [labeler.name for labeler in labelers] == ["loop", "sql_loop"]
    # On a household trajectory only the generic one runs, with k=5: four repeats are not a loop.
    labelled = label_trajectory(_trajectory(), labelers)
    assert labelled.labels == []
    labelled = label_trajectory(_trajectory(actions=("go to cabinet 3",) * 5), labelers)
    assert [label.step for label in labelled.labels] == [1, 2, 3, 4]
    assert {label.labeler for label in labelled.labels} == {"loop@5"}


def test_relabelling_replaces_labels() -> None:
    labelers = build_labelers([{"name": "loop"}], env="household")
    first = label_trajectory(_trajectory(), labelers)
    assert [label.step for label in first.labels] == [1, 2, 3]
    again = label_trajectory(first, labelers)
    assert again.labels == first.labels
    stricter = label_trajectory(first, build_labelers([{"name": "loop", "params": {"k": 4}}], env="household"))
    assert [label.step for label in stricter.labels] == [1, 2, 3]
    none = label_trajectory(first, build_labelers([{"name": "loop", "params": {"k": 9}}], env="household"))
    assert none.labels == []
    assert first.labels, "the input trajectory is not modified"


class _Shouty(Labeler):
    name: ClassVar[str] = "shouty"
    mode: ClassVar[FailureMode] = FailureMode.verbose_filler

    def label(self, trajectory: Trajectory) -> list[Label]:
        return [
            Label(mode=self.mode, step=s.index, confidence=1.0, evidence="upper case", labeler=self.tag)
            for s in trajectory.steps
            if s.raw_output.startswith("ACTION")
        ]


def test_entry_point_plugins_are_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    entry = EntryPoint(name="shouty", value=f"{__name__}:_Shouty", group="prefbuild.labelers")
    broken = EntryPoint(name="broken", value="no.such.module:Thing", group="prefbuild.labelers")
    monkeypatch.setattr(
        registry, "entry_points", lambda group: [entry, broken] if group == "prefbuild.labelers" else []
    )
    registry.clear_cache()
    try:
        assert available_labelers()["shouty"] is _Shouty
    finally:
        monkeypatch.undo()
        registry.clear_cache()
    monkeypatch.setitem(registry.BUILTINS["labelers"], "shouty", f"{__name__}:_Shouty")
    labelled = label_trajectory(_trajectory(), build_labelers([{"name": "shouty"}], env="household"))
    assert [label.labeler for label in labelled.labels] == ["shouty@1"] * 4


class _OutOfRange(Labeler):
    name: ClassVar[str] = "out_of_range"
    mode: ClassVar[FailureMode] = FailureMode.loop

    def label(self, trajectory: Trajectory) -> list[Label]:
        return [Label(mode=self.mode, step=99, confidence=1.0, evidence="x", labeler=self.tag)]


def test_a_plugin_label_on_a_missing_step_is_an_error() -> None:
    with pytest.raises(ValueError, match="out_of_range@1 labelled step 99 of trajectory 't1'"):
        label_trajectory(_trajectory(), [_OutOfRange()])
