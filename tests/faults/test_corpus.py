"""Malformed inputs: each gives exactly one ``error:`` line, a non-zero exit and no traceback.

The inputs are data files under ``corpus/`` (written by ``make_corpus.py``): recipes checked
with ``check-recipe``, trajectory files labelled, pair files exported, and command lines from
``cli.txt``. They run in-process with click's ``CliRunner``; ``catch_exceptions=False`` lets
any uncaught exception fail the test with its traceback.
"""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from prefbuild.cli.main import main

CORPUS = Path(__file__).resolve().parent / "corpus"
GOOD_PAIR = (CORPUS / "_pair.json.txt").read_text()


def _cases() -> list[tuple[str, list[str]]]:
    cases: list[tuple[str, list[str]]] = []
    for path in sorted((CORPUS / "recipes").glob("*.yaml")):
        cases.append((f"recipe:{path.stem}", ["check-recipe", str(path)]))
    for path in sorted((CORPUS / "trajectories").glob("*.jsonl")):
        cases.append((f"trajectories:{path.stem}", ["label", str(path), "-o", "{tmp}/labelled.jsonl"]))
    for path in sorted((CORPUS / "pairs").glob("*.jsonl")):
        cases.append((f"pairs:{path.stem}", ["export", str(path), "-o", "{tmp}/dataset"]))
    for number, line in enumerate((CORPUS / "cli.txt").read_text().splitlines(), start=1):
        if line.strip() and not line.startswith("#"):
            cases.append((f"cli:{number}:{line.split()[0]}", shlex.split(line)))
    return cases


CASES = _cases()


def _fill(text: str, places: dict[str, str]) -> str:
    for key, value in places.items():
        text = text.replace(key, value)
    return text


def test_the_corpus_holds_at_least_a_hundred_inputs() -> None:
    assert len(CASES) >= 100


@pytest.mark.parametrize(("name", "argv"), CASES, ids=[name for name, _ in CASES])
def test_malformed_input_gives_one_located_error_line(
    name: str, argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PREFBUILD_CORPUS_UNSET_VARIABLE", raising=False)
    pairs = tmp_path / "good-pairs.jsonl"
    pairs.write_text(GOOD_PAIR)
    places = {"{tmp}": str(tmp_path), "{corpus}": str(CORPUS), "{pairs}": str(pairs)}
    args = [_fill(part, places) for part in argv]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    output = result.output
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert result.exit_code != 0, output
    assert "Traceback" not in output, output
    assert len(errors) == 1 or (result.exit_code == 2 and "Error:" in output), output
    shutil.rmtree(tmp_path / "dataset", ignore_errors=True)
