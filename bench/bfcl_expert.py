"""BFCL multi-turn: the ground-truth expert over every task, with the env's verdicts and timing.

Usage: ``python bench/bfcl_expert.py [--per-category 200] [--hints off|actionable]``

Plays the expert on the first N tasks of each category through ``BfclEnv`` (safe dispatch,
BFCL's state/response checks per turn), then scores the same calls with BFCL's own
``multi_turn_checker`` (its ``eval`` executor: the reference run, in this process). Prints
success counts of both, the tasks where they disagree or the expert fails, and the env's time
as a ratio to the reference checker's.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from prefbuild.envs.bfcl.data import CATEGORIES, load_entries
from prefbuild.envs.bfcl.env import BfclEnv
from tests.bfcl.helpers import bfcl_verdict, expert_policy, play


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-category", type=int, default=200)
    parser.add_argument("--hints", choices=("off", "actionable"), default="off")
    args = parser.parse_args()
    env_seconds = reference_seconds = 0.0
    for category in CATEGORIES:
        entries = load_entries(category)[: args.per_category]
        won = accepted = steps = 0
        odd: list[str] = []
        for entry in entries:
            started = time.perf_counter()
            episode = play(BfclEnv(hints=args.hints), entry, expert_policy)
            env_seconds += time.perf_counter() - started
            started = time.perf_counter()
            reference = bfcl_verdict(entry, episode)["valid"]
            reference_seconds += time.perf_counter() - started
            ours = bool(episode.last.won)
            won += ours
            accepted += reference
            steps += len(episode.results)
            if not ours or ours != reference:
                odd.append(f"{entry.id} (env {ours}, BFCL checker {reference})")
        print(
            f"{category:13s} tasks {len(entries):4d}  expert won {won:4d}  BFCL checker accepts {accepted:4d}  "
            f"steps {steps:5d}  exceptions: {', '.join(odd) or 'none'}"
        )
    print(
        f"env episodes (play + per-turn checks) take {env_seconds / reference_seconds:.2f}x the time of "
        f"BFCL's multi_turn_checker on the same calls"
    )


if __name__ == "__main__":
    main()
