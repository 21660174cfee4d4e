"""merge says when it cannot check a shard's completeness (its recipe does not load here)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from prefbuild.io.merge import merge_run_dirs
from prefbuild.rollout.generate import generate
from tests.rollout.test_generate import expert, loaded


@pytest.fixture(autouse=True)
def _register_toy(monkeypatch: pytest.MonkeyPatch) -> None:
    from prefbuild import registry

    monkeypatch.setitem(registry.BUILTINS["envs"], "count", "tests.rollout.toy:CountEnv")


def test_a_shard_whose_recipe_does_not_load_is_merged_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    for k in range(2):
        generate(loaded(), out=tmp_path / f"s{k}", shard=f"{k}/2", quiet=True, teacher=expert())
    (tmp_path / "s1" / "recipe.yaml").write_text("name: toy\nenv: {name: no_such_env}\n")
    with caplog.at_level(logging.WARNING, logger="prefbuild.io.merge"):
        merged = merge_run_dirs([tmp_path / "s0", tmp_path / "s1"], tmp_path / "all")
    assert merged.counts["episodes"] == 6
    (message,) = [record.getMessage() for record in caplog.records]
    assert message.startswith(f"{tmp_path / 's1'}: cannot tell how many episodes shard 1/2 was planned to hold")
    assert "its completeness is not checked" in message
