"""Publishing through the unmodified huggingface_hub / datasets clients to the loopback Hub over HTTP."""

from __future__ import annotations

import hashlib
from pathlib import Path

import datasets
import pytest
from click.testing import CliRunner

from prefbuild.cli.publish import publish_command
from prefbuild.exports.dataset_dir import write_dataset_dir
from prefbuild.hub.card import CardInfo, split_card
from prefbuild.hub.publish import PublishError, publish_dataset_dir
from prefbuild.recipe import load_recipe
from tests.plugins.hub_server import TEST_TOKEN, LoopbackHub
from tests.publish.factories import make_pairs, sft_rows, trl_rows

REPO = "prefbuild-tester/household-dpo"


def tree_digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*")
            if p.is_file()}


@pytest.fixture
def dataset_dir(tmp_path: Path) -> Path:
    pairs = make_pairs(16)
    info = CardInfo.from_recipe(load_recipe("quickstart").resolved_dict(), pretty_name="Household DPO")
    write_dataset_dir(tmp_path / "dataset", {"trl": trl_rows(pairs), "sft": sft_rows(pairs)}, pairs, info)
    return tmp_path / "dataset"


def remote_card(hub: LoopbackHub, revision: str = "main") -> tuple[dict, str]:
    return split_card(hub.state.files("dataset", REPO, revision)["README.md"].decode())


def test_round_trip_rows_and_card(fresh_hub: LoopbackHub, dataset_dir: Path) -> None:
    plan = publish_dataset_dir(dataset_dir, REPO, attempts=1)
    assert plan.commit_url and REPO in plan.commit_url

    requests = fresh_hub.state.requests
    assert ("POST", "/api/repos/create") in requests
    assert any(m == "POST" and p.endswith(".git/info/lfs/objects/batch") for m, p in requests)
    assert any(m == "PUT" and p.startswith("/lfs-objects/") for m, p in requests)
    assert any(m == "POST" and p == f"/api/datasets/{REPO}/commit/main" for m, p in requests)

    for config in ("trl", "sft"):
        remote = datasets.load_dataset(REPO, config, download_mode="force_redownload")
        local = datasets.load_dataset(str(dataset_dir), config)
        assert set(remote) == {"train", "test"}
        for split in remote:
            assert remote[split].to_list() == local[split].to_list()
            assert len(remote[split]) > 0
    metadata, body = remote_card(fresh_hub)
    assert {"dpo", "preference", "agent", "household", "synthetic", "prefbuild"} <= set(metadata["tags"])
    assert [c["config_name"] for c in metadata["configs"]] == ["trl", "sft"]
    assert f'load_dataset("{REPO}", "trl")' in body, "the repo id is filled into the usage snippet"
    files = fresh_hub.state.files("dataset", REPO)
    assert "recipe.yaml" in files and "data/trl/train-00000-of-00001.parquet" in files


def test_second_push_keeps_card_metadata_added_on_the_hub(fresh_hub: LoopbackHub, dataset_dir: Path,
                                                         tmp_path: Path) -> None:
    from huggingface_hub import HfApi

    publish_dataset_dir(dataset_dir, REPO, attempts=1)
    # Someone edits the card on the Hub: adds a language, a citation and a tag, renames it.
    metadata, body = remote_card(fresh_hub)
    metadata.update(language=["en"], citation="@misc{household}", pretty_name="Renamed on the Hub")
    metadata["tags"].append("hand-added")
    from prefbuild.hub.card import render_card

    HfApi().upload_file(path_or_fileobj=render_card(metadata, body).encode(), path_in_repo="README.md",
                        repo_id=REPO, repo_type="dataset")

    # A new export with fewer pairs and only one config is pushed.
    pairs = make_pairs(6)
    info = CardInfo.from_recipe(load_recipe("quickstart").resolved_dict(), pretty_name="Household DPO")
    write_dataset_dir(dataset_dir, {"trl": trl_rows(pairs)}, pairs, info)
    plan = publish_dataset_dir(dataset_dir, REPO, attempts=1)

    assert sorted(plan.deletions) == ["data/sft/test-00000-of-00001.parquet", "data/sft/train-00000-of-00001.parquet"]
    metadata, _ = remote_card(fresh_hub)
    assert metadata["language"] == ["en"]
    assert metadata["citation"] == "@misc{household}"
    assert metadata["pretty_name"] == "Renamed on the Hub"
    assert "hand-added" in metadata["tags"] and "dpo" in metadata["tags"]
    assert [c["config_name"] for c in metadata["configs"]] == ["trl"], "configs follow the new data"
    remote = datasets.load_dataset(REPO, "trl", download_mode="force_redownload")
    assert sorted([*remote["train"]["id"], *remote["test"]["id"]]) == sorted(p.id for p in pairs)
    assert not any(path.startswith("data/sft/") for path in fresh_hub.state.files("dataset", REPO))


def test_revision_and_private(fresh_hub: LoopbackHub, dataset_dir: Path) -> None:
    publish_dataset_dir(dataset_dir, REPO, private=True, revision="v1", attempts=1)
    repo = fresh_hub.state.repos[("dataset", REPO)]
    assert repo.private
    assert "recipe.yaml" in fresh_hub.state.files("dataset", REPO, "v1")
    assert "recipe.yaml" not in fresh_hub.state.files("dataset", REPO, "main")


def test_private_push_to_an_existing_public_repo_is_refused(fresh_hub: LoopbackHub, dataset_dir: Path) -> None:
    publish_dataset_dir(dataset_dir, REPO, attempts=1)
    head = fresh_hub.state.repos[("dataset", REPO)].branches["main"]
    with pytest.raises(PublishError, match="already exists and is public"):
        publish_dataset_dir(dataset_dir, REPO, private=True, attempts=1)
    repo = fresh_hub.state.repos[("dataset", REPO)]
    assert not repo.private and repo.branches["main"] == head, "nothing was pushed"


def test_server_error_is_clear_retried_and_leaves_local_intact(fresh_hub: LoopbackHub, dataset_dir: Path) -> None:
    before = tree_digest(dataset_dir)
    fresh_hub.state.failures[("POST", r"/commit/")] = 500
    with pytest.raises(PublishError) as caught:
        publish_dataset_dir(dataset_dir, REPO, attempts=2, retry_wait_s=0)
    message = str(caught.value)
    assert "failed after 2 attempts" in message and "500" in message
    assert "local dataset is unchanged" in message and "retry" in message
    assert TEST_TOKEN not in message
    assert sum(1 for m, p in fresh_hub.state.requests if m == "POST" and "/commit/" in p) == 2
    assert tree_digest(dataset_dir) == before
    # Nothing but the repo's initial commit is on the Hub.
    assert set(fresh_hub.state.files("dataset", REPO)) == {".gitattributes"}

    fresh_hub.state.failures.clear()
    publish_dataset_dir(dataset_dir, REPO, attempts=1)  # safe to retry
    assert "README.md" in fresh_hub.state.files("dataset", REPO)
    assert tree_digest(dataset_dir) == before


def test_network_down_is_a_clear_error(fresh_hub: LoopbackHub, dataset_dir: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub.constants

    before = tree_digest(dataset_dir)
    closed = LoopbackHub()  # bound, never serving, then closed: connections are refused
    url = closed.url
    closed.server_close()
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", url)
    with pytest.raises(PublishError, match="failed") as caught:
        publish_dataset_dir(dataset_dir, REPO, attempts=1)
    assert url in str(caught.value)
    assert tree_digest(dataset_dir) == before


def test_missing_token_is_a_clear_error(fresh_hub: LoopbackHub, dataset_dir: Path,
                                        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import huggingface_hub.constants

    monkeypatch.delenv("HF_TOKEN")
    monkeypatch.setattr(huggingface_hub.constants, "HF_TOKEN_PATH", str(tmp_path / "no-token"))
    monkeypatch.setattr(huggingface_hub.constants, "HF_STORED_TOKENS_PATH", str(tmp_path / "no-tokens"))
    with pytest.raises(PublishError, match="HF_TOKEN"):
        publish_dataset_dir(dataset_dir, REPO, attempts=1)
    assert fresh_hub.state.requests == []


def test_cli_dry_run_lists_files_without_contacting_the_hub(fresh_hub: LoopbackHub, dataset_dir: Path) -> None:
    result = CliRunner().invoke(publish_command, [str(dataset_dir), "--repo", REPO, "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "data/trl/train-00000-of-00001.parquet" in result.output
    assert "README.md" in result.output and "recipe.yaml" in result.output
    assert fresh_hub.state.requests == []


def test_republish_deletes_stale_recipe_stats_and_sidecars(fresh_hub: LoopbackHub, tmp_path: Path) -> None:
    """A re-export with fewer formats and no recipe must not leave the old recipe.yaml, stats.json or
    LLaMA-Factory's dataset_info.json (pointing at deleted shards) on the Hub; hand-added files stay."""
    from prefbuild.exports import export_dataset
    from prefbuild.io.jsonl import write_records

    pairs_file = tmp_path / "pairs.jsonl"
    write_records(pairs_file, make_pairs(16))
    export_dataset([pairs_file], tmp_path / "full", formats=["trl", "llamafactory"],
                   recipe=load_recipe("quickstart").resolved_dict())
    publish_dataset_dir(tmp_path / "full", REPO, attempts=1)
    before = fresh_hub.state.files("dataset", REPO)
    assert {"recipe.yaml", "stats.json", "dataset_info.json"} <= set(before)

    export_dataset([pairs_file], tmp_path / "trl-only", formats=["trl"])
    (tmp_path / "trl-only" / "stats.json").unlink()
    plan = publish_dataset_dir(tmp_path / "trl-only", REPO, attempts=1)
    after = set(fresh_hub.state.files("dataset", REPO))
    assert not {"recipe.yaml", "stats.json", "dataset_info.json"} & after
    assert {"recipe.yaml", "stats.json", "dataset_info.json"} <= set(plan.deletions)
    assert ".gitattributes" in after and "README.md" in after


def test_cli_push_and_bad_input(fresh_hub: LoopbackHub, dataset_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(publish_command, [str(dataset_dir), "--repo", REPO])
    assert result.exit_code == 0, result.output
    assert "commit:" in result.output and TEST_TOKEN not in result.output

    result = runner.invoke(publish_command, [str(tmp_path / "missing"), "--repo", REPO])
    assert result.exit_code == 1 and "no such dataset directory" in result.output
    result = runner.invoke(publish_command, [str(dataset_dir), "--repo", "not a repo"])
    assert result.exit_code == 1 and "must look like 'user/name'" in result.output
    (dataset_dir / "data" / "trl" / "train-00000-of-00001.parquet").unlink()
    result = runner.invoke(publish_command, [str(dataset_dir), "--repo", REPO])
    assert result.exit_code == 1 and "data/trl/train-*" in result.output
    assert "Traceback" not in result.output


def test_datasets_push_to_hub_works_against_the_loopback_hub(fresh_hub: LoopbackHub) -> None:
    """The server also speaks the flow of ``Dataset.push_to_hub`` (repo info 404 -> create, card update)."""
    rows = [{"text": f"row {i}", "n": i} for i in range(5)]
    datasets.DatasetDict({"train": datasets.Dataset.from_list(rows)}).push_to_hub("prefbuild-tester/plain")
    reloaded = datasets.load_dataset("prefbuild-tester/plain", split="train")
    assert reloaded.to_list() == rows
