"""Train a chat model with TRL's ``DPOTrainer`` on a prefbuild dataset.

The ``trl`` export (``prefbuild export pairs.jsonl -o dataset --format trl``) is TRL's
conversational preference layout, so it loads unchanged: ``DPOTrainer`` applies the
model's chat template to ``prompt`` / ``chosen`` / ``rejected`` itself. A raw
``pairs.jsonl`` from ``prefbuild pair`` is converted on the fly.

Defaults are small on purpose (the embedded SmolLM2-135M, a few steps, short sequences), so
the script runs on a laptop CPU; pass a real model and more steps on a GPU machine.

Examples::

    python examples/train_dpo_trl.py runs/quickstart/dataset --max-steps 4
    python examples/train_dpo_trl.py runs/quickstart/pairs.jsonl --max-steps 4
    python examples/train_dpo_trl.py dataset/data/train-00000-of-00001.parquet \\
        --model Qwen/Qwen3-4B-Instruct-2507 --lora --max-length 2048 --max-steps 500
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def load_pairs_dataset(path: str | os.PathLike[str]) -> Any:
    """A ``datasets.Dataset`` with prompt/chosen/rejected from a parquet file, a JSONL file or a folder of them."""
    from datasets import load_dataset

    source = Path(path)
    if source.is_dir():
        files = sorted(source.rglob("train*.parquet")) or sorted(source.rglob("train*.jsonl"))
        if not files:
            raise SystemExit(f"{source}: no train*.parquet or train*.jsonl file inside")
        folders = {f.parent for f in files}
        if len(folders) > 1:  # a dataset directory with several export formats: take the trl one
            files = [f for f in files if f.parent.name == "trl"]
            if not files:
                names = ", ".join(sorted(str(folder.relative_to(source)) for folder in folders))
                raise SystemExit(f"{source}: several datasets inside ({names}) and none named 'trl'")
    elif source.is_file():
        files = [source]
    else:
        raise SystemExit(f"{source}: no such file or folder")
    kind = "parquet" if files[0].suffix == ".parquet" else "json"
    if kind == "json" and _is_prefbuild_pairs(files[0]):
        return _converted(files)
    dataset = load_dataset(kind, data_files=[str(f) for f in files], split="train")
    missing = {"prompt", "chosen", "rejected"} - set(dataset.column_names)
    if missing:
        raise SystemExit(f"{files[0]}: not a TRL preference dataset (missing {', '.join(sorted(missing))})")
    return dataset


def _is_prefbuild_pairs(path: Path) -> bool:
    with path.open(encoding="utf-8") as handle:
        first = handle.readline()
    try:
        record = json.loads(first)
    except json.JSONDecodeError:
        return False
    return isinstance(record, dict) and "strategy" in record and "source" in record


def _converted(files: list[Path]) -> Any:
    from datasets import Dataset

    from prefbuild.exports import to_rows
    from prefbuild.io.jsonl import read_records
    from prefbuild.records import Pair

    rows = [row for f in files for row in to_rows(read_records(f, Pair), "trl")]
    return Dataset.from_list(rows)


def train(
    dataset: Any,
    *,
    model: str | None = None,
    output_dir: str = "dpo-output",
    max_steps: int = 10,
    batch_size: int = 2,
    learning_rate: float = 5e-6,
    beta: float = 0.1,
    max_length: int | None = 1024,
    lora: bool = False,
    use_cpu: bool | None = None,
    sft_weight: float = 0.0,
) -> Any:
    """Run ``DPOTrainer`` and return it (its ``state`` holds the logged losses).

    ``sft_weight`` > 0 adds the chosen side's negative log-likelihood to the DPO loss with that
    weight (TRL's ``loss_type=["sigmoid", "sft"]``, the RPO objective): DPO alone can lower the
    likelihood of both sides when they share a prefix, which the NLL term prevents.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        from trl import DPOConfig, DPOTrainer
    except ImportError:
        raise SystemExit("training needs TRL: pip install 'prefbuild[train]'") from None

    if model is None:
        from prefbuild.teachers.embedded import ensure_embedded_model

        model = str(ensure_embedded_model())
    cpu = not torch.cuda.is_available() if use_cpu is None else use_cpu
    tokenizer = AutoTokenizer.from_pretrained(model)
    policy = AutoModelForCausalLM.from_pretrained(model, dtype=torch.float32 if cpu else torch.bfloat16)
    peft_config = None
    if lora:
        try:
            from peft import LoraConfig
        except ImportError:
            raise SystemExit("--lora needs the peft package: pip install peft") from None
        peft_config = LoraConfig(
            r=16, lora_alpha=32, lora_dropout=0.0, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"]
        )
    config = DPOConfig(
        output_dir=output_dir,
        max_steps=max_steps,
        per_device_train_batch_size=batch_size,
        gradient_accumulation_steps=1,
        learning_rate=learning_rate,
        beta=beta,
        loss_type=["sigmoid", "sft"] if sft_weight > 0 else ["sigmoid"],
        loss_weights=[1.0, sft_weight] if sft_weight > 0 else None,
        max_length=max_length,
        logging_steps=1,
        save_strategy="no",
        report_to=[],
        use_cpu=cpu,
        bf16=not cpu,
        dataloader_num_workers=0,
        seed=0,
    )
    trainer = DPOTrainer(
        model=policy, args=config, train_dataset=dataset, processing_class=tokenizer, peft_config=peft_config
    )
    if len(trainer.train_dataset) == 0:
        raise SystemExit(f"no pair of the {len(dataset)} is left to train on after TRL's preprocessing with "
                         f"--max-length {max_length}; raise --max-length")
    trainer.train()
    return trainer


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", help="trl export (parquet/JSONL file or folder) or a prefbuild pairs.jsonl")
    parser.add_argument("--model", default=None, help="model folder or Hub id (default: the embedded SmolLM2-135M)")
    parser.add_argument("--output-dir", default="dpo-output")
    parser.add_argument("--max-steps", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=2)
    parser.add_argument("--learning-rate", type=float, default=5e-6)
    parser.add_argument("--beta", type=float, default=0.1)
    parser.add_argument("--max-length", type=int, default=1024)
    parser.add_argument("--lora", action="store_true", help="train a LoRA adapter (needs peft)")
    parser.add_argument("--sft-weight", type=float, default=0.0,
                        help="add the chosen side's NLL to the DPO loss with this weight (RPO); 0 = plain DPO")
    args = parser.parse_args(argv)
    trainer = train(
        load_pairs_dataset(args.dataset),
        model=args.model,
        output_dir=args.output_dir,
        max_steps=args.max_steps,
        batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        beta=args.beta,
        max_length=args.max_length,
        lora=args.lora,
        sft_weight=args.sft_weight,
    )
    trainer.save_model(args.output_dir)
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    print(f"trained {trainer.state.global_step} steps; losses: {', '.join(f'{x:.4f}' for x in losses)}")


if __name__ == "__main__":
    main()
