"""Shard stores behind fsspec URLs: parts on an object store, a loopback S3 server, resume from parts."""

from __future__ import annotations

import socket
from pathlib import Path

import fsspec
import pytest

from prefbuild.io.rundir import finished_episode_ids, prepare_run_dir
from prefbuild.ray.driver import SHARD_STORE, RayOptions, generate_on_ray, merge_shards
from prefbuild.ray.storage import ShardStore
from prefbuild.ray.worker import ShardJob, run_shard
from prefbuild.recipe import load_recipe
from prefbuild.rollout.generate import generate
from prefbuild.rollout.plan import plan_episodes

EPISODES = "trajectories/episodes.jsonl"

pytestmark = pytest.mark.ray


def test_memory_store_parts_resume_and_merge_like_one_process(tmp_path: Path) -> None:
    loaded = load_recipe("simulate", ["env.num_tasks=24"])
    root = "memory://prefbuild-test/store"
    planned = tuple(plan_episodes(loaded.recipe))
    first, second = planned[:12], planned[12:]
    try:
        # An attempt that stopped after 5 episodes of shard 0 (its parts are whole objects).
        stopped = run_shard(ShardJob(loaded, 0, first[:5], root, flush_every=2))
        assert stopped.stats.done == 5
        store = ShardStore(root)
        assert len(store.files(0)) == 3  # 2 + 2 + 1 episodes
        assert store.finished_ids(0) == {episode.id for episode in first[:5]}
        retried = run_shard(ShardJob(loaded, 0, first, root, flush_every=2))
        assert (retried.stats.done, retried.stats.skipped) == (7, 5)
        assert run_shard(ShardJob(loaded, 1, second, root, flush_every=4)).stats.done == 12
        assert store.shards() == [0, 1]
        run_dir = prepare_run_dir(loaded, tmp_path / "merged")
        positions = {episode.id: index for index, episode in enumerate(planned)}
        assert merge_shards(store, run_dir, positions) == 24
        assert merge_shards(store, run_dir, positions) == 0  # merging again adds nothing
    finally:
        fsspec.filesystem("memory").rm("/prefbuild-test", recursive=True)
    generate(loaded, out=tmp_path / "single", quiet=True)
    assert (run_dir / EPISODES).read_bytes() == (tmp_path / "single" / EPISODES).read_bytes()


@pytest.fixture
def s3_server():
    """A real S3-compatible server (moto's) on 127.0.0.1, with an empty bucket."""
    moto_server = pytest.importorskip("moto.server")
    pytest.importorskip("s3fs")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    options = {"endpoint_url": f"http://127.0.0.1:{port}", "key": "testing", "secret": "testing"}
    fsspec.filesystem("s3", **options).mkdir("runs")
    try:
        yield options
    finally:
        server.stop()


def test_generate_into_an_s3_url_on_the_cluster(cluster, s3_server, tmp_path: Path) -> None:
    loaded = load_recipe("simulate", ["env.num_tasks=30"])
    url = "s3://runs/simulate"
    options = RayOptions(shards=3, storage_options=s3_server, flush_every=4)
    result = generate_on_ray(loaded, out=url, options=options, quiet=True)
    assert result.stats.done == 30
    s3 = fsspec.filesystem("s3", **s3_server)
    generate(loaded, out=tmp_path / "single", quiet=True)
    assert s3.cat_file(f"{url}/{EPISODES}") == (tmp_path / "single" / EPISODES).read_bytes()
    assert s3.exists(f"{url}/manifest.json") and s3.exists(f"{url}/recipe.yaml")
    assert not s3.exists(f"{url}/{SHARD_STORE}")
    assert len(finished_episode_ids(result.run_dir)) == 30  # the driver's local copy
    again = generate_on_ray(loaded, out=url, options=options, quiet=True)
    assert (again.stats.done, again.stats.skipped) == (0, 30)


def test_a_merge_after_a_kill_mid_write_and_a_resume_without_ray_lose_and_duplicate_nothing(tmp_path: Path) -> None:
    loaded = load_recipe("simulate", ["env.num_tasks=12"])
    planned = tuple(plan_episodes(loaded.recipe))
    generate(loaded, out=tmp_path / "single", quiet=True)
    whole = (tmp_path / "single" / EPISODES).read_bytes()
    lines = whole.splitlines(keepends=True)
    positions = {episode.id: index for index, episode in enumerate(planned)}

    # A run killed while writing its 5th line (a single-machine run, or a merge), then merged again.
    run_dir = prepare_run_dir(loaded, tmp_path / "merged")
    (run_dir / EPISODES).write_bytes(b"".join(lines[:4]) + lines[4][:60])
    store = ShardStore(str(run_dir / SHARD_STORE))
    assert run_shard(ShardJob(loaded, 0, planned, store.root)).stats.done == 12
    assert merge_shards(store, run_dir, positions) == 8
    assert (run_dir / EPISODES).read_bytes() == whole

    # A --ray run stopped before its merge, resumed on one machine: the stored episodes are taken in.
    resumed = prepare_run_dir(loaded, tmp_path / "resumed")
    assert run_shard(ShardJob(loaded, 0, planned[:7], str(resumed / SHARD_STORE))).stats.done == 7
    result = generate(loaded, out=resumed, quiet=True)
    assert (result.stats.done, result.stats.skipped) == (5, 7)
    assert not (resumed / SHARD_STORE).exists()
    assert (resumed / EPISODES).read_bytes() == whole
