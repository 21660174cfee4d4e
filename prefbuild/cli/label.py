"""``prefbuild label``: (re-)label trajectories or external agent logs without generating again.

    prefbuild label runs/x/trajectories/*.jsonl -o relabelled.jsonl --set loop.k=4
    prefbuild label outputs/agent/alfworld-std/runs.jsonl -o labelled/ --format agentbench

Labels on the input are replaced, not appended. Output is written atomically; a table of
labels per failure mode is printed at the end.
"""

from __future__ import annotations

import time
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from prefbuild.cli.errors import PrefbuildCommand
from prefbuild.io.sources import FORMATS
from prefbuild.labelers.stage import LabelCounts


def counts_table(counts: LabelCounts, seconds: float) -> Table:
    """Labels per failure mode, as a rich table."""
    table = Table(title=f"{counts.trajectories} trajectories, {counts.steps} steps labelled in {seconds:.1f} s")
    table.add_column("failure mode")
    table.add_column("labels", justify="right")
    table.add_column("trajectories", justify="right")
    table.add_column("% of steps", justify="right")
    for mode, count in sorted(counts.labels.items(), key=lambda item: (-item[1], item[0])):
        share = 100.0 * count / counts.steps if counts.steps else 0.0
        table.add_row(mode, str(count), str(counts.trajectories_with[mode]), f"{share:.1f}")
    if not counts.labels:
        table.add_row("(none)", "0", "0", "0.0")
    return table


@click.command("label", cls=PrefbuildCommand)
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "-o",
    "--output",
    "out",
    required=True,
    type=click.Path(path_type=Path),
    help="OUT.jsonl, or a folder (one file per input).",
)
@click.option(
    "--recipe",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Take the labelers section of this recipe.",
)
@click.option(
    "--set",
    "overrides",
    multiple=True,
    metavar="KEY=VALUE",
    help="labelers=loop,invalid_action picks labelers; loop.k=4 sets a parameter. Repeatable.",
)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True, help="Input format.")
@click.option(
    "--model", default="unknown", show_default=True, help="Model name recorded on trajectories from external logs."
)
def label(
    files: tuple[Path, ...], out: Path, recipe: Path | None, overrides: tuple[str, ...], fmt: str, model: str
) -> None:
    """Label FILES (prefbuild trajectories, AgentBench runs.jsonl, chat logs: OpenAI messages or
    ShareGPT conversations of household, DBBench or tool-calling agents, JSONL or one JSON array;
    tau2-bench results files, BFCL multi-turn result files, the slime tau2 pipeline's trajectories)
    into OUT.

    Re-labelling replaces earlier labels, so changing a threshold needs no new generation.
    Prints how many labels each failure mode got.

    \b
    Examples:
      prefbuild label runs/simulate/trajectories/*.jsonl -o labelled.jsonl
      prefbuild label runs/simulate/labelled.jsonl -o relabelled.jsonl --set loop.k=4
      prefbuild label agentbench_outputs/runs.jsonl -o labelled.jsonl --format agentbench --model my-4b
      prefbuild label alfworld_sft.json -o labelled.jsonl --model my-4b
      prefbuild label data/simulations/my_tau2_run.json -o labelled.jsonl
      prefbuild label my_agent_chats.jsonl -o labelled.jsonl --model qwen3-4b
      prefbuild label result/my-model/multi_turn/BFCL_v4_multi_turn_base_result.json -o labelled.jsonl
      prefbuild label tau2_sft_final.jsonl -o labelled.jsonl --format slime
    """
    from prefbuild import api

    started = time.perf_counter()
    counts = api.label(files, out, recipe=recipe, choices=overrides, fmt=fmt, model=model)
    Console().print(counts_table(counts, time.perf_counter() - started))
