"""Label quality as deployed: per-mode precision / recall / F1 on the development and held-out sets.

    .venv/bin/python bench/label_quality.py            # both sets, per shape and overall
    .venv/bin/python bench/label_quality.py --misses   # also list the episodes where labels differ
    .venv/bin/python bench/label_quality.py --set tests/labelers/heldout   # one labelled set only

The labelers run exactly as ``prefbuild label`` runs them (every default labeler, default
parameters); held-out logs are imported through the same readers (AgentBench
``runs.jsonl``, chat ``messages``). A label matches when step and mode are the same.
The acceptance figures of issue 13 are those of the held-out blind set (``blind_test2``).
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
# Development blind sets (``blind_test`` was the held-out set until it was scored and retired).
BLIND_DEVELOPMENT = ("blind_dev", "blind_test")
HELD_OUT = BLIND / "blind_test2" / "labels.jsonl"  # the acceptance set: overall table only


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
    blind = {name: evaluate_sidecar(BLIND / name / "labels.jsonl")["all"] for name in BLIND_DEVELOPMENT}
    for name, scores in blind.items():
        parts.append(format_table(f"development blind set (tests/labelers/{name}), as deployed", scores))
    # The held-out blind set is the acceptance set: its overall table only, never its misses.
    parts.append(format_table("held-out blind set, all shapes (tests/labelers/blind_test2), as deployed",
                              evaluate_sidecar(HELD_OUT)["all"]))
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
