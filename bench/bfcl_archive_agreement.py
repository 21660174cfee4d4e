"""Imported BFCL outcomes against BFCL's own scores, on result files as ``bfcl generate`` / ``bfcl evaluate`` leave
them: every multi-turn result file under ``ARCHIVE/result/<model>/multi_turn/`` is imported with prefbuild (each
entry replayed on BFCL's backends and checked by BFCL's checker), and each entry's ``outcome.success`` is compared
with the score file of the same model and category under ``ARCHIVE/score/`` (its first line a header, then one
line per failed entry; an entry it does not list passed).

    .venv/bin/python bench/bfcl_archive_agreement.py ARCHIVE                 # e.g. a clone's 2025-12-16/ folder
    .venv/bin/python bench/bfcl_archive_agreement.py ARCHIVE --model Qwen_Qwen3-4B-Instruct-2507-FC

A result file may hold only the first entries of a run (the score file may hold more). Needs the ``bfcl`` extra.
Prints one row per file and the totals; entries prefbuild skips (an inference that failed) count as missing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from prefbuild.io.sources import read_trajectories  # noqa: E402


def failed_ids(score_file: Path) -> set[str]:
    """The ids a BFCL score file lists as failed (every line after the header that names an id)."""
    failed: set[str] = set()
    with score_file.open(encoding="utf-8") as handle:
        next(handle, None)  # the header: accuracy, counts
        for line in handle:
            if line.strip():
                record = json.loads(line)
                if isinstance(record, dict) and "id" in record and record.get("valid") is not True:
                    failed.add(str(record["id"]))
    return failed


def entry_ids(result_file: Path) -> list[str]:
    with result_file.open(encoding="utf-8") as handle:
        return [str(json.loads(line)["id"]) for line in handle if line.strip()]


def compare(result_file: Path, score_file: Path) -> tuple[int, int, list[str]]:
    """``(entries, agreeing, what disagreed)`` for one result file."""
    failed = failed_ids(score_file)
    expected = {entry: entry not in failed for entry in entry_ids(result_file)}
    imported = {trajectory.task.id: trajectory.outcome.success for trajectory in read_trajectories(result_file)}
    wrong = [
        f"{entry}: imported {imported.get(entry, 'missing')}, BFCL {passed}"
        for entry, passed in expected.items()
        if imported.get(entry) is not passed
    ]
    return len(expected), len(expected) - len(wrong), wrong


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("archive", type=Path, help="a folder holding result/ and score/ as BFCL writes them")
    parser.add_argument("--model", action="append", default=[], help="only these model folders (repeatable)")
    args = parser.parse_args()
    rows, entries, agreeing = [], 0, 0
    for result_file in sorted((args.archive / "result").glob("*/multi_turn/*_result.json")):
        model = result_file.parents[1].name
        if args.model and model not in args.model:
            continue
        score_file = args.archive / "score" / model / "multi_turn" / result_file.name.replace("_result", "_score")
        if not score_file.is_file():
            print(f"{model}/{result_file.name}: no score file {score_file}", file=sys.stderr)
            continue
        count, agree, wrong = compare(result_file, score_file)
        entries, agreeing = entries + count, agreeing + agree
        rows.append((f"{model}/{result_file.stem.removeprefix('BFCL_v4_multi_turn_').removesuffix('_result')}",
                     count, agree, wrong))
    width = max((len(name) for name, *_ in rows), default=10)
    print(f"{'file':<{width}}  entries  agree")
    for name, count, agree, wrong in rows:
        print(f"{name:<{width}}  {count:7d}  {agree:5d}")
        for line in wrong:
            print(f"{'':<{width}}    {line}")
    print(f"{'all':<{width}}  {entries:7d}  {agreeing:5d}")


if __name__ == "__main__":
    main()
