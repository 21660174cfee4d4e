"""Run directories: resume skips finished episodes, another recipe is refused, merge refuses duplicates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prefbuild.errors import PrefbuildError
from prefbuild.io.merge import merge_run_dirs
from prefbuild.io.rundir import finished_episode_ids, read_manifest
from prefbuild.recipe import load_recipe_text
from prefbuild.rollout.generate import generate
from tests.rollout.toy import ProgrammedTeacher

RECIPE = """\
name: toy
seed: 1
env: {name: count, protocol: count, num_tasks: 6, max_steps: 5}
teacher: {backend: openai, model: toy, base_urls: ["${TOY_URL:-http://127.0.0.1:9/v1}"], concurrency: 2}
"""


@pytest.fixture(autouse=True)
def _register_toy(monkeypatch: pytest.MonkeyPatch) -> None:
    from prefbuild import registry

    monkeypatch.setitem(registry.BUILTINS["envs"], "count", "tests.rollout.toy:CountEnv")


def loaded(*overrides: str):
    return load_recipe_text(RECIPE, "toy.yaml", list(overrides))


def expert() -> ProgrammedTeacher:
    return ProgrammedTeacher(lambda messages, n: "ACTION: inc")


def test_generate_writes_run_dir_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    first = generate(loaded(), out=out, limit=4, quiet=True, teacher=expert())
    assert first.stats.done == 4 and first.planned == 4
    assert (out / "recipe.yaml").read_text().count("${TOY_URL:-http://127.0.0.1:9/v1}") == 1
    manifest = read_manifest(out)
    assert manifest.counts["episodes"] == 4 and manifest.stages == ["generate"]
    assert manifest.usage.requests > 0 and "pydantic" in manifest.versions
    # Resume: the 4 finished are skipped, only the other 2 run.
    second = generate(loaded(), out=out, quiet=True, teacher=expert())
    assert second.stats.skipped == 4 and second.stats.done == 2
    assert len(finished_episode_ids(out)) == 6
    lines = (out / "trajectories" / "episodes.jsonl").read_text().splitlines()
    assert len(lines) == len({json.loads(line)["id"] for line in lines}) == 6
    third = generate(loaded(), out=out, quiet=True, teacher=expert())
    assert third.stats.done == 0 and third.stats.skipped == 6


def test_a_smaller_plan_says_which_episodes_it_no_longer_plans(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert generate(loaded(), out=out, quiet=True, teacher=expert()).outside_plan == 0
    smaller = generate(loaded("env.num_tasks=4"), out=out, quiet=True, teacher=expert())
    assert smaller.stats.skipped == 4 and smaller.outside_plan == 2  # kept on disk, and said
    assert len(finished_episode_ids(out)) == 6
    # A --limit or a shard plays part of the plan on purpose: nothing to say.
    assert generate(loaded("env.num_tasks=4"), out=out, limit=1, quiet=True, teacher=expert()).outside_plan == 0


def test_manifest_usage_counts_the_episodes_of_a_killed_invocation(tmp_path: Path) -> None:
    from prefbuild.io.rundir import write_manifest
    from prefbuild.records import Trajectory, UsageTotals

    out = tmp_path / "run"
    generate(loaded(), out=out, limit=4, quiet=True, teacher=expert())
    killed = read_manifest(out)
    killed.usage = UsageTotals()  # SIGKILL: the invocation wrote its episodes but never closed the manifest
    write_manifest(out, killed)
    generate(loaded(), out=out, quiet=True, teacher=expert())
    played = [Trajectory.model_validate_json(line) for line in (out / "trajectories" / "episodes.jsonl").open()]
    assert len(played) == 6
    assert read_manifest(out).usage.requests == sum(t.usage.requests for t in played) > 0


def test_other_recipe_is_refused_unless_new(tmp_path: Path) -> None:
    out = tmp_path / "run"
    generate(loaded(), out=out, limit=1, quiet=True, teacher=expert())
    with pytest.raises(PrefbuildError, match="different recipe"):
        generate(loaded("seed=2"), out=out, quiet=True, teacher=expert())
    other = generate(loaded("seed=2"), out=out, limit=1, quiet=True, new=True, teacher=expert())
    assert other.run_dir == tmp_path / "run-2"
    # The same --new command again resumes the sibling it started; a third recipe gets the next one.
    again = generate(loaded("seed=2"), out=out, quiet=True, new=True, teacher=expert())
    assert again.run_dir == tmp_path / "run-2" and again.stats.skipped == 1 and again.stats.done == 5
    assert generate(loaded("seed=3"), out=out, limit=1, quiet=True, new=True, teacher=expert()).run_dir == (
        tmp_path / "run-3")
    # Endpoints and task counts are not part of the generation hash: same run dir is fine.
    generate(loaded("env.num_tasks=7", "teacher.base_urls=[http://127.0.0.1:8/v1]"), out=out, limit=1, quiet=True,
             teacher=expert())


def test_failed_teacher_counts_errors(tmp_path: Path) -> None:
    result = generate(loaded(), out=tmp_path / "run", quiet=True,
                      teacher=ProgrammedTeacher(lambda messages, n: "<fail>"))
    assert result.stats.errors == 6
    assert "all endpoints down" in result.stats.first_error
    assert read_manifest(tmp_path / "run").counts["errors"] == 6


def test_shards_then_merge(tmp_path: Path) -> None:
    for k in range(3):
        generate(loaded(), out=tmp_path / f"s{k}", shard=f"{k}/3", quiet=True, teacher=expert())
    merged = merge_run_dirs([tmp_path / f"s{k}" for k in (2, 0, 1)], tmp_path / "all")
    assert merged.counts["episodes"] == 6
    assert len(finished_episode_ids(tmp_path / "all")) == 6
    # one file in plan order, whatever order the shards are given in: the single-process run's bytes
    generate(loaded(), out=tmp_path / "single", quiet=True, teacher=expert())
    episodes = Path("trajectories") / "episodes.jsonl"
    assert [path.name for path in (tmp_path / "all" / "trajectories").iterdir()] == ["episodes.jsonl"]
    assert (tmp_path / "all" / episodes).read_bytes() == (tmp_path / "single" / episodes).read_bytes()
    with pytest.raises(PrefbuildError, match="duplicate episode"):
        merge_run_dirs([tmp_path / "s0", tmp_path / "s0"], tmp_path / "dup")
    with pytest.raises(PrefbuildError, match="--shard"):
        generate(loaded(), out=tmp_path / "bad", shard="3/3", quiet=True, teacher=expert())


def test_merge_names_incomplete_shards_and_counts_from_the_files(tmp_path: Path) -> None:
    for k in range(2):
        generate(loaded(), out=tmp_path / f"s{k}", shard=f"{k}/2", quiet=True, teacher=expert())
    shard = tmp_path / "s1" / "trajectories" / "shard-001-of-002.jsonl"
    lines = shard.read_text().splitlines(keepends=True)
    shard.write_text("".join(lines[:-1]))  # as a killed run leaves it, its manifest still counting the lost one
    with pytest.raises(PrefbuildError, match=rf"incomplete shards: {tmp_path / 's1'} \(shard 1/2: 2 of 3 episodes\)"):
        merge_run_dirs([tmp_path / "s0", tmp_path / "s1"], tmp_path / "all")
    merged = merge_run_dirs([tmp_path / "s0", tmp_path / "s1"], tmp_path / "partial", allow_incomplete=True)
    assert merged.counts["episodes"] == 5


def test_merge_refuses_a_set_of_shards_that_is_not_one_whole_run(tmp_path: Path) -> None:
    for k in range(3):
        generate(loaded(), out=tmp_path / f"s{k}", shard=f"{k}/3", quiet=True, teacher=expert())
    with pytest.raises(PrefbuildError, match=r"incomplete shards: shard 2/3 not given"):
        merge_run_dirs([tmp_path / "s0", tmp_path / "s1"], tmp_path / "two")
    generate(loaded("env.num_tasks=3"), out=tmp_path / "s1-small", shard="1/3", quiet=True, teacher=expert())
    with pytest.raises(PrefbuildError, match=r"shards of plans of different sizes"):
        merge_run_dirs([tmp_path / "s0", tmp_path / "s1-small", tmp_path / "s2"], tmp_path / "mixed")
    assert merge_run_dirs([tmp_path / "s0", tmp_path / "s1"], tmp_path / "partial", allow_incomplete=True)


def test_a_run_dir_without_episodes_is_taken_over_by_another_recipe(tmp_path: Path) -> None:
    from prefbuild.io.rundir import prepare_run_dir

    out = tmp_path / "run"
    prepare_run_dir(loaded(), out)  # as a generate whose teacher could not start leaves it
    assert prepare_run_dir(loaded("seed=2"), out) == out
    assert read_manifest(out).recipe_hash == loaded("seed=2").recipe.generation_hash()
    assert "seed: 2" in (out / "recipe.yaml").read_text()
