"""Ctrl-C, a disk that refuses a write, two writers on one run directory, an absurd concurrency:
real ``prefbuild`` processes end promptly with one line, keep what they wrote, and resume.

Each case starts ``python -m prefbuild`` as tests/faults/test_kill_resume.py does (SIGINT at its
default disposition, as in a terminal) on the deterministic ``simulate`` recipe.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from prefbuild.cli.main import main
from prefbuild.teachers.config import MAX_CONCURRENCY

REPO = Path(__file__).resolve().parents[2]
TASKS = 3000  # a few seconds of episodes: long enough to interrupt, short enough to finish
EPISODES = Path("trajectories") / "episodes.jsonl"
PROMPT_S = 30  # an interrupted or refused process must be gone well within this
pytestmark = pytest.mark.timeout(240)


def _start(cwd: Path, *args: str, fsize_limit: int | None = None) -> subprocess.Popen[str]:
    def limit() -> None:
        if fsize_limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize_limit, fsize_limit))

    environment = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1", "NO_COLOR": "1"}
    return subprocess.Popen([sys.executable, "-m", "prefbuild", *args], cwd=cwd, env=environment,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=limit)


def _finish(process: subprocess.Popen[str], timeout_s: float = PROMPT_S) -> tuple[int, str]:
    """The exit code and stderr; a process still running after ``timeout_s`` is killed and fails the test."""
    try:
        _, stderr = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail(f"{process.args} still running {timeout_s} s later (hung)")
    return process.returncode, stderr


def _generate(cwd: Path, out: str, tasks: int = TASKS, **options: int) -> subprocess.Popen[str]:
    return _start(cwd, "generate", "simulate", "-q", "--out", out, "--set", f"env.num_tasks={tasks}", **options)


def _wait_for_episodes(path: Path, count: int, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if path.is_file() and path.read_bytes().count(b"\n") >= count:
            return
        assert process.poll() is None, f"ended before writing {count} episodes: {process.communicate()}"
        time.sleep(0.05)
    pytest.fail(f"{path}: fewer than {count} episodes after 120 s")


def _complete_lines(path: Path) -> list[bytes]:
    return [line for line in path.read_bytes().splitlines(keepends=True) if line.endswith(b"\n")]


def _ids(path: Path) -> list[str]:
    return [json.loads(line)["id"] for line in path.read_bytes().splitlines()]


def _errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


def _assert_resumes(cwd: Path, out: str, earlier: list[bytes], tasks: int = TASKS) -> None:
    """The same command again finishes the run: every planned episode once, the earlier ones as they were."""
    code, stderr = _finish(_generate(cwd, out, tasks), 120)
    assert code == 0, stderr
    ids = _ids(cwd / out / EPISODES)
    assert len(ids) == len(set(ids)) == tasks
    assert set(earlier) <= set(_complete_lines(cwd / out / EPISODES))


@pytest.mark.parametrize("command", ["generate", "run"])
def test_ctrl_c_ends_the_run_at_once_and_keeps_what_was_written(tmp_path: Path, command: str) -> None:
    process = _start(tmp_path, command, "simulate", "-q", "--out", "r", "--set", f"env.num_tasks={TASKS}")
    _wait_for_episodes(tmp_path / "r" / EPISODES, 50, process)
    process.send_signal(signal.SIGINT)
    code, stderr = _finish(process)
    assert code == 130, stderr
    assert "interrupted" in stderr.splitlines() and "Traceback" not in stderr, stderr
    written = (tmp_path / "r" / EPISODES).read_bytes()
    assert written.endswith(b"\n")  # whole episodes only: Ctrl-C lands between writes
    ids = _ids(tmp_path / "r" / EPISODES)
    assert 50 <= len(ids) < TASKS and len(ids) == len(set(ids))
    if command == "generate":
        _assert_resumes(tmp_path, "r", _complete_lines(tmp_path / "r" / EPISODES))


def test_a_write_the_disk_refuses_ends_generate_with_one_line_and_the_run_resumes(tmp_path: Path) -> None:
    """As on a full disk: RLIMIT_FSIZE makes the write that crosses 200 KiB fail with EFBIG."""
    code, stderr = _finish(_generate(tmp_path, "full", 50, fsize_limit=200 * 1024))
    assert code != 0 and "Traceback" not in stderr, stderr
    errors = _errors(stderr)
    assert len(errors) == 1, stderr
    assert str(Path("full") / EPISODES) in errors[0] and "too large" in errors[0], errors
    earlier = _complete_lines(tmp_path / "full" / EPISODES)
    assert earlier  # the episodes before the refused write are kept
    _assert_resumes(tmp_path, "full", earlier, 50)


def test_a_second_writer_is_refused_at_once_and_no_episode_is_doubled(tmp_path: Path) -> None:
    first = _generate(tmp_path, "cc")
    _wait_for_episodes(tmp_path / "cc" / EPISODES, 1, first)
    refusal = f"error: cc: another prefbuild process is writing this run (pid {first.pid})"
    for second in (
        _generate(tmp_path, "cc"),
        _start(tmp_path, "run", "simulate", "-q", "--out", "cc", "--set", f"env.num_tasks={TASKS}"),
        _start(tmp_path, "merge", "cc", "-o", "merged"),
    ):
        code, stderr = _finish(second)
        assert code == 1, stderr
        assert [line.split(";")[0] for line in _errors(stderr)] == [refusal], stderr
    assert first.poll() is None, "the first writer was done before the others were refused: raise TASKS"
    code, stderr = _finish(first, 120)
    assert code == 0, stderr
    ids = _ids(tmp_path / "cc" / EPISODES)
    assert len(ids) == len(set(ids)) == TASKS
    assert not (tmp_path / "merged").exists()


def test_a_killed_writer_leaves_no_lock_behind(tmp_path: Path) -> None:
    process = _generate(tmp_path, "k")
    _wait_for_episodes(tmp_path / "k" / EPISODES, 20, process)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=PROMPT_S)
    assert (tmp_path / "k" / ".prefbuild.lock").is_file()  # the file stays; the kernel dropped the lock
    _assert_resumes(tmp_path, "k", _complete_lines(tmp_path / "k" / EPISODES))


def _recipe_with_concurrency(path: Path, value: int) -> int:
    """Write the bundled simulate recipe with ``teacher.concurrency: value`` to ``path``; the line it is on."""
    text = CliRunner().invoke(main, ["recipes", "simulate"], catch_exceptions=False).output
    lines = text.splitlines()
    number = next(index for index, line in enumerate(lines) if line.strip().startswith("concurrency:"))
    lines[number] = f"  concurrency: {value}"
    path.write_text("\n".join(lines) + "\n")
    return number + 1


def test_check_recipe_refuses_an_absurd_concurrency_where_it_is_written(tmp_path: Path) -> None:
    recipe = tmp_path / "recipe.yaml"
    line = _recipe_with_concurrency(recipe, 100_000_000)
    result = CliRunner().invoke(main, ["check-recipe", str(recipe)])
    assert result.exit_code == 1
    assert _errors(result.output) == [
        f"error: {recipe}:{line} teacher.concurrency: Input should be less than or equal to {MAX_CONCURRENCY}"
    ]
    _recipe_with_concurrency(recipe, MAX_CONCURRENCY)
    assert CliRunner().invoke(main, ["check-recipe", str(recipe)]).exit_code == 0


@pytest.mark.parametrize("stage", ["generate", "label"])
def test_sigterm_ends_a_stage_as_ctrl_c_does(tmp_path: Path, stage: str) -> None:
    """``kill`` or a scheduler's time limit: exit 143 at once, no temporary file left, what was written kept."""
    generating = _generate(tmp_path, "run")
    if stage == "generate":
        _wait_for_episodes(tmp_path / "run" / EPISODES, 50, generating)
        generating.send_signal(signal.SIGTERM)
        code, stderr = _finish(generating)
        assert code == 128 + signal.SIGTERM and stderr.strip().splitlines()[-1] == "terminated", stderr
        _assert_resumes(tmp_path, "run", _complete_lines(tmp_path / "run" / EPISODES))
        return
    assert _finish(generating, 120)[0] == 0
    (tmp_path / "labelled.jsonl").write_text("an earlier output\n")
    labelling = _start(tmp_path, "label", str(tmp_path / "run" / EPISODES), "-o", "labelled.jsonl")
    deadline = time.monotonic() + 60
    while not [path for path in tmp_path.iterdir() if path.name.endswith(".tmp")]:  # inside the stage
        assert labelling.poll() is None and time.monotonic() < deadline, labelling.communicate()
        time.sleep(0.01)
    labelling.send_signal(signal.SIGTERM)
    code, stderr = _finish(labelling)
    assert code == 128 + signal.SIGTERM and stderr.strip().splitlines()[-1] == "terminated", stderr
    assert (tmp_path / "labelled.jsonl").read_text() == "an earlier output\n"
    assert not [path.name for path in tmp_path.iterdir() if path.name.endswith(".tmp")]
