"""The pair stage reads trajectories as structs for the built-in strategies that take them.

``stepwise`` and ``style`` read the struct form of a trajectory (``prefbuild.io.fast_records``)
and make records of its parts where a pair needs them (``records.as_record``/``as_message``).
Each check builds the pairs twice, from pydantic records and from structs of the same file,
and compares every pair's bytes and every count: scripted runs of the household, sql, code and
bfcl envs (native tool calls and tool messages among them), the replaying path (steps without
``searcher_action``), the oracle, and teacher-written turns (the teacher sees the same prompts).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from prefbuild import api
from prefbuild.io.fast_records import is_struct, read_fast_records
from prefbuild.io.jsonl import JsonlWriter, read_records
from prefbuild.io.rundir import trajectory_files
from prefbuild.pairs import PairStrategy, build_pairs
from prefbuild.pairs.stage import strategies_read_structs
from prefbuild.pairs.strategies.stepwise import StepwiseStrategy
from prefbuild.records import Label, Trajectory, assistant_turn, observation_turns, prompt_messages, structured_calls
from prefbuild.simulation.scripted import ScriptedTeacher
from tests.pairs.household import RecordingTeacher
from tests.tooluse.test_native_rollout import BFCL, TAU2, NativeExpert
from tests.tooluse.test_native_rollout import run as play_native

SPECS: list[list[dict]] = [
    [{"name": "stepwise"}, {"name": "style"}],
    [{"name": "stepwise", "params": {"chosen": "template", "expert": "oracle"}}],
    [{"name": "stepwise", "params": {"chosen": "template", "expert": "searcher"}}, {"name": "style"}],
]
RUNS = {
    "simulate": "env.num_tasks=30",
    "agentbench-ironguard": "env.0.num_tasks=8",
    "code-interpreter": "env.num_tasks=3",
    "bfcl-envtuning": "env.num_tasks=4",
}


@pytest.fixture(scope="module")
def labelled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A labelled scripted run of each recipe, and the household run without ``searcher_action``."""
    files: dict[str, Path] = {}
    for recipe, setting in RUNS.items():
        run = tmp_path_factory.mktemp(recipe)
        overrides = ["teacher.backend=scripted", "teacher.model=scripted-expert", setting]
        api.generate(recipe, overrides=overrides, out=run / "run", quiet=True)
        api.label(trajectory_files(run / "run"), run / "labelled.jsonl")
        files[recipe] = run / "labelled.jsonl"
    unrecorded = files["simulate"].with_name("unrecorded.jsonl")
    with files["simulate"].open(encoding="utf-8") as source, unrecorded.open("w", encoding="utf-8") as target:
        for line in source:
            record = json.loads(line)
            for step in record["steps"]:
                step.pop("searcher_action", None)
            target.write(json.dumps(record) + "\n")
    files["simulate-unrecorded"] = unrecorded
    return files


def built(reader, path: Path, specs: list[dict], teacher=None) -> tuple[list[bytes], dict]:  # type: ignore[no-untyped-def]
    report = build_pairs(reader(path, Trajectory), specs, teacher=teacher, test_fraction=0.2, seed=3)
    pairs = [JsonlWriter.encode(pair) for pair in report.shared()]
    return pairs, report.counts.as_dict()


@pytest.mark.parametrize("run", [*RUNS, "simulate-unrecorded"])
@pytest.mark.parametrize("specs", SPECS, ids=["stepwise+style", "oracle-template", "searcher+style"])
def test_pairs_from_structs_are_the_pairs_from_records(labelled: dict[str, Path], run: str, specs: list[dict]) -> None:
    assert is_struct(next(read_fast_records(labelled[run], Trajectory)))
    from_structs = built(read_fast_records, labelled[run], specs)
    assert from_structs == built(read_records, labelled[run], specs)
    if run in ("simulate", "simulate-unrecorded", "agentbench-ironguard"):
        assert from_structs[0], "the scripted run should give pairs"


def test_native_tool_calls_and_tool_messages_make_the_same_pairs(tmp_path: Path) -> None:
    """Structured calls (``native_tool_calls``) and tool/user messages, from a bfcl and a tau2 episode
    played in the OpenAI layout, every step labelled a format violation so ``stepwise`` pairs it."""
    trajectories = play_native(BFCL, NativeExpert())
    if importlib.util.find_spec("tau2") is not None:
        trajectories += play_native(TAU2, NativeExpert())
    path = tmp_path / "native.jsonl"
    with JsonlWriter(path, flush=False) as writer:
        for trajectory in trajectories:
            labelled_steps = [
                step.model_copy(update={"labels": [Label(mode="format_violation", step=step.index, confidence=1.0,
                                                         evidence="test", labeler="test@1")]})
                for step in trajectory.steps
            ]
            writer.write(trajectory.model_copy(update={"steps": labelled_steps}))
    records = list(read_records(path, Trajectory))
    structs = list(read_fast_records(path, Trajectory))
    steps = [step for trajectory in records for step in trajectory.steps]
    assert any(step.native_tool_calls and step.tool_calls for step in steps)
    assert any(step.observation_messages for step in steps)
    for record, struct in zip(records, structs, strict=True):
        for index, step in enumerate(record.steps):
            assert prompt_messages(struct, index) == prompt_messages(record, index)
            assert assistant_turn(struct.steps[index]) == assistant_turn(step)
            assert structured_calls(struct.steps[index]) == structured_calls(step)
            assert observation_turns(struct.steps[index], in_history=True) == observation_turns(step, in_history=True)
    specs = [{"name": "stepwise"}]
    from_structs = built(read_fast_records, path, specs)
    assert from_structs == built(read_records, path, specs)
    assert any(b'"tool_calls":[{' in pair for pair in from_structs[0]), "a rejected or history turn with calls"


@pytest.mark.parametrize(
    "specs",
    [
        [{"name": "stepwise", "params": {"chosen": "teacher", "seed": 5}}],
        [{"name": "style", "params": {"rewrite": "teacher"}}],
    ],
    ids=["stepwise-teacher", "style-teacher"],
)
def test_teacher_written_turns_see_the_same_prompts(labelled: dict[str, Path], specs: list[dict]) -> None:
    seen = []
    results = []
    for reader in (read_records, read_fast_records):
        teacher = RecordingTeacher(ScriptedTeacher({"verbose_filler": 0.5, "loop": 0.2}))
        results.append(built(reader, labelled["simulate-unrecorded"], specs, teacher=teacher))
        seen.append({key: [m.model_dump() for m in messages] for key, messages in teacher.seen.items()})
    assert results[0] == results[1] and seen[0] == seen[1]
    assert seen[0], "the teacher should have been asked"


def test_the_stage_reads_structs_only_for_built_in_strategies_that_take_them(
    labelled: dict[str, Path], tmp_path: Path
) -> None:
    assert strategies_read_structs([{"name": "stepwise"}, {"name": "style", "params": {}}])
    assert not strategies_read_structs([{"name": "stepwise"}, {"name": "trajectory"}])
    assert not strategies_read_structs([{"name": "best_of_n"}])
    assert not strategies_read_structs([{"name": "no-such-strategy"}])
    assert not PairStrategy.reads_structs

    class Derived(StepwiseStrategy):  # a plug-in's subclass of a built-in: it gets records
        name = "derived"

    assert Derived.reads_structs and not Derived.__module__.startswith("prefbuild.")
    # The stage's file is the file the records path writes.
    api.pair([labelled["simulate"]], tmp_path / "pairs.jsonl", recipe="simulate")
    recipe = api.load("simulate").recipe
    report = build_pairs(
        read_records(labelled["simulate"], Trajectory), [s.model_dump() for s in recipe.pairs.strategies],
        max_per_reason=recipe.pairs.max_per_reason, max_per_trajectory=recipe.pairs.max_per_trajectory,
        dedup=recipe.pairs.dedup, near_dedup=recipe.pairs.near_dedup, test_fraction=recipe.pairs.test_fraction,
        seed=recipe.seed,
    )
    expected = b"".join(JsonlWriter.encode(pair) + b"\n" for pair in report.shared())
    assert expected and (tmp_path / "pairs.jsonl").read_bytes() == expected


def test_replay_finds_the_same_task_for_a_struct(labelled: dict[str, Path]) -> None:
    from prefbuild.pairs.replay import task_for

    checked = set()
    for run in ("simulate", "agentbench-ironguard", "code-interpreter"):
        records = read_records(labelled[run], Trajectory)
        for record, struct in zip(records, read_fast_records(labelled[run], Trajectory), strict=True):
            assert task_for(struct).info == task_for(record).info
            checked.add(record.env.name)
    assert {"household", "sql", "code"} <= checked
