"""JSON and YAML past the parsers' limits, and non-finite numbers: one located error line each.

``json.loads`` raises ``RecursionError`` on a line nested about a thousand deep and a bare
``ValueError`` on an integer of more than 4300 digits; PyYAML's constructor raises the same
``ValueError``, and the walks over a recipe's data recurse once per level. ``NaN`` and
``Infinity`` are not JSON: a record that held one was written back as ``null``, which the next
reader refused. Every reader names ``file:line`` (and the field) instead; the corpus inputs
are under ``corpus/`` (``make_corpus.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from pydantic import ValidationError

from prefbuild import recipe_yaml
from prefbuild.cli.main import main
from prefbuild.io.jsonl import decode_json_line
from prefbuild.recipe import RecipeError, load_recipe, parse_override
from prefbuild.records import Outcome, Pair
from tests.foundation.factories import make_pair

CORPUS = Path(__file__).resolve().parent / "corpus"
TRAJECTORIES = CORPUS / "trajectories"
PAIRS = CORPUS / "pairs"
TOO_DEEP = "not valid JSON (exceeded maximum nesting depth at column 1100)"
TOO_LONG = "not valid JSON (an integer of more than 4300 digits at column {column})"
NOT_FINITE = "Input should be a finite number"

# (file, where after ``file:2``, message) for the readers of whole records (read_records, read_fast_records)
RECORD_CASES = [
    (TRAJECTORIES / "nested-too-deep.jsonl", "", TOO_DEEP),
    (TRAJECTORIES / "integer-too-long.jsonl", "", "not valid JSON (an integer of more than 4300 digits at column "),
    (TRAJECTORIES / "reward-infinity.jsonl", " outcome.reward", NOT_FINITE),
    (TRAJECTORIES / "reward-minus-infinity.jsonl", " outcome.reward", NOT_FINITE),
    (TRAJECTORIES / "reward-nan.jsonl", " outcome.reward", NOT_FINITE),
    (TRAJECTORIES / "reward-overflow.jsonl", " outcome.reward", NOT_FINITE),
    (TRAJECTORIES / "reward-nan-string.jsonl", " outcome.reward", NOT_FINITE),
    (TRAJECTORIES / "latency-infinity.jsonl", " steps.0.latency_s", NOT_FINITE),
]
PAIR_CASES = [
    (PAIRS / "nested-too-deep.jsonl", "", TOO_DEEP),
    (PAIRS / "integer-too-long.jsonl", "", "not valid JSON (an integer of more than 4300 digits at column "),
    (PAIRS / "scores-nan.jsonl", " scores.confidence", NOT_FINITE),
    (PAIRS / "scores-infinity.jsonl", " scores.confidence", NOT_FINITE),
]


def _invoke(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert "Traceback" not in result.output, result.output
    return result.exit_code, result.output


def _one_error_line(args: list[str]) -> str:
    code, output = _invoke(args)
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert code != 0 and len(errors) == 1, output
    return errors[0]


def _ids(cases: list[tuple[Path, str, str]]) -> list[str]:
    return [path.stem for path, _, _ in cases]


@pytest.mark.parametrize("command", ["label", "pair", "stats", "inspect"])
@pytest.mark.parametrize(("path", "field", "message"), RECORD_CASES, ids=_ids(RECORD_CASES))
def test_trajectory_readers_locate_the_line(command: str, path: Path, field: str, message: str, tmp_path: Path) -> None:
    args = [command, str(path)] + (["-o", str(tmp_path / "out.jsonl")] if command in ("label", "pair") else [])
    assert _one_error_line(args).startswith(f"error: {path}:2{field}: {message}")
    assert not (tmp_path / "out.jsonl").exists()  # nothing half-written in place of the output


@pytest.mark.parametrize("command", ["export", "stats", "inspect"])
@pytest.mark.parametrize(("path", "field", "message"), PAIR_CASES, ids=_ids(PAIR_CASES))
def test_pair_readers_locate_the_line(command: str, path: Path, field: str, message: str, tmp_path: Path) -> None:
    args = [command, str(path)] + (["-o", str(tmp_path / "dataset")] if command == "export" else [])
    assert _one_error_line(args).startswith(f"error: {path}:2{field}: {message}")


@pytest.mark.parametrize(("path", "field", "message"), RECORD_CASES + PAIR_CASES, ids=_ids(RECORD_CASES + PAIR_CASES))
def test_validate_reports_the_line_and_fails(path: Path, field: str, message: str) -> None:
    code, output = _invoke(["validate", str(path)])
    problems = [line for line in output.splitlines() if line.startswith(f"{path}:")]
    assert code == 1 and problems and "1 valid, 1 invalid" in output, output
    expected = message.split(" at column")[0].removesuffix(")")  # validate names no column
    assert problems[0].startswith(f"{path}:2{field}: {expected}"), output


def test_label_messages_format_locates_the_line(tmp_path: Path) -> None:
    path = TRAJECTORIES / "nested-too-deep.jsonl"
    line = _one_error_line(["label", "--format", "messages", str(path), "-o", str(tmp_path / "out.jsonl")])
    assert f"{path}:2" in line


@pytest.mark.parametrize(
    ("element", "message"),
    [("[" * 5000 + "]" * 5000, "exceeded maximum nesting depth"), ("9" * 5000, "an integer of more than 4300 digits")],
)
def test_a_json_array_element_past_the_limits_is_located(tmp_path: Path, element: str, message: str) -> None:
    dump = tmp_path / "dump.json"
    dump.write_text('[\n\n  {"conversations": ' + element + "}\n]\n", encoding="utf-8")
    line = _one_error_line(["label", str(dump), "-o", str(tmp_path / "out.jsonl")])
    assert line.startswith(f"error: {dump}:3: invalid JSON ({message} at column "), line


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("env.num_tasks=" + "[" * 2000, "value is not valid YAML: exceeded maximum nesting depth"),
        ("env.options.x=" + "[" * 999 + "]" * 999, "value is not valid YAML: exceeded maximum nesting depth (200"),
        ("seed=" + "9" * 5000, "value is not valid YAML: an integer of more than 4300 digits"),
    ],
    ids=["nesting-past-libyaml", "nesting", "integer"],
)
def test_set_values_past_the_limits_are_one_line(setting: str, message: str) -> None:
    key = setting.partition("=")[0]
    line = _one_error_line(["check-recipe", "simulate", "--set", setting])
    assert line.startswith(f"error: --set {key}: {message}")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("nested-past-libyaml", ":3: invalid YAML: exceeded maximum nesting depth"),
        ("nested-too-deep", ":3: exceeded maximum nesting depth (200 levels)"),
        ("seed-too-long", ":2: an integer of more than 4300 digits"),
    ],
)
def test_recipe_files_past_the_limits_are_one_line(name: str, expected: str) -> None:
    path = CORPUS / "recipes" / f"{name}.yaml"
    assert _one_error_line(["check-recipe", str(path)]) == f"error: {path}{expected}"


def test_deep_anchor_chains_count_their_expanded_nesting() -> None:
    chain = "".join(f"k{i}: &a{i} " + "[" * 150 + (f"*a{i - 1}" if i else "1") + "]" * 150 + "\n" for i in range(8))
    with pytest.raises(recipe_yaml.YamlInputError, match=r"r.yaml:2: exceeded maximum nesting depth"):
        recipe_yaml.parse_yaml(chain, "r.yaml")


def test_the_python_yaml_parser_is_bounded_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recipe_yaml, "_Loader", yaml.SafeLoader)  # PyYAML built without libyaml
    with pytest.raises(recipe_yaml.YamlInputError, match="exceeded maximum nesting depth"):
        recipe_yaml.parse_yaml("a: " + "[" * 5000 + "]" * 5000 + "\n", "r.yaml")
    with pytest.raises(RecipeError, match="--set seed: value is not valid YAML: exceeded maximum nesting depth"):
        parse_override("seed=" + "[" * 5000)


def test_integers_written_in_powers_of_two_bases_are_not_limited() -> None:
    assert recipe_yaml.parse_yaml("a: 0x" + "f" * 5000 + "\n", "r.yaml")[1]["a"] == 16**5000 - 1


def test_decode_json_line_turns_the_limits_into_decode_errors() -> None:
    assert decode_json_line('{"a": [1, 2.5, "x"]}') == {"a": [1, 2.5, "x"]}
    assert decode_json_line(b'{"n": -' + b"9" * 4300 + b"}")["n"] == -(10**4300 - 1)
    with pytest.raises(json.JSONDecodeError) as deep:
        decode_json_line('{"a": ' + "[" * 3000 + "]" * 3000 + "}")
    assert (deep.value.msg, deep.value.colno) == ("exceeded maximum nesting depth", 3006)
    long_number = '{"text": "' + "1" * 5000 + '", "n": ' + "9" * 5000 + "}"  # digits in a string are text
    with pytest.raises(json.JSONDecodeError) as long:
        decode_json_line(long_number)
    assert (long.value.msg, long.value.colno) == ("an integer of more than 4300 digits", 5019)
    with pytest.raises(json.JSONDecodeError):
        decode_json_line("{not json")


def test_records_refuse_non_finite_floats_when_built_or_changed() -> None:
    with pytest.raises(ValidationError, match="finite number"):
        Outcome(success=False, reward=float("inf"), stop_reason="max_steps")
    outcome = Outcome(success=False, stop_reason="max_steps")
    with pytest.raises(ValidationError, match="finite number"):
        outcome.reward = float("nan")
    with pytest.raises(ValidationError, match=r"scores\.margin"):
        Pair.model_validate({**make_pair().model_dump(), "scores": {"margin": float("-inf")}})


def test_loading_a_recipe_file_with_a_long_integer_is_located(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text("name: r\nenv:\n  name: household\n  num_tasks: " + "1" * 4400 + "\n")
    with pytest.raises(RecipeError, match=r"r.yaml:4: an integer of more than 4300 digits"):
        load_recipe(path)
