"""Commands that look at files: ``inspect``, ``stats`` and ``report``.

Display only: the work is in ``prefbuild.analysis`` (through ``prefbuild.api``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from prefbuild.analysis.text import rate
from prefbuild.cli.errors import PrefbuildCommand

F = TypeVar("F", bound=Callable[..., Any])


def _console(width: int | None = None) -> Console:
    # Looked up at call time so click's test runner, which swaps sys.stdout, captures it.
    return Console(file=sys.stdout, width=width, soft_wrap=False)


# --------------------------------------------------------------------------------------
# inspect


@click.command("inspect", cls=PrefbuildCommand)
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--reason", default=None, help="Only records with this failure mode (pair reason or step label).")
@click.option("--strategy", default=None, help="Only pairs made by this strategy.")
@click.option("--task-type", default=None, help="Only records of this task type.")
@click.option("-n", "n", default=3, show_default=True, help="How many records to show.")
@click.option("--seed", type=int, default=None, help="Sample records at random with this seed (default: the first).")
@click.option("--pager/--no-pager", default=None, help="Page the output (default: when stdout is a terminal).")
def inspect_command(file: Path, reason: str | None, strategy: str | None, task_type: str | None, n: int,
                    seed: int | None, pager: bool | None) -> None:
    """Show pairs side by side, or trajectories step by step, in the terminal.

    FILE is a pair or trajectory .jsonl file, or a run directory (its pairs, or its episodes when
    it has no pairs). Long texts are cut, saying how much was left out.

    \b
    Examples:
      prefbuild inspect runs/quickstart/pairs.jsonl --reason loop -n 5
      prefbuild inspect runs/quickstart/trajectories/episodes.jsonl --task-type pick_and_place_simple --seed 1
    """
    from prefbuild.analysis.views import Filters, inspect_file

    filters = Filters(reason=reason, strategy=strategy, task_type=task_type)
    inspect_file(file, _console(), filters=filters, n=n, seed=seed, pager=pager)


# --------------------------------------------------------------------------------------
# stats


def _table(title: str, rows: list[dict[str, Any]]) -> Table | None:
    if not rows:
        return None
    table = Table(title=title, title_justify="left")
    for column in rows[0]:
        table.add_column(column, justify="right" if isinstance(rows[0][column], int | float) else "left")
    for row in rows:
        # Text, not str: a str cell is parsed as rich markup, so a model named `runs/dpo[lr=1e-6]` would
        # lose its bracket and `[/x]` in a task type would crash the command.
        table.add_row(*(
            Text(rate(value) if key == "success_rate" or key.startswith("pass@") else str(value))
            for key, value in row.items()
        ))
    return table


def _quantile_rows(quantiles: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"part": name, **values} for name, values in quantiles.items() if values]


def render_stats(stats: dict[str, Any], console: Console) -> None:
    """Print ``collect_stats`` output as rich tables."""
    trajectory = stats.get("trajectory")
    if trajectory:
        console.rule(f"trajectories: {trajectory['trajectories']} episodes of {trajectory['tasks']} tasks")
        passes = "  ".join(f"{k}={v:.1%}" for k, v in trajectory["pass_at_k"].items())
        known = trajectory["trajectories"] - trajectory["outcome_unknown"]
        partly = trajectory["outcome_unknown"] and known
        unknown = f" (over the {known} episodes with a known outcome)" if partly else ""
        console.print(f"success rate {rate(trajectory['success_rate'])}{unknown}  {passes}")
        if trajectory["outcome_unknown"]:
            console.print(f"[yellow]{trajectory['outcome_unknown']} episode(s) from logs that do not record "
                          "whether they succeeded: left out of the success rate and pass@k[/]")
        if trajectory.get("simulated"):
            console.print("[yellow]simulated data: episodes of the scripted teacher (no model) are included[/]")
        for title, key in (("by split", "by_split"), ("stop reasons", "by_stop_reason"),
                           ("teacher backends", "by_teacher_backend"),
                           ("pass@k by domain", "pass_at_k_by_domain"),
                           ("success by task type", "success_by_task_type"),
                           ("success by teacher model", "success_by_teacher_model"),
                           ("labels by failure mode", "labels_by_mode"),
                           ("labels by teacher model", "labels_by_teacher_model")):
            table = _table(title, trajectory[key])
            if table is not None:
                console.print(table)
        for title, key in (("episode length (steps)", "steps"), ("tokens per episode (estimate)", "tokens")):
            table = _table(title, _quantile_rows(trajectory[key]))
            if table is not None:
                console.print(table)
    pair = stats.get("pair")
    if pair:
        console.rule(f"pairs: {pair['pairs']}")
        for title, key in (("by reason", "by_reason"), ("by strategy", "by_strategy"), ("by split", "by_split"),
                           ("by task type", "by_task_type"), ("by teacher model", "by_teacher_model")):
            table = _table(title, pair[key])
            if table is not None:
                console.print(table)
        table = _table("lengths in tokens", _quantile_rows(pair["tokens"]))
        if table is not None:
            console.print(table)


@click.command("stats", cls=PrefbuildCommand)
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the statistics as JSON.")
@click.option("--tokenizer", type=click.Path(path_type=Path), default=None,
              help="Count tokens with this local tokenizer folder instead of the word/punctuation estimate.")
def stats_command(path: Path, as_json: bool, tokenizer: Path | None) -> None:
    """Counts by reason, strategy, split and task type; success and pass@k; token lengths.

    PATH is a trajectory or pair .jsonl file, or a run directory (its labelled trajectories, or the
    raw ones before labelling, and its pairs: each episode counted once).

    \b
    Examples:
      prefbuild stats runs/quickstart
      prefbuild stats runs/quickstart/pairs.jsonl --json
    """
    from prefbuild.analysis.stats import collect_stats, estimate_tokens, tokenizer_counter

    count = tokenizer_counter(tokenizer) if tokenizer is not None else estimate_tokens
    stats = collect_stats(path, count)
    if as_json:
        json.dump(stats, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
        return
    render_stats(stats, _console())


# --------------------------------------------------------------------------------------
# report


@click.command("report", cls=PrefbuildCommand)
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("-o", "--output", "output", type=click.Path(path_type=Path), default=None,
              help="HTML file to write. Default: RUN_DIR/report.html.")
@click.option("--samples", type=click.IntRange(min=0), default=200, show_default=True,
              help="Sample pairs to include.")
@click.option("--seed", default=0, show_default=True, help="Seed of the pair sample.")
def report_command(run_dir: Path, output: Path | None, samples: int, seed: int) -> None:
    """Write a self-contained HTML report (plots and filterable sample pairs) of a run.

    \b
    Examples:
      prefbuild report runs/quickstart -o report.html
    """
    from prefbuild import api

    if output is None:
        output = (run_dir if run_dir.is_dir() else run_dir.parent) / "report.html"
    written = api.report(run_dir, output, samples=samples, seed=seed)
    click.echo(f"wrote {written}")


COMMANDS: tuple[click.Command, ...] = (inspect_command, stats_command, report_command)
"""Register with ``for command in COMMANDS: main.add_command(command)``."""
