"""The label stage over files: pick labelers, stream trajectory files through them, count.

Plain functions the API and the command line share: ``recipe_labelers`` reads a recipe's
``labelers`` section, ``select_labelers`` applies ``--set`` style choices to it, and
``label_files`` streams inputs (prefbuild trajectories or external logs) into one output
written atomically. Labels on the input are replaced, never appended.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from prefbuild import registry
from prefbuild.errors import LocatedError, PrefbuildError
from prefbuild.io.sources import atomic_writer, read_trajectories
from prefbuild.labelers import available_labelers, label_trajectories
from prefbuild.labelers.base import Labeler
from prefbuild.records import Trajectory
from prefbuild.registry import is_own_class


@dataclass
class LabelCounts:
    """Labels, labelled steps and trajectories per failure mode, for summaries and manifests."""

    trajectories: int = 0
    steps: int = 0
    labels: Counter[str] = field(default_factory=Counter)
    trajectories_with: Counter[str] = field(default_factory=Counter)

    def add(self, trajectory: Trajectory) -> None:
        """Count one labelled trajectory."""
        self.trajectories += 1
        steps = trajectory.steps
        self.steps += len(steps)
        # Counter.update(Counter(modes)) then .update(its keys): the same counts, keys added in the same order.
        labels = self.labels
        modes: dict[str, None] = {}
        for step in steps:
            if step.labels:
                for label in step.labels:
                    mode = label.mode
                    labels[mode] += 1
                    modes[mode] = None
        if modes:
            self.trajectories_with.update(modes.keys())


def recipe_labelers(path: str | Path | None) -> list[dict[str, Any]] | None:
    """The ``labelers`` section of the recipe file at ``path`` (None: no file, or no section).

    Args:
        path: a recipe file, or None.

    Returns:
        ``[{"name": ..., "params": {...}}, ...]`` or None for the env defaults.

    Example:
        >>> recipe_labelers(None) is None
        True
    """
    if path is None:
        return None
    path = Path(path)
    try:
        recipe = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        raise LocatedError(path, None, "", f"not a valid YAML recipe ({type(error).__name__})") from None
    if not isinstance(recipe, dict):
        raise LocatedError(path, None, "", "a recipe must be a mapping")
    section = recipe.get("labelers")
    if section is None:
        return None
    if not isinstance(section, list):
        raise LocatedError(path, None, "labelers", "expected a list of {name, params} entries")
    return [dict(entry) if isinstance(entry, dict) else {"name": entry} for entry in section]


def select_labelers(configs: list[dict[str, Any]] | None, choices: Sequence[str]) -> list[dict[str, Any]] | None:
    """Apply ``--set`` choices to a labelers section.

    ``labelers=a,b`` picks the labelers by name; ``name.param=value`` sets a parameter (the
    value is read as YAML). Without choices the section is returned unchanged.

    Args:
        configs: the section (None = the defaults of every env).
        choices: ``KEY=VALUE`` strings.

    Returns:
        The new section.

    Example:
        >>> select_labelers(None, ["labelers=loop", "loop.k=4"])
        [{'name': 'loop', 'params': {'k': 4}}]
    """
    if not choices:
        return configs
    entries = (
        [{"name": e["name"], "params": dict(e.get("params") or {})} for e in configs]
        if configs is not None
        else [{"name": name, "params": {}} for name, cls in available_labelers().items()
              if not cls.envs and registry.is_builtin("labelers", name)]
    )
    for choice in choices:
        key, sep, raw = choice.partition("=")
        key = key.strip()
        if not sep or not key:
            raise LocatedError("--set", None, choice, "expected KEY=VALUE")
        if key == "labelers":
            names = [name.strip() for name in raw.split(",") if name.strip()]
            by_name = {entry["name"]: entry for entry in entries}
            entries = [by_name.get(name, {"name": name, "params": {}}) for name in names]
            continue
        name, dot, param = key.partition(".")
        if not dot or not param:
            raise LocatedError("--set", None, choice, "expected labelers=NAMES or LABELER.PARAM=VALUE")
        try:
            value = yaml.safe_load(raw)
        except yaml.YAMLError:
            raise LocatedError("--set", None, choice, "the value is not valid YAML") from None
        entry = next((entry for entry in entries if entry["name"] == name), None)
        if entry is None:
            entry = {"name": name, "params": {}}
            entries.append(entry)
        entry["params"][param] = value
    return entries


def output_plan(files: Sequence[Path], out: Path) -> list[tuple[list[Path], Path]]:
    """One output for everything (``OUT.jsonl``), or one file per input inside a folder."""
    if out.suffix == ".jsonl":
        return [(list(files), out)]
    names = [path.name for path in files]
    clashes = sorted({name for name in names if names.count(name) > 1})
    if clashes:
        raise PrefbuildError(
            f"several inputs are named {', '.join(clashes)}; write them into one file with -o OUT.jsonl"
        )
    return [([path], out / path.name) for path in files]


def label_files(
    inputs: Iterable[Path], output: Path, labelers: Sequence[Labeler], *, fmt: str = "auto", model: str = "unknown",
    counts: LabelCounts | None = None,
) -> LabelCounts:
    """Stream ``inputs`` through ``labelers`` into ``output`` (replaced only when all is written).

    Args:
        inputs: trajectory files or external logs (AgentBench ``runs.jsonl``, chat messages).
        output: the JSONL file to write.
        labelers: instances, e.g. from ``build_labelers``.
        fmt: ``auto`` or the input format.
        model: the model name recorded on trajectories imported from external logs.
        counts: counts to add to (several outputs share one summary).

    Returns:
        The counts.
    """
    counts = counts if counts is not None else LabelCounts()
    # The built-in labelers only read attributes, so they label the cheaper structs; plug-ins get records.
    fast = all(is_own_class(type(labeler)) for labeler in labelers)
    with atomic_writer(output) as writer:
        for path in inputs:
            for labelled in label_trajectories(read_trajectories(path, fmt=fmt, model=model, fast=fast), labelers):
                counts.add(labelled)
                writer.write(labelled)
    return counts
