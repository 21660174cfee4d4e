"""The dataset directory: parquet shards through datasets, a card whose YAML loads, atomic replacement."""

from __future__ import annotations

from pathlib import Path

import datasets
import pytest
import yaml

from prefbuild.exports.base import ExportError
from prefbuild.exports.dataset_dir import write_dataset_dir
from prefbuild.hub.card import CardInfo, split_card
from prefbuild.recipe import load_recipe
from tests.publish.factories import make_pairs, sft_rows, trl_rows


@pytest.fixture
def card_info() -> CardInfo:
    return CardInfo.from_recipe(load_recipe("quickstart").resolved_dict(), pretty_name="Household DPO test")


def test_layout_card_and_reload(tmp_path: Path, card_info: CardInfo) -> None:
    pairs = make_pairs(12)
    out = tmp_path / "dataset"
    summary = write_dataset_dir(out, {"trl": trl_rows(pairs), "sft": sft_rows(pairs)}, pairs, card_info)

    assert sorted(summary.files) == [
        "README.md",
        "data/sft/test-00000-of-00001.parquet",
        "data/sft/train-00000-of-00001.parquet",
        "data/trl/test-00000-of-00001.parquet",
        "data/trl/train-00000-of-00001.parquet",
        "recipe.yaml",
    ]
    metadata, body = split_card((out / "README.md").read_text())
    assert metadata["license"] == "apache-2.0"
    assert metadata["pretty_name"] == "Household DPO test"
    assert {"dpo", "preference", "agent", "synthetic", "prefbuild", "household"} <= set(metadata["tags"])
    assert metadata["task_categories"] == ["text-generation"]
    assert metadata["size_categories"] == ["n<1K"]
    configs = {c["config_name"]: c for c in metadata["configs"]}
    assert configs["trl"]["default"] is True and "default" not in configs["sft"]
    assert configs["trl"]["data_files"] == [{"split": "train", "path": "data/trl/train-*"},
                                            {"split": "test", "path": "data/trl/test-*"}]
    infos = {info["config_name"]: info for info in metadata["dataset_info"]}
    assert {s["name"]: s["num_examples"] for s in infos["trl"]["splits"]} == {"train": 9, "test": 3}
    # The body tells how the data was made and what is in it.
    for needle in ("| embedded | transformers |", "| household | classic | agentbench |", "prefbuild 0.1.0",
                   "| loop | 1 | 3 | 4 |", "| stepwise | 9 |", "| pick_and_place | 4 |", "## Sample pair",
                   "DPOTrainer", "teacher model's licence", "| prompt | 48 |"):
        assert needle in body, needle
    assert yaml.safe_load((out / "recipe.yaml").read_text())["name"] == "quickstart"

    loaded = datasets.load_dataset(str(out))  # the default config
    assert loaded["train"]["id"] == [row["id"] for row in trl_rows(pairs)["train"]]
    assert loaded["test"][0]["prompt"] == trl_rows(pairs)["test"][0]["prompt"]
    sft = datasets.load_dataset(str(out), "sft")
    assert sft["train"]["completion"] == [row["completion"] for row in sft_rows(pairs)["train"]]


def test_shards_follow_the_size_limit(tmp_path: Path, card_info: CardInfo) -> None:
    pairs = make_pairs(40)
    summary = write_dataset_dir(tmp_path / "ds", {"default": trl_rows(pairs)}, pairs, card_info, max_shard_bytes=3000)
    train_files = summary.configs[0].files["train"]
    assert len(train_files) > 1
    assert train_files[0] == f"data/train-00000-of-{len(train_files):05d}.parquet"
    reloaded = datasets.load_dataset(str(tmp_path / "ds"), split="train")
    assert reloaded["id"] == [row["id"] for row in trl_rows(pairs)["train"]]


def test_null_column_in_one_split_keeps_one_schema(tmp_path: Path, card_info: CardInfo) -> None:
    rows = {"default": {"train": [{"x": "a", "note": None}], "test": [{"x": "b", "note": "kept"}]}}
    write_dataset_dir(tmp_path / "ds", rows, make_pairs(2), card_info)
    loaded = datasets.load_dataset(str(tmp_path / "ds"))
    assert loaded["test"][0]["note"] == "kept" and loaded["train"][0]["note"] is None


def test_failure_leaves_previous_dataset_intact(tmp_path: Path, card_info: CardInfo) -> None:
    pairs = make_pairs(8)
    out = tmp_path / "dataset"
    write_dataset_dir(out, {"trl": trl_rows(pairs)}, pairs, card_info)
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}

    def exploding_pairs():
        yield pairs[0]
        raise RuntimeError("killed while writing")

    with pytest.raises(RuntimeError, match="killed"):
        write_dataset_dir(out, {"trl": trl_rows(pairs[:3])}, exploding_pairs(), card_info)
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before
    assert [p.name for p in tmp_path.iterdir()] == ["dataset"], "temporary build directories must be removed"


def test_replacing_removes_stale_configs(tmp_path: Path, card_info: CardInfo) -> None:
    pairs = make_pairs(8)
    out = tmp_path / "dataset"
    write_dataset_dir(out, {"trl": trl_rows(pairs), "sft": sft_rows(pairs)}, pairs, card_info)
    write_dataset_dir(out, {"trl": trl_rows(pairs)}, pairs, card_info)
    assert not (out / "data" / "sft").exists()
    assert [c["config_name"] for c in split_card((out / "README.md").read_text())[0]["configs"]] == ["trl"]


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ({}, "no configs"),
        ({"data": {"train": [{"a": 1}]}}, "config name 'data'"),
        ({"trl": {"bad split": [{"a": 1}]}}, "split name 'bad split'"),
        ({"trl": {"train": []}}, "every config and split is empty"),
        ({"trl": {"train": [{"a": 1}, {"a": "text"}]}}, "cannot be stored as one table"),
    ],
)
def test_bad_rows_are_clear_errors(tmp_path: Path, card_info: CardInfo, rows: dict, message: str) -> None:
    with pytest.raises(ExportError, match=message):
        write_dataset_dir(tmp_path / "ds", rows, [], card_info)
    assert not (tmp_path / "ds").exists()


def _without_none_keys(value):
    """Parquet stores one struct type per column: keys a message lacks come back as None."""
    if isinstance(value, dict):
        return {k: _without_none_keys(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_none_keys(v) for v in value]
    return value


def test_composes_with_export_rows(tmp_path: Path, card_info: CardInfo) -> None:
    from prefbuild.exports import to_rows
    from prefbuild.records import FunctionCall, Message, ToolCall
    from tests.publish.factories import make_pair

    base = make_pair(1)
    call = ToolCall(id="c1", function=FunctionCall(name="search", arguments='{"q": "apple"}'))
    tool_pair = base.model_copy(update={"id": "tool-1", "prompt": [
        *base.prompt, Message(role="assistant", content="", tool_calls=[call]),
        Message(role="tool", content="apple 1 is on the table", tool_call_id="c1")]})
    pairs = [*make_pairs(6), tool_pair]
    rows = {fmt: {split: list(to_rows([p for p in pairs if p.split == split], fmt)) for split in ("train", "test")}
            for fmt in ("trl", "roundwise")}
    write_dataset_dir(tmp_path / "ds", rows, pairs, card_info)
    for fmt in ("trl", "roundwise"):
        loaded = datasets.load_dataset(str(tmp_path / "ds"), fmt)
        for split in ("train", "test"):
            assert _without_none_keys(loaded[split].to_list()) == rows[fmt][split]
