"""Looking at records in the terminal: pairs side by side, trajectories step by step.

Numbers say how many pairs there are; only reading a few says whether they are right. For a
pair the user sees the last observation the model saw, then chosen and rejected next to each
other, with the label's evidence and the quoted parts of it highlighted in both answers. For
a trajectory the user sees each step's observation, output, parsed action and env feedback,
with a marker on every labelled step. Records are sampled reproducibly (``--seed``) from a
stream, so inspecting a large file needs no more memory than ``-n`` records. What is
rendered is capped (characters per text, steps per episode) and every cut says how much was
left out, so one huge output (a 50 MB tool dump) renders as fast as a small one.
"""

from __future__ import annotations

import os
import random
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from rich.columns import Columns
from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from prefbuild.analysis.text import clip
from prefbuild.errors import PrefbuildError
from prefbuild.io.jsonl import detect_kind, read_records
from prefbuild.io.rundir import run_record_files
from prefbuild.records import Message, Pair, Trajectory, failure_modes

T = TypeVar("T")
OBSERVATION_CHARS = 2000
OUTPUT_CHARS = 4000
MESSAGE_CHARS = 4000
SHORT_CHARS = 1000
MAX_STEPS = 100
_QUOTED = re.compile(r"'([^']{2,})'|\"([^\"]{2,})\"")


@dataclass(frozen=True)
class Filters:
    """Which records to show; ``None`` means any."""

    reason: str | None = None
    strategy: str | None = None
    task_type: str | None = None

    def check(self, kind: str) -> None:
        if self.reason is not None and self.reason not in (modes := failure_modes()):
            known = ", ".join(sorted(modes))
            raise PrefbuildError(f"--reason {self.reason!r} is not a failure mode; known: {known}")
        if kind == "trajectory" and self.strategy is not None:
            raise PrefbuildError("--strategy applies to pair files; trajectories have no pair strategy")

    def pair(self, pair: Pair) -> bool:
        return (
            (self.reason is None or (pair.reason is not None and pair.reason == self.reason))
            and (self.strategy is None or pair.strategy == self.strategy)
            and (self.task_type is None or pair.source.task_type == self.task_type)
        )

    def trajectory(self, trajectory: Trajectory) -> bool:
        return (self.reason is None or any(label.mode == self.reason for label in trajectory.labels)) and (
            self.task_type is None or trajectory.task.type == self.task_type
        )


def sample(records: Iterable[T], n: int, seed: int | None) -> tuple[list[T], int]:
    """``(chosen records in file order, how many matched)``: the first ``n``, or a seeded reservoir sample."""
    if n < 1:
        raise PrefbuildError("-n must be at least 1")
    kept: list[tuple[int, T]] = []
    rng = random.Random(seed)
    seen = 0
    for record in records:
        if len(kept) < n:
            kept.append((seen, record))
        elif seed is not None and (slot := rng.randrange(seen + 1)) < n:
            kept[slot] = (seen, record)
        seen += 1
    return [record for _, record in sorted(kept, key=lambda item: item[0])], seen


def highlight_terms(evidence: str | None) -> list[str]:
    """The quoted snippets of a label's evidence (``action 'go to desk 1' repeated``): worth highlighting."""
    if not evidence:
        return []
    return [first or second for first, second in _QUOTED.findall(evidence)]


def _messages_text(messages: Iterable[Message], terms: list[str], style: str) -> Text:
    text = Text()
    for position, message in enumerate(messages):
        if position:
            text.append("\n\n")
        text.append(f"[{message.role}]\n", style="dim")
        body = Text(clip(message.content, MESSAGE_CHARS))
        for call in message.tool_calls or []:
            body.append(f"\n→ {call.function.name}({clip(call.function.arguments, SHORT_CHARS)})", style="cyan")
        body.highlight_words(terms, style=style)
        text.append_text(body)
    return text


def render_pair(pair: Pair) -> RenderableType:
    """One pair: header, last observation, chosen and rejected side by side, evidence highlighted."""
    terms = highlight_terms(clip(pair.evidence or "", SHORT_CHARS))
    reason = pair.reason if pair.reason else "none"
    header = Text.assemble(
        (pair.id, "bold"), "  ", (f"reason={reason}", "bold red"), f"  strategy={pair.strategy}  split={pair.split}",
        f"  task={pair.source.task_id} ({pair.source.task_type or 'unknown'})  env={pair.source.env}",
        f"  teacher={pair.source.teacher_model}",
    )
    if pair.source.step is not None:
        header.append(f"  trajectory={pair.source.trajectory_id} step={pair.source.step}")
    last = pair.prompt[-1]
    observation = Panel(Text(clip(last.content, OBSERVATION_CHARS, keep="tail")),
                        title=f"last observation ({last.role}, turn {len(pair.prompt)} of the prompt)",
                        title_align="left", border_style="blue")
    chosen = Panel(_messages_text(pair.chosen, terms, "bold black on green"), title="chosen", title_align="left",
                   border_style="green")
    rejected = Panel(_messages_text(pair.rejected, terms, "bold white on red"), title="rejected",
                     title_align="left", border_style="red")
    parts: list[RenderableType] = [header, observation, Columns([chosen, rejected], equal=True, expand=True)]
    if pair.evidence:
        evidence = Text(clip(pair.evidence, SHORT_CHARS))
        evidence.highlight_words(terms, style="bold yellow")
        parts.append(Panel(evidence, title="label evidence", title_align="left", border_style="yellow"))
    if pair.scores:
        parts.append(Text("scores: " + ", ".join(f"{k}={v:g}" for k, v in sorted(pair.scores.items())), style="dim"))
    return Group(*parts)


def render_trajectory(trajectory: Trajectory) -> RenderableType:
    """One episode as a transcript: a block per step, labelled steps marked with their failure modes."""
    outcome = trajectory.outcome
    status = ("SUCCESS", "bold green") if outcome.success else (str(outcome.stop_reason).upper(), "bold red")
    header = Text.assemble(
        (trajectory.id, "bold"), "  ", status, f"  task={trajectory.task.id} ({trajectory.task.type})",
        f"  env={trajectory.env.name}/{trajectory.env.protocol}  teacher={trajectory.teacher.model}",
        f"  steps={len(trajectory.steps)}  labels={len(trajectory.labels)}",
    )
    parts: list[RenderableType] = [header, Text(f"goal: {clip(trajectory.task.goal, SHORT_CHARS)}", style="italic")]
    if outcome.error:
        parts.append(Text(f"error: {clip(outcome.error, SHORT_CHARS)}", style="red"))
    for step in trajectory.steps[:MAX_STEPS]:
        terms = [term for label in step.labels for term in highlight_terms(clip(label.evidence, SHORT_CHARS))]
        table = Table.grid(padding=(0, 1))
        table.add_column(style="dim", no_wrap=True)
        table.add_column()
        table.add_row("observation", Text(clip(step.observation, OBSERVATION_CHARS, keep="tail")))
        output = Text(clip(step.raw_output, OUTPUT_CHARS))
        output.highlight_words(terms, style="bold white on red")
        table.add_row("output", output)
        action = Text(clip(step.action, SHORT_CHARS) if step.action is not None else "(no action parsed)")
        if step.valid is False:
            action.append("  [invalid]", style="red")
        if not step.format_ok:
            action.append("  [format]", style="red")
        table.add_row("action", action)
        if step.expert_action is not None and step.expert_action != step.action:
            table.add_row("expert", Text(clip(step.expert_action, SHORT_CHARS), style="green"))
        searcher = step.searcher_action
        if searcher is not None and searcher != step.action and searcher != step.expert_action:
            table.add_row("searcher", Text(clip(searcher, SHORT_CHARS), style="green"))
        if step.feedback:
            table.add_row("feedback", Text(clip(step.feedback, OBSERVATION_CHARS, keep="tail")))
        for label in step.labels:
            marker = Text(f"⚑ {label.mode} ({label.confidence:.2f}, {label.labeler}): ", style="bold red")
            evidence = Text(clip(label.evidence, SHORT_CHARS))
            evidence.highlight_words(terms, style="bold yellow")
            table.add_row("label", marker + evidence)
        style = "red" if step.labels else "white"
        title = f"step {step.index}" + ("  ⚑ " + ", ".join(label.mode for label in step.labels)
                                        if step.labels else "")
        parts.append(Panel(table, title=title, title_align="left", border_style=style))
    if len(trajectory.steps) > MAX_STEPS:
        parts.append(Text(f"… {len(trajectory.steps) - MAX_STEPS} more steps not shown (of {len(trajectory.steps)})",
                          style="yellow"))
    return Group(*parts)


def _records(
    paths: list[Path], kind: str, filters: Filters, task_types: set[str]
) -> Iterator[Pair] | Iterator[Trajectory]:
    """The records of ``paths`` that pass ``filters``; the task type of every record read goes into ``task_types``."""
    if kind == "pair":
        return (pair for path in paths for pair in read_records(path, Pair)
                if _seen(task_types, pair.source.task_type) and filters.pair(pair))
    return (trajectory for path in paths for trajectory in read_records(path, Trajectory)
            if _seen(task_types, trajectory.task.type) and filters.trajectory(trajectory))


def _seen(task_types: set[str], task_type: str | None) -> bool:
    task_types.add(task_type or "unknown")
    return True


def inspect_sources(path: str | os.PathLike[str]) -> tuple[str, list[Path]]:
    """``(kind, files)`` that ``inspect`` shows for ``path``.

    A record file is shown as it is. A run directory shows its pairs if it has any, else its
    episodes (labelled if present, else raw: ``prefbuild.io.rundir.run_record_files``).

    Raises:
        PrefbuildError: the path does not exist, or the directory holds no records.

    Example:
        >>> inspect_sources("runs/simulate")  # doctest: +SKIP
        ('pair', [PosixPath('runs/simulate/pairs.jsonl')])
    """
    target = Path(path)
    if target.is_dir():
        files = run_record_files(target)
        if files.pairs is not None:
            return "pair", [files.pairs]
        if files.trajectories:
            return "trajectory", list(files.trajectories)
        raise PrefbuildError(f"{target}: the run directory holds no trajectory or pair records yet")
    if not target.is_file():
        raise PrefbuildError(f"{target}: no such file or directory")
    return detect_kind(target), [target]


def inspect_file(
    path: str | os.PathLike[str],
    console: Console,
    *,
    filters: Filters = Filters(),
    n: int = 3,
    seed: int | None = None,
    pager: bool | None = None,
) -> int:
    """Print ``n`` matching records of a pair or trajectory file (or of a run directory).

    Args:
        path: a pair or trajectory ``.jsonl`` file, or a run directory (see ``inspect_sources``).
        console: where to print.
        filters: which records to show.
        n: how many to show.
        seed: sample at random with this seed; ``None`` shows the first ``n``.
        pager: page the output; ``None`` pages only when the console is a terminal.

    Returns:
        How many records matched the filters.

    Example:
        >>> inspect_file("runs/simulate/pairs.jsonl", Console(), n=1, pager=False)  # doctest: +SKIP
        20
    """
    kind, paths = inspect_sources(path)
    filters.check(kind)
    task_types: set[str] = set()
    chosen, matched = sample(_records(paths, kind, filters, task_types), n, seed)
    render: Callable[..., RenderableType] = render_pair if kind == "pair" else render_trajectory
    blocks: list[RenderableType] = []
    plural = "pairs" if kind == "pair" else "trajectories"
    where = str(paths[0]) if len(paths) == 1 else f"{len(paths)} files under {path}"
    blocks.append(Rule(Text(f"{len(chosen)} of {matched} matching {plural} in {where}"), style="dim"))
    for record in chosen:
        blocks.append(render(record))
        blocks.append(Rule(style="dim"))
    if not chosen:
        message = f"no {kind} in {where} matches the filters"
        if filters.task_type is not None and filters.task_type not in task_types:
            known = ", ".join(sorted(task_types)) or "none"
            message += f"\nno record has task type {filters.task_type!r}; the task types here: {known}"
        blocks.append(Text(message, style="yellow"))
    use_pager = console.is_terminal if pager is None else pager
    if use_pager:
        with console.pager(styles=True):
            console.print(*blocks)
    else:
        console.print(*blocks)
    return matched
