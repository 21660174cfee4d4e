"""Regressions from an adversarial audit: surrogates in tool results, judge idioms and TACO
outputs in code grading, programs that tamper with the test harness, APPS line-list tests."""

from __future__ import annotations

import json

import pytest

from prefbuild.envs.code.grading import grade_code
from prefbuild.envs.code.loader import parse_row
from prefbuild.envs.code.problems import CodeProblem, IOTests
from prefbuild.envs.code.sandbox import CodeSandbox, SandboxLimits, namespaces_available

pytestmark = pytest.mark.skipif(namespaces_available() is not None, reason=f"no sandbox: {namespaces_available()}")
LIMITS = SandboxLimits(wall_seconds=10, cpu_seconds=4)
SUM = CodeProblem(id="s", kind="code", category="programs", prompt="sum of the even numbers", tests=IOTests(
    inputs=["3\n4 -1 6\n", "1\n7\n", "5\n2 2 2 2 2\n"], outputs=["10\n", "0\n", "10\n"]))  # fmt: skip
ADD_TACO = CodeProblem(id="a", kind="code", category="EASY", prompt="add", tests=IOTests(
    fn_name="add", inputs=[[1, 2], [10, -3]], outputs=[[3], [7]]))  # fmt: skip
SOLVE = "n = int(input())\nxs = list(map(int, input().split()))\nprint(sum(x for x in xs if x % 2 == 0))"


def _fenced(program: str) -> str:
    return f"```python\n{program}\n```"


def test_a_lone_surrogate_in_an_exception_comes_back_escaped() -> None:
    with CodeSandbox(LIMITS) as box:
        execution = box.run("import os\nraise ValueError(os.fsdecode(b'\\xff') + ' bad')")
    assert execution.traceback is not None and execution.error is not None
    execution.text().encode("utf-8")  # a record writer must be able to encode it
    assert "\\udcff bad" in execution.error


@pytest.mark.parametrize(
    "program",
    [
        SOLVE + "\nimport sys\nsys.exit(0)",
        SOLVE + "\nexit()",
        "import sys\ndata = sys.stdin.buffer.read().split()\nprint(sum(int(x) for x in data[1:] if int(x) % 2 == 0))",
        "data = open(0).read().split()\nprint(sum(int(x) for x in data[1:] if int(x) % 2 == 0))",
    ],
)
def test_judge_idioms_of_correct_programs_pass(program: str) -> None:
    verdict = grade_code(_fenced(program), SUM, LIMITS)
    assert verdict.outcome == "correct", verdict.detail


def test_taco_call_based_outputs_wrapped_in_a_list_are_accepted() -> None:
    assert grade_code(_fenced("def add(a, b):\n    return a + b"), ADD_TACO, LIMITS).outcome == "correct"
    solution = "class Solution:\n    def add(self, a, b):\n        return a + b"
    assert grade_code(_fenced(solution), ADD_TACO, LIMITS).outcome == "correct"
    assert grade_code(_fenced("def add(a, b):\n    return a - b"), ADD_TACO, LIMITS).outcome == "incorrect"


@pytest.mark.parametrize("problem", [SUM, ADD_TACO])
def test_a_program_cannot_make_the_harness_report_passes(problem: CodeProblem) -> None:
    hack = (
        "import sys\ng = sys._getframe(1).f_globals\n"
        "class AllPass(list):\n    def append(self, item):\n        list.append(self, [True, None])\n"
        "g['_results'] = AllPass(g['_results'])\nprint('nothing solved')\ndef add(a, b):\n    return 0\n"
    )
    assert grade_code(_fenced(hack), problem, LIMITS).outcome == "incorrect"


def test_apps_stdin_tests_given_as_lists_of_lines_load_and_grade() -> None:
    io = {"inputs": [["2", "1 2"]], "outputs": [["3"]]}
    problem = parse_row({"question": "sum", "input_output": json.dumps(io)}, source="f.jsonl:1", default_id="f-1")
    assert problem.tests is not None and problem.tests.inputs == ["2\n1 2\n"] and problem.tests.outputs == ["3\n"]
    program = "input()\nprint(sum(map(int, input().split())))"
    assert grade_code(_fenced(program), problem, LIMITS).outcome == "correct"
