"""An export format installed by another package (entry point ``prefbuild.exports``) works like a built-in:
the recipe check, ``prefbuild export``, the sidecar files and the card all find it through the registry."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from prefbuild import registry
from prefbuild.cli.main import main as cli
from prefbuild.exports.base import get_format
from prefbuild.hub.card import split_card
from prefbuild.io.jsonl import write_records
from prefbuild.recipe import RecipeError, load_recipe
from tests.plugins.distributions import install_distribution
from tests.publish.factories import make_pairs

PLUGIN = '''
from prefbuild.exports.base import ExportFormat


class PlainFormat(ExportFormat):
    name = "plain"
    consumes = "pairs"

    def row(self, record):
        return {"chosen": record.chosen[-1].content, "rejected": record.rejected[-1].content}

    def sidecar_files(self, files):
        return {"PLAIN.txt": "splits: " + ",".join(sorted(files)) + "\\n"}

    def loading_snippet(self, repo_id, config):
        return f"Load the plain rows: `load_dataset('{repo_id}', '{config}')` (plain-format snippet)"
'''


@pytest.fixture
def plain_format(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    install_distribution(tmp_path, "plain-format", "[prefbuild.exports]\nplain = plain_format:PlainFormat\n",
                         modules={"plain_format.py": PLUGIN})
    monkeypatch.syspath_prepend(str(tmp_path))
    registry.clear_cache()
    yield
    sys.modules.pop("plain_format", None)
    monkeypatch.undo()
    registry.clear_cache()


def test_plugin_format_is_found_through_the_registry(plain_format: None, tmp_path: Path) -> None:
    assert registry.names("exports")[-1] == "plain"
    assert get_format("plain").consumes == "pairs"
    recipe = load_recipe("simulate", overrides=["output.formats=[trl, plain]"])
    assert recipe.recipe.output.formats == ["trl", "plain"]

    pairs = tmp_path / "pairs.jsonl"
    write_records(pairs, make_pairs(8))
    out = tmp_path / "dataset"
    result = CliRunner().invoke(cli, ["export", str(pairs), "-o", str(out), "--format", "trl", "--format", "plain"])
    assert result.exit_code == 0, result.output
    assert (out / "PLAIN.txt").read_text() == "splits: test,train\n"
    assert sorted(p.name for p in (out / "data" / "plain").iterdir()) == [
        "test-00000-of-00001.parquet", "train-00000-of-00001.parquet"]
    metadata, body = split_card((out / "README.md").read_text())
    assert [c["config_name"] for c in metadata["configs"]] == ["trl", "plain"]
    assert "(plain-format snippet)" in body


def test_without_the_plugin_the_name_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RecipeError, match="unknown export format 'plain'"):
        load_recipe("simulate", overrides=["output.formats=[plain]"])
