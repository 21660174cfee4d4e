"""Hangs and blow-ups: huge task counts and indexes build only what is used, big recipes load,
killed runs' temporaries are cleaned, and an interactive env says what it expects."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from prefbuild import api
from prefbuild.cli.main import main
from prefbuild.io.rundir import remove_stale_temporaries
from prefbuild.recipe import load_recipe_text
from prefbuild.recipe_yaml import _Loader


def _peak_bytes(function) -> int:
    tracemalloc.start()
    try:
        function()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_limit_with_a_huge_num_tasks_plans_only_what_runs(tmp_path: Path) -> None:
    def run(num_tasks: int, out: str) -> None:
        result = api.generate("simulate", overrides=[f"env.num_tasks={num_tasks}"], limit=2, out=tmp_path / out)
        assert result.stats.done == 2

    run(2, "warm")  # imports and caches, outside the measurement
    reference = _peak_bytes(lambda: run(2, "small"))
    huge = _peak_bytes(lambda: run(100_000_000, "huge"))
    # A hundred million planned tasks cost no more memory than two (an eager plan would need GBs).
    assert huge < reference * 1.5 + 2_000_000, (huge, reference)


def test_envs_play_jumps_to_a_huge_index_of_a_seekable_env() -> None:
    result = CliRunner().invoke(main, ["envs", "play", "household", "--index", "99999999"], input="",
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "task household/train/s0/99999999 " in result.output


def test_envs_play_refuses_a_huge_index_an_env_cannot_jump_to() -> None:
    result = CliRunner().invoke(main, ["envs", "play", "sql", "--index", "99999999"], input="")
    assert result.exit_code == 1
    assert [line for line in result.output.splitlines() if line.startswith("error:")] == [
        "error: env 'sql' cannot jump to a task: --index must be below 100000 (it builds every task before it), "
        "got 99999999"
    ]


def test_envs_play_sql_says_what_an_action_looks_like() -> None:
    result = CliRunner().invoke(main, ["envs", "play", "sql"], input="SELECT 1;\n", catch_exceptions=False)
    assert "actions: one line 'Operation: <SQL statement>'" in result.output
    assert "'SELECT 1;' is not an action of this env; it expects one line 'Operation:" in result.output


def test_a_recipe_with_a_huge_description_loads_whole() -> None:
    if yaml.__with_libyaml__:
        assert _Loader is yaml.CSafeLoader
    description = "word " * 1_200_000  # 6 MB
    text = (f"name: big\ndescription: {description}\n"
            "env: {name: household, protocol: react}\nteacher: {backend: scripted}\n")
    loaded = load_recipe_text(text, "big.yaml")
    assert loaded.recipe.description == description.strip()


def test_temporaries_of_a_killed_run_are_removed(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "trajectories").mkdir(parents=True)
    (run / "dataset").mkdir()
    leftovers = [run / ".pairs.jsonl.k2j3.tmp", run / "trajectories" / ".episodes.jsonl.ordering",
                 run / "dataset" / ".card.md.x1.tmp"]
    for path in leftovers:
        path.write_text("partial")
    (run / ".dataset.tmp-abc").mkdir()
    kept = [run / "pairs.jsonl", run / "trajectories" / "episodes.jsonl", run / ".hidden-notes"]
    for path in kept:
        path.write_text("{}\n")
    removed = remove_stale_temporaries(run)
    assert sorted(removed) == sorted([*leftovers, run / ".dataset.tmp-abc"])
    assert all(path.exists() for path in kept) and not any(path.exists() for path in leftovers)


@pytest.mark.parametrize("command", ["inspect", "export", "label", "pair", "stats"])
def test_help_examples_name_files_that_exist_after_the_quickstart(command: str) -> None:
    """Help examples point at files `prefbuild run` really writes (runs/NAME/...), not invented ones."""
    result = CliRunner().invoke(main, [command, "--help"])
    examples = result.output.split("Examples:", 1)[-1]
    for word in examples.split():
        if word.startswith("runs/"):
            parts = Path(word).parts
            assert parts[1] in ("quickstart", "simulate", "sim", "sim-small", "big", "qwen", "big-0", "big-1"), word
            allowed = {"trajectories", "labelled.jsonl", "pairs.jsonl", "dataset", "report.html", "manifest.json",
                       "*.jsonl", "episodes.jsonl", "trl", "train.jsonl", "recipe.yaml"}
            assert all(part in allowed for part in parts[2:]), word
