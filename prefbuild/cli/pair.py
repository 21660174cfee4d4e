"""``prefbuild pair``: re-pair existing trajectory files.

``pair`` streams trajectory files through the strategies and post-processing of
``build_pairs`` and writes ``pairs.jsonl`` atomically (``prefbuild export``, in
``prefbuild.cli.export``, turns it into a trainer's dataset).
"""

from __future__ import annotations

from pathlib import Path

import click

from prefbuild.cli.errors import PrefbuildCommand


@click.command("pair", cls=PrefbuildCommand)
@click.argument("trajectory_files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path), help="pairs.jsonl")
@click.option("--recipe", default=None, help="Recipe (file or bundled name) whose `pairs` section and seed to use.")
@click.option("--strategy", "strategy_names", multiple=True, help="Strategy name (repeatable); replaces the recipe's.")
@click.option("--max-per-reason", type=click.IntRange(min=1), default=None,
              help="Keep at most this many pairs per failure mode (a seeded sample): balances the modes.")
@click.option("--max-per-trajectory", type=click.IntRange(min=1), default=None,
              help="Keep at most this many pairs from one episode.")
@click.option("--max-tokens", type=click.IntRange(min=16), default=None,
              help="Keep only pairs whose prompt and longer side fit in N tokens (your trainer's max_length).")
@click.option("--tokenizer", default=None,
              help="The tokenizer --max-tokens counts with: the model you train (folder or Hub id).")
@click.option("--balance-envs/--no-balance-envs", default=None,
              help="Cut every env's pairs to the count of the env with the fewest (default: the recipe's).")
@click.option("--test-fraction", type=click.FloatRange(0, 1, max_open=True), default=None,
              help="Share of tasks whose pairs go to the test split (split by task id, never by pair).")
@click.option("--seed", type=int, default=None, help="Seed of the sampling and the split (default: the recipe's).")
@click.option("--dedup/--no-dedup", default=None, help="Exact dedup by content (default on).")
@click.option("--near-dedup/--no-near-dedup", default=None, help="Near-duplicate pass (default off).")
@click.option("--stats", "stats_path", type=click.Path(dir_okay=False, path_type=Path), help="Write counts as JSON.")
def pair_command(
    trajectory_files: tuple[Path, ...],
    output: Path,
    recipe: str | None,
    strategy_names: tuple[str, ...],
    max_per_reason: int | None,
    max_per_trajectory: int | None,
    max_tokens: int | None,
    tokenizer: str | None,
    balance_envs: bool | None,
    test_fraction: float | None,
    seed: int | None,
    dedup: bool | None,
    near_dedup: bool | None,
    stats_path: Path | None,
) -> None:
    """Build chosen/rejected pairs from labelled trajectory files.

    Settings come from the recipe's `pairs` section (or the defaults: stepwise, dedup, 10%
    test split by task id); options override them. The output is written atomically.

    \b
    Examples:
      prefbuild pair runs/simulate/trajectories/*.jsonl -o pairs.jsonl
      prefbuild pair runs/simulate/trajectories/*.jsonl -o pairs.jsonl --strategy stepwise --strategy style
      prefbuild pair trajectories.jsonl -o pairs.jsonl --recipe simulate --max-per-reason 500
    """
    from prefbuild import api

    pair_counts = api.pair(
        trajectory_files,
        output,
        recipe=recipe,
        strategies=strategy_names,
        max_per_reason=max_per_reason,
        max_per_trajectory=max_per_trajectory,
        max_tokens=max_tokens,
        tokenizer=tokenizer,
        balance_envs=balance_envs,
        test_fraction=test_fraction,
        seed=seed,
        dedup=dedup,
        near_dedup=near_dedup,
        stats_path=stats_path,
    )
    counts = pair_counts.as_dict()
    written = counts["kept"]
    click.echo(f"{output}: {written} pairs from {counts['trajectories']} trajectories")
    click.echo(f"  built {counts['built']}; by reason {counts['by_reason']}; by split {counts['by_split']}")
    click.echo(
        f"  duplicates {counts['duplicates']}, near-duplicates {counts['near_duplicates']}, "
        f"capped per trajectory {counts['capped_per_trajectory']}, balanced out {counts['balanced_out']}"
    )
    if counts["invalid"]:
        click.echo(f"  invalid {counts['invalid']}")
    if counts["dropped"]:
        click.echo(f"  not paired {counts['dropped']}")
    if not written and counts["trajectories"] and not counts["built"] and not counts["dropped"]:
        click.echo(
            "  hint: no strategy found a step to pair: were these trajectories labelled? Label them first "
            "(`prefbuild label FILES -o labelled.jsonl`), then pair the labelled file."
        )
    elif not written and counts["built"] and any("longer than max_tokens" in reason for reason in counts["dropped"]):
        click.echo(
            "  hint: every pair was longer than max_tokens (prompt and longer side, 'not paired' above): raise "
            "--max-tokens to the trainer's max_length, or leave it out."
        )
    elif not written and any(reason.endswith(("no_expert_action", "replay_failed")) for reason in counts["dropped"]):
        click.echo(
            "  hint: no labelled step had an action to pair against. Episodes imported from other harnesses' logs "
            "carry no expert action and cannot be replayed; of the built-in strategies only `--strategy style` "
            "(the same action with a concise thought) pairs them."
        )
