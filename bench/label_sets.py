"""How often each set of failure modes labels one step: the default labelers on a run's trajectories.

    .venv/bin/python bench/label_sets.py RUN_DIR

Shows which modes land on the same step (e.g. whether a generic mode still sits beside the tool
mode that narrows it). Prints one line per set of modes, most frequent first.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from prefbuild.io.rundir import trajectory_files
from prefbuild.io.sources import read_trajectories
from prefbuild.labelers import Labeler, build_labelers, label_trajectory


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path, help="a run directory (its trajectories/ are labelled afresh)")
    args = parser.parse_args()
    sets: Counter[tuple[str, ...]] = Counter()
    labelers: dict[str, list[Labeler]] = {}
    for path in trajectory_files(args.run_dir):
        for trajectory in read_trajectories(path):
            env = trajectory.env.name
            if env not in labelers:
                labelers[env] = build_labelers(None, env)
            for step in label_trajectory(trajectory, labelers[env]).steps:
                if step.labels:
                    sets[tuple(sorted({label.mode for label in step.labels}))] += 1
    for modes, count in sets.most_common():
        print(f"{count:6d}  {' + '.join(modes)}")


if __name__ == "__main__":
    main()
