"""``prefbuild label``: (re-)label trajectories or external agent logs without generating again.

    prefbuild label runs/x/trajectories/*.jsonl -o relabelled.jsonl --set loop.k=4
    prefbuild label outputs/agent/alfworld-std/runs.jsonl -o labelled/ --format agentbench

Labels on the input are replaced, not appended. Output is written atomically; a table of
labels per failure mode is printed at the end.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

import click
import yaml
from rich.console import Console
from rich.table import Table

from prefbuild.io.sources import FORMATS, LabelInputError, atomic_writer, read_trajectories
from prefbuild.labelers import available_labelers, build_labelers, label_trajectory
from prefbuild.labelers.base import Labeler
from prefbuild.records import Trajectory


class LabelStats:
    """Counts for the summary table: labels, labelled steps and trajectories per failure mode."""

    def __init__(self) -> None:
        self.trajectories = 0
        self.steps = 0
        self.labels: Counter[str] = Counter()
        self.trajectories_with: Counter[str] = Counter()

    def add(self, trajectory: Trajectory) -> None:
        self.trajectories += 1
        self.steps += len(trajectory.steps)
        modes = Counter(label.mode for step in trajectory.steps for label in step.labels)
        self.labels.update(modes)
        self.trajectories_with.update(modes.keys())

    def table(self, seconds: float) -> Table:
        table = Table(title=f"{self.trajectories} trajectories, {self.steps} steps labelled in {seconds:.1f} s")
        table.add_column("failure mode")
        table.add_column("labels", justify="right")
        table.add_column("trajectories", justify="right")
        table.add_column("% of steps", justify="right")
        for mode, count in sorted(self.labels.items(), key=lambda item: (-item[1], item[0])):
            share = 100.0 * count / self.steps if self.steps else 0.0
            table.add_row(mode, str(count), str(self.trajectories_with[mode]), f"{share:.1f}")
        if not self.labels:
            table.add_row("(none)", "0", "0", "0.0")
        return table


def _recipe_labelers(path: Path | None) -> list[dict[str, Any]] | None:
    if path is None:
        return None
    try:
        recipe = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise click.ClickException(f"{path}: not valid YAML ({error})") from error
    if not isinstance(recipe, dict):
        raise click.ClickException(f"{path}: a recipe must be a mapping")
    section = recipe.get("labelers")
    if section is None:
        return None
    if not isinstance(section, list):
        raise click.ClickException(f"{path}: labelers: expected a list of {{name, params}} entries")
    return [dict(entry) if isinstance(entry, dict) else {"name": entry} for entry in section]


def apply_overrides(configs: list[dict[str, Any]] | None, overrides: tuple[str, ...]) -> list[dict[str, Any]] | None:
    """``labelers=a,b`` picks labelers; ``name.param=value`` sets a parameter (value read as YAML)."""
    if not overrides:
        return configs
    entries = (
        [{"name": e["name"], "params": dict(e.get("params") or {})} for e in configs]
        if configs is not None
        else [{"name": name, "params": {}} for name, cls in available_labelers().items() if not cls.envs]
    )
    for override in overrides:
        key, sep, raw = override.partition("=")
        key = key.strip()
        if not sep or not key:
            raise click.BadParameter(f"{override!r}: expected KEY=VALUE", param_hint="--set")
        if key == "labelers":
            names = [name.strip() for name in raw.split(",") if name.strip()]
            by_name = {entry["name"]: entry for entry in entries}
            entries = [by_name.get(name, {"name": name, "params": {}}) for name in names]
            continue
        name, dot, param = key.partition(".")
        if not dot or not param:
            raise click.BadParameter(
                f"{override!r}: expected labelers=NAMES or LABELER.PARAM=VALUE", param_hint="--set"
            )
        try:
            value = yaml.safe_load(raw)
        except yaml.YAMLError as error:
            raise click.BadParameter(f"{override!r}: value is not valid YAML ({error})", param_hint="--set") from error
        entry = next((entry for entry in entries if entry["name"] == name), None)
        if entry is None:
            entry = {"name": name, "params": {}}
            entries.append(entry)
        entry["params"][param] = value
    return entries


def _outputs(files: tuple[Path, ...], out: Path) -> list[tuple[list[Path], Path]]:
    """One output file for everything (``-o x.jsonl``), or one per input inside a folder."""
    if out.suffix == ".jsonl":
        return [(list(files), out)]
    names = [path.name for path in files]
    clashes = sorted({name for name in names if names.count(name) > 1})
    if clashes:
        raise click.ClickException(
            f"several inputs are named {', '.join(clashes)}; write them into one file with -o OUT.jsonl"
        )
    return [([path], out / path.name) for path in files]


def label_files(
    inputs: list[Path], output: Path, labelers: list[Labeler], fmt: str, model: str, stats: LabelStats
) -> None:
    """Stream ``inputs`` through the labelers into ``output`` (written atomically)."""
    with atomic_writer(output) as writer:
        for path in inputs:
            for trajectory in read_trajectories(path, fmt=fmt, model=model):
                labelled = label_trajectory(trajectory, labelers)
                stats.add(labelled)
                writer.write(labelled)


@click.command("label")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
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
    """Label FILES (prefbuild trajectories, AgentBench runs.jsonl, chat message logs) into OUT.

    Re-labelling replaces earlier labels, so changing a threshold needs no new generation.
    Prints how many labels each failure mode got.

    \b
    Examples:
      prefbuild label runs/simulate/trajectories/*.jsonl -o labelled.jsonl
      prefbuild label runs/simulate/labelled.jsonl -o relabelled.jsonl --set loop.k=4
      prefbuild label agentbench_outputs/runs.jsonl -o labelled.jsonl --format agentbench --model my-4b
    """
    configs = apply_overrides(_recipe_labelers(recipe), overrides)
    try:
        labelers = build_labelers(configs, env=None)
    except (KeyError, ValueError, FileNotFoundError) as error:
        raise click.ClickException(str(error.args[0] if error.args else error)) from error
    stats = LabelStats()
    started = time.perf_counter()
    try:
        for inputs, output in _outputs(files, out):
            label_files(inputs, output, labelers, fmt, model, stats)
    except LabelInputError as error:
        raise click.ClickException(str(error)) from error
    Console().print(stats.table(time.perf_counter() - started))
