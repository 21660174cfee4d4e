"""The ``trl`` export goes through the real TRL: chat-template preprocessing and 2 DPO steps on CPU."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"

from prefbuild.exports import to_rows
from prefbuild.teachers.embedded import ensure_embedded_model
from tests.exports.household_pairs import household_pairs, shortest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "train_dpo_trl.py"


@pytest.fixture(scope="module")
def model_dir() -> Path:
    return ensure_embedded_model()


@pytest.fixture(scope="module")
def trl_file(tmp_path_factory) -> Path:
    # household episodes in the ReAct protocol without its few-shot examples: short prompts, so a small
    # max_length keeps every pair and two CPU steps stay fast
    pairs = shortest(household_pairs(protocol="react", fewshot=False), 2)
    assert len(pairs) == 2
    path = tmp_path_factory.mktemp("trl") / "train.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for row in to_rows(pairs, "trl"):
            handle.write(json.dumps(row) + "\n")
    return path


def load_example():
    spec = importlib.util.spec_from_file_location("train_dpo_trl", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_trl_preprocessing_renders_prompt_and_completions_with_the_smollm2_template(trl_file, model_dir):
    from datasets import load_dataset
    from transformers import AutoTokenizer
    from trl.data_utils import is_conversational, maybe_apply_chat_template

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    dataset = load_dataset("json", data_files=str(trl_file), split="train")
    example = dataset[0]
    assert is_conversational(example)
    rendered = maybe_apply_chat_template(example, tokenizer)
    last_observation = example["prompt"][-1]["content"]
    assert rendered["prompt"].endswith(f"{last_observation}<|im_end|>\n<|im_start|>assistant\n")
    assert rendered["chosen"] == example["chosen"][0]["content"] + "<|im_end|>\n"
    assert rendered["rejected"] == example["rejected"][0]["content"] + "<|im_end|>\n"
    assert rendered["chosen"] != rendered["rejected"]


def test_dpo_trainer_runs_two_steps_on_the_exported_pairs(trl_file, model_dir, tmp_path):
    import torch

    example = load_example()
    dataset = example.load_pairs_dataset(trl_file)
    torch.manual_seed(0)
    trainer = example.train(
        dataset,
        model=str(model_dir),
        output_dir=str(tmp_path),
        max_steps=2,
        batch_size=1,
        max_length=256,
        learning_rate=1e-4,
        use_cpu=True,
    )
    assert trainer.state.global_step == 2
    logged = [entry for entry in trainer.state.log_history if "loss" in entry]
    assert len(logged) == 2
    assert all(torch.isfinite(torch.tensor(entry["loss"])) for entry in logged)
    # the tokenized training set kept every example: prompts were neither empty nor fully truncated
    assert len(trainer.train_dataset) == 2
    assert all(len(ids) > 0 for ids in trainer.train_dataset["chosen_ids"])
