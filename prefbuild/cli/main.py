"""The ``prefbuild`` command line: one subcommand per pipeline stage, plus tools around them.

Every stage reads files and writes files, so each can be re-run on its own: re-label old
trajectories after a threshold change, re-pair with another strategy, re-export for another
trainer. Errors a user can fix are printed as one located line and exit non-zero.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from pydantic import ValidationError

from prefbuild import __version__
from prefbuild.cli.errors import PrefbuildGroup
from prefbuild.errors import PrefbuildError
from prefbuild.io.jsonl import (
    MODELS_BY_KIND,
    RecordError,
    decode_json_line,
    detect_kind,
    iter_lines,
    validation_error,
)
from prefbuild.recipe import bundled_recipes, load_recipe

EXAMPLES = "\b\nExamples:\n"


@click.group(cls=PrefbuildGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="prefbuild")
def main() -> None:
    """prefbuild: build preference (DPO) datasets for LLM agents.

    \b
    recipe.yaml -> generate -> trajectories -> label -> pair -> pairs.jsonl -> export -> dataset -> publish
    \b
    Start with `prefbuild run quickstart` (a bundled recipe) or `make demo`.
    """


# --------------------------------------------------------------------------------------
# validate / schema / recipes


@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--max-errors", default=20, show_default=True, help="Errors to print per file.")
def validate(files: tuple[Path, ...], max_errors: int) -> None:
    """Check trajectory or pair JSONL files against the records contract.

    Detects the record kind of each file, prints counts and the first errors as
    `file:line field: message`, and exits 1 if any record is invalid.

    \b
    Examples:
      prefbuild validate runs/quickstart/pairs.jsonl
      prefbuild validate runs/quickstart/trajectories/*.jsonl
    """
    failed = False
    for path in files:
        if not path.is_file():
            raise RecordError(path, 0, "", "no such file")
        kind = detect_kind(path)
        model = MODELS_BY_KIND[kind]
        good = bad = 0
        for number, text, unterminated in iter_lines(path):
            problem: RecordError | None = None
            try:
                payload = decode_json_line(text)
                if not isinstance(payload, dict):
                    problem = RecordError(path, number, "", "expected a JSON object")
                else:
                    model.model_validate(payload)
            except json.JSONDecodeError as error:
                note = " (incomplete last line: interrupted write?)" if unterminated else ""
                problem = RecordError(path, number, "", f"not valid JSON ({error.msg}){note}")
            except ValidationError as error:
                problem = validation_error(path, number, error)
            if problem is None:
                good += 1
                continue
            bad += 1
            if bad <= max_errors:
                click.echo(str(problem), err=True)
        if bad > max_errors:
            click.echo(f"... {bad - max_errors} more errors in {path}", err=True)
        status = click.style("ok", fg="green") if not bad else click.style("INVALID", fg="red")
        click.echo(f"{path}: {good + bad} {kind} records, {good} valid, {bad} invalid [{status}]")
        failed = failed or bad > 0
    sys.exit(1 if failed else 0)


@main.command()
@click.option("--out", "out_dir", default="schemas", show_default=True, type=click.Path(file_okay=False))
def schema(out_dir: str) -> None:
    """Write JSON Schemas of every record and of the recipe.

    \b
    Examples:
      prefbuild schema --out schemas/
    """
    from prefbuild.io.schemas import write_schemas

    for path in write_schemas(out_dir):
        click.echo(str(path))


@main.command()
@click.argument("name", required=False)
def recipes(name: str | None) -> None:
    """List the bundled recipes, or print one (to copy and edit).

    \b
    Examples:
      prefbuild recipes
      prefbuild recipes quickstart > my-recipe.yaml
    """
    found = bundled_recipes()
    if name:
        if name not in found:
            raise PrefbuildError(f"no bundled recipe {name!r}; bundled: {', '.join(found) or 'none'}")
        click.echo(found[name].read_text(encoding="utf-8"), nl=False)
        return
    for recipe_name, path in found.items():
        loaded = load_recipe(path)
        description = loaded.recipe.description.strip().splitlines()[0] if loaded.recipe.description else ""
        click.echo(f"{recipe_name:28} {description}")


@main.command("check-recipe")
@click.argument("recipe")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help="Override a recipe field.")
@click.option("--teacher-elsewhere", is_flag=True,
              help="The teacher runs on another machine (a GPU box, a Ray cluster): do not ask for its extras here.")
def check_recipe(recipe: str, overrides: tuple[str, ...], teacher_elsewhere: bool) -> None:
    """Validate a recipe and print it resolved (defaults filled, secrets kept as ${VAR}).

    Builds everything a run will use (env, dialect, protocol, split, labelers, pair
    strategies, export formats, and what the teacher backend imports) and reports the first
    problem as `file:line field: message`.

    \b
    Examples:
      prefbuild check-recipe quickstart --set teacher.sampling.temperature=0
      prefbuild check-recipe alfworld-roundwise --teacher-elsewhere   # on a laptop without vLLM
    """
    from prefbuild.checks import check_recipe as check_parts

    loaded = check_parts(load_recipe(recipe, overrides), teacher_here=not teacher_elsewhere)
    click.echo(loaded.resolved_yaml(), nl=False)


# --------------------------------------------------------------------------------------
# generate / merge

RECIPE_HELP = "A recipe file, or the name of a bundled recipe (see `prefbuild recipes`)."


def _ray_options(function: Any) -> Any:
    function = click.option("--ray-shards", type=click.IntRange(min=1), default=None,
                            help="With --ray: shards to split the tasks into (default: 4 per cluster CPU, "
                                 "at most 256 episodes each).")(function)
    return click.option("--ray", "ray", is_flag=False, flag_value="local", default=None, metavar="[ADDRESS]",
                        help="Run on a Ray cluster: ADDRESS (auto, host:6379, ray://host:10001) or, alone, a local "
                             "one. --out may then be an fsspec URL (generate).")(function)


def _ray_choice(ray: str | None, shards: int | None) -> Any:
    if ray is None:
        return None
    from prefbuild.ray.driver import RayOptions

    return RayOptions(address=ray, shards=shards)


def _recipe_options(function: Any) -> Any:
    function = click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
                            help="Override a recipe field, e.g. --set env.num_tasks=20 (repeatable). With several "
                                 "envs, address one by name: --set env.sql.options.data_file=dev.jsonl")(function)
    function = click.option("--out", "out", type=click.Path(file_okay=False),
                            help="Run directory (default: output.dir of the recipe, or runs/<name>); with --ray "
                                 "also an fsspec URL such as s3://bucket/runs/name.")(function)
    function = click.option("--limit", type=int, help="Run at most N episodes.")(function)
    function = click.option("--shard", metavar="K/N", help="Run only slice K of N (0-based) of the tasks.")(function)
    function = click.option("--new", is_flag=True,
                            help="If the run directory belongs to another recipe, use a sibling (NAME-2, ...): "
                                 "a fresh one, or the one this recipe already started (resumed).")(function)
    function = click.option("--quiet", "-q", is_flag=True, help="No progress display.")(function)
    function = click.option("--keep-failed", is_flag=True,
                            help="On resume, keep episodes that ended in error instead of playing them again "
                                 "(by default they are retried; the failed records stay in trajectories/failed/).")(
        function)
    return function


@main.command()
@click.argument("recipe")
@_recipe_options
@_ray_options
def generate(recipe: str, overrides: tuple[str, ...], out: str | None, limit: int | None, shard: str | None,
             new: bool, quiet: bool, ray: str | None, ray_shards: int | None, keep_failed: bool) -> None:
    """Generate trajectories from a recipe: the teacher plays the env, every episode is saved.

    Resumable: re-running the same recipe into the same run directory skips finished
    episodes and plays again those that ended in error (the failed records are kept in
    trajectories/failed/; --keep-failed keeps them as they are). Exits 1 if any episode of
    this invocation failed (its trajectory is kept with stop reason `error`).

    \b
    Examples:
      prefbuild generate quickstart
      prefbuild generate simulate --set env.num_tasks=200 --out runs/sim
      prefbuild generate my.yaml --shard 0/4      # on machine 1 of 4; then `prefbuild merge`
      prefbuild generate my.yaml --ray auto --out /shared/runs/big   # on a Ray cluster
    """
    from prefbuild import api
    from prefbuild.cli.display import print_generate_summary
    from prefbuild.rollout.generate import exit_code

    result = api.generate(recipe, overrides=overrides, out=out, shard=shard, limit=limit, quiet=quiet, new=new,
                          ray=_ray_choice(ray, ray_shards), keep_failed=keep_failed)
    if not quiet:
        print_generate_summary(result)
    click.echo(f"trajectories: {result.run_dir / 'trajectories'}")
    sys.exit(exit_code(result))


@main.command()
@click.argument("recipe")
@_recipe_options
@_ray_options
def run(recipe: str, overrides: tuple[str, ...], out: str | None, limit: int | None,
        shard: str | None, new: bool, quiet: bool, ray: str | None, ray_shards: int | None,
        keep_failed: bool) -> None:
    """Run every stage of a recipe: generate -> label -> pair -> export -> report.

    Each stage is also its own command over the files in the run directory, so any of them
    can be re-run alone later. Resumable like `generate`.

    \b
    Examples:
      prefbuild run quickstart
      prefbuild run simulate --set env.num_tasks=20 --out runs/sim-small
    """
    from prefbuild import api
    from prefbuild.cli.display import print_generate_summary, print_run_summary

    def announce(stage: str) -> None:
        click.secho(f"{stage}", bold=True)

    summary = api.run(recipe, overrides=overrides, out=out, limit=limit, shard=shard, new=new, quiet=quiet,
                      on_stage=announce, ray=_ray_choice(ray, ray_shards), keep_failed=keep_failed)
    if not quiet:
        print_generate_summary(summary.generated)
    print_run_summary(summary)
    sys.exit(summary.exit_code)


@main.command()
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("-o", "--out", required=True, type=click.Path(file_okay=False, path_type=Path), help="New run directory.")
@click.option("--allow-incomplete", is_flag=True, help="Merge shards that hold fewer episodes than planned.")
def merge(run_dirs: tuple[Path, ...], out: Path, allow_incomplete: bool) -> None:
    """Combine shard run directories of one recipe; refuses duplicate episodes and incomplete shards.

    \b
    Examples:
      prefbuild merge runs/big-0 runs/big-1 runs/big-2 runs/big-3 -o runs/big
    """
    from prefbuild.io.merge import merge_run_dirs

    manifest = merge_run_dirs(run_dirs, out, allow_incomplete=allow_incomplete)
    click.echo(f"merged {len(run_dirs)} run directories into {out}: {manifest.counts.get('episodes', 0)} episodes")


# --------------------------------------------------------------------------------------
# Commands that live next to their stage's code


def _register_stage_commands() -> None:
    from prefbuild.cli.analysis import COMMANDS as PUBLISH_COMMANDS
    from prefbuild.cli.demo import demo_command
    from prefbuild.cli.envs import envs
    from prefbuild.cli.eval import eval_command
    from prefbuild.cli.export import export_command
    from prefbuild.cli.label import label
    from prefbuild.cli.pair import pair_command
    from prefbuild.cli.publish import publish_command
    from prefbuild.cli.teachers import models_command, serve_command

    main.add_command(envs)
    main.add_command(demo_command)
    main.add_command(label)
    main.add_command(pair_command)
    main.add_command(publish_command)
    main.add_command(export_command)
    main.add_command(serve_command)
    main.add_command(models_command)
    main.add_command(eval_command)
    for command in PUBLISH_COMMANDS:
        main.add_command(command)


_register_stage_commands()


if __name__ == "__main__":  # pragma: no cover
    main()
