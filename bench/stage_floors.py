"""Where ``label`` and ``pair`` spend their time: each stage beside its own floors, in steps/s per core.

    .venv/bin/python bench/stage_floors.py                     # a scripted 10,000-task run
    .venv/bin/python bench/stage_floors.py --tasks 2000
    .venv/bin/python bench/stage_floors.py --run-dir RUN       # a run that already has labelled.jsonl

The scripted ``simulate`` recipe is played (as in ``bench/scale.py``), labelled and paired;
then every measurement runs in a fresh process, so caches start cold as in real use:

- label: reading and validating the trajectories alone; reading, validating, serialising
  and writing them unchanged, as pydantic records and as the structs the stage uses for the
  built-in labelers (``io/fast_records.py``); the stage without labelers (its reading,
  dispatch and writing), and with each default labeler replaced by a bare loop that visits
  every step and reads its texts (the least a labeler written in Python costs); the whole
  stage (``api.label``).
- pair: reading and validating the labelled file alone, as pydantic records and as the
  structs the stage reads for ``stepwise`` and ``style``; replaying every labelled episode
  alone (regenerate the task, reset, step to the end); the whole stage on a copy of the file
  whose steps lack ``searcher_action`` (an imported or older recording: the searching expert
  is asked by replaying); the recipe's strategies with the stepwise chosen action taken from
  the oracle (``expert: oracle``); the whole stage (``api.pair``, ``expert: searcher``, the
  default, read from the recorded ``searcher_action``).

Each figure is also printed as a share of its stage, so the gap to a target is the sum of
the parts that would have to go.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

MEASURE = r"""
import json, sys, time
sys.path.insert(0, {root!r})
from pathlib import Path
from prefbuild import api
from prefbuild.io.fast_records import read_fast_records
from prefbuild.io.jsonl import JsonlWriter, read_records
from prefbuild.io.rundir import trajectory_files
from prefbuild.records import Trajectory
what, run_dir, scratch = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
labelled = run_dir / "labelled.jsonl"
sources = trajectory_files(run_dir)


def read(paths):
    steps = 0
    for path in paths:
        for trajectory in read_records(path, Trajectory):
            steps += len(trajectory.steps)
    return steps


def copy(reader):
    steps = 0
    with JsonlWriter(scratch / "copy.jsonl", flush=False) as writer:
        for path in sources:
            for trajectory in reader(path, Trajectory):
                steps += len(trajectory.steps)
                writer.write(trajectory)
    return steps


def pair_specs(expert):
    recipe = api.load("simulate").recipe
    specs = [spec.model_dump() for spec in recipe.pairs.strategies]
    for spec in specs:
        if spec["name"] == "stepwise":
            spec["params"] = {{**(spec.get("params") or {{}}), "expert": expert}}
    return recipe, specs


started = time.process_time()
if what == "label_read":
    steps = read(sources)
elif what == "label_read_fast":
    steps = sum(len(trajectory.steps) for path in sources for trajectory in read_fast_records(path, Trajectory))
elif what == "label_read_write_fast":
    steps = copy(read_fast_records)
elif what == "label_read_write":
    steps = copy(read_records)
elif what in ("label_none", "label_bare"):
    from prefbuild.labelers import build_labelers
    from prefbuild.labelers.stage import label_files
    labelers = build_labelers(None, env=None) if what == "label_bare" else []

    def bare(trajectory):
        for step in trajectory.steps:  # what every labeler does at least: visit each step, read its texts
            step.action, step.raw_output, step.feedback
        return []

    for labeler in labelers:
        labeler.label = bare
    steps = label_files(sources, scratch / "labelled.jsonl", labelers).steps
elif what == "label":
    steps = api.label(sources, scratch / "labelled.jsonl").steps
elif what == "pair_read":
    steps = read([labelled])
elif what == "pair_read_fast":
    steps = sum(len(trajectory.steps) for trajectory in read_fast_records(labelled, Trajectory))
elif what == "pair_oracle":
    from prefbuild.pairs import build_pairs
    from prefbuild.pairs.stage import iter_trajectory_files, strategies_read_structs
    recipe, specs = pair_specs("oracle")
    config = recipe.pairs
    trajectories = iter_trajectory_files([labelled], fast=strategies_read_structs(specs))  # as the stage reads
    report = build_pairs(trajectories, specs, max_per_reason=config.max_per_reason,
                         max_per_trajectory=config.max_per_trajectory, dedup=config.dedup,
                         near_dedup=config.near_dedup, test_fraction=config.test_fraction, seed=recipe.seed)
    with JsonlWriter(scratch / "pairs.jsonl", flush=False) as writer:
        for pair in report.shared():
            writer.write(pair)
    steps = None
elif what == "replay":
    from prefbuild.pairs.replay import replay
    steps = 0
    for trajectory in read_records(labelled, Trajectory):
        if any(step.labels for step in trajectory.steps):
            replay(trajectory, len(trajectory.steps))
    steps = None
elif what == "pair_unrecorded":
    api.pair([scratch / "unrecorded.jsonl"], scratch / "pairs.jsonl", recipe="simulate")
    steps = None
else:
    api.pair([labelled], scratch / "pairs.jsonl", recipe="simulate")
    steps = None
print(json.dumps({{"cpu_s": time.process_time() - started, "steps": steps}}))
"""

LABEL_PARTS = (
    ("label_read", "read + validate (pydantic records)"),
    ("label_read_write", "read + validate + serialise + write (records)"),
    ("label_read_fast", "read + validate (structs, io/fast_records.py)"),
    ("label_read_write_fast", "read + validate + serialise + write (structs)"),
    ("label_none", "label stage without labelers (read, dispatch, write)"),
    ("label_bare", "label stage, each labeler a bare loop over the steps"),
    ("label", "label stage (api.label)"),
)
PAIR_PARTS = (
    ("pair_read", "read + validate (pydantic records)"),
    ("pair_read_fast", "read + validate (structs, as the stage reads)"),
    ("replay", "replay of labelled episodes alone (incl. read)"),
    ("pair_unrecorded", "pair stage, no searcher_action (replays)"),
    ("pair_oracle", "pair, stepwise expert: oracle"),
    ("pair", "pair stage (api.pair, expert: searcher, recorded)"),
)


def measure(what: str, run_dir: Path, scratch: Path) -> dict[str, float]:
    code = MEASURE.format(root=str(ROOT))
    done = subprocess.run([sys.executable, "-c", code, what, str(run_dir), str(scratch)],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def prepare(run_dir: Path, tasks: int) -> None:
    """Generate and label a scripted run into ``run_dir`` (a fresh process each)."""
    prepare_code = (
        f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
        "from pathlib import Path\n"
        "from prefbuild import api\n"
        "from prefbuild.io.rundir import trajectory_files\n"
        "run = Path(sys.argv[1])\n"
        "api.generate('simulate', overrides=[f'env.num_tasks={int(sys.argv[2])}'], out=run, quiet=True)\n"
        "api.label(trajectory_files(run), run / 'labelled.jsonl')\n"
    )
    subprocess.run([sys.executable, "-c", prepare_code, str(run_dir), str(tasks)], check=True)


def write_unrecorded(labelled: Path, out: Path) -> None:
    """``labelled`` with every step's ``searcher_action`` taken out, as an older recording has it."""
    with labelled.open(encoding="utf-8") as source, out.open("w", encoding="utf-8") as target:
        for line in source:
            record = json.loads(line)
            for step in record.get("steps", []):
                step.pop("searcher_action", None)
            target.write(json.dumps(record, ensure_ascii=False) + "\n")


def report(title: str, parts: tuple[tuple[str, str], ...], run_dir: Path, scratch: Path, steps: int) -> None:
    figures = {what: measure(what, run_dir, scratch) for what, _ in parts}
    whole = figures[parts[-1][0]]["cpu_s"]
    print(f"{title} ({steps} steps)")
    for what, description in parts:
        cpu = figures[what]["cpu_s"]
        print(f"  {description:<56} {cpu:7.2f} s  {steps / cpu:>9,.0f} steps/s  {cpu / whole:6.1%} of the stage")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=10000, help="tasks of the scripted run to generate")
    parser.add_argument("--run-dir", type=Path, help="an existing run directory with labelled.jsonl")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        run_dir = args.run_dir
        if run_dir is None:
            run_dir = Path(folder) / "run"
            prepare(run_dir, args.tasks)
        scratch = Path(folder) / "scratch"
        scratch.mkdir()
        steps = int(measure("label_read", run_dir, scratch)["steps"])
        report("label", LABEL_PARTS, run_dir, scratch, steps)
        write_unrecorded(run_dir / "labelled.jsonl", scratch / "unrecorded.jsonl")
        report("pair", PAIR_PARTS, run_dir, scratch, steps)
    print("CPU seconds of each measurement's own process (imports excluded); 100,000 steps/s needs "
          f"{steps / 100_000:.2f} s for the whole stage.")


if __name__ == "__main__":
    main()
