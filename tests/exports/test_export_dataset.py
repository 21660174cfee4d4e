"""``export_dataset`` (what ``prefbuild export`` and the API call) on a directory ``prefbuild run`` wrote."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pytest
from click.testing import CliRunner

from prefbuild.cli.main import main as cli
from prefbuild.exports import export_dataset
from prefbuild.exports.dataset_dir import SOURCES_NAME
from prefbuild.hub.card import split_card
from prefbuild.io.jsonl import RecordError, write_records
from prefbuild.io.permissions import current_umask
from tests.publish.factories import make_pairs
from tests.report.conftest import SIMULATED_TASKS, simulated_run  # noqa: F401 - the module fixture


def test_real_run_exports_every_format_with_sidecars_and_a_simulated_card(simulated_run: Path, tmp_path: Path):  # noqa: F811
    pairs = simulated_run / "pairs.jsonl"
    out = tmp_path / "dataset"
    summary = export_dataset([pairs], out, ["trl", "llamafactory", "sft"],
                             trajectory_files=[simulated_run / "labelled.jsonl"], ks=(1,))
    n_pairs = len(pairs.read_text().splitlines())
    assert sum(summary.formats["trl"]["rows"].values()) == n_pairs
    assert len(summary.pass_at_k["1"]) == SIMULATED_TASKS
    assert summary.simulated
    assert json.loads((out / "stats.json").read_text()) == summary.as_dict()
    info = json.loads((out / "dataset_info.json").read_text())
    assert {entry["file_name"] for entry in info.values()} <= {str(p.relative_to(out)) for p in out.rglob("*.parquet")}
    assert (out / SOURCES_NAME).is_file()
    metadata, body = split_card((out / "README.md").read_text())
    assert "simulated" in metadata["tags"]
    assert "All of this data is simulated." in body and "every rejected answer is a real output" not in body
    assert "DPOTrainer" in body and "SFTTrainer" in body and "dataset_info.json" in body
    assert len(datasets.load_dataset(str(out), "trl")["train"]) == summary.formats["trl"]["rows"]["train"]


def test_pairs_of_a_run_directory_find_their_episodes_for_the_card(simulated_run: Path, tmp_path: Path):  # noqa: F811
    export_dataset([simulated_run / "pairs.jsonl"], tmp_path / "ds", ["roundwise"])
    _, body = split_card((tmp_path / "ds" / "README.md").read_text())
    assert "All of this data is simulated." in body


def test_a_pair_id_twice_is_exported_once(simulated_run: Path, tmp_path: Path):  # noqa: F811
    text = (simulated_run / "pairs.jsonl").read_text()
    doubled = tmp_path / "pairs.jsonl"
    doubled.write_text(text + text)
    summary = export_dataset([doubled], tmp_path / "out", ["trl"], jsonl=True)
    umask = current_umask()
    for written in (tmp_path / "out" / "trl" / "train.jsonl", tmp_path / "out" / "stats.json"):
        assert written.stat().st_mode & 0o777 == 0o666 & ~umask, written  # not mkstemp's 0600
    n_pairs = len(text.splitlines())
    assert sum(summary.formats["trl"]["rows"].values()) == n_pairs
    assert summary.formats["trl"]["skipped"] == {"duplicate_pair_id": n_pairs}


def test_a_cut_off_last_line_is_an_error_not_a_dropped_record(simulated_run: Path, tmp_path: Path):  # noqa: F811
    lines = (simulated_run / "pairs.jsonl").read_text().splitlines()
    cut = tmp_path / "pairs.jsonl"
    cut.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][: len(lines[-1]) // 2])
    with pytest.raises(RecordError, match=rf"{cut}:{len(lines)}: not valid JSON"):
        export_dataset([cut], tmp_path / "out", ["trl"], jsonl=True)
    result = CliRunner().invoke(cli, ["export", str(cut), "-o", str(tmp_path / "out2")])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.output.strip().startswith(f"error: {cut}:{len(lines)}")


def test_missing_input_and_unknown_format_are_one_line_errors(tmp_path: Path):
    result = CliRunner().invoke(cli, ["export", str(tmp_path / "nope.jsonl"), "-o", str(tmp_path / "o")])
    assert result.exit_code == 1 and result.output.strip() == f"error: {tmp_path / 'nope.jsonl'}: no such file"
    (tmp_path / "p.jsonl").write_text("")
    result = CliRunner().invoke(cli, ["export", str(tmp_path / "p.jsonl"), "-o", str(tmp_path / "o"),
                                      "--format", "axolotl"])
    assert result.exit_code == 2 and "unknown export format 'axolotl'; known: trl, roundwise" in result.output


def test_a_huge_recipe_description_is_kept_in_recipe_yaml_and_cut_on_the_card(tmp_path: Path):
    import yaml

    from prefbuild.recipe import load_recipe

    pairs = tmp_path / "pairs.jsonl"
    write_records(pairs, make_pairs(4))
    recipe = load_recipe("quickstart").resolved_dict()
    recipe["description"] = "lorem ipsum " * 2_000_000  # 24 MB
    export_dataset([pairs], tmp_path / "ds", ["trl"], recipe=recipe)
    card = (tmp_path / "ds" / "README.md").read_text()
    assert len(card) < 200_000 and "characters cut]" in card
    written = yaml.load((tmp_path / "ds" / "recipe.yaml").read_text(), Loader=yaml.CSafeLoader)
    assert written["description"] == recipe["description"]
