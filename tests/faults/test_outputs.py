"""Outputs never replace what they must not: an input of the same command, a folder of the user's
files, a device; and errors of the machine (a full disk, a file too large, a file where a folder
should be) are one line naming the output, with what was there before intact."""

from __future__ import annotations

import hashlib
import os
import resource
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from prefbuild.cli.main import main


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert "Traceback" not in result.output, result.output
    return result.exit_code, result.output


def _digest(path: Path) -> str:
    if path.is_dir():
        return hashlib.sha256(
            b"".join(p.relative_to(path).as_posix().encode() + p.read_bytes() for p in sorted(path.rglob("*"))
                     if p.is_file())
        ).hexdigest()
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("outputs") / "run"
    code, output = _invoke("run", "simulate", "--set", "env.num_tasks=12", "--out", str(out), "-q")
    assert code == 0, output
    return out


@pytest.fixture
def run_copy(run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    return copy


def _one_error(code: int, output: str, *needles: str) -> None:
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert code == 1 and len(errors) == 1, output
    for needle in needles:
        assert needle in errors[0], output


def test_export_refuses_a_folder_it_did_not_write(run_copy: Path, tmp_path: Path) -> None:
    before = _digest(run_copy)
    _one_error(*_invoke("export", str(run_copy / "pairs.jsonl"), "-o", str(run_copy)),
               "a non-empty directory that prefbuild export did not write")
    assert _digest(run_copy) == before
    notes = tmp_path / "home"
    notes.mkdir()
    (notes / "notes.txt").write_text("precious")
    _one_error(*_invoke("export", str(run_copy / "pairs.jsonl"), "-o", str(notes)), "did not write")
    assert (notes / "notes.txt").read_text() == "precious"
    _one_error(*_invoke("export", str(run_copy / "pairs.jsonl"), "-o", "."), "the working directory")
    assert _digest(run_copy) == before


def test_export_replaces_its_own_earlier_export_and_an_empty_folder(run_copy: Path, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert _invoke("export", str(run_copy / "pairs.jsonl"), "-o", str(tmp_path / "empty"))[0] == 0
    assert _invoke("export", str(run_copy / "pairs.jsonl"), "-o", str(tmp_path / "empty"))[0] == 0
    assert (tmp_path / "empty" / "README.md").is_file()
    # the run's own dataset folder, written by `run`, is an export too
    assert _invoke("export", str(run_copy / "pairs.jsonl"), "-o", str(run_copy / "dataset"))[0] == 0


def test_an_output_that_is_an_input_is_refused(run_copy: Path) -> None:
    labelled, pairs = run_copy / "labelled.jsonl", run_copy / "pairs.jsonl"
    before = {path: _digest(path) for path in (labelled, pairs)}
    _one_error(*_invoke("pair", str(labelled), "-o", str(labelled)), "--output is also an input")
    _one_error(*_invoke("pair", str(labelled), "-o", "x.jsonl", "--stats", str(labelled)), "--stats is also an input")
    _one_error(*_invoke("report", str(run_copy), "-o", str(pairs)), "is also an input")
    _one_error(*_invoke("report", str(pairs), "-o", str(pairs)), "is also an input")
    assert {path: _digest(path) for path in before} == before
    assert not Path("x.jsonl").exists()


def test_a_device_or_a_folder_as_a_file_output_is_refused(run_copy: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    for command in (["pair", str(run_copy / "labelled.jsonl"), "-o", str(fifo)],
                    ["report", str(run_copy), "-o", str(fifo)],
                    ["label", str(run_copy / "labelled.jsonl"), "-o", str(fifo)]):
        _one_error(*_invoke(*command), "exists and is not a regular file (a pipe)")
        assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_a_file_where_a_folder_should_be_is_named(run_copy: Path, tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("hi")
    for command in (["label", str(run_copy / "labelled.jsonl"), "-o", "plain/x.jsonl"],
                    ["pair", str(run_copy / "labelled.jsonl"), "-o", "plain/x.jsonl"],
                    ["report", str(run_copy), "-o", "plain/x.html"],
                    ["export", str(run_copy / "pairs.jsonl"), "-o", "plain/ds"],
                    ["export", str(run_copy / "pairs.jsonl"), "-o", "plain/ds", "--jsonl"]):
        _one_error(*_invoke(*command), "plain is a file, not a folder")
    assert (tmp_path / "plain").read_text() == "hi"


def _limited_file_size(limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


@pytest.mark.parametrize("stage", ["label", "pair", "report"])
def test_a_file_too_large_is_one_line_naming_the_output(run_copy: Path, stage: str) -> None:
    """``ulimit -f``: writes beyond the limit fail with EFBIG, as they would on a full disk."""
    previous = Path(f"previous-{stage}.jsonl")
    previous.write_text("what an earlier run wrote")
    source = str(run_copy if stage == "report" else run_copy / "labelled.jsonl")
    completed = subprocess.run(
        [sys.executable, "-m", "prefbuild", stage, source, "-o", str(previous)],
        capture_output=True, text=True, check=False, timeout=300,
        preexec_fn=lambda: _limited_file_size(4096),
    )
    assert completed.returncode == 1, completed.stderr
    assert "Traceback" not in completed.stderr, completed.stderr
    assert completed.stderr.strip().splitlines()[-1] == f"error: {previous}: file too large"
    assert previous.read_text() == "what an earlier run wrote"
    assert not [p for p in Path().iterdir() if p.name.endswith(".tmp")]


def test_an_empty_list_of_export_formats_is_refused_by_the_recipe_check() -> None:
    _one_error(*_invoke("check-recipe", "simulate", "--set", "output.formats=[]"),
               "--set output.formats: give at least one export format")


def test_pairing_unlabelled_trajectories_says_to_label_them(run_copy: Path) -> None:
    trajectories = sorted((run_copy / "trajectories").glob("*.jsonl"))
    code, output = _invoke("pair", *map(str, trajectories), "-o", "pairs.jsonl")
    assert code == 0 and "0 pairs" in output
    assert "were these trajectories labelled? Label them first" in output


@pytest.mark.parametrize(
    ("override", "field"),
    [("teacher.scripted.loop=.nan", "teacher.scripted.loop"), ("teacher.scripted.loop=2", "teacher.scripted.loop"),
     ("labelers.0=x", "labelers"), ("env..name=x", "env..name"), (".env=x", ".env"), ("env.=x", "env.")],
)
def test_a_bad_override_is_located_at_set(override: str, field: str) -> None:
    _one_error(*_invoke("check-recipe", "simulate", "--set", override), f"error: --set {field}:")


def test_a_run_whose_every_episode_failed_says_why_instead_of_no_pairs(tmp_path: Path) -> None:
    """No server at the teacher's URL: every request fails; the run stops after generate with the reason."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code, output = _invoke(
        "run", "quickstart", "--set", "teacher.backend=openai", "--set", "teacher.model=some-model",
        "--set", f"teacher.base_urls=[http://127.0.0.1:{port}/v1]", "--set", "teacher.retries.max_attempts=1",
        "--set", "teacher.retries.initial_backoff_s=0", "--set", "env.num_tasks=2", "--out", str(tmp_path / "q"), "-q",
    )
    _one_error(code, output, "every episode this run played failed (2 of 2), so it stops before labelling",
               f"127.0.0.1:{port}")
    assert "no pairs" not in output
    assert not (tmp_path / "q" / "labelled.jsonl").exists()
