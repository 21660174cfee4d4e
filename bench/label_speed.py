"""CPU seconds of labelling a run with the default labelers, per env: a trajectory file at a time, as
``prefbuild label`` reads it, the labelers built once per env.

    .venv/bin/python bench/label_speed.py RUN_DIR_OR_FILE [...]
    .venv/bin/python bench/label_speed.py --code OTHER_CHECKOUT RUN   # another version of prefbuild, same run

Prints trajectories, steps, CPU seconds of the labelling alone (reading excluded) and steps/s.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run directories or trajectory files")
    parser.add_argument("--code", type=Path, help="a checkout of prefbuild to import instead of this one")
    args = parser.parse_args()
    if args.code is not None:
        sys.path.insert(0, str(args.code.resolve()))
    import prefbuild
    from prefbuild.io.rundir import trajectory_files
    from prefbuild.io.sources import read_trajectories
    from prefbuild.labelers import Labeler, build_labelers, label_trajectory

    print(f"prefbuild from {Path(prefbuild.__file__).parent.parent}")
    for run in args.runs:
        files = trajectory_files(run) if run.is_dir() else [run]
        trajectories = [trajectory for path in files for trajectory in read_trajectories(path)]
        labelers: dict[str, list[Labeler]] = {}
        seconds: dict[str, float] = defaultdict(float)
        steps: dict[str, int] = defaultdict(int)
        counts: dict[str, int] = defaultdict(int)
        for trajectory in trajectories:
            env = trajectory.env.name
            if env not in labelers:
                labelers[env] = build_labelers(None, env)
            started = time.process_time()
            label_trajectory(trajectory, labelers[env])
            seconds[env] += time.process_time() - started
            steps[env] += len(trajectory.steps)
            counts[env] += 1
        for env in sorted(seconds):
            rate = steps[env] / seconds[env] if seconds[env] else float("inf")
            print(f"{run}  {env}: {counts[env]} trajectories, {steps[env]} steps, {seconds[env]:.2f} s, "
                  f"{rate:,.0f} steps/s")


if __name__ == "__main__":
    main()
