"""Label quality as deployed: per-mode precision / recall / F1 on the development and held-out sets.

    .venv/bin/python bench/label_quality.py            # both sets, per shape and overall
    .venv/bin/python bench/label_quality.py --misses   # also list the episodes where labels differ
    .venv/bin/python bench/label_quality.py --set tests/labelers/heldout   # one labelled set only

The labelers run exactly as ``prefbuild label`` runs them (every default labeler, default
parameters); held-out logs are imported through the same readers (AgentBench
``runs.jsonl``, chat ``messages``). A label matches when step and mode are the same.
Every blind set has been scored once while held out and then retired into development data; the
held-out figures are recorded in ``tests/labelers/blind_sets.md``. A new held-out set is scored
with ``--set`` (its overall table only, no ``--misses``, while it is held out).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from prefbuild.labelers.evaluation import (  # noqa: E402
    ModeScore,
    evaluate_sidecar,
    evaluate_trajectories,
    format_table,
)

DEV = ROOT / "tests" / "labelers" / "fixtures"
HELDOUT = ROOT / "tests" / "labelers" / "heldout" / "labels.jsonl"
BLIND = ROOT / "tests" / "labelers"
# Every blind test set has been scored once as held-out and then retired (tests/labelers/blind_sets.md).
BLIND_SETS = (
    "blind_dev", "blind_test", "blind_test2", "blind_test3", "blind_test4", "blind_test5", "blind_test6", "blind_test7",
    "blind_test8", "blind_test9", "blind_test10", "blind_test11", "blind_test12",
    "blind_test13", "blind_test14", "blind_test15", "blind_test16", "blind_test17",
    "blind_test18", "blind_test19", "blind_test20", "blind_test21", "blind_test22", "blind_test23",
    "blind_test24",
)


def development_scores() -> dict[str, ModeScore]:
    """Scores on the development fixtures (prefbuild trajectories with ``expected.jsonl``)."""
    expected = {
        entry["id"]: entry["labels"]
        for entry in map(json.loads, (DEV / "expected.jsonl").read_text(encoding="utf-8").splitlines())
    }
    return evaluate_trajectories(DEV / "trajectories.jsonl", expected)


def sidecar_of(path: Path) -> Path:
    """The label sidecar of a set: ``path`` itself, or the ``labels.jsonl`` inside a folder."""
    return path / "labels.jsonl" if path.is_dir() else path


def set_report(path: Path, misses: bool = False) -> str:
    """The tables of one labelled set (a folder with ``labels.jsonl`` beside its logs, or the sidecar)."""
    sidecar = sidecar_of(path)
    scores = evaluate_sidecar(sidecar)
    parts = [format_table(f"{shape} ({sidecar}), as deployed", by_mode) for shape, by_mode in scores.items()]
    if misses:
        parts += [f"{mode}: {miss}" for mode, counts in scores["all"].items() for miss in counts.misses]
    return "\n\n".join(parts)


def report(misses: bool = False) -> str:
    """The tables of the development, held-out and blind test sets as text."""
    parts = []
    dev = development_scores()
    parts.append(format_table("development fixtures (tests/labelers/fixtures), as deployed", dev))
    heldout = evaluate_sidecar(HELDOUT)
    for shape, scores in heldout.items():
        parts.append(format_table(f"held-out {shape} (tests/labelers/heldout), as deployed", scores))
    blind = {name: evaluate_sidecar(BLIND / name / "labels.jsonl")["all"] for name in BLIND_SETS}
    for name, scores in blind.items():
        parts.append(format_table(f"blind set (tests/labelers/{name}), as deployed", scores))
    if misses:
        for title, scores in (("development", dev), ("held-out", heldout["all"]), *blind.items()):
            for mode, counts in scores.items():
                for miss in counts.misses:
                    parts.append(f"{title} {mode}: {miss}")
    return "\n\n".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--misses", action="store_true", help="list the episodes where found and expected differ")
    parser.add_argument(
        "--set",
        type=Path,
        metavar="PATH",
        help="score only this labelled set: a folder holding labels.jsonl and its logs, or the sidecar itself",
    )
    args = parser.parse_args()
    print(set_report(args.set, misses=args.misses) if args.set else report(misses=args.misses))


if __name__ == "__main__":
    main()
