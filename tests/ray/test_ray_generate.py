"""``--ray`` runs on a real two-node Ray cluster: a worker killed with SIGKILL mid-run loses nothing.

The reference for every check is a single-process run of the same recipe: the merged run
directory must hold exactly its episodes, in the same bytes.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from prefbuild import api
from prefbuild.io.rundir import read_manifest
from prefbuild.ray.driver import SHARD_STORE, RayOptions, generate_on_ray
from prefbuild.recipe import load_recipe
from prefbuild.rollout.generate import generate
from prefbuild.rollout.plan import plan_episodes
from tests.ray.cluster import workers_running

pytestmark = pytest.mark.ray

EPISODES = 2000
SHARDS = 8


def episode_file(run_dir: Path) -> Path:
    return run_dir / "trajectories" / "episodes.jsonl"


def stored_per_shard(store: Path) -> dict[str, int]:
    """Lines each shard of the store holds now."""
    counts: dict[str, int] = {}
    for path in store.glob("*/*.jsonl"):
        with open(path, "rb") as handle:
            counts[path.parent.name] = counts.get(path.parent.name, 0) + sum(1 for _ in handle)
    return counts


def every_running_shard_has_stored(store: Path, running: list[int], shard_size: int, at_least: int) -> bool:
    """True when each running shard task has an unfinished shard with ``at_least`` stored episodes.

    A worker that has just taken a new shard has stored nothing yet; killing it would test
    nothing about skipping what an earlier attempt stored.
    """
    unfinished = [n for n in stored_per_shard(store).values() if n < shard_size]
    return bool(running) and len(unfinished) == len(running) and min(unfinished) >= at_least


def test_two_nodes_sigkill_mid_run_gives_the_single_process_files(cluster, tmp_path: Path) -> None:
    loaded = load_recipe("simulate", [f"env.num_tasks={EPISODES}"])
    reference = generate(loaded, out=tmp_path / "single", quiet=True)
    assert reference.stats.done == EPISODES
    planned = {episode.id for episode in plan_episodes(loaded.recipe)}
    assert len(planned) == EPISODES

    out = tmp_path / "ray"
    outcome: dict[str, object] = {}

    def drive() -> None:
        try:
            outcome["result"] = generate_on_ray(loaded, out=out, options=RayOptions(shards=SHARDS), quiet=True)
        except BaseException as error:
            outcome["error"] = error

    driver = threading.Thread(target=drive)
    driver.start()
    killed: list[int] = []
    deadline = time.monotonic() + 240
    while driver.is_alive() and not killed and time.monotonic() < deadline:
        running = workers_running(cluster, "_shard_task")
        if every_running_shard_has_stored(out / SHARD_STORE, running, EPISODES // SHARDS, at_least=20):
            os.kill(running[0], signal.SIGKILL)
            killed.append(running[0])
        time.sleep(0.02)
    driver.join(timeout=600)
    assert not driver.is_alive()
    assert "error" not in outcome, outcome.get("error")
    assert killed, "no shard worker was running to kill"
    result = outcome["result"]

    lines = episode_file(out).read_bytes().splitlines()
    ids = [json.loads(line)["id"] for line in lines]
    assert len(ids) == len(set(ids)) == EPISODES
    assert set(ids) == planned
    assert episode_file(out).read_bytes() == episode_file(tmp_path / "single").read_bytes()
    assert sorted(p.name for p in (out / "trajectories").iterdir()) == ["episodes.jsonl"]
    assert not (out / SHARD_STORE).exists()
    assert (out / "recipe.yaml").read_bytes() == (tmp_path / "single" / "recipe.yaml").read_bytes()
    assert read_manifest(out).counts == read_manifest(tmp_path / "single").counts
    # The killed shard was retried and skipped what its first attempt had stored.
    assert result.stats.skipped > 0
    assert result.stats.done + result.stats.skipped == EPISODES


def test_resume_runs_only_the_missing_episodes(cluster, tmp_path: Path) -> None:
    loaded = load_recipe("simulate", ["env.num_tasks=40"])
    first = generate_on_ray(loaded, out=tmp_path / "ray", options=RayOptions(shards=4), limit=15, quiet=True)
    assert first.stats.done == 15 and first.planned == 15
    second = generate_on_ray(loaded, out=tmp_path / "ray", options=RayOptions(shards=3), quiet=True)
    assert second.stats.done == 25 and second.stats.skipped == 15
    generate(loaded, out=tmp_path / "single", quiet=True)
    assert episode_file(tmp_path / "ray").read_bytes() == episode_file(tmp_path / "single").read_bytes()


def test_run_labels_on_the_cluster_like_one_machine(cluster, tmp_path: Path) -> None:
    overrides = ["env.num_tasks=30"]
    on_ray = api.run("simulate", overrides=overrides, out=tmp_path / "ray", ray=RayOptions(shards=4))
    single = api.run("simulate", overrides=overrides, out=tmp_path / "single")
    for name in ("trajectories/episodes.jsonl", "labelled.jsonl", "pairs.jsonl"):
        assert (tmp_path / "ray" / name).read_bytes() == (tmp_path / "single" / name).read_bytes(), name
    assert on_ray.pairs == single.pairs > 0


def test_cli_generate_with_ray(cluster, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from prefbuild.cli import main

    out = tmp_path / "cli"
    result = CliRunner().invoke(main, ["generate", "simulate", "--set", "env.num_tasks=12", "--ray", "auto",
                                       "--ray-shards", "3", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert len(episode_file(out).read_bytes().splitlines()) == 12
    assert "workers" in result.output  # the per-worker table
    refused = CliRunner().invoke(main, ["generate", "simulate", "--ray", "auto", "--shard", "0/2", "--out", str(out)])
    assert refused.exit_code == 1
    assert refused.output.strip().splitlines()[-1] == "error: --ray splits the run into shards itself; drop --shard"


def _mark_failed(path: Path, count: int) -> list[str]:
    """Turn the first ``count`` episodes of a trajectory file into ones that ended in an error."""
    lines = path.read_text().splitlines()
    ids = []
    for position in range(count):
        record = json.loads(lines[position])
        record["outcome"] = {**record["outcome"], "success": False, "stop_reason": "error", "error": "injected"}
        record["steps"][-1]["done"] = False
        lines[position] = json.dumps(record)
        ids.append(record["id"])
    path.write_text("\n".join(lines) + "\n")
    return ids


def test_a_ray_resume_plays_failed_episodes_again_unless_kept(cluster, tmp_path: Path) -> None:
    """As a single-machine resume: episodes that ended in error are set aside and played again."""
    loaded = load_recipe("simulate", ["env.num_tasks=20"])
    generate(loaded, out=tmp_path / "single", quiet=True)
    generate_on_ray(loaded, out=tmp_path / "ray", options=RayOptions(shards=3), quiet=True)
    failed = _mark_failed(episode_file(tmp_path / "ray"), 3)
    kept = generate_on_ray(loaded, out=tmp_path / "ray", options=RayOptions(shards=3), quiet=True, keep_failed=True)
    assert kept.stats.done == 0
    again = generate_on_ray(loaded, out=tmp_path / "ray", options=RayOptions(shards=3), quiet=True)
    assert again.stats.done == 3
    assert episode_file(tmp_path / "ray").read_bytes() == episode_file(tmp_path / "single").read_bytes()
    audit = tmp_path / "ray" / "trajectories" / "failed" / "episodes.jsonl"
    assert [json.loads(line)["id"] for line in audit.read_text().splitlines()] == failed


def test_a_file_url_is_the_directory_it_names(cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    loaded = load_recipe("simulate", ["env.num_tasks=6"])
    result = generate_on_ray(loaded, out=f"file://{tmp_path / 'url'}", options=RayOptions(shards=2), quiet=True)
    assert result.run_dir == tmp_path / "url"
    assert len(episode_file(tmp_path / "url").read_bytes().splitlines()) == 6
    assert not (tmp_path / "file:").exists()


def test_a_per_process_memory_url_is_refused_before_playing(tmp_path: Path) -> None:
    from prefbuild.errors import PrefbuildError

    with pytest.raises(PrefbuildError, match="each Ray worker has its own memory:// filesystem"):
        generate_on_ray(load_recipe("simulate", ["env.num_tasks=4"]), out="memory://runs/x", quiet=True)


def test_sigterm_ends_a_ray_driver_as_ctrl_c_does(cluster, tmp_path: Path) -> None:
    """``kill`` (a scheduler's time limit) of a ``--ray`` driver: exit 143 and `terminated`, as without Ray
    (ray.init's own SIGTERM handler would exit 15 on the spot)."""
    import subprocess
    import sys

    out = tmp_path / "term"
    root = Path(__file__).resolve().parents[2]
    process = subprocess.Popen(
        [sys.executable, "-m", "prefbuild", "generate", "simulate", "--set", "env.num_tasks=4000", "--ray",
         cluster.address, "--ray-shards", "16", "--out", str(out), "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"},
    )
    try:
        deadline = time.monotonic() + 180
        while not stored_per_shard(out / SHARD_STORE) and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.2)
        assert process.poll() is None, process.communicate()
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=180)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 143, stderr
    assert stderr.strip().splitlines()[-1].startswith("terminated"), stderr
