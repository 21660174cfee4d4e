"""``prefbuild publish``: push a dataset directory to the Hugging Face Hub."""

from __future__ import annotations

from pathlib import Path

import click

from prefbuild.cli.errors import PrefbuildCommand


@click.command("publish", cls=PrefbuildCommand)
@click.argument("dataset_dir", type=click.Path(path_type=Path))
@click.option("--repo", "repo_id", required=True, help="Hub dataset repo, 'user/name' or 'org/name'.")
@click.option("--private", is_flag=True,
              help="Create the repo as private; an existing public repo is refused (its visibility is not changed).")
@click.option("--revision", default=None, help="Branch to push to (created if missing). Default: main.")
@click.option("--message", default="Upload dataset with prefbuild", show_default=True, help="Commit message.")
@click.option("--dry-run", is_flag=True, help="List what would be uploaded; contact nothing.")
def publish_command(dataset_dir: Path, repo_id: str, private: bool, revision: str | None, message: str,
                    dry_run: bool) -> None:
    """Publish a dataset directory (from `prefbuild export`) to the Hugging Face Hub.

    Pushes data, card and recipe in one commit. Card metadata already on the Hub is kept.
    A dataset older than the pairs it was exported from is refused (export again first).
    The token comes from HF_TOKEN or `hf auth login`; a failed push changes nothing and can be
    rerun.

    \b
    Examples:
      prefbuild publish runs/quickstart/dataset --repo me/household-dpo --dry-run
      prefbuild publish runs/quickstart/dataset --repo me/household-dpo --private
    """
    from prefbuild import api
    from prefbuild.hub.publish import plan_publish

    if dry_run:
        plan = plan_publish(dataset_dir, repo_id, private=private, revision=revision)
        click.echo(f"dry run: would push {len(plan.uploads)} files from {plan.dataset_dir} to dataset "
                   f"{plan.repo_id} (revision {plan.revision}{', private' if private else ''}):")
        for item in plan.uploads:
            click.echo(f"  {item.path_in_repo}  ({item.size:,} bytes)")
        click.echo(f"  total {sum(item.size for item in plan.uploads):,} bytes; stale files under data/ on the Hub "
                   "would be deleted")
        return
    plan = api.publish(dataset_dir, repo_id, private=private, revision=revision, commit_message=message)
    click.echo(f"pushed {len(plan.uploads)} files to {plan.repo_id} (revision {plan.revision})"
               + (f", deleted {len(plan.deletions)} stale files" if plan.deletions else ""))
    if plan.commit_url:
        click.echo(f"commit: {plan.commit_url}")
