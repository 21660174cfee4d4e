"""Pair building throughput: pairs built per second and peak memory over a large trajectory file.

Usage: ``python bench/pair_throughput.py [--input trajectories.jsonl] [--episodes 2000] [--seed 0]
[--strategy stepwise --strategy style ...] [--max-per-reason N]``

Without ``--input`` a trajectory file is generated first (household env, scripted noisy
expert, every default household labeler) in a child process, so the parent's peak memory
measures only the pairing. The file is then streamed through ``build_pairs`` twice: once
to read and validate it alone (the I/O baseline), once to build, validate, dedup, balance
and split pairs. Peak RSS is the process maximum (``getrusage``); flat memory means it stays
near the baseline whatever the file size.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from prefbuild.io.jsonl import JsonlWriter, read_records
from prefbuild.pairs import build_pairs
from prefbuild.records import Trajectory

RATES = {
    "loop": 0.06,
    "premature_success": 0.04,
    "implausible_location": 0.06,
    "invalid_action": 0.05,
    "verbose_filler": 0.08,
    "format_violation": 0.05,
}


def generate(path: str, episodes: int, seed: int) -> None:
    """Play ``episodes`` household episodes with the scripted teacher and write them labelled."""
    from prefbuild.labelers import build_labelers, label_trajectory
    from prefbuild.recipe import load_recipe_text
    from prefbuild.rollout import EpisodeRunner, plan_episodes, rollout
    from prefbuild.simulation.scripted import ScriptedTeacher

    tasks = max(1, episodes // 2)
    recipe = load_recipe_text(
        f"name: bench\nseed: {seed}\n"
        f"env: {{name: household, protocol: agentbench, num_tasks: {tasks}, samples_per_task: 2, max_steps: 30}}\n"
        "teacher: {backend: scripted, model: scripted-expert}\n"
    ).recipe
    runner = EpisodeRunner(recipe, ScriptedTeacher(RATES))
    labelers = build_labelers(None, env="household")

    async def run() -> None:
        with JsonlWriter(path) as writer:
            async for trajectory in rollout(plan_episodes(recipe), runner, concurrency=8):
                writer.write(label_trajectory(trajectory, labelers))

    asyncio.run(run())


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", type=Path, default=None, help="labelled trajectory JSONL (default: generate one)")
    parser.add_argument("--episodes", type=int, default=2000, help="episodes to generate without --input")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--strategy", action="append", default=None, help="strategy name (repeatable)")
    parser.add_argument("--max-per-reason", type=int, default=None)
    args = parser.parse_args()
    strategies = [
        {"name": name, "params": {"chosen": "template"} if name == "stepwise" else {}}
        for name in (args.strategy or ["stepwise", "style", "trajectory"])
    ]

    with tempfile.TemporaryDirectory() as scratch:
        path = args.input
        if path is None:
            path = Path(scratch) / "trajectories.jsonl"
            started = time.perf_counter()
            child = multiprocessing.get_context("spawn").Process(
                target=generate, args=(str(path), args.episodes, args.seed)
            )
            child.start()
            child.join()
            if child.exitcode != 0:
                raise SystemExit(f"generating trajectories failed (exit code {child.exitcode})")
            print(f"generate: {args.episodes} episodes in {time.perf_counter() - started:.1f}s (child process)")
        size_mib = path.stat().st_size / 2**20
        baseline = peak_rss_mib()

        started = time.perf_counter()
        episodes = sum(1 for _ in read_records(path, Trajectory))
        read_s = time.perf_counter() - started
        print(f"read: {episodes} trajectories ({size_mib:.1f} MiB) in {read_s:.2f}s = {episodes / read_s:,.0f}/s")
        after_read = peak_rss_mib()

        started = time.perf_counter()
        report = build_pairs(
            read_records(path, Trajectory),
            strategies,
            max_per_reason=args.max_per_reason,
            test_fraction=0.1,
            seed=args.seed,
        )
        kept = sum(1 for _ in report)
        elapsed = time.perf_counter() - started
        counts = report.counts
        built = sum(counts.built.values())
        print(
            f"pair ({', '.join(s['name'] for s in strategies)}): {built} built, {kept} kept in {elapsed:.2f}s "
            f"= {built / elapsed:,.0f} pairs built/s, {episodes / elapsed:,.0f} trajectories/s (reading included)"
        )
        print(f"  by strategy {dict(counts.built)}; duplicates {counts.duplicates}; invalid {dict(counts.invalid)}")
        print(
            f"peak RSS: {baseline:.0f} MiB before reading, {after_read:.0f} MiB after a read pass, "
            f"{peak_rss_mib():.0f} MiB after pairing (file {size_mib:.1f} MiB)"
        )


if __name__ == "__main__":
    main()
