"""Scale: 100 / 1,000 / 10,000 tasks through generate, label and pair; steps/s and peak RSS.

    .venv/bin/python bench/scale.py                      # 100, 1000, 10000 tasks
    .venv/bin/python bench/scale.py --tasks 100 1000

Each stage of each size runs in a fresh process (through ``prefbuild.api``, as the command
line does), so its peak RSS is its own: memory flat in the number of tasks means the peak
does not grow with the size. The scripted teacher plays the ``simulate`` recipe, so the
figures are the pipeline's own cost, with no model in the loop. Ratios are to the smallest
size of the same run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

STAGE = r"""
import json, resource, sys, time
sys.path.insert(0, {root!r})
from prefbuild import api
from prefbuild.io.rundir import trajectory_files
stage, run_dir, tasks = sys.argv[1], sys.argv[2], int(sys.argv[3])
started = time.process_time()
if stage == "generate":
    result = api.generate("simulate", overrides=[f"env.num_tasks={{tasks}}"], out=run_dir, quiet=True)
    steps = result.stats.steps
elif stage == "label":
    counts = api.label(trajectory_files(__import__("pathlib").Path(run_dir)), run_dir + "/labelled.jsonl")
    steps = counts.steps
else:
    counts = api.pair([run_dir + "/labelled.jsonl"], run_dir + "/pairs.jsonl", recipe="simulate")
    steps = None
cpu = time.process_time() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({{"cpu_s": cpu, "steps": steps, "peak_rss_mib": peak}}))
"""


def run_stage(stage: str, run_dir: Path, tasks: int) -> dict[str, float]:
    code = STAGE.format(root=str(ROOT))
    done = subprocess.run([sys.executable, "-c", code, stage, str(run_dir), str(tasks)],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, nargs="+", default=[100, 1000, 10000])
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for tasks in args.tasks:
            run_dir = Path(folder) / f"run-{tasks}"
            generated = run_stage("generate", run_dir, tasks)
            labelled = run_stage("label", run_dir, tasks)
            paired = run_stage("pair", run_dir, tasks)
            steps = labelled["steps"]
            rows.append({
                "tasks": tasks,
                "steps": steps,
                "generate_steps_per_s": steps / generated["cpu_s"],
                "label_steps_per_s": steps / labelled["cpu_s"],
                "pair_steps_per_s": steps / paired["cpu_s"],
                "generate_rss": generated["peak_rss_mib"],
                "label_rss": labelled["peak_rss_mib"],
                "pair_rss": paired["peak_rss_mib"],
            })
    base = rows[0]
    print(f"{'tasks':>7} {'steps':>8} | {'generate/s':>10} {'label/s':>9} {'pair/s':>9} | "
          f"peak RSS MiB gen/label/pair (x smallest)")
    for row in rows:
        ratio = "/".join(f"{row[k] / base[k]:.2f}" for k in ("generate_rss", "label_rss", "pair_rss"))
        print(f"{row['tasks']:>7} {row['steps']:>8} | {row['generate_steps_per_s']:>10,.0f} "
              f"{row['label_steps_per_s']:>9,.0f} {row['pair_steps_per_s']:>9,.0f} | "
              f"{row['generate_rss']:.0f}/{row['label_rss']:.0f}/{row['pair_rss']:.0f} (x{ratio})")
    print("steps/s are per CPU second of the stage's process; the scripted teacher plays (no model).")


if __name__ == "__main__":
    main()
