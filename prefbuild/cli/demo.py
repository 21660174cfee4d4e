"""``prefbuild demo`` (what ``make demo`` runs): the first five minutes with prefbuild.

Two short runs, each clearly labelled: the embedded SmolLM2-135M playing household tasks on
CPU (real model output: mostly format violations and invalid actions, which is what a
135M model does), and the scripted teacher on the same env (simulated mistakes, no model)
showing what pairs of several failure modes look like. It ends with the next three commands
a user runs: train with TRL, point a recipe at a vLLM server, publish.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import click

from prefbuild.cli.errors import PrefbuildCommand

MODEL_OVERRIDES = ("env.num_tasks=4", "env.max_steps=4")
SCRIPTED_OVERRIDES = ("env.num_tasks=12", "env.max_steps=20", "output.formats=[trl]")


def _reasons(pairs_file: Path) -> Counter[str]:
    counts: Counter[str] = Counter()
    if pairs_file.is_file():
        for line in pairs_file.read_text(encoding="utf-8").splitlines():
            if line.strip():
                counts[json.loads(line).get("reason", "?")] += 1
    return counts


def _show(title: str, pairs_file: Path, pairs: int) -> None:
    reasons = ", ".join(f"{reason} {count}" for reason, count in _reasons(pairs_file).most_common()) or "none"
    click.echo(f"  {title}: {pairs} pairs ({reasons})")


@click.command("demo", cls=PrefbuildCommand)
@click.option("--out", "out", default="runs", show_default=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder for the two run directories.")
def demo_command(out: Path) -> None:
    """The first five minutes: a real model run, a simulated run, and what to do next.

    \b
    1. the embedded SmolLM2-135M plays 4 household tasks on CPU (real model output)
    2. the scripted teacher plays 12 tasks with SIMULATED mistakes (no model), to show
       pairs of several failure modes
    Then the commands to train on the result, use a real teacher and publish.

    \b
    Examples:
      prefbuild demo
      prefbuild demo --out /tmp/prefbuild-demo
    """
    from prefbuild import api

    def announce(stage: str) -> None:
        click.echo(f"    {stage}")

    model_dir, scripted_dir = out / "quickstart", out / "quickstart-scripted"
    click.secho("1/2  embedded SmolLM2-135M (a real model, on CPU) plays 4 household tasks", bold=True)
    model = api.run("quickstart", overrides=MODEL_OVERRIDES, out=model_dir, on_stage=announce)
    click.secho("2/2  scripted teacher: SIMULATED mistakes (no model), 12 household tasks", bold=True)
    scripted = api.run("simulate", overrides=SCRIPTED_OVERRIDES, out=scripted_dir, on_stage=announce)

    click.secho("\nwhat came out", bold=True)
    _show(f"{model_dir} (real SmolLM2 output)", model.pairs_file, model.pairs)
    _show(f"{scripted_dir} (simulated)", scripted.pairs_file, scripted.pairs)
    click.echo(f"  look at them:  prefbuild inspect {scripted.pairs_file} -n 3")
    click.echo(f"  report:        {model.report}  and  {scripted.report}")

    dataset = model.dataset or scripted.dataset or model_dir / "dataset"
    click.secho("\nnext", bold=True)
    click.echo("  1. train a policy with TRL's DPOTrainer on the dataset (TRL is the train extra; a CPU step of the")
    click.echo("     embedded model takes about 45 s on 2 cores):")
    click.echo("       pip install 'prefbuild[train]'")
    click.echo(f"       python examples/train_dpo_trl.py {dataset} --max-steps 4")
    click.echo("  2. use a real teacher: serve a model with vLLM and point a recipe at it:")
    click.echo("       prefbuild serve Qwen/Qwen3-4B-Instruct-2507 --port 8000      # or any OpenAI-compatible server")
    click.echo("       prefbuild run quickstart --set teacher.backend=openai \\\n"
               "           --set teacher.model=Qwen/Qwen3-4B-Instruct-2507 \\\n"
               "           --set 'teacher.base_urls=[http://127.0.0.1:8000/v1]' --set env.num_tasks=200 --out runs/q")
    click.echo("  3. publish the dataset to the Hugging Face Hub (needs HF_TOKEN; --dry-run lists the files):")
    click.echo(f"       prefbuild publish {dataset} --repo YOUR_NAME/household-prefs --dry-run")
    raise SystemExit(max(model.exit_code, scripted.exit_code))
