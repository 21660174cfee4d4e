"""What an installed plug-in package may and may not change (audit B).

A plug-in labeler that no recipe names must not join the labelers of a built-in env (installing a
package never changes what a bundled recipe does); a plug-in env in a top-level module is listed by
``prefbuild envs``; a plug-in strategy that raises is named in the error; an fsspec URL whose
filesystem package is missing is one error line."""

from __future__ import annotations

from collections.abc import Iterator
from importlib.metadata import EntryPoint
from typing import Any, ClassVar

import pytest

from prefbuild import registry
from prefbuild.errors import PrefbuildError
from prefbuild.labelers import build_labelers
from prefbuild.labelers.base import Labeler
from prefbuild.labelers.stage import select_labelers
from prefbuild.pairs.base import PairStrategy
from prefbuild.records import Label, Trajectory


class _Everywhere(Labeler):
    name: ClassVar[str] = "everywhere"
    mode: ClassVar[str] = "everywhere"

    def label(self, trajectory: Trajectory) -> list[Label]:
        return []


class _HouseholdLoop(Labeler):
    """A plug-in's own take on a built-in mode for a built-in env."""

    name: ClassVar[str] = "my_household_loop"
    mode: ClassVar[str] = "loop"
    envs: ClassVar[tuple[str, ...]] = ("household",)

    def label(self, trajectory: Trajectory) -> list[Label]:
        return []


class _LightsOnly(Labeler):
    name: ClassVar[str] = "lights_only"
    mode: ClassVar[str] = "lights_only"
    envs: ClassVar[tuple[str, ...]] = ("lights",)

    def label(self, trajectory: Trajectory) -> list[Label]:
        return []


@pytest.fixture
def plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    entries = [EntryPoint(name=cls.name, value=f"{__name__}:{cls.__name__}", group="prefbuild.labelers")
               for cls in (_Everywhere, _HouseholdLoop, _LightsOnly)]
    monkeypatch.setattr(registry, "entry_points", lambda group: entries if group == "prefbuild.labelers" else [])
    registry.clear_cache()
    yield
    monkeypatch.undo()
    registry.clear_cache()


def _names(labelers: list[Labeler]) -> set[str]:
    return {labeler.name for labeler in labelers}


@pytest.mark.usefixtures("plugins")
def test_an_unnamed_plugin_labeler_never_joins_a_builtin_env() -> None:
    for env in ("household", "sql", None):
        assert not _names(build_labelers(None, env=env)) & {"everywhere", "my_household_loop"}, env
    # a recipe that names `loop` keeps the built-in one on household
    assert _names(build_labelers([{"name": "loop"}], env="household")) == {"loop"}
    # `prefbuild label --set loop.k=4` without a recipe starts from the built-in defaults
    assert "everywhere" not in {entry["name"] for entry in select_labelers(None, ["loop.k=4"])}


@pytest.mark.usefixtures("plugins")
def test_a_plugin_labeler_still_runs_when_named_or_on_its_own_env() -> None:
    assert "everywhere" in _names(build_labelers([{"name": "everywhere"}], env="household"))
    assert "my_household_loop" in _names(build_labelers([{"name": "my_household_loop"}], env="household"))
    assert "lights_only" in _names(build_labelers(None, env="lights"))


def test_envs_lists_a_plugin_env_of_a_top_level_module() -> None:
    from prefbuild.cli.envs import _describe
    from prefbuild.envs.household.env import HouseholdEnv

    env_class: Any = type("CounterEnv", (HouseholdEnv,), {"__module__": "my_plugin", "task_types": None})
    assert _describe(env_class)[2] == ", ".join(HouseholdEnv.protocols)


class _Boom(PairStrategy):
    name: ClassVar[str] = "boom"

    def feed(self, trajectory: Trajectory) -> Iterator[Any]:
        raise KeyError("oops")


def test_a_plugin_strategy_that_raises_is_named() -> None:
    from prefbuild.pairs.pipeline import PairCounts, _feed_all
    from tests.pairs.household import cached

    trajectory = cached(tasks=1, samples=1)[0]
    with pytest.raises(RuntimeError, match=rf"pair strategy 'boom' \(.*_Boom\) failed on trajectory "
                                           rf"'{trajectory.id}': KeyError"):
        list(_feed_all([_Boom()], [trajectory], PairCounts()))


def test_an_object_store_url_without_its_filesystem_is_one_error_line(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("fsspec")
    import importlib
    import sys

    from prefbuild.ray.storage import is_local

    loaded = importlib.import_module("fsspec.registry")._registry  # the filesystem classes fsspec has imported
    monkeypatch.setitem(sys.modules, "s3fs", None)  # as if s3fs were not installed: importing it fails
    monkeypatch.delitem(loaded, "s3", raising=False)
    with pytest.raises(PrefbuildError, match=r"s3://bucket/x: .*s3fs"):
        is_local("s3://bucket/x")


def test_the_api_takes_one_path_given_alone(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from prefbuild import api

    monkeypatch.chdir(tmp_path)
    api.generate("simulate", overrides=["env.num_tasks=3"], out="run")
    assert api.label("run/trajectories/episodes.jsonl", "labelled.jsonl").trajectories == 3
    api.pair("labelled.jsonl", "pairs.jsonl", recipe="simulate")
    summary = api.export("pairs.jsonl", "dataset", "trl", trajectory_files="labelled.jsonl")
    assert set(summary.formats) == {"trl"}
