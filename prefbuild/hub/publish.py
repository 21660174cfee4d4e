"""Dataset directories in the Hub's layout, and publishing them to the Hugging Face Hub.

``write_dataset_dir`` writes exactly what will be on the Hub: parquet shards written by
``datasets`` under ``data/``, a dataset card ``README.md`` whose YAML declares every config
and split (so ``load_dataset`` works on the directory and on the repo alike) and the recipe as
``recipe.yaml``. It builds everything in a temporary directory and renames it into place, so
a crash leaves the previous dataset intact.

``publish_dataset_dir`` pushes such a directory with the ``huggingface_hub`` client in a single
commit: the Hub has either the old dataset or the new one, never a mix, and a failed push
(server error, network down) can simply be run again. Card metadata already on the Hub
(a language, a citation, extra tags added by hand) is kept. The token comes from ``HF_TOKEN``
or the user's ``hf auth login`` and is never printed or written.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from prefbuild.analysis.stats import pair_frame, pair_stats
from prefbuild.errors import PrefbuildError
from prefbuild.hub.card import REPO_PLACEHOLDER, CardInfo, ConfigSummary, render_card_body
from prefbuild.records import Pair

DATA_DIR = "data"
CARD_NAME = "README.md"
RECIPE_NAME = "recipe.yaml"
DEFAULT_MAX_SHARD_BYTES = 500 * 1024 * 1024
BASE_TAGS = ("dpo", "preference", "agent", "synthetic", "prefbuild")
TASK_CATEGORIES = ("text-generation",)
# Card keys that describe the data itself: on update, the new dataset's values replace the Hub's.
DATA_KEYS = frozenset({"configs", "dataset_info", "size_categories"})
# List-valued card keys merged as a union (Hub values first) on update.
UNION_KEYS = frozenset({"tags", "task_categories", "task_ids", "language"})

_CONFIG_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_SPLIT_NAME = re.compile(r"^\w+(\.\w+)*$")
_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")


class PublishError(PrefbuildError):
    """Writing or pushing a dataset failed; the message says what, where, and what is left intact."""


# --------------------------------------------------------------------------------------
# Dataset directory


def config_data_dir(config: str) -> str:
    """Where a config's shards live: ``data/`` for the ``default`` config, ``data/<config>/`` otherwise."""
    return DATA_DIR if config == "default" else f"{DATA_DIR}/{config}"


def size_category(rows: int) -> str:
    """The Hub's ``size_categories`` bucket for a row count."""
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
                        (10_000_000, "1M<n<10M")):
        if rows < limit:
            return name
    return "10M<n<100M"


@dataclass
class DatasetDirSummary:
    """What ``write_dataset_dir`` wrote."""

    path: Path
    configs: list[ConfigSummary]
    pairs: int
    files: list[str] = field(default_factory=list)


def _check_names(rows: Mapping[str, Mapping[str, Any]]) -> None:
    if not rows:
        raise PublishError("nothing to write: no configs given")
    for config, splits in rows.items():
        if not _CONFIG_NAME.match(config) or config == DATA_DIR:
            raise PublishError(f"config name {config!r} is not allowed (letters, digits, '_', '-', '.'; not 'data')")
        for split in splits:
            if not _SPLIT_NAME.match(split):
                raise PublishError(f"config {config!r}: split name {split!r} must match {_SPLIT_NAME.pattern}")


def _write_config(
    root: Path, config: str, splits: Mapping[str, Iterable[Mapping[str, Any]]], max_shard_bytes: int
) -> tuple[ConfigSummary, Any] | None:
    """Write one config's splits as parquet shards; returns its summary and ``datasets.DatasetInfo``."""
    import datasets
    import pyarrow as pa

    materialised = {split: [dict(row) for row in split_rows] for split, split_rows in splits.items()}
    order = {"train": 0, "validation": 1, "test": 2}
    materialised = {split: materialised[split] for split in sorted(materialised, key=lambda s: (order.get(s, 3), s))
                    if materialised[split]}
    if not materialised:
        return None
    try:
        # One schema for all splits: a column that is null in one split must not change type in another.
        every_row = [row for split_rows in materialised.values() for row in split_rows]
        features = datasets.Dataset.from_list(every_row).features
        tables = {split: datasets.Dataset.from_list(split_rows, features=features)
                  for split, split_rows in materialised.items()}
    except (pa.ArrowException, TypeError, ValueError) as error:
        raise PublishError(f"config {config!r}: rows cannot be stored as one table: {error}") from None
    folder = config_data_dir(config)
    (root / folder).mkdir(parents=True, exist_ok=True)
    info = datasets.DatasetInfo(config_name=config, features=features, splits=datasets.SplitDict(),
                                download_size=0, dataset_size=0)
    files: dict[str, list[str]] = {}
    quiet = not datasets.utils.are_progress_bars_disabled()
    if quiet:
        datasets.disable_progress_bars()
    try:
        _write_shards(root, folder, tables, info, files, max_shard_bytes)
    finally:
        if quiet:
            datasets.enable_progress_bars()
    info.size_in_bytes = info.download_size + info.dataset_size
    summary = ConfigSummary(name=config, splits={s: len(d) for s, d in tables.items()}, files=files,
                            columns=list(features))
    return summary, info


def _write_shards(root: Path, folder: str, tables: Mapping[str, Any], info: Any, files: dict[str, list[str]],
                  max_shard_bytes: int) -> None:
    """Write each split in shards of at most ``max_shard_bytes`` (in memory), named as ``push_to_hub`` does."""
    import datasets

    for split, dataset in tables.items():
        num_shards = max(1, math.ceil(dataset.data.nbytes / max_shard_bytes))
        for index in range(num_shards):
            name = f"{folder}/{split}-{index:05d}-of-{num_shards:05d}.parquet"
            dataset.shard(num_shards, index, contiguous=True).to_parquet(str(root / name))
            files.setdefault(split, []).append(name)
            info.download_size += (root / name).stat().st_size
        info.splits.add(datasets.SplitInfo(name=split, num_bytes=dataset.data.nbytes, num_examples=len(dataset)))
        info.dataset_size += dataset.data.nbytes


def card_metadata(
    info: CardInfo, configs: Sequence[ConfigSummary], dataset_infos: Mapping[str, Any], stats: Mapping[str, Any]
) -> dict[str, Any]:
    """The card's YAML header as a plain dict: licence, tags, size, configs with data files, features."""
    from datasets.info import DatasetInfosDict
    from huggingface_hub import DatasetCardData

    env_tags = [env.name for env in info.envs] + [row["env"] for row in stats.get("by_env", [])]
    tags = list(dict.fromkeys([*BASE_TAGS, *env_tags, *info.tags]))
    card_data = DatasetCardData(
        license=info.license,
        task_categories=list(TASK_CATEGORIES),
        tags=tags,
        size_categories=[size_category(stats.get("pairs", 0))],
        pretty_name=info.pretty_name,
    )
    DatasetInfosDict(dict(dataset_infos)).to_dataset_card_data(card_data)
    card_data["configs"] = [
        {
            "config_name": config.name,
            **({"default": True} if config.default else {}),
            "data_files": [{"split": split, "path": f"{config_data_dir(config.name)}/{split}-*"}
                           for split in config.splits],
        }
        for config in configs
    ]
    return card_data.to_dict()


def render_card(metadata: Mapping[str, Any], body: str) -> str:
    """A README.md: YAML header between ``---`` lines, then the markdown body."""
    header = yaml.safe_dump(dict(metadata), sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{header}---\n\n{body.lstrip()}"


def split_card(text: str) -> tuple[dict[str, Any], str]:
    """``(metadata, body)`` of a README.md; a README without a YAML header has empty metadata."""
    match = re.match(r"^---\r?\n(.*?)\r?\n---[ \t]*\r?\n?(.*)$", text, re.DOTALL)
    if not match:
        return {}, text
    try:
        metadata = yaml.safe_load(match.group(1)) or {}
    except yaml.YAMLError as error:
        raise PublishError(f"{CARD_NAME}: the YAML header does not parse: {error}") from None
    if not isinstance(metadata, dict):
        raise PublishError(f"{CARD_NAME}: the YAML header must be a mapping")
    return metadata, match.group(2)


def _swap_into_place(built: Path, target: Path) -> None:
    """Rename ``built`` to ``target``; an existing ``target`` is moved aside first and removed after."""
    old: Path | None = None
    if target.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
        old.rmdir()
        os.replace(target, old)
    try:
        os.replace(built, target)
    except OSError:
        if old is not None:
            os.replace(old, target)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def write_dataset_dir(
    out_dir: str | os.PathLike[str],
    rows: Mapping[str, Mapping[str, Iterable[Mapping[str, Any]]]],
    pairs: Iterable[Pair],
    info: CardInfo,
    *,
    default_config: str | None = None,
    max_shard_bytes: int = DEFAULT_MAX_SHARD_BYTES,
) -> DatasetDirSummary:
    """Write a Hub-ready dataset directory: parquet shards, dataset card, recipe.

    ``rows`` holds already-converted rows per config and split (``{"trl": {"train": [...],
    "test": [...]}}``, e.g. from ``prefbuild.exports.formats.to_rows``); ``pairs`` are the records the
    rows came from, used for the card's statistics and sample. The directory is built next to
    ``out_dir`` and renamed into place only when complete.
    """
    _check_names(rows)
    target = Path(out_dir)
    if target.exists() and not target.is_dir():
        raise PublishError(f"{target}: exists and is not a directory")
    if default_config is not None and default_config not in rows:
        raise PublishError(f"default config {default_config!r} is not among the configs {sorted(rows)}")
    default_config = default_config or next(iter(rows))
    target.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    try:
        configs: list[ConfigSummary] = []
        dataset_infos: dict[str, Any] = {}
        for config, splits in rows.items():
            written = _write_config(building, config, splits, max_shard_bytes)
            if written is None:
                continue
            summary, dataset_info = written
            summary.default = config == default_config
            configs.append(summary)
            dataset_infos[config] = dataset_info
        if not configs:
            raise PublishError("nothing to write: every config and split is empty")
        if not any(config.default for config in configs):
            configs[0].default = True
        sample: Pair | None = None

        def keep_sample(stream: Iterable[Pair]) -> Iterable[Pair]:
            nonlocal sample
            for pair in stream:
                if sample is None or (sample.split != "train" and pair.split == "train"):
                    sample = pair
                yield pair

        stats = pair_stats(pair_frame(keep_sample(pairs)))
        metadata = card_metadata(info, configs, dataset_infos, stats)
        body = render_card_body(info, configs, stats, sample)
        (building / CARD_NAME).write_text(render_card(metadata, body), encoding="utf-8")
        if info.recipe is not None:
            (building / RECIPE_NAME).write_text(
                yaml.safe_dump(dict(info.recipe), sort_keys=False, allow_unicode=True), encoding="utf-8"
            )
        files = sorted(str(p.relative_to(building)) for p in building.rglob("*") if p.is_file())
        umask = os.umask(0)
        os.umask(umask)
        building.chmod(0o777 & ~umask)  # mkdtemp makes it private; the dataset is an ordinary directory
        _swap_into_place(building, target)
    finally:
        if building.exists():
            shutil.rmtree(building, ignore_errors=True)
    return DatasetDirSummary(path=target, configs=configs, pairs=int(stats.get("pairs", 0)), files=files)


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
    metadata, body = split_card(card.read_text(encoding="utf-8"))
    configs = metadata.get("configs")
    if not isinstance(configs, list) or not configs:
        raise PublishError(f"{card}: the card's YAML has no 'configs' with data files")
    for config in configs:
        for entry in config.get("data_files") or []:
            pattern = entry.get("path") if isinstance(entry, dict) else entry
            if isinstance(pattern, str) and not list(root.glob(pattern)):
                raise PublishError(f"{card}: config {config.get('config_name')!r} lists {pattern}, "
                                   "but no such files are in the directory")
    return root, metadata, body


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


def _push_once(plan: PublishPlan, commit_message: str) -> PublishPlan:
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi
    from huggingface_hub.errors import EntryNotFoundError, RevisionNotFoundError

    api = HfApi()
    repo_type = "dataset"
    api.create_repo(plan.repo_id, repo_type=repo_type, private=plan.private, exist_ok=True)
    if plan.revision != "main":
        api.create_branch(plan.repo_id, branch=plan.revision, repo_type=repo_type, exist_ok=True)
    head = api.repo_info(plan.repo_id, repo_type=repo_type, revision=plan.revision)
    remote_files = {sibling.rfilename for sibling in head.siblings or []}
    local_metadata, body = split_card((plan.dataset_dir / CARD_NAME).read_text(encoding="utf-8"))
    remote_metadata: dict[str, Any] = {}
    if CARD_NAME in remote_files:
        try:
            remote_card = api.hf_hub_download(plan.repo_id, CARD_NAME, repo_type=repo_type, revision=head.sha)
        except (EntryNotFoundError, RevisionNotFoundError):
            remote_card = None
        if remote_card is not None:
            remote_metadata, _ = split_card(Path(remote_card).read_text(encoding="utf-8"))
    card_text = render_card(merge_card_metadata(local_metadata, remote_metadata),
                            body.replace(REPO_PLACEHOLDER, plan.repo_id))
    uploads = {item.path_in_repo for item in plan.uploads}
    plan.deletions = sorted(path for path in remote_files if path.startswith(f"{DATA_DIR}/") and path not in uploads)
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
    except Exception as error:
        failure, tries = error, ""
    assert failure is not None
    reason = _redact(_describe_failure(failure, repo_id), token).rstrip(".")
    raise PublishError(
        f"publishing {plan.dataset_dir} to {constants.ENDPOINT}/datasets/{repo_id} failed{tries}: {reason}. "
        f"The local dataset is unchanged and the Hub keeps its previous version; run the same command to retry."
    ) from None
