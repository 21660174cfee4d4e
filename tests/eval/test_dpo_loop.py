"""The DPO loop of ``examples/dpo_gain.py`` in miniature, with the embedded model: evaluate, pair, train, evaluate."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("trl")
pytest.importorskip("peft")

from prefbuild.eval import load_evaluation
from prefbuild.io.jsonl import read_records
from prefbuild.records import Pair

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "dpo_gain.py"


def load_script():
    spec = importlib.util.spec_from_file_location("dpo_gain", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_tiny_dpo_loop_trains_on_training_tasks_and_evaluates_on_held_out_ones(tmp_path, capsys):
    from safetensors.torch import load_file

    from prefbuild.teachers.embedded import ensure_embedded_model

    out = tmp_path / "gain"
    load_script().main([
        "--out", str(out), "--eval-tasks", "1", "--train-tasks", "3", "--max-steps", "2", "--dpo-steps", "2",
        "--batch-size", "1", "--max-length", "1024", "--set", "env.protocol_options.fewshot=false",
        "--set", "teacher.sampling.max_tokens=24",
    ])
    printed = capsys.readouterr().out
    assert "DPO with searcher chosen actions" in printed and "B - A" in printed

    pairs = list(read_records(out / "pairs-searcher.jsonl", Pair))
    assert pairs and {pair.source.task_id.split("/")[1] for pair in pairs} == {"train"}
    base, trained = load_evaluation(out / "eval-base"), load_evaluation(out / "eval-dpo-searcher")
    held_out = {row.task_id for row in base.episodes}
    assert held_out == {row.task_id for row in trained.episodes}
    assert {task.split("/")[1] for task in held_out} == {"valid_unseen"}
    assert not held_out & {pair.source.task_id for pair in pairs}

    base_weights = load_file(next(Path(ensure_embedded_model()).glob("*.safetensors")))
    trained_weights = load_file(out / "model-dpo-searcher" / "model.safetensors")
    name = next(key for key in base_weights if key.endswith("q_proj.weight"))
    assert not (base_weights[name].float() == trained_weights[name].float()).all()  # LoRA merged in
    counts = json.loads((out / "pairs-searcher.counts.json").read_text())
    assert counts["kept"] == len(pairs)
    log = json.loads((out / "dpo-searcher" / "log_history.json").read_text())
    assert [entry["step"] for entry in log if "loss" in entry] == [1, 2]
    assert (out / "comparison-searcher.txt").read_text().startswith("A = embedded")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["trained"]["searcher"]["run_dir"] == str(out / "eval-dpo-searcher")
