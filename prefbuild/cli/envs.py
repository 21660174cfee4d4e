"""``prefbuild envs``: list the environments, or play one task by hand in the terminal.

Playing a task yourself is the quickest way to see what a teacher model sees: the intro,
the exact feedback strings, which commands are admissible. ``expert`` lets the env's oracle
take one step when you are stuck.
"""

from __future__ import annotations

import importlib
import itertools
import sys

import click
from rich.console import Console
from rich.table import Table

from prefbuild.cli.errors import PrefbuildGroup
from prefbuild.envs import available_envs, get_env, make_env
from prefbuild.envs.base import Env
from prefbuild.errors import PrefbuildError

META_HELP = (
    "Type a command and press Enter. Meta commands:\n"
    "  admissible  list the commands the game accepts now\n"
    "  expert      let the expert take one step\n"
    "  help        show this help\n"
    "End with Ctrl-D (end of input)."
)


def _describe(env_class: type[Env]) -> tuple[str, str, str]:
    """(task types, dialects, protocols) of an env class, as table cells."""
    task_types = getattr(env_class, "task_types", None) or _catalog_task_types(env_class)
    types_cell = ", ".join(task_types) if task_types else "-"
    dialects_cell = ", ".join(env_class.dialects) if env_class.dialects else "-"
    protocols_cell = ", ".join(env_class.protocols) if env_class.protocols else "-"
    return types_cell, dialects_cell, protocols_cell


def _catalog_task_types(env_class: type[Env]) -> tuple[str, ...] | None:
    """``TASK_TYPE_NAMES`` of the env package's ``catalog`` module, where it has one (household)."""
    package = env_class.__module__.rpartition(".")[0]
    if not package:  # a top-level module (a plug-in's ``my_plugin:MyEnv``) has no sibling catalog
        return None
    try:
        names = getattr(importlib.import_module(f"{package}.catalog"), "TASK_TYPE_NAMES", None)
    except ImportError:  # handled: an env package without a catalog module has no task type names to list
        return None
    return tuple(names) if names else None


def env_rows() -> list[tuple[str, str, str, str, str]]:
    """One row per registered env: name, source, task types, dialects, protocols.

    An env whose module fails to import is listed with the error instead of breaking the list.
    """
    rows = []
    for name, target in sorted(available_envs().items()):
        try:
            cells = _describe(get_env(name))
        except Exception as error:
            # handled: boundary: a plug-in that fails to load shows its error in its row; the others are listed
            cells = (f"unavailable: {type(error).__name__}: {error}", "-", "-")
        rows.append((name, target, *cells))
    return rows


@click.group("envs", cls=PrefbuildGroup, invoke_without_command=True)
@click.pass_context
def envs(ctx: click.Context) -> None:
    """Environments: list them (default) or play a task by hand.

    \b
    Examples:
      prefbuild envs
      prefbuild envs play household --seed 3 --split valid_unseen
    """
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_envs)


@envs.command("list")
def list_envs() -> None:
    """Every environment with its task types, dialects and prompt protocols."""
    table = Table(title="prefbuild environments")
    table.add_column("env", no_wrap=True)
    for column in ("source", "task types", "dialects", "protocols"):
        table.add_column(column, overflow="fold")
    for row in env_rows():
        table.add_row(*row)
    Console(width=max(140, Console().width)).print(table)


MAX_SCANNED_INDEX = 100_000  # an env without ``task_at`` builds every task up to --index


@envs.command("play")
@click.argument("env_name", metavar="ENV")
@click.option("--seed", type=int, default=0, show_default=True, help="Task seed (same seed, same tasks).")
@click.option("--split", default=None, help="Task split (default: the env's own, train for most; test for bfcl).")
@click.option("--index", type=click.IntRange(min=0), default=0, show_default=True, help="Which task of the split.")
@click.option("--dialect", default=None, help="Env dialect (household: classic or modern).")
@click.option("--max-steps", type=click.IntRange(min=1), default=200, show_default=True)
def play(env_name: str, seed: int, split: str | None, index: int, dialect: str | None, max_steps: int) -> None:
    """Play one task of ENV in the terminal, reading commands from standard input.

    \b
    Example:
      prefbuild envs play household --seed 3 --split train --index 0
    """
    env = make_env(env_name, dialect=dialect)
    split = split or env.default_split
    seek = getattr(env, "task_at", None)
    if not callable(seek) and index >= MAX_SCANNED_INDEX:
        raise PrefbuildError(f"env {env_name!r} cannot jump to a task: --index must be below {MAX_SCANNED_INDEX} "
                             f"(it builds every task before it), got {index}")
    try:
        if callable(seek):  # the env builds task `index` directly
            task = seek(split, index, seed)
        else:  # tasks are generated lazily: only the first index + 1 are ever built
            task = next(itertools.islice(env.tasks(split, index + 1, seed), index, None), None)
    except (KeyError, ValueError) as error:
        raise PrefbuildError(f"env {env_name!r}: {error}") from None
    if task is None:
        raise PrefbuildError(f"split {split!r} with seed {seed} has fewer than {index + 1} task(s); --index {index}")
    observation, _ = env.reset(task)
    click.echo(f"task {task.info.id} ({task.info.type})")
    click.echo(observation)
    click.echo("(type 'help' for meta commands)")
    action_format = getattr(env, "action_format", None)
    if action_format:
        click.echo(f"actions: {action_format}")
    steps = 0
    while steps < max_steps:
        click.echo("> ", nl=False)
        line = sys.stdin.readline()
        if not line:
            click.echo(f"\nend of input after {steps} step(s); task not solved")
            return
        command = line.strip()
        if not command:
            continue
        if command == "help":
            click.echo(META_HELP)
            continue
        if command == "admissible":
            admissible = env.admissible_actions()
            click.echo("\n".join(admissible) if admissible is not None else "this env cannot list its commands")
            continue
        if command == "expert":
            suggestion = env.expert_action()
            if suggestion is None:
                click.echo("no expert for this env or state")
                continue
            click.echo(f"expert: {suggestion}")
            command = suggestion
        result = env.step(command)
        steps += 1
        click.echo(result.observation)
        if result.won:
            click.secho(f"You won in {steps} step(s)!", fg="green")
            return
        if result.done:
            if not result.valid and action_format:
                click.echo(f"{command!r} is not an action of this env; it expects {action_format}")
            click.echo(f"episode over after {steps} step(s); task not solved")
            return
    click.echo(f"step limit {max_steps} reached; task not solved")
