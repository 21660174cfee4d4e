"""Labelling throughput and memory: labelled steps per second per core, peak RSS at two file sizes.

    .venv/bin/python bench/label_throughput.py            # 2,000 and 8,000 trajectories
    .venv/bin/python bench/label_throughput.py --small 500 --large 2000

A large trajectory file is generated from the hand-labelled fixture episodes (realistic
AgentBench turns, 3-25 steps each, renamed so every record is distinct), then labelled
with every default labeler through the same streaming path as ``prefbuild label``. Each
size runs in a fresh process so its peak RSS is its own: flat memory means the peak does
not grow with the file.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "labelers" / "fixtures" / "trajectories.jsonl"
# Instance numbers inside texts ("cabinet 3"), not JSON fields like "index": 3.
NUMBER = re.compile(r"(?<=[a-z] )(\d+)\b")


def generate(path: Path, trajectories: int) -> int:
    """Write ``trajectories`` records cycled from the fixtures; returns the number of steps.

    Every copy shifts all instance numbers ("cabinet 3" -> "cabinet 703"), so texts are not
    byte-identical across copies and caches inside the labelers get no free hits.
    """
    templates = FIXTURES.read_text(encoding="utf-8").splitlines()
    steps = 0
    with path.open("w", encoding="utf-8") as handle:
        for number in range(trajectories):
            shift = 100 * (number // len(templates))
            line = NUMBER.sub(
                lambda match, shift=shift: str(int(match.group(1)) + shift), templates[number % len(templates)]
            )
            record = json.loads(line)
            record["id"] = f"{record['id']}-{number}"
            steps += len(record["steps"])
            handle.write(json.dumps(record) + "\n")
    return steps


def run_one(path: Path) -> None:
    """Label ``path`` in this process, streaming as ``prefbuild label`` does, and print one JSON line.

    End to end = read, validate, label, serialise, write; labelling = the CPU time inside
    ``label_trajectory`` alone, measured in the same single pass (caches as cold as in real use).
    """
    sys.path.insert(0, str(ROOT))
    from prefbuild.io.sources import atomic_writer, read_trajectories
    from prefbuild.labelers import build_labelers, label_trajectory
    from prefbuild.labelers.stage import LabelCounts

    labelers = build_labelers(None, env=None)
    stats = LabelCounts()
    labelling = 0.0
    wall, cpu = time.perf_counter(), time.process_time()
    with atomic_writer(path.with_suffix(".labelled.jsonl")) as writer:
        for trajectory in read_trajectories(path):
            started = time.process_time()
            labelled = label_trajectory(trajectory, labelers)
            labelling += time.process_time() - started
            stats.add(labelled)
            writer.write(labelled)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "trajectories": stats.trajectories,
                "steps": stats.steps,
                "labels": sum(stats.labels.values()),
                "wall_s": round(wall, 3),
                "cpu_s": round(cpu, 3),
                "end_to_end_steps_per_s": round(stats.steps / cpu) if cpu else None,
                "labelling_steps_per_s": round(stats.steps / labelling) if labelling else None,
                "peak_rss_mib": round(peak_kib / 1024, 1),
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", type=int, default=2000, help="trajectories in the small file")
    parser.add_argument("--large", type=int, default=8000, help="trajectories in the large file")
    parser.add_argument("--run-one", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run_one:
        run_one(args.run_one)
        return
    with tempfile.TemporaryDirectory() as folder:
        for size in (args.small, args.large):
            path = Path(folder) / f"trajectories-{size}.jsonl"
            steps = generate(path, size)
            megabytes = path.stat().st_size / 2**20
            result = subprocess.run(
                [sys.executable, __file__, "--run-one", str(path)], check=True, capture_output=True, text=True
            )
            figures = json.loads(result.stdout.strip().splitlines()[-1])
            print(
                f"{size:>6} trajectories ({steps} steps, {megabytes:.1f} MiB): labelled steps/s per core: "
                f"{figures['labelling_steps_per_s']} labelling alone, {figures['end_to_end_steps_per_s']} end to end "
                f"(read+validate+label+write, cpu {figures['cpu_s']} s, wall {figures['wall_s']} s); "
                f"{figures['labels']} labels; peak RSS {figures['peak_rss_mib']} MiB"
            )


if __name__ == "__main__":
    main()
