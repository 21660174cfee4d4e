"""LeetCodeDataset rows (newfacade/LeetCodeDataset, one of the GRPO-TCR card's five sources)."""

from __future__ import annotations

import pytest

from prefbuild.envs.code.grading import grade_code
from prefbuild.envs.code.loader import CodeDataError, parse_row
from prefbuild.envs.code.sandbox import SandboxLimits, namespaces_available

PREAMBLE = "import random\nimport functools\nfrom typing import *\nfrom collections import *\n"
COMPLETION = (
    "class Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n        d = {}\n"
    "        for i, x in enumerate(nums):\n            if target - x in d:\n                return [d[target - x], i]\n"
    "            d[x] = i\n"
)
ROW = {
    "task_id": "two-sum",
    "difficulty": "Easy",
    "problem_description": "Given an array of integers nums and an integer target, return indices of the two numbers.",
    "starter_code": "class Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n        ",
    "prompt": PREAMBLE,
    "completion": COMPLETION,
    "entry_point": "Solution().twoSum",
    "input_output": [
        {"input": "nums = [2,7,11,15], target = 9", "output": "[0, 1]"},
        {"input": "nums = [3,2,4], target = 6", "output": "[1, 2]"},
    ],
}


def test_leetcode_row_shows_the_problem_not_the_import_preamble() -> None:
    problem = parse_row(ROW, source="lc.jsonl:1", default_id="lc-1")
    assert problem.prompt.startswith("Given an array of integers nums")
    assert "def twoSum" in problem.prompt and "import random" not in problem.prompt


def test_leetcode_row_calls_the_entry_point_with_its_arguments() -> None:
    problem = parse_row(ROW, source="lc.jsonl:1", default_id="lc-1")
    assert problem.tests is not None
    assert problem.tests.fn_name == "twoSum"
    assert problem.tests.inputs == [[[2, 7, 11, 15], 9], [[3, 2, 4], 6]]
    assert problem.tests.outputs == [[0, 1], [1, 2]]
    assert problem.reference == PREAMBLE + COMPLETION


def test_leetcode_row_with_a_tree_argument_is_refused_by_name() -> None:
    row = {**ROW, "input_output": [{"input": "root = tree_node([1,2,3])", "output": "3"}]}
    with pytest.raises(CodeDataError, match=r"lc.jsonl:1 input_output: .*not a Python literal"):
        parse_row(row, source="lc.jsonl:1", default_id="lc-1")


@pytest.mark.skipif(namespaces_available() is not None, reason=f"no sandbox: {namespaces_available()}")
def test_leetcode_reference_solution_is_graded_correct() -> None:
    problem = parse_row(ROW, source="lc.jsonl:1", default_id="lc-1")
    message = f"```python\n{problem.reference}```"
    assert grade_code(message, problem, SandboxLimits(wall_seconds=10, cpu_seconds=4)).outcome == "correct"


def test_leetcode_keyword_arguments_are_passed_in_signature_order_not_in_the_order_written() -> None:
    row = {**ROW, "input_output": [{"input": "target = 6, nums = [3,3]", "output": "[0, 1]"}]}
    problem = parse_row(row, source="lc.jsonl:1", default_id="lc-1")
    assert problem.tests is not None
    assert problem.tests.inputs == [[[3, 3], 6]]
