"""Does DPO on prefbuild pairs make a model better? The whole loop, measured on held-out tasks.

1. Evaluate the base model on the recipe's held-out tasks (``prefbuild eval``).
2. Let the same model play the recipe's training tasks; label its episodes; build stepwise
   pairs: rejected = its labelled failures, chosen = the expert's action in the same context
   (``--expert searcher``, the expert that only uses what the episode has seen, or ``oracle``,
   which knows where objects are hidden; ``both`` trains one model on each).
3. Train DPO with TRL (a LoRA adapter through peft, merged into the weights afterwards).
4. Evaluate each trained checkpoint on the same held-out tasks and print the before/after
   table: every metric, the difference and its 95% paired bootstrap interval over tasks.

Defaults run on a CPU with the embedded SmolLM2-135M (nothing downloads). On a GPU machine
pass a bigger model and the vLLM backend::

    python examples/dpo_gain.py --out runs/dpo-gain
    python examples/dpo_gain.py --model Qwen/Qwen3-4B-Instruct-2507 --backend vllm \\
        --eval-tasks 100 --train-tasks 400 --dpo-steps 500 --batch-size 8 --max-length 4096 --out runs/dpo-gain-4b

Every stage writes a run directory under ``--out`` and is resumed when re-run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from train_dpo_trl import load_pairs_dataset, train

from prefbuild import api
from prefbuild.eval.views import comparison_table, evaluation_table
from prefbuild.io.rundir import RECIPE, trajectory_files


@dataclass
class Settings:
    """What one experiment runs; every field is a command-line flag."""

    recipe: str = "quickstart"
    model: str = "embedded"
    backend: str = "transformers"
    out: str = "runs/dpo-gain"
    eval_tasks: int = 20
    train_tasks: int = 40
    samples: int = 1
    max_steps: int = 8
    train_max_steps: int | None = None
    expert: str = "searcher"
    chosen: str = "action"
    dpo_steps: int = 200
    batch_size: int = 2
    learning_rate: float = 1e-4
    beta: float = 0.1
    sft_weight: float = 1.0
    max_length: int = 2048
    lora: bool = True
    max_pairs: int | None = None
    overrides: tuple[str, ...] = ()


def env_overrides(settings: Settings) -> list[str]:
    """Recipe overrides every stage shares (the held-out and training episodes are played alike)."""
    return [f"env.max_steps={settings.max_steps}", *settings.overrides]


def evaluate(settings: Settings, model: str, name: str) -> Any:
    """One held-out evaluation into ``OUT/name`` (resumed when it exists)."""
    return api.evaluate(
        settings.recipe, model, backend=settings.backend, num_tasks=settings.eval_tasks,
        samples_per_task=settings.samples, overrides=env_overrides(settings), out=Path(settings.out) / name,
    )


def build_pairs(settings: Settings, expert: str) -> Path:
    """The base model's episodes on the training tasks, labelled and paired with ``expert`` chosen actions."""
    out = Path(settings.out)
    strategy = json.dumps([{"name": "stepwise", "params": {"chosen": settings.chosen, "expert": expert}}])
    overrides = [
        *env_overrides(settings),
        *([f"env.max_steps={settings.train_max_steps}"] if settings.train_max_steps else []),
        f"env.num_tasks={settings.train_tasks}",
        f"teacher.backend={settings.backend}",
        f"teacher.model={settings.model}",
        f"pairs.strategies={strategy}",
        "pairs.test_fraction=0",  # every pair trains: the evaluation is on another split
        *([f"pairs.max_per_reason={settings.max_pairs}"] if settings.max_pairs else []),
    ]
    result = api.generate(settings.recipe, overrides=overrides, out=out / "train-rollouts")
    run_dir = result.run_dir
    labelled = run_dir / "labelled.jsonl"
    api.label(trajectory_files(run_dir), labelled, recipe=run_dir / RECIPE)
    pairs = out / f"pairs-{expert}.jsonl"
    recipe = api.load(settings.recipe, overrides)
    counts = api.pair([labelled], pairs, recipe=recipe)
    if not counts.kept:
        raise SystemExit(f"no pairs from {run_dir}: the model made no labelled mistake the expert could fix")
    print(f"pairs ({expert} chosen): {counts.kept} from {counts.as_dict()['trajectories']} episodes; "
          f"by reason {counts.as_dict()['by_reason']}", flush=True)
    (out / f"pairs-{expert}.counts.json").write_text(json.dumps(counts.as_dict(), indent=1, default=list) + "\n")
    return pairs


def train_policy(settings: Settings, pairs: Path, expert: str) -> Path:
    """DPO on ``pairs``; returns a folder with the merged weights and the tokenizer."""
    merged = Path(settings.out) / f"model-dpo-{expert}"
    if (merged / "config.json").is_file():
        return merged
    model = settings.model
    if model == "embedded":
        from prefbuild.teachers.embedded import ensure_embedded_model

        model = str(ensure_embedded_model())
    trainer = train(
        load_pairs_dataset(pairs), model=model, output_dir=str(Path(settings.out) / f"dpo-{expert}"),
        max_steps=settings.dpo_steps, batch_size=settings.batch_size, learning_rate=settings.learning_rate,
        beta=settings.beta, max_length=settings.max_length, lora=settings.lora, sft_weight=settings.sft_weight,
    )
    log = Path(settings.out) / f"dpo-{expert}" / "log_history.json"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(json.dumps(trainer.state.log_history, indent=1) + "\n")  # loss, rewards, accuracy per step
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    if losses:
        steps = trainer.state.global_step
        print(f"DPO ({expert}): {steps} steps, loss {losses[0]:.4f} -> {losses[-1]:.4f}", flush=True)
    policy = trainer.model.merge_and_unload() if settings.lora else trainer.model
    policy.save_pretrained(merged)
    trainer.processing_class.save_pretrained(merged)
    return merged


def main(argv: list[str] | None = None) -> None:
    defaults = Settings()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--recipe", default=defaults.recipe, help="recipe whose env, protocol and labelers to use")
    parser.add_argument("--model", default=defaults.model, help="base model folder or Hub id (default: embedded)")
    parser.add_argument("--backend", default=defaults.backend, choices=["transformers", "vllm"])
    parser.add_argument("--out", default=defaults.out)
    parser.add_argument("--eval-tasks", type=int, default=defaults.eval_tasks, help="held-out tasks")
    parser.add_argument("--train-tasks", type=int, default=defaults.train_tasks, help="training tasks played for pairs")
    parser.add_argument("--samples", type=int, default=defaults.samples, help="held-out episodes per task (pass@k)")
    parser.add_argument("--max-steps", type=int, default=defaults.max_steps, help="steps per episode")
    parser.add_argument("--train-max-steps", type=int, default=None,
                        help="steps per training episode (default: --max-steps); pairs come from these steps")
    parser.add_argument("--expert", default=defaults.expert, choices=["searcher", "oracle", "both"])
    parser.add_argument("--chosen", default=defaults.chosen, choices=["action", "template"],
                        help="chosen turn: the expert's command alone (measured best on CPU) or THOUGHT + ACTION")
    parser.add_argument("--dpo-steps", type=int, default=defaults.dpo_steps)
    parser.add_argument("--batch-size", type=int, default=defaults.batch_size)
    parser.add_argument("--learning-rate", type=float, default=defaults.learning_rate)
    parser.add_argument("--beta", type=float, default=defaults.beta)
    parser.add_argument("--sft-weight", type=float, default=defaults.sft_weight,
                        help="weight of the chosen side's NLL added to the DPO loss (RPO); 0 = plain DPO")
    parser.add_argument("--max-length", type=int, default=defaults.max_length)
    parser.add_argument("--full", action="store_true", help="train every weight instead of a LoRA adapter")
    parser.add_argument("--max-pairs", type=int, default=None, help="at most this many pairs per failure mode")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="recipe override for every stage (repeatable), e.g. env.protocol_options.fewshot=false")
    args = parser.parse_args(argv)
    options = {key: value for key, value in vars(args).items() if key not in ("full", "overrides")}
    settings = Settings(**options, lora=not args.full, overrides=tuple(args.overrides))
    experts = ["searcher", "oracle"] if settings.expert == "both" else [settings.expert]

    base = evaluate(settings, settings.model, "eval-base")
    print(evaluation_table(base), flush=True)
    summary: dict[str, Any] = {"settings": vars(settings), "base": base.run_dir, "trained": {}}
    for expert in experts:
        pairs = build_pairs(settings, expert)
        merged = train_policy(settings, pairs, expert)
        trained = evaluate(settings, str(merged), f"eval-dpo-{expert}")
        first, second, differences = api.compare(base.run_dir, trained.run_dir)
        table = comparison_table(first, second, differences)
        (Path(settings.out) / f"comparison-{expert}.txt").write_text(table + "\n")
        print(f"\n== DPO with {expert} chosen actions ==\n{table}", flush=True)
        summary["trained"][expert] = {
            "run_dir": trained.run_dir,
            "metrics": [{"metric": d.metric, "base": d.a, "dpo": d.b, "difference": d.difference,
                         "interval": d.interval} for d in differences],
        }
    (Path(settings.out) / "summary.json").write_text(json.dumps(summary, indent=1, default=list) + "\n")


if __name__ == "__main__":
    main()
