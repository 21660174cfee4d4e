"""A plug-in package registers an env, a labeler with a new failure mode, a pair strategy that
groups trajectories and an export format through entry points only; one ``prefbuild run`` uses
all four, and the run's files carry them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

from prefbuild import registry
from prefbuild.io.jsonl import read_records
from prefbuild.records import Pair, Trajectory
from tests.plugins.distributions import install_distribution

HERE = Path(__file__).parent / "sample_plugin"
ROOT = Path(__file__).resolve().parents[2]


def install(site: Path) -> None:
    """What ``pip install`` of the plug-in leaves behind: the package and its dist-info."""
    install_distribution(site, "prefbuild-sample-plugin", (HERE / "entry_points.txt").read_text(),
                         packages=(HERE / "prefbuild_sample_plugin",))


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The plug-in installed into a private site folder, visible to this process and to children."""
    folder = tmp_path / "site"
    folder.mkdir()
    install(folder)
    monkeypatch.syspath_prepend(str(folder))
    registry.clear_cache()
    yield folder
    monkeypatch.undo()
    sys.modules.pop("prefbuild_sample_plugin", None)
    registry.clear_cache()


def test_one_run_uses_a_plugin_env_labeler_strategy_and_export_format(site: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{ROOT}"}
    done = subprocess.run(
        [sys.executable, "-m", "prefbuild", "run", str(HERE / "recipe.yaml"), "--out", str(out), "--quiet"],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr

    trajectories = list(read_records(out / "labelled.jsonl", Trajectory))
    assert len(trajectories) == 12 and {t.env.name for t in trajectories} == {"lights"}
    assert {t.env.options["rooms"] for t in trajectories} == {3}
    labels = [label for t in trajectories for label in t.labels]
    assert labels and {label.mode for label in labels} == {"dark_room"}
    assert all(label.labeler == "dark_room@1" for label in labels)

    pairs = list(read_records(out / "pairs.jsonl", Pair))
    assert pairs and {pair.strategy for pair in pairs} == {"fewest_steps"}
    assert len({pair.source.task_id for pair in pairs}) == len(pairs)  # one pair per task: it grouped them
    assert any(pair.reason == "dark_room" for pair in pairs)

    rows = pl.read_parquet(next((out / "dataset" / "data" / "plain").glob("train-*.parquet")))
    assert rows.columns == ["strategy", "chosen", "rejected", "reason"] and rows.height == len(pairs)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"]["episodes"] == 12 and manifest["counts"]["pairs"] == len(pairs)


def test_without_the_plugin_its_failure_mode_is_refused() -> None:
    from pydantic import ValidationError

    from prefbuild.records import Label

    try:
        Label(mode="dark_room", step=0, confidence=1.0, evidence="x", labeler="dark_room@1")
    except ValidationError as error:
        assert "unknown failure mode 'dark_room'" in str(error)
    else:
        raise AssertionError("an unregistered failure mode was accepted")


def test_built_in_strategies_take_a_plugin_failure_mode_by_default_and_by_name(site: Path) -> None:
    from prefbuild.pairs import build_strategy
    from tests.pairs.factory import S, act, trajectory

    labelled = trajectory([S(act("wait"), "wait", expert="switch on", labels=[("dark_room", 0.9)])])
    (by_default,) = build_strategy("stepwise", {}).pairs([labelled])
    (by_name,) = build_strategy("stepwise", {"modes": ["dark_room"]}).pairs([labelled])
    assert by_default.reason == by_name.reason == "dark_room"
    with pytest.raises(ValueError, match="unknown failure mode\\(s\\) nope"):
        build_strategy("stepwise", {"modes": ["nope"]})
