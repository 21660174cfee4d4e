"""Read ``code`` env problems from user files and Hub-dataset exports (JSONL or parquet).

Two layouts are recognised per row:

- math, DeepScaleR-style: ``problem`` (or ``question``) and ``answer``; optional ``id``,
  ``category`` / ``type`` and ``reference`` (a program printing the answer);
- code, TACO / LeetCode-style: ``question`` (or ``problem`` / ``prompt``) and
  ``input_output``: TACO's ``{"inputs": [...], "outputs": [...], "fn_name": ...}`` (an object
  or its JSON string) or a list of ``{"input": ..., "output": ...}`` stdin/stdout pairs;
  optional ``solutions`` (the first one becomes the reference program).

A bad row stops the load with ``file:line field: message`` (for parquet, ``line`` is the
1-based row number).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from prefbuild.envs.code.problems import CodeProblem, IOTests
from prefbuild.errors import PrefbuildError, describe_validation_error

PROMPT_KEYS = ("problem", "question", "prompt")
# newfacade/LeetCodeDataset: ``prompt`` is the harness's import preamble, not the problem; the
# statement is ``problem_description`` (with ``starter_code``), the tests call ``entry_point``.
CODE_PROMPT_KEYS = ("question", "problem", "problem_description", "prompt")


class CodeDataError(PrefbuildError, ValueError):
    """A problem file the ``code`` env cannot read; the message names file, line and field."""


def _text_field(row: dict[str, Any], keys: tuple[str, ...], where: str) -> tuple[str, str]:
    for key in keys:
        value = row.get(key)
        if value is not None:
            if not isinstance(value, str) or not value.strip():
                raise CodeDataError(f"{where} {key}: expected non-empty text, got {value!r:.60}")
            return key, value
    raise CodeDataError(f"{where} {'/'.join(keys)}: missing (one of these fields is required)")


def _tests(raw: Any, where: str) -> IOTests:
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as error:
            raise CodeDataError(f"{where} input_output: not valid JSON: {error.msg}") from None
    if isinstance(raw, list):
        pairs = raw
        if not all(isinstance(pair, dict) and {"input", "output"} <= pair.keys() for pair in pairs):
            raise CodeDataError(f"{where} input_output: expected a list of {{'input', 'output'}} objects")
        raw = {"inputs": [pair["input"] for pair in pairs], "outputs": [pair["output"] for pair in pairs]}
    if not isinstance(raw, dict):
        raise CodeDataError(f"{where} input_output: expected an object with inputs and outputs")
    known = {key: raw[key] for key in ("inputs", "outputs", "fn_name") if key in raw}
    if known.get("fn_name") is None:  # APPS / TACO stdin tests may hold an input or output as its list of lines
        for key in ("inputs", "outputs"):
            if isinstance(known.get(key), list):
                known[key] = [_joined_lines(value) for value in known[key]]
    try:
        return IOTests(**known)
    except ValidationError as error:
        field, message = describe_validation_error(error)
        raise CodeDataError(f"{where} input_output.{field}: {message}") from None


def _literal(text: Any, where: str) -> Any:
    try:
        return ast.literal_eval(text.strip()) if isinstance(text, str) else text
    except (ValueError, SyntaxError):  # handled: reported as the row's error below
        raise CodeDataError(
            f"{where} input_output: {text!r:.80} is not a Python literal (LeetCode tree / linked-list "
            "problems cannot be graded by value; filter them out)"
        ) from None


def _leetcode_tests(row: dict[str, Any], where: str) -> IOTests:
    """LeetCodeDataset tests: ``{"input": "nums = [2,7], target = 9", "output": "[0, 1]"}`` pairs
    calling ``entry_point`` (``Solution().twoSum``) with those keyword arguments, put in the order of its
    signature (read from ``starter_code`` or ``completion``; as written when neither names it)."""
    pairs = row["input_output"]
    if isinstance(pairs, str):
        pairs = json.loads(pairs)
    name = str(row["entry_point"]).rsplit(".", 1)[-1].strip()
    order = _parameter_order(row, name)  # the inputs name the arguments, in any order; the call is positional
    inputs, outputs = [], []
    for pair in pairs:
        try:
            call = ast.parse(f"f({pair['input']})", mode="eval").body
        except SyntaxError:
            raise CodeDataError(f"{where} input_output: cannot read the arguments {pair['input']!r:.80}") from None
        assert isinstance(call, ast.Call)
        keywords = sorted(call.keywords, key=lambda keyword: order.get(keyword.arg or "", len(order)))
        arguments = [*call.args, *(keyword.value for keyword in keywords)]
        inputs.append([_literal(ast.unparse(argument), where) for argument in arguments])
        outputs.append(_literal(pair["output"], where))
    try:
        return IOTests(inputs=inputs, outputs=outputs, fn_name=name)
    except ValidationError as error:
        field, message = describe_validation_error(error)
        raise CodeDataError(f"{where} input_output.{field}: {message}") from None


def _parsed(code: str) -> ast.Module | None:
    """``code`` parsed; a starter that ends at its signature gets a body first; None when neither parses."""
    for text in (code, code.rstrip() + "\n" + " " * 12 + "pass\n"):
        try:
            return ast.parse(text)
        except SyntaxError:  # handled: the next form is tried; None when no form parses
            continue
    return None


def _parameter_order(row: dict[str, Any], name: str) -> dict[str, int]:
    """Position of each parameter of ``name`` (``self`` left out) in the row's starter code or solution."""
    for key in ("starter_code", "completion"):
        code = row.get(key)
        tree = _parsed(code) if isinstance(code, str) else None
        if tree is None:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
                names = [argument.arg for argument in [*node.args.posonlyargs, *node.args.args]]
                return {arg: index for index, arg in enumerate(a for a in names if a != "self")}
    return {}


def _is_leetcode(row: dict[str, Any]) -> bool:
    pairs = row.get("input_output")
    if isinstance(pairs, str):
        try:
            pairs = json.loads(pairs)
        except json.JSONDecodeError:  # handled: not LeetCode's layout; _tests reports it
            return False
    return bool(row.get("entry_point")) and isinstance(pairs, list) and all(
        isinstance(pair, dict) and {"input", "output"} <= pair.keys() for pair in pairs
    )


def _joined_lines(value: Any) -> Any:
    if isinstance(value, list) and value and all(isinstance(line, str) for line in value):
        return "\n".join(value) + ("" if value[-1].endswith("\n") else "\n")
    return value


def _reference(row: dict[str, Any]) -> str | None:
    if isinstance(row.get("reference"), str):
        return row["reference"]
    if row.get("entry_point") and isinstance(row.get("completion"), str):  # LeetCodeDataset: preamble + solution
        preamble = row.get("prompt") if isinstance(row.get("prompt"), str) else ""
        return preamble + row["completion"]
    solutions = row.get("solutions")
    if isinstance(solutions, str):
        try:
            solutions = json.loads(solutions)
        except json.JSONDecodeError:  # handled: solutions that are not JSON are kept as the text the dataset holds
            return solutions
    if isinstance(solutions, list) and solutions and isinstance(solutions[0], str):
        return solutions[0]
    return None


def parse_row(row: Any, *, source: str, default_id: str) -> CodeProblem:
    """One row of a problem file as a ``CodeProblem``.

    Args:
        row: The decoded JSON object (or parquet row as a dict).
        source: ``file:line``, used in error messages.
        default_id: The id when the row has none.

    Returns:
        The problem.

    Raises:
        CodeDataError: ``file:line field: message`` for the first bad field.

    Example:
        >>> parse_row({"problem": "1+1?", "answer": "2"}, source="f.jsonl:1", default_id="f-1").answer
        '2'
    """
    if not isinstance(row, dict):
        raise CodeDataError(f"{source} row: expected a JSON object, got {type(row).__name__}")
    identifier = str(row.get("id") or row.get("task_id") or default_id)
    category = row.get("category") or row.get("type") or row.get("difficulty")
    if row.get("input_output") is not None:
        key, prompt = _text_field(row, CODE_PROMPT_KEYS, source)
        if key == "problem_description" and isinstance(row.get("starter_code"), str) and row["starter_code"].strip():
            prompt = f"{prompt.rstrip()}\n\nStarter code:\n```python\n{row['starter_code'].rstrip()}\n```"
        tests = _leetcode_tests(row, source) if _is_leetcode(row) else _tests(row["input_output"], source)
        return CodeProblem(
            id=identifier, kind="code", category=str(category or "programs"), prompt=prompt, tests=tests,
            reference=_reference(row), source=source,
        )  # fmt: skip
    _, prompt = _text_field(row, PROMPT_KEYS, source)
    answer = row.get("answer")
    if isinstance(answer, int | float) and not isinstance(answer, bool):
        answer = str(answer)
    if not isinstance(answer, str) or not answer.strip():
        raise CodeDataError(f"{source} answer: missing (math rows need an answer; code rows need input_output)")
    return CodeProblem(
        id=identifier, kind="math", category=str(category or "math"), prompt=prompt, answer=answer,
        reference=_reference(row), source=source,
    )  # fmt: skip


def _jsonl_rows(path: Path) -> Iterator[tuple[int, Any]]:
    with path.open("rb") as handle:  # decoded line by line, so a byte that is not UTF-8 is reported at its line
        for line_number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise CodeDataError(
                    f"{path}:{line_number} row: not UTF-8 text ({error.reason} at column {error.start + 1})"
                ) from None
            if not line.strip():
                continue
            try:
                yield line_number, json.loads(line)
            except json.JSONDecodeError as error:
                raise CodeDataError(f"{path}:{line_number} row: not valid JSON: {error.msg}") from None


def _parquet_rows(path: Path) -> Iterator[tuple[int, Any]]:
    import polars

    try:
        frame = polars.read_parquet(path)
    except Exception as error:  # polars raises its own ComputeError / OSError variants
        raise CodeDataError(f"{path}:1 file: cannot read parquet: {error}") from None
    yield from enumerate(frame.iter_rows(named=True), start=1)


def load_problems(path: str | Path) -> Iterator[CodeProblem]:
    """Every problem of a ``.jsonl`` / ``.json`` (one object per line) or ``.parquet`` file, in order.

    Args:
        path: The file.

    Returns:
        An iterator of ``CodeProblem`` (ids default to ``<stem>-<line>``).

    Raises:
        CodeDataError: unreadable file or bad row, as ``file:line field: message``.
    """
    file_path = Path(path)
    if file_path.is_dir():
        raise CodeDataError(f"{file_path}:0 file: a folder, not a file (list its files in data_file)")
    if not file_path.is_file():
        raise CodeDataError(f"{file_path}:0 file: no such file")
    rows = _parquet_rows(file_path) if file_path.suffix == ".parquet" else _jsonl_rows(file_path)
    for line_number, row in rows:
        source = f"{file_path}:{line_number}"
        try:
            yield parse_row(row, source=source, default_id=f"{file_path.stem}-{line_number}")
        except ValidationError as error:
            field, message = describe_validation_error(error)
            raise CodeDataError(f"{source} {field}: {message}") from None
