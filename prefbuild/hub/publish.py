"""Publishing a dataset directory to the Hugging Face Hub.

``publish_dataset_dir`` pushes a directory written by ``prefbuild export``
(``prefbuild.exports.dataset_dir.write_dataset_dir``) with the ``huggingface_hub`` client in a
single commit: the Hub has either the old dataset or the new one, never a mix, and a failed
push (server error, network down) can simply be run again. Card metadata already on the Hub
(a language, a citation, extra tags added by hand) is kept. The token comes from ``HF_TOKEN``
or the user's ``hf auth login`` and is never printed or written.

Before any network call the directory is checked: a card whose configs name existing files,
and no stale data: a dataset whose source pairs file changed after it was written (a re-run
that paired again, possibly to nothing) is refused.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prefbuild.errors import PrefbuildError
from prefbuild.exports.dataset_dir import DATA_DIR, RECIPE_NAME, SOURCES_NAME
from prefbuild.hub.card import CARD_NAME, REPO_PLACEHOLDER, CardError, render_card, split_card
from prefbuild.io.rundir import PAIRS

# Card keys that describe the data itself: on update, the new dataset's values replace the Hub's.
DATA_KEYS = frozenset({"configs", "dataset_info", "size_categories"})
# List-valued card keys merged as a union (Hub values first) on update.
UNION_KEYS = frozenset({"tags", "task_categories", "task_ids", "language"})

_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")


class PublishError(PrefbuildError):
    """Pushing a dataset failed or was refused; the message says what, where, and what is left intact."""


class StaleDatasetError(PublishError):
    """The dataset directory is older than the pairs it was exported from."""


# --------------------------------------------------------------------------------------
# Publishing


@dataclass(frozen=True)
class UploadFile:
    path_in_repo: str
    size: int


@dataclass
class PublishPlan:
    """What a push would do; ``prefbuild publish --dry-run`` prints it."""

    dataset_dir: Path
    repo_id: str
    revision: str
    private: bool
    uploads: list[UploadFile]
    deletions: list[str] = field(default_factory=list)
    commit_url: str | None = None


def merge_card_metadata(local: Mapping[str, Any], remote: Mapping[str, Any]) -> dict[str, Any]:
    """The card YAML to push when the Hub already has one.

    Keys describing the data (``configs``, ``dataset_info``, ``size_categories``) come from the
    new dataset; list keys such as ``tags`` are the union of both; every other key already on
    the Hub (licence, pretty name, language, citation, ... possibly edited there by hand) is kept.
    """
    merged: dict[str, Any] = dict(remote)
    for key, value in local.items():
        if key in DATA_KEYS or key not in remote or remote[key] in (None, "", []):
            merged[key] = value
        elif key in UNION_KEYS:
            before = remote[key] if isinstance(remote[key], list) else [remote[key]]
            after = value if isinstance(value, list) else [value]
            merged[key] = list(dict.fromkeys([*before, *after]))
    return merged


def local_files(dataset_dir: Path) -> list[UploadFile]:
    """The files of a dataset directory to upload (hidden files left out)."""
    found = []
    for path in sorted(dataset_dir.rglob("*")):
        relative = path.relative_to(dataset_dir)
        if path.is_file() and not any(part.startswith(".") for part in relative.parts):
            found.append(UploadFile(relative.as_posix(), path.stat().st_size))
    return found


def check_dataset_dir(dataset_dir: str | os.PathLike[str]) -> tuple[Path, dict[str, Any], str]:
    """Validate a dataset directory before any network call: ``(path, card metadata, card body)``."""
    root = Path(dataset_dir)
    if not root.is_dir():
        raise PublishError(f"{root}: no such dataset directory (write one with `prefbuild export`)")
    card = root / CARD_NAME
    if not card.is_file():
        raise PublishError(f"{root}: no {CARD_NAME} dataset card; is this a `prefbuild export` directory?")
    try:
        metadata, body = split_card(card.read_text(encoding="utf-8"))
    except CardError as error:
        raise PublishError(f"{root}/{error}") from None
    configs = metadata.get("configs")
    if not isinstance(configs, list) or not configs:
        raise PublishError(f"{card}: the card's YAML has no 'configs' with data files")
    for config in configs:
        for entry in config.get("data_files") or []:
            pattern = entry.get("path") if isinstance(entry, dict) else entry
            if isinstance(pattern, str) and not list(root.glob(pattern)):
                raise PublishError(f"{card}: config {config.get('config_name')!r} lists {pattern}, "
                                   "but no such files are in the directory")
    check_not_stale(root)
    return root, metadata, body


def _changed_sources(dataset_dir: Path) -> list[str] | None:
    """Source files recorded at export time that changed (size or modification time) or vanished
    since; None where the export recorded no source."""
    stamp_file = dataset_dir / SOURCES_NAME
    if not stamp_file.is_file():
        return None
    try:
        sources = json.loads(stamp_file.read_text(encoding="utf-8"))["sources"]
    except (ValueError, KeyError, TypeError):  # handled: an unreadable stamp is reported as a changed source
        return [f"{stamp_file} (unreadable)"]
    if not sources:
        return None
    changed = []
    for source in sources:
        path = Path(source["path"])
        if not path.exists():
            continue  # moved away: nothing newer to compare with
        stat = path.stat()
        if stat.st_size != source["size"] or stat.st_mtime_ns != source["mtime_ns"]:
            changed.append(str(path))
    return changed


def check_not_stale(dataset_dir: str | os.PathLike[str]) -> None:
    """Refuse a dataset directory older than its pairs file.

    The pairs are the files recorded by the export (``.prefbuild-export.json``); a dataset
    directory inside a run directory without that record is compared with the run's
    ``pairs.jsonl``.

    Args:
        dataset_dir: a directory written by ``prefbuild export``.

    Raises:
        StaleDatasetError: a source changed after the dataset was written (the message names it
            and the command that brings the dataset up to date).

    Example:
        >>> check_not_stale("runs/simulate/dataset")  # doctest: +SKIP
    """
    root = Path(dataset_dir)
    recorded = _changed_sources(root)
    changed = recorded or []
    sibling = root.parent / PAIRS
    if recorded is None and sibling.is_file():
        card = root / CARD_NAME
        if card.is_file() and sibling.stat().st_mtime_ns > card.stat().st_mtime_ns:
            changed.append(str(sibling))
    if changed:
        raise StaleDatasetError(
            f"{root}: stale dataset: {', '.join(changed)} changed after the dataset was written; "
            f"export again (`prefbuild export {changed[0]} -o {root}`) before publishing"
        )


def _describe_failure(error: BaseException, repo_id: str) -> str:
    from huggingface_hub.errors import HfHubHTTPError

    if isinstance(error, HfHubHTTPError):
        status = error.response.status_code if error.response is not None else "?"
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        if status == 401:
            return f"the Hub rejected the token (401): check HF_TOKEN or run `hf auth login` ({first_line})"
        if status == 403:
            return f"no write access to {repo_id} (403): {first_line}"
        return f"the Hub answered {status}: {first_line}"
    return f"{type(error).__name__}: {error}"


def _is_transient(error: BaseException) -> bool:
    """Server errors, rate limits, conflicts and network failures are worth retrying."""
    from huggingface_hub.errors import HfHubHTTPError

    if isinstance(error, HfHubHTTPError):
        status = error.response.status_code if error.response is not None else 0
        return status >= 500 or status in (408, 409, 412, 429)
    return isinstance(error, (OSError, TimeoutError)) or type(error).__module__.split(".")[0].startswith("httpx")


def _redact(text: str, token: str | None) -> str:
    return text.replace(token, "***") if token else text


def plan_publish(
    dataset_dir: str | os.PathLike[str], repo_id: str, *, private: bool = False, revision: str | None = None
) -> PublishPlan:
    """What ``publish_dataset_dir`` would upload, without any network call."""
    if not _REPO_ID.match(repo_id):
        raise PublishError(f"--repo {repo_id!r} must look like 'user/name'")
    root, _, _ = check_dataset_dir(dataset_dir)
    return PublishPlan(dataset_dir=root, repo_id=repo_id, revision=revision or "main", private=private,
                       uploads=local_files(root))


def managed_top_files() -> set[str]:
    """Top-level files that ``prefbuild export`` writes (recipe, stats, the formats' sidecars such as
    LLaMA-Factory's ``dataset_info.json``): on the Hub but not in the new dataset, they are stale."""
    from prefbuild.exports import STATS_NAME
    from prefbuild.exports.base import format_names, get_format

    names = {RECIPE_NAME, STATS_NAME}
    for name in format_names():
        try:
            names |= set(get_format(name).sidecar_files({"train": [f"{DATA_DIR}/{name}/train.parquet"]}))
        except Exception:  # handled: a plug-in format that cannot name its sidecars here has none to delete
            continue
    return names


def _push_once(plan: PublishPlan, commit_message: str) -> PublishPlan:
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi
    from huggingface_hub.errors import EntryNotFoundError, RevisionNotFoundError

    api = HfApi()
    repo_type = "dataset"
    api.create_repo(plan.repo_id, repo_type=repo_type, private=plan.private, exist_ok=True)
    if plan.revision != "main":
        api.create_branch(plan.repo_id, branch=plan.revision, repo_type=repo_type, exist_ok=True)
    head = api.repo_info(plan.repo_id, repo_type=repo_type, revision=plan.revision)
    if plan.private and head.private is False:
        # create_repo(exist_ok=True) does not change an existing repo's visibility: pushing would publish
        # data the user asked to keep private.
        raise PublishError(
            f"--private: dataset {plan.repo_id} already exists and is public; nothing was pushed. Make it private "
            "in its settings on the Hub first, or publish without --private"
        )
    remote_files = {sibling.rfilename for sibling in head.siblings or []}
    local_metadata, body = split_card((plan.dataset_dir / CARD_NAME).read_text(encoding="utf-8"))
    remote_metadata: dict[str, Any] = {}
    if CARD_NAME in remote_files:
        try:
            remote_card = api.hf_hub_download(plan.repo_id, CARD_NAME, repo_type=repo_type, revision=head.sha)
        except (EntryNotFoundError, RevisionNotFoundError):
            # handled: a card listed but not downloadable is treated as no remote card
            remote_card = None
        if remote_card is not None:
            remote_metadata, _ = split_card(Path(remote_card).read_text(encoding="utf-8"))
    card_text = render_card(merge_card_metadata(local_metadata, remote_metadata),
                            body.replace(REPO_PLACEHOLDER, plan.repo_id))
    uploads = {item.path_in_repo for item in plan.uploads}
    managed = managed_top_files()
    plan.deletions = sorted(path for path in remote_files if path not in uploads
                            and (path.startswith(f"{DATA_DIR}/") or path in managed))
    operations: list[Any] = [
        CommitOperationAdd(path_in_repo=CARD_NAME, path_or_fileobj=card_text.encode("utf-8"))
        if item.path_in_repo == CARD_NAME
        else CommitOperationAdd(path_in_repo=item.path_in_repo,
                                path_or_fileobj=str(plan.dataset_dir / item.path_in_repo))
        for item in plan.uploads
    ]
    operations += [CommitOperationDelete(path_in_repo=path) for path in plan.deletions]
    commit = api.create_commit(plan.repo_id, operations=operations, commit_message=commit_message,
                               repo_type=repo_type, revision=plan.revision, parent_commit=head.sha)
    plan.commit_url = commit.commit_url
    return plan


def publish_dataset_dir(
    dataset_dir: str | os.PathLike[str],
    repo_id: str,
    *,
    private: bool = False,
    revision: str | None = None,
    commit_message: str = "Upload dataset with prefbuild",
    attempts: int = 3,
    retry_wait_s: float = 2.0,
) -> PublishPlan:
    """Push a dataset directory to the Hub in one commit; retries transient failures.

    The local directory is only read. On failure a ``PublishError`` says what went wrong; the
    Hub keeps its previous commit and the push can be run again.
    """
    from huggingface_hub import constants, get_token
    from tenacity import RetryError, Retrying, retry_if_exception, stop_after_attempt, wait_exponential

    plan = plan_publish(dataset_dir, repo_id, private=private, revision=revision)
    token = get_token()
    if not token:
        raise PublishError("no Hugging Face token: set HF_TOKEN or run `hf auth login`")
    retrying = Retrying(
        stop=stop_after_attempt(max(1, attempts)),
        wait=wait_exponential(multiplier=retry_wait_s, max=max(retry_wait_s, 30.0)),
        retry=retry_if_exception(_is_transient),
        reraise=False,
    )
    try:
        return retrying(_push_once, plan, commit_message)
    except RetryError as error:
        failure = error.last_attempt.exception()
        tries = f" after {attempts} attempts"
    except PrefbuildError:
        raise
    except Exception as error:  # handled: boundary: any Hub client failure becomes the PublishError raised below
        failure, tries = error, ""
    assert failure is not None
    reason = _redact(_describe_failure(failure, repo_id), token).rstrip(".")
    raise PublishError(
        f"publishing {plan.dataset_dir} to {constants.ENDPOINT}/datasets/{repo_id} failed{tries}: {reason}. "
        f"The local dataset is unchanged and the Hub keeps its previous version (a dataset this push created "
        f"stays empty); run the same command to retry."
    ) from None
