"""What each labeler costs: CPU microseconds per step, one labeler at a time, on a trajectory file.

    .venv/bin/python bench/labeler_costs.py RUN/trajectories/episodes.jsonl
    .venv/bin/python bench/labeler_costs.py FILE --repeat 3      # also warm-cache passes

The records are read once; then every default labeler (as ``prefbuild label`` builds them)
labels every trajectory it applies to, alone, and its CPU time is divided by the steps of
the whole file. The first pass runs with the labeler's own caches cold, as in real use;
with ``--repeat`` the best of the passes is printed beside it. A labeler's share of the
sum is what it would save if it cost nothing; 100,000 steps/s per core leaves 10 us a step
for the whole stage (reading and writing included).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from prefbuild.collector import fewer_collections  # noqa: E402
from prefbuild.io.sources import read_trajectories  # noqa: E402
from prefbuild.labelers import build_labelers  # noqa: E402
from prefbuild.records import Trajectory  # noqa: E402


def passes(labeler: object, trajectories: list[Trajectory], repeat: int) -> list[float]:
    """CPU seconds of each pass of ``labeler`` over ``trajectories``."""
    seconds = []
    for _ in range(repeat):
        started = time.process_time()
        for trajectory in trajectories:
            labeler.label(trajectory)  # type: ignore[attr-defined]
        seconds.append(time.process_time() - started)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", type=Path, help="a trajectory JSONL file (e.g. a scripted run's episodes.jsonl)")
    parser.add_argument("--repeat", type=int, default=1, help="passes per labeler (the first has cold caches)")
    args = parser.parse_args()
    trajectories = list(read_trajectories(args.path))
    steps = sum(len(trajectory.steps) for trajectory in trajectories)
    rows = []
    with fewer_collections():
        for labeler in build_labelers(None, env=None):
            usable = [trajectory for trajectory in trajectories if labeler.applies_to(trajectory)]
            if usable:
                rows.append((labeler.tag, passes(labeler, usable, max(1, args.repeat))))
    cold_total = sum(seconds[0] for _, seconds in rows)
    print(f"{len(trajectories)} trajectories, {steps} steps; CPU us per step of the whole file")
    print(f"  {'labeler':<32} {'cold':>8} {'best':>8} {'share':>7}")
    for tag, seconds in rows:
        print(f"  {tag:<32} {seconds[0] / steps * 1e6:8.2f} {min(seconds) / steps * 1e6:8.2f} "
              f"{seconds[0] / cold_total:7.1%}")
    best_total = sum(min(seconds) for _, seconds in rows)
    print(f"  {'all labelers':<32} {cold_total / steps * 1e6:8.2f} {best_total / steps * 1e6:8.2f} "
          f"-> {steps / cold_total:,.0f} steps/s per core for the labelling alone (cold)")


if __name__ == "__main__":
    main()
