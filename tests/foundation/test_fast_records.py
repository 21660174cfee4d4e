"""The fast record layer reads, refuses, labels and writes exactly like the pydantic records.

Compared on every kind of input the label stage sees: the hand-labelled fixtures, every
blind set's logs imported into trajectory files (household, DBBench, ReAct), scripted runs of
the household, sql, code and bfcl envs, and the fault corpus of broken files.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import msgspec
import pytest
from pydantic import ValidationError

from prefbuild import api
from prefbuild.io.fast_records import encode_record, read_fast_records, struct_type, to_struct
from prefbuild.io.jsonl import JsonlWriter, RecordError, read_records
from prefbuild.io.rundir import trajectory_files
from prefbuild.io.sources import read_trajectories
from prefbuild.labelers import build_labelers, label_trajectory
from prefbuild.records import RECORD_MODELS, Label, Pair, Trajectory
from tests.foundation.factories import make_pair

TESTS = Path(__file__).resolve().parents[1]
FAULTS = sorted((TESTS / "faults" / "corpus" / "trajectories").glob("*.jsonl"))
SIDECARS = [*sorted((TESTS / "labelers").glob("blind*/labels.jsonl")), TESTS / "labelers" / "heldout" / "labels.jsonl"]
# The logs the hand-labelled sets label (a set folder may also hold its sources, e.g. a problem file).
BLIND_LOGS = sorted({sidecar.parent / json.loads(line)["log"] for sidecar in SIDECARS
                     for line in sidecar.read_text().splitlines() if line.strip()})


def outcome_of(reader, path: Path) -> tuple:  # type: ignore[no-untyped-def]
    """What a reader makes of a file: its records' JSON and warnings, or its error's text."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            records = [JsonlWriter.encode(record) for record in reader(path, Trajectory)]
        return ("read", records, [str(warning.message) for warning in caught])
    except Exception as error:  # handled: the error itself is what is compared
        return (type(error).__name__, str(error))


def assert_same_labelling(path: Path) -> int:
    """Both layers read ``path`` and label it to the same bytes; returns how many trajectories."""
    labelers = build_labelers(None, env=None)
    records = [JsonlWriter.encode(label_trajectory(t, labelers)) for t in read_trajectories(path)]
    structs = read_trajectories(path, fast=True)
    fast = [JsonlWriter.encode(label_trajectory(t, labelers)) for t in structs]
    assert fast == records
    return len(records)


@pytest.mark.parametrize("path", FAULTS, ids=[path.stem for path in FAULTS])
def test_broken_files_are_refused_alike(path: Path) -> None:
    assert outcome_of(read_fast_records, path) == outcome_of(read_records, path)


def test_fixtures_read_write_and_label_alike() -> None:
    path = TESTS / "labelers" / "fixtures" / "trajectories.jsonl"
    assert outcome_of(read_fast_records, path) == outcome_of(read_records, path)
    assert assert_same_labelling(path) > 70


def test_imported_blind_logs_label_alike(tmp_path: Path) -> None:
    imported = tmp_path / "imported.jsonl"
    with JsonlWriter(imported, flush=False) as writer:
        for log in BLIND_LOGS:
            for trajectory in read_trajectories(log):
                writer.write(trajectory)
    assert {t.env.name for t in read_records(imported, Trajectory)} == {"household", "sql", "code", "tau2", "bfcl"}
    assert assert_same_labelling(imported) > 1500


@pytest.mark.parametrize(
    ("recipe", "setting"),
    [
        ("simulate", "env.num_tasks=40"),
        ("agentbench-ironguard", "env.0.num_tasks=8"),
        ("code-interpreter", "env.num_tasks=3"),
        ("bfcl-envtuning", "env.num_tasks=4"),
    ],
)
def test_scripted_runs_label_alike(tmp_path: Path, recipe: str, setting: str) -> None:
    overrides = ["teacher.backend=scripted", "teacher.model=scripted-expert", setting]
    api.generate(recipe, overrides=overrides, out=tmp_path / "run", quiet=True)
    for path in trajectory_files(tmp_path / "run"):
        assert assert_same_labelling(path) > 0


def test_label_stage_output_is_the_same_bytes_either_way(tmp_path: Path) -> None:
    source = TESTS / "labelers" / "fixtures" / "trajectories.jsonl"
    api.label([source], tmp_path / "fast.jsonl")  # the built-in labelers: the struct path
    labelers = build_labelers(None, env=None)
    records = read_records(source, Trajectory)
    expected = b"".join(JsonlWriter.encode(label_trajectory(t, labelers)) + b"\n" for t in records)
    assert (tmp_path / "fast.jsonl").read_bytes() == expected


def test_lax_values_only_pydantic_accepts_are_read_as_pydantic_reads_them(tmp_path: Path) -> None:
    record = json.loads((TESTS / "labelers" / "fixtures" / "trajectories.jsonl").read_text().splitlines()[0])
    record["steps"][0]["index"] = "0"  # pydantic's lax mode reads the string as an int; msgspec refuses it
    record["sample_index"] = 0.0
    path = tmp_path / "lax.jsonl"
    path.write_text(json.dumps(record) + "\n")
    (fast,) = read_fast_records(path, Trajectory)
    (slow,) = read_records(path, Trajectory)
    assert isinstance(fast, msgspec.Struct)
    assert fast.steps[0].index == 0 and encode_record(fast) == JsonlWriter.encode(slow)


def test_a_value_without_a_struct_form_keeps_the_pydantic_record(tmp_path: Path) -> None:
    line = (TESTS / "labelers" / "fixtures" / "trajectories.jsonl").read_text().splitlines()[0]
    record = json.loads(line)
    record["steps"][0]["raw_output"] = "\ud800"  # a lone surrogate: read, but no JSON (nor struct) can carry it
    path = tmp_path / "surrogate.jsonl"
    path.write_text(json.dumps(record) + "\n")
    (fast,) = read_fast_records(path, Trajectory)
    (slow,) = read_records(path, Trajectory)
    assert not isinstance(fast, msgspec.Struct) and fast == slow


NON_FINITE = ["NaN", "Infinity", "-Infinity", "1e400", "-1e400", '"NaN"', '"nan"', '"inf"', '"-Infinity"']


@pytest.mark.parametrize("number", NON_FINITE)
@pytest.mark.parametrize(
    "field", ["outcome.reward", "steps.0.reward", "steps.0.latency_s", "steps.0.facts.progress", "outcome.progress"]
)
def test_non_finite_floats_are_refused_alike_at_their_field(tmp_path: Path, field: str, number: str) -> None:
    record = json.loads((TESTS / "labelers" / "fixtures" / "trajectories.jsonl").read_text().splitlines()[0])
    node = record
    *parents, name = [int(part) if part.isdigit() else part for part in field.split(".")]
    for part in parents:
        node = node[part]
    node[name] = "__number__"
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(record).replace('"__number__"', number) + "\n")
    fast, slow = outcome_of(read_fast_records, path), outcome_of(read_records, path)
    assert fast == slow == ("RecordError", f"{path}:1 {field}: Input should be a finite number")


@pytest.mark.parametrize("number", NON_FINITE)
def test_non_finite_pair_scores_and_label_confidences_are_refused_alike(tmp_path: Path, number: str) -> None:
    pair = json.loads(make_pair(scores={"margin": 1.0}).model_dump_json())
    pair["scores"]["margin"] = "__number__"
    path = tmp_path / "pairs.jsonl"
    path.write_text(json.dumps(pair).replace('"__number__"', number) + "\n")
    for reader in (read_fast_records, read_records):
        with pytest.raises(RecordError, match=r"pairs.jsonl:1 scores\.margin: Input should be a finite number"):
            list(reader(path, Pair))
    label = b'{"mode":"loop","step":0,"confidence":%s,"evidence":"x","labeler":"loop@5"}' % number.encode()
    with pytest.raises(ValidationError, match="finite number"):
        Label.model_validate_json(label)
    with pytest.raises(msgspec.DecodeError):  # msgspec's validation errors are decode errors
        msgspec.json.decode(label, type=struct_type(Label))


def test_structs_keep_validators_constraints_and_order() -> None:
    for model in RECORD_MODELS.values():
        assert struct_type(model).__struct_fields__ == tuple(model.model_fields)
    label = b'{"mode":"loop","step":0,"confidence":1.5,"evidence":"x","labeler":"loop@5"}'
    with pytest.raises(msgspec.ValidationError, match="confidence"):
        msgspec.json.decode(label, type=struct_type(RECORD_MODELS["label"]))
    with pytest.raises(msgspec.ValidationError, match="unknown failure mode"):
        msgspec.json.decode(label.replace(b'"loop"', b'"lopo"', 1).replace(b"1.5", b"0.5"),
                            type=struct_type(RECORD_MODELS["label"]))
    trajectory = next(read_records(TESTS / "labelers" / "fixtures" / "trajectories.jsonl", Trajectory))
    assert to_struct(trajectory).labels == [to_struct(label) for label in trajectory.labels]
