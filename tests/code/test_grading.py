"""Grading final answers: math-verify for math, the tests in a fresh sandbox for programs."""

from __future__ import annotations

import doctest
import re

import pytest

from prefbuild.envs.code import grading
from prefbuild.envs.code.grading import extract_boxed, extract_program, grade_code, grade_math
from prefbuild.envs.code.problems import CodeProblem, IOTests
from prefbuild.envs.code.sandbox import SandboxLimits, namespaces_available

needs_bwrap = pytest.mark.skipif(namespaces_available() is not None, reason=f"no sandbox: {namespaces_available()}")


@needs_bwrap
def test_doctests() -> None:
    assert doctest.testmod(grading).failed == 0


@pytest.mark.parametrize(
    ("message", "gold", "outcome"),
    [
        ("So the answer is $\\boxed{\\frac{3}{4}}$.", "\\frac{3}{4}", "correct"),
        ("\\boxed{0.75}", "\\frac{3}{4}", "correct"),
        ("\\boxed{\\dfrac{6}{8}}", "3/4", "correct"),
        ("First \\boxed{1}, finally \\boxed{2}", "2", "correct"),
        ("\\boxed{x^2 + 2x + 1}", "(x+1)^2", "correct"),
        ("\\boxed{\\{1, 2\\}}", "\\{2, 1\\}", "correct"),
        ("The answer is 42.", "42", "correct"),
        ("\\boxed{41}", "42", "incorrect"),
        ("\\boxed{\\sqrt{2}}", "1.41", "incorrect"),
        ("I could not solve it.", "42", "no_answer"),
        ("", "42", "no_answer"),
    ],
)
def test_grade_math(message: str, gold: str, outcome: str) -> None:
    assert grade_math(message, gold).outcome == outcome


def test_extractors() -> None:
    assert extract_boxed("\\boxed{\\frac{a}{b}} then \\fbox{ 7 }") == "7"
    assert extract_boxed("\\boxed{unclosed") is None
    text = "```\nplain\n```\n```python\nprint(1)\n```\n```text\nout\n```"
    assert extract_program(text) == "print(1)\n"
    assert extract_program("```\nonly\n```") == "only\n"
    assert extract_program("no code") is None


STDIO = CodeProblem(
    id="p", kind="code", category="programs", prompt="Sum two numbers.",
    tests=IOTests(inputs=["1 2\n", "5 5\n"], outputs=["3\n", "10\n"]),
)  # fmt: skip
FUNCTION = CodeProblem(
    id="f", kind="code", category="programs", prompt="Add.",
    tests=IOTests(inputs=[[1, 2], [[1], [2, 3]]], outputs=[3, [1, 2, 3]], fn_name="add"),
)  # fmt: skip


@needs_bwrap
@pytest.mark.parametrize(
    ("problem", "program", "outcome", "detail"),
    [
        (STDIO, "a, b = map(int, input().split())\nprint(a + b)", "correct", "2/2 tests passed"),
        (STDIO, "a, b = map(int, input().split())\nprint(a * b)", "incorrect", "0/2 tests passed"),
        (STDIO, "a, b = map(int, input().split())\nprint(a + b if a < 5 else 0)", "incorrect", "1/2 tests passed"),
        (STDIO, "raise SystemExit(3)", "incorrect", "SystemExit"),
        (STDIO, "while True:\n    pass", "incorrect", "tests did not finish|CPUTimeLimitExceeded"),
        (FUNCTION, "def add(a, b):\n    return a + b", "correct", "2/2 tests passed"),
        (FUNCTION, "class Solution:\n    def add(self, a, b):\n        return a + b", "correct", "2/2"),
        (FUNCTION, "def add(a, b):\n    return a", "incorrect", "0/2"),
        (STDIO, "import os\nos.write(1, b'__prefbuild_test_results__[[true, null], [true, null]]\\n')\nos._exit(0)",
         "incorrect", "0/2 tests passed"),  # each test runs in its own process: the fake line is its output
    ],
)  # fmt: skip
def test_grade_code(problem: CodeProblem, program: str, outcome: str, detail: str) -> None:
    limits = SandboxLimits(wall_seconds=5, cpu_seconds=1, memory_bytes=512 << 20)
    verdict = grade_code(f"Here it is:\n```python\n{program}\n```", problem, limits)
    assert (verdict.outcome, verdict.answer) == (outcome, program + "\n")
    assert re.search(detail, verdict.detail), verdict.detail


def test_code_without_program_is_no_answer() -> None:
    assert grade_code("I think it is easy.", STDIO).outcome == "no_answer"


@pytest.mark.timeout(120)
def test_a_costly_answer_graded_from_a_worker_thread_cannot_stall_the_run() -> None:
    """The rollout grades in worker threads, where math-verify's SIGALRM limits are off and big-integer
    arithmetic holds the interpreter lock: the child process and its limit keep the run going."""
    from concurrent.futures import ThreadPoolExecutor

    from prefbuild.envs.code.math_process import MathGrader

    grader = MathGrader(limit_s=2.0)
    with ThreadPoolExecutor(max_workers=1) as pool:
        assert pool.submit(grader.grade, r"\boxed{10^{10^{10^{10}}}}", "1").result() is None
        # the child was replaced: the next answer is graded as usual
        assert pool.submit(grader.grade, r"\boxed{0.5}", r"\frac{1}{2}").result()[0] == "correct"


def test_grade_math_reports_a_comparison_past_the_limit_as_incorrect(monkeypatch: pytest.MonkeyPatch) -> None:
    from prefbuild.envs.code import math_process

    monkeypatch.setattr(math_process, "GRADER", math_process.MathGrader(limit_s=1.0))
    verdict = grade_math(r"so \boxed{10^{10^{10^{10}}}}", "1")
    assert verdict.outcome == "incorrect" and "did not finish within 1 s" in verdict.detail
