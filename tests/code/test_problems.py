"""Generated problems (checked by running their reference programs in the sandbox and grading
the printed value with math-verify) and the file loaders (JSONL and parquet, file:line errors)."""

from __future__ import annotations

import json
from pathlib import Path

import polars
import pytest

from prefbuild.envs.code.generator import TASK_TYPES, generate_problems
from prefbuild.envs.code.grading import grade_code, grade_math
from prefbuild.envs.code.loader import CodeDataError, load_problems
from prefbuild.envs.code.sandbox import CodeSandbox, SandboxLimits, namespaces_available

needs_bwrap = pytest.mark.skipif(namespaces_available() is not None, reason=f"no sandbox: {namespaces_available()}")


def test_generation_is_deterministic_and_splits_differ() -> None:
    first = [problem.model_dump() for problem in generate_problems("train", 12, 3)]
    assert first == [problem.model_dump() for problem in generate_problems("train", 12, 3)]
    assert first != [problem.model_dump() for problem in generate_problems("test", 12, 3)]
    assert {problem["category"] for problem in first} == set(TASK_TYPES)
    with pytest.raises(ValueError, match="unknown code task type"):
        list(generate_problems("train", 1, 0, ["geometry"]))


@needs_bwrap
def test_reference_programs_print_the_stated_answers() -> None:
    problems = list(generate_problems("dev", 25, 11))
    with CodeSandbox(SandboxLimits(wall_seconds=20)) as sandbox:
        for problem in problems:
            if problem.kind == "math":
                assert problem.reference is not None and problem.answer is not None
                printed = sandbox.run(problem.reference)
                assert printed.ok, (problem.id, printed.text())
                verdict = grade_math(f"\\boxed{{{printed.output.strip()}}}", problem.answer)
                assert verdict.outcome == "correct", (problem.id, printed.output, problem.answer)
    for problem in problems:
        if problem.kind == "code":
            assert grade_code(f"```python\n{problem.reference}\n```", problem).outcome == "correct"


def _write_jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    return path


def test_loads_deepscaler_and_taco_layouts(tmp_path: Path) -> None:
    rows = [
        {"problem": "What is 1/2 + 1/4?", "answer": "\\frac{3}{4}", "solution": "..."},
        {"question": "Print the sum of two numbers.", "input_output": json.dumps(
            {"inputs": ["1 2\n", "3 4\n"], "outputs": ["3\n", "7\n"]}), "solutions": json.dumps(
            ["a, b = map(int, input().split())\nprint(a + b)"]), "difficulty": "EASY"},
        {"question": "Add.", "input_output": {"inputs": [[1, 2]], "outputs": [3], "fn_name": "add"}},
        {"question": "Echo.", "input_output": [{"input": "x\n", "output": "x\n"}], "id": "leet-1"},
    ]  # fmt: skip
    problems = list(load_problems(_write_jsonl(tmp_path / "mixed.jsonl", rows)))
    assert [(p.id, p.kind, p.category) for p in problems] == [
        ("mixed-1", "math", "math"),
        ("mixed-2", "code", "EASY"),
        ("mixed-3", "code", "programs"),
        ("leet-1", "code", "programs"),
    ]
    assert problems[1].reference is not None and problems[1].source.endswith("mixed.jsonl:2")
    assert problems[2].tests is not None and problems[2].tests.fn_name == "add"
    parquet = tmp_path / "math.parquet"
    polars.DataFrame({"problem": ["2+2?", "3*3?"], "answer": ["4", "9"]}).write_parquet(parquet)
    assert [p.answer for p in load_problems(parquet)] == ["4", "9"]


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"answer": "4"}, "mixed.jsonl:2 problem/question/prompt: missing"),
        ({"problem": "2+2?"}, "mixed.jsonl:2 answer: missing"),
        ({"problem": "", "answer": "1"}, "mixed.jsonl:2 problem: expected non-empty text"),
        ({"question": "q", "input_output": "{bad"}, "mixed.jsonl:2 input_output: not valid JSON"),
        ({"question": "q", "input_output": {"inputs": ["1"], "outputs": []}}, "mixed.jsonl:2 input_output.outputs"),
        ({"question": "q", "input_output": {"inputs": [1], "outputs": [2]}}, "stdin/stdout tests need string"),
        ([1, 2], "mixed.jsonl:2 row: expected a JSON object"),
    ],
)
def test_bad_rows_name_file_line_and_field(tmp_path: Path, row: object, message: str) -> None:
    path = _write_jsonl(tmp_path / "mixed.jsonl", [{"problem": "ok?", "answer": "1"}, row])
    with pytest.raises(CodeDataError) as caught:
        list(load_problems(path))
    assert message in str(caught.value) and str(caught.value).startswith(str(path))


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(CodeDataError, match="no such file"):
        list(load_problems(tmp_path / "missing.jsonl"))
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"problem": "a", "answer": "1"}\n{oops\n')
    with pytest.raises(CodeDataError, match=r"broken.jsonl:2 row: not valid JSON"):
        list(load_problems(broken))
    fake = tmp_path / "fake.parquet"
    fake.write_text("not parquet")
    with pytest.raises(CodeDataError, match=r"fake.parquet:1 file: cannot read parquet"):
        list(load_problems(fake))
