"""JSONL store: located errors, truncated tails after a crash, atomic artefacts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prefbuild.io.jsonl import (
    JsonlWriter,
    RecordError,
    TruncatedLineWarning,
    atomic_path,
    atomic_write_text,
    detect_kind,
    read_records,
    write_records,
)
from prefbuild.records import Pair, Trajectory
from tests.foundation.factories import make_pair, make_trajectory


def test_reader_names_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "pairs.jsonl"
    good = make_pair().model_dump_json()
    bad = json.loads(good)
    bad["source"]["step"] = -1
    path.write_text("\n".join([good, good, json.dumps(bad), good]) + "\n")
    reader = read_records(path, Pair)
    assert next(reader).id == "pair-1"
    next(reader)
    with pytest.raises(RecordError) as caught:
        next(reader)
    assert caught.value.line == 3
    assert caught.value.field == "source.step"
    assert str(caught.value).startswith(f"{path}:3 source.step: ")


def test_reader_reports_bad_json_and_non_objects(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text(make_pair().model_dump_json() + "\n{not json\n" + make_pair().model_dump_json() + "\n")
    with pytest.raises(RecordError, match=r"x.jsonl:2: not valid JSON"):
        list(read_records(path, Pair))
    path.write_text("[1, 2]\n")
    with pytest.raises(RecordError, match="expected a JSON object"):
        list(read_records(path, Pair))


def test_truncated_last_line_is_reported_and_skipped(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    line = make_trajectory().model_dump_json()
    path.write_text(line + "\n" + line + "\n" + line[: len(line) // 2])
    with pytest.warns(TruncatedLineWarning, match=":3"):
        records = list(read_records(path, Trajectory))
    assert len(records) == 2


def test_writer_repairs_truncated_tail_before_appending(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    line = make_trajectory().model_dump_json()
    path.write_text(line + "\n" + line[:40])
    with JsonlWriter(path) as writer:
        assert writer.repaired_bytes == 40
        writer.write(make_trajectory(id="traj-2"))
    assert [t.id for t in read_records(path, Trajectory)] == ["traj-1", "traj-2"]


def test_writer_flushes_each_record(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    writer = JsonlWriter(path)
    writer.write(make_trajectory())
    # Visible to another reader before close: the record is on disk, not in a buffer.
    assert path.read_text().count("\n") == 1
    writer.close()
    writer.close()


def test_atomic_path_keeps_old_file_on_error(tmp_path: Path) -> None:
    path = tmp_path / "pairs.jsonl"
    path.write_text("old\n")
    with pytest.raises(RuntimeError), atomic_path(path) as temporary:
        temporary.write_text("half-written")
        raise RuntimeError("crash")
    assert path.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pairs.jsonl"]
    atomic_write_text(path, "new\n")
    assert path.read_text() == "new\n"


def test_write_records_and_detect_kind(tmp_path: Path) -> None:
    pairs = tmp_path / "p.jsonl"
    trajectories = tmp_path / "t.jsonl"
    assert write_records(pairs, [make_pair(), make_pair(id="pair-2")]) == 2
    write_records(trajectories, [make_trajectory()])
    assert detect_kind(pairs) == "pair"
    assert detect_kind(trajectories) == "trajectory"
    (tmp_path / "e.jsonl").write_text("\n")
    with pytest.raises(RecordError, match="empty"):
        detect_kind(tmp_path / "e.jsonl")
    (tmp_path / "o.jsonl").write_text('{"a": 1}\n')
    with pytest.raises(RecordError, match="neither"):
        detect_kind(tmp_path / "o.jsonl")


def test_missing_file_is_a_record_error(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match="no such file"):
        list(read_records(tmp_path / "nope.jsonl", Pair))


def test_complete_last_record_without_newline_is_kept(tmp_path: Path) -> None:
    """A kill between the record and its newline leaves a whole record: it counts and stays."""
    path = tmp_path / "t.jsonl"
    line = make_trajectory().model_dump_json()
    path.write_text(line + "\n" + line)
    assert len(list(read_records(path, Trajectory))) == 2
    with JsonlWriter(path) as writer:
        assert writer.repaired_bytes == 0
        writer.write(make_trajectory(id="traj-3"))
    assert [t.id for t in read_records(path, Trajectory)] == ["traj-1", "traj-1", "traj-3"]



@pytest.mark.parametrize("creates", ["mkstemp", "mkdtemp"])
def test_an_unwritable_output_folder_names_the_output_not_the_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, creates: str
) -> None:
    import errno
    import tempfile

    from click.testing import CliRunner

    from prefbuild.cli.main import main

    trajectories, pairs = tmp_path / "labelled.jsonl", tmp_path / "pairs.jsonl"
    write_records(trajectories, [make_trajectory()])
    write_records(pairs, [make_pair()])
    if creates == "mkstemp":  # every single-file output (pairs, labels, report) is written through atomic_path
        out = tmp_path / "out" / "pairs.jsonl"
        command = ["pair", str(trajectories), "-o", str(out)]
    else:  # a dataset folder is built in a temporary folder next to it
        out = tmp_path / "out" / "dataset"
        command = ["export", str(pairs), "-o", str(out)]

    def refused(*args: object, prefix: str = "", suffix: str = "", dir: object = None) -> None:
        raise OSError(errno.EROFS, "Read-only file system", f"{dir}/{prefix}x1y2{suffix}")

    monkeypatch.setattr(tempfile, creates, refused)
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 1, result.output
    assert result.output.strip() == f"error: {out}: read-only file system"
