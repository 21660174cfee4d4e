"""The code sandbox's notebook behaviour, limits and fallback, on the real bubblewrap."""

from __future__ import annotations

import doctest
import warnings

import pytest

from prefbuild.envs.code import sandbox as sandbox_module
from prefbuild.envs.code.sandbox import CodeSandbox, SandboxLimits, namespaces_available

needs_bwrap = pytest.mark.skipif(namespaces_available() is not None, reason=f"no sandbox: {namespaces_available()}")
FAST = SandboxLimits(wall_seconds=3, cpu_seconds=1, memory_bytes=256 << 20, output_chars=300)


@needs_bwrap
def test_doctests() -> None:
    assert doctest.testmod(sandbox_module).failed == 0


@needs_bwrap
def test_state_persists_like_a_notebook_and_errors_come_back_as_text() -> None:
    with CodeSandbox(FAST) as box:
        assert box.isolation == "bwrap"
        assert box.run("import math\nx = math.factorial(5)").text() == "(no output)"
        assert box.run("x + 1").output == "121\n"
        assert box.run("def f(n):\n    return n * x\nprint(f(2))").output == "240\n"
        failed = box.run("print('before')\n1 / 0")
        assert failed.error == "ZeroDivisionError: division by zero"
        assert failed.output == "before\n"
        assert "<cell 4>" in (failed.traceback or "") and "runner" not in (failed.traceback or "")
        text = failed.text()
        assert text.startswith("before\nTraceback") and text.endswith("ZeroDivisionError: division by zero")
        syntax = box.run("def broken(:")
        assert syntax.error is not None and syntax.error.startswith("SyntaxError")
        assert box.run("x").output == "120\n", "an error must not lose the state"


@needs_bwrap
def test_stateless_mode_forgets() -> None:
    with CodeSandbox(FAST, stateless=True) as box:
        assert box.run("x = 1").ok
        assert box.run("x").error == "NameError: name 'x' is not defined"


@needs_bwrap
def test_output_is_truncated_with_a_marker_and_stderr_is_interleaved() -> None:
    with CodeSandbox(FAST) as box:
        result = box.run("import sys\nprint('a' * 1000)\nprint('oops', file=sys.stderr)")
        assert result.ok
        assert result.output.startswith("a" * 300 + "\n[... output truncated: ")
        assert result.output.endswith("more characters ...]")
        mixed = box.run("import sys\nprint('out')\nsys.stdout.flush()\nprint('err', file=sys.stderr)")
        assert mixed.output == "out\nerr\n"


@needs_bwrap
def test_timeout_restarts_the_interpreter_and_cpu_limit_raises() -> None:
    with CodeSandbox(FAST) as box:
        box.run("y = 5")
        slept = box.run("import time\ntime.sleep(30)")
        assert slept.timed_out and slept.restarted and "longer than 3 s" in (slept.error or "")
        assert box.run("y").error == "NameError: name 'y' is not defined"
        assert box.run("2 + 2").output == "4\n"
    # The CPU limit, with a wall-clock limit far enough away that a busy machine cannot reach it first.
    with CodeSandbox(FAST.model_copy(update={"wall_seconds": 60})) as box:
        spun = box.run("while True:\n    pass")
        assert spun.error == "CPUTimeLimitExceeded: CPU time limit exceeded" and not spun.timed_out


@needs_bwrap
def test_a_crash_is_reported_and_the_next_call_gets_a_fresh_interpreter() -> None:
    with CodeSandbox(FAST) as box:
        crashed = box.run("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)")
        assert crashed.restarted and "killed by SIGSEGV" in (crashed.error or "")
        assert box.run("'alive'").output == "'alive'\n"


@needs_bwrap
def test_the_sandbox_sees_no_host_environment_or_files(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("PREFBUILD_TEST_TOKEN", "hunter2")
    (tmp_path / "note.txt").write_text("host file")
    with CodeSandbox(FAST) as box:
        seen = box.run(f"import os\nprint(sorted(os.environ))\nprint(os.path.exists({str(tmp_path)!r}))")
        assert "PREFBUILD_TEST_TOKEN" not in seen.output and seen.output.endswith("False\n")
        assert box.run("import os\nos.getuid() != 0").output == "True\n"
        written = box.run("open('result.txt', 'w').write('ok')\nopen('/tmp/result.txt').read()")
        assert written.output == "'ok'\n"


def test_without_namespaces_it_warns_loudly_and_still_limits(tmp_path) -> None:
    with pytest.warns(RuntimeWarning, match="CODE SANDBOX IS NOT ISOLATED"):
        sandbox_module._warn_unisolated("test reason")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        box = CodeSandbox(FAST, isolation="none")
    with box:
        assert box.isolation == "none"
        assert box.run("import os\nprint(os.getcwd().startswith('/tmp'))").output == "True\n"
        assert box.run("bytearray(1 << 30)").error == "MemoryError"
        assert box.run("q = 3").ok and box.run("q * 2").output == "6\n"


def test_limits_are_validated() -> None:
    with pytest.raises(ValueError, match="wall_seconds"):
        SandboxLimits(wall_seconds=0)
    with pytest.raises(ValueError, match="extra"):
        SandboxLimits(wall=3)  # type: ignore[call-arg]


def test_seccomp_program_shape() -> None:
    from prefbuild.envs.code import seccomp

    assert doctest.testmod(seccomp).failed == 0
    program = seccomp.filter_program("x86_64")
    assert program is not None and len(program) == 8 * (5 + 29 + 4 + 3)
    assert seccomp.filter_program("riscv64") is None
    assert seccomp.filter_program("aarch64") != program
