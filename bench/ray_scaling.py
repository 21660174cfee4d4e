"""Ray scaling: episodes/s of `generate --ray` with 1 and 2 workers, against one process.

Prints figures, asserts nothing.

    python bench/ray_scaling.py                          # a local Ray instance with 2 CPUs
    python bench/ray_scaling.py --tasks 20000 --workers 1 2 4 8 --address auto   # a real cluster

Every measurement runs the scripted `simulate` recipe into a fresh run directory, merge
included, on an already started cluster (start-up is not counted). "N workers" means at most N
shard tasks at once: each shard task asks Ray for CLUSTER_CPUS / N CPUs. The reference is a
single-process `prefbuild generate` of the same recipe in this process. On a real cluster, set
--out to a folder every node shares (or an fsspec URL, e.g. s3://bucket/bench).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ray

from prefbuild.ray.driver import RayOptions, connected, generate_on_ray
from prefbuild.recipe import load_recipe
from prefbuild.rollout.generate import generate


def label_scaling(cluster, run_dir: Path) -> None:
    """Labelling the single-process run: one process, then Ray tasks over 1 MB ranges of its file."""
    from prefbuild import api
    from prefbuild.io.rundir import trajectory_files
    from prefbuild.labelers.stage import recipe_labelers
    from prefbuild.ray.stages import label_on_ray

    files = trajectory_files(run_dir)
    started = time.perf_counter()
    api.label(files, run_dir / "single-labelled.jsonl", recipe=run_dir / "recipe.yaml")
    single = time.perf_counter() - started
    started = time.perf_counter()
    counts = label_on_ray(cluster, files, run_dir / "ray-labelled.jsonl", recipe_labelers(run_dir / "recipe.yaml"),
                          chunk_bytes=1 << 20)
    distributed = time.perf_counter() - started
    same = (run_dir / "single-labelled.jsonl").read_bytes() == (run_dir / "ray-labelled.jsonl").read_bytes()
    print(f"label {counts.trajectories} trajectories: single process {single:.1f} s, ray tasks {distributed:.1f} s "
          f"({single / distributed:.2f}x), identical output: {same}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--address", default=None, help="a Ray cluster (default: start a local one with 2 CPUs)")
    parser.add_argument("--out", default=None, help="a folder every node shares (default: a temporary one)")
    args = parser.parse_args()
    loaded = load_recipe("simulate", [f"env.num_tasks={args.tasks}"])
    with tempfile.TemporaryDirectory() as scratch:
        root = args.out or scratch
        started = time.perf_counter()
        reference = generate(loaded, out=Path(scratch) / "single", quiet=True)
        single = time.perf_counter() - started
        print(f"single process: {reference.stats.done} episodes in {single:.1f} s -> "
              f"{reference.stats.done / single:,.1f} episodes/s")
        if args.address is None:
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        with connected(args.address) as cluster:
            cpus = cluster.cluster_resources().get("CPU", 1)
            rates: dict[int, float] = {}
            for workers in args.workers:
                options = RayOptions(shards=4 * workers, num_cpus=cpus / workers)
                started = time.perf_counter()
                result = generate_on_ray(loaded, out=f"{root}/ray-{workers}", options=options, quiet=True)
                seconds = time.perf_counter() - started
                rates[workers] = result.stats.done / seconds
                print(f"ray, {workers} worker(s): {result.stats.done} episodes in {seconds:.1f} s -> "
                      f"{rates[workers]:,.1f} episodes/s ({rates[workers] * single / reference.stats.done:.2f}x "
                      f"the single process)")
            label_scaling(cluster, reference.run_dir)
        ray.shutdown()
    first = args.workers[0]
    for workers in args.workers[1:]:
        print(f"{workers} workers / {first} worker: {rates[workers] / rates[first]:.2f}x")


if __name__ == "__main__":
    main()
