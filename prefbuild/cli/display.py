"""What the command line shows after a stage: summary tables and where the outputs are."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from prefbuild.api import RunSummary
from prefbuild.rollout.generate import GenerateResult
from prefbuild.rollout.progress import RolloutStats


def summary_table(stats: RolloutStats, run_dir: Path) -> Table:
    table = Table(title=f"generate: {run_dir}", show_header=True)
    table.add_column("task type")
    table.add_column("episodes", justify="right")
    table.add_column("success", justify="right")
    for task_type, (episodes, successes) in sorted(stats.by_task_type.items()):
        table.add_row(task_type, str(episodes), f"{100 * successes / episodes:.0f}%")
    table.add_section()
    table.add_row("all", str(stats.done), f"{100 * stats.success / max(stats.done, 1):.0f}%")
    table.caption = (
        "stop reasons: " + ", ".join(f"{k} {v}" for k, v in sorted(stats.stop_reasons.items()))
        + f" | tokens: prompt {stats.usage.prompt_tokens:,}, completion {stats.usage.completion_tokens:,}"
        + (f" | skipped (already done): {stats.skipped}" if stats.skipped else "")
    )
    return table


def print_generate_summary(result: GenerateResult, console: Console | None = None) -> None:
    console = console or Console(stderr=False)
    console.print(summary_table(result.stats, result.run_dir))
    if result.stats.errors:
        console.print(f"[red]{result.stats.errors} of {result.stats.done} episodes failed[/red]: "
                      f"{result.stats.first_error}", highlight=False)
    if result.outside_plan:
        console.print(f"[yellow]{result.outside_plan} episodes in {result.run_dir} are not in this recipe's plan "
                      f"({result.planned} episodes; did num_tasks or the data shrink?): they are kept, and the next "
                      f"stages read them too; use a new --out for a smaller run[/yellow]", highlight=False)


def print_run_summary(summary: RunSummary) -> None:
    """Where a run's outputs are, and the commands to look at them."""
    run_dir = summary.run_dir
    click.secho("\ndone", bold=True)
    click.echo(f"  run directory: {run_dir}")
    click.echo(f"  pairs:         {summary.pairs_file} ({summary.pairs} pairs)")
    if summary.dataset is not None:
        click.echo(f"  dataset:       {summary.dataset}  (parquet + README.md card; load with datasets.load_dataset)")
    else:
        click.secho("  no pairs: nothing to export (the teacher made no labelled mistakes, or none could be paired)",
                    fg="yellow")
    click.echo(f"  report:        {summary.report}")
    click.echo(f"  inspect:       prefbuild inspect {summary.pairs_file}")
    click.echo(f"                 prefbuild inspect {summary.labelled} -n 2")
    click.echo(f"  stats:         prefbuild stats {run_dir}")
