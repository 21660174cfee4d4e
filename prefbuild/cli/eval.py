"""``prefbuild eval``: score a model on a recipe's held-out tasks, or compare two evaluations."""

from __future__ import annotations

import json
from pathlib import Path

import click

from prefbuild.cli.errors import PrefbuildCommand
from prefbuild.errors import PrefbuildError


@click.command("eval", cls=PrefbuildCommand)
@click.argument("recipe", required=False)
@click.option("--model", default=None, help="The policy: model folder, Hub id, 'embedded', or a served model name.")
@click.option("--backend", type=click.Choice(["transformers", "vllm", "openai", "scripted"]), default=None,
              help="Teacher backend that serves the model (default: the recipe's).")
@click.option("--tasks", default="test", show_default=True,
              help="'test': the env's held-out split; or a split name other than the training split.")
@click.option("--num-tasks", type=click.IntRange(min=1), default=None, help="Held-out tasks per env section.")
@click.option("--samples", "samples_per_task", type=click.IntRange(min=1), default=None,
              help="Episodes per task (pass@k needs k).")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help="Override a recipe value (repeatable).")
@click.option("-o", "--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Evaluation run directory (default runs/<recipe>-eval-<model>).")
@click.option("--compare", "compared", nargs=2, default=None, metavar="A B",
              help="Compare two evaluations (run directories or evaluation.json) instead of running one.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option("--quiet", is_flag=True, help="No progress display.")
def eval_command(
    recipe: str | None,
    model: str | None,
    backend: str | None,
    tasks: str,
    num_tasks: int | None,
    samples_per_task: int | None,
    overrides: tuple[str, ...],
    out: Path | None,
    compared: tuple[str, str] | None,
    as_json: bool,
    quiet: bool,
) -> None:
    """Play a recipe's held-out tasks with a model, label every episode and report its scores.

    Reports success rate, pass@k, steps to success and every failure mode per 100 steps, each
    with a 95% bootstrap interval over tasks; the run directory gets evaluation.json and a
    report.html with an Evaluation section. The held-out tasks never overlap the recipe's
    training tasks (checked before anything runs).

    \b
    Examples:
      prefbuild eval quickstart --model embedded --num-tasks 20 -o runs/eval-base
      prefbuild eval quickstart --model runs/dpo/merged -o runs/eval-dpo
      prefbuild eval my.yaml --model Qwen/Qwen3-4B --backend vllm --samples 4
      prefbuild eval --compare runs/eval-base runs/eval-dpo
    """
    from prefbuild import api
    from prefbuild.eval.views import comparison_table, evaluation_table

    if compared is not None:
        if recipe is not None or model is not None:
            raise PrefbuildError("--compare A B takes two evaluations and no RECIPE or --model")
        first, second, differences = api.compare(*compared)
        if as_json:
            rows = [{"metric": d.metric, "a": d.a, "b": d.b, "difference": d.difference,
                     "interval": list(d.interval) if d.interval else None, "paired": d.paired} for d in differences]
            click.echo(json.dumps({"a": first.run_dir, "b": second.run_dir, "metrics": rows}, indent=1))
        else:
            click.echo(comparison_table(first, second, differences))
        return
    if recipe is None or model is None:
        raise PrefbuildError("eval needs RECIPE and --model (or --compare A B)")
    evaluation = api.evaluate(
        recipe, model, backend=backend, tasks=tasks, num_tasks=num_tasks, samples_per_task=samples_per_task,
        overrides=overrides, out=out, quiet=quiet,
    )
    if as_json:
        data = evaluation.as_dict()
        data.pop("episode_rows")
        click.echo(json.dumps(data, indent=1))
    else:
        click.echo(evaluation_table(evaluation))
        click.echo(f"report: {Path(evaluation.run_dir) / api.REPORT}")
