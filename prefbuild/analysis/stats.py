"""Statistics of trajectory and pair files: what a user checks before training on a dataset.

Records are streamed once and reduced to one small row of numbers per record, so memory
grows with the number of records, never with their text. Aggregations are polars group-bys
over those rows; the same frames feed ``prefbuild stats``, the dataset card and the HTML
report, so the three always agree.

Token lengths are estimated with a word/punctuation regex unless a tokenizer is given: the
estimate is within a small factor of BPE counts and needs no model download.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from prefbuild.analysis.passk import mean_pass_at_k
from prefbuild.errors import PrefbuildError
from prefbuild.hub.card import SIMULATED_BACKEND
from prefbuild.io.jsonl import detect_kind, read_records
from prefbuild.io.rundir import run_record_files
from prefbuild.records import Message, Pair, Trajectory

TokenCounter = Callable[[str], int]

_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)
QUANTILES: tuple[float, ...] = (0.5, 0.9, 0.99)


def estimate_tokens(text: str) -> int:
    """Words and punctuation marks in ``text``: a tokenizer-free estimate of its token count."""
    return sum(1 for _ in _TOKEN.finditer(text))


def tokenizer_counter(path: str | os.PathLike[str]) -> TokenCounter:
    """A token counter backed by a local Hugging Face tokenizer (a folder with tokenizer files).

    Args:
        path: a folder holding ``tokenizer.json`` / ``tokenizer_config.json`` (never a Hub name:
            statistics must not download anything).

    Returns:
        A function text -> token count.

    Raises:
        PrefbuildError: ``path`` is not such a folder, or the tokenizer cannot be loaded from it.

    Example:
        >>> count = tokenizer_counter("models/qwen3-tokenizer")  # doctest: +SKIP
        >>> count("go to desk 1")  # doctest: +SKIP
        5
    """
    folder = Path(path)
    if not folder.is_dir():
        raise PrefbuildError(
            f"--tokenizer {path}: needs a local tokenizer folder (with tokenizer.json or tokenizer_config.json), "
            "and this is not a directory; prefbuild does not download tokenizers for stats. Fetch one first, e.g. "
            f"`hf download {path} --include 'tokenizer*' --local-dir tokenizer/`, then pass --tokenizer tokenizer/"
        )
    try:
        from transformers import AutoTokenizer
    except ImportError as error:  # pragma: no cover - transformers is an optional extra
        raise PrefbuildError("--tokenizer needs the 'transformers' package (pip install prefbuild[local])") from error
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    except (OSError, ValueError) as error:
        raise PrefbuildError(f"cannot load a tokenizer from {path}: {error}") from None
    return lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])


def messages_text(messages: Sequence[Message]) -> str:
    """The text content of a message list, as a trainer would see it (tool calls included)."""
    parts: list[str] = []
    for message in messages:
        parts.append(message.content)
        for call in message.tool_calls or []:
            parts.append(f"{call.function.name}({call.function.arguments})")
    return "\n".join(parts)


# --------------------------------------------------------------------------------------
# Records -> rows of numbers


def pair_row(pair: Pair, count: TokenCounter = estimate_tokens) -> dict[str, Any]:
    """One flat row of facts about a pair (no text), for group-bys."""
    return {
        "id": pair.id,
        "strategy": pair.strategy,
        "reason": pair.reason if pair.reason else "none",
        "split": pair.split,
        "task_type": pair.source.task_type or "unknown",
        "task_id": pair.source.task_id,
        "env": pair.source.env,
        "teacher_model": pair.source.teacher_model,
        "prompt_tokens": count(messages_text(pair.prompt)),
        "chosen_tokens": count(messages_text(pair.chosen)),
        "rejected_tokens": count(messages_text(pair.rejected)),
        "prompt_turns": len(pair.prompt),
    }


PAIR_SCHEMA: dict[str, type[pl.DataType]] = {
    "id": pl.String, "strategy": pl.String, "reason": pl.String, "split": pl.String, "task_type": pl.String,
    "task_id": pl.String, "env": pl.String, "teacher_model": pl.String, "prompt_tokens": pl.Int64,
    "chosen_tokens": pl.Int64, "rejected_tokens": pl.Int64, "prompt_turns": pl.Int64,
}


def pair_frame(pairs: Iterable[Pair], count: TokenCounter = estimate_tokens) -> pl.DataFrame:
    """A polars frame with one ``pair_row`` per pair."""
    return pl.DataFrame((pair_row(pair, count) for pair in pairs), schema=PAIR_SCHEMA)


def task_domain(trajectory: Trajectory) -> str:
    """The domain or category pass@k is reported by: ``task.meta["domain"]`` or ``["category"]``
    where the env records one (tau2's airline / retail / telecom), else the task type (BFCL's
    categories, the code env's families), prefixed with the env name.

    Example:
        >>> from prefbuild.records import EnvInfo, Outcome, TaskInfo, TeacherInfo
        >>> task_domain(Trajectory(id="t", task=TaskInfo(id="x", type="base", goal="", split="test"),
        ...     env=EnvInfo(name="bfcl", protocol="hermes"), teacher=TeacherInfo(backend="b", model="m"),
        ...     outcome=Outcome(success=False, stop_reason="max_steps")))
        'bfcl/base'
    """
    meta = trajectory.task.meta
    domain = meta.get("domain") or meta.get("category") or trajectory.task.type or "unknown"
    return f"{trajectory.env.name}/{domain}"


def trajectory_row(trajectory: Trajectory, count: TokenCounter = estimate_tokens) -> dict[str, Any]:
    """One flat row of facts about an episode (no text), for group-bys."""
    return {
        "id": trajectory.id,
        "task_id": trajectory.task.id,
        "task_type": trajectory.task.type or "unknown",
        "domain": task_domain(trajectory),
        "split": trajectory.task.split,
        "env": trajectory.env.name,
        "teacher_model": trajectory.teacher.model,
        "teacher_backend": trajectory.teacher.backend,
        "sample_index": trajectory.sample_index,
        # None where an imported log does not record whether the episode succeeded (DBBench runs.jsonl)
        "success": None if trajectory.task.meta.get("outcome_known") is False else trajectory.outcome.success,
        "reward": trajectory.outcome.reward,
        "stop_reason": str(trajectory.outcome.stop_reason),
        "steps": len(trajectory.steps),
        "labels": len(trajectory.labels),
        "output_tokens": sum(count(step.raw_output) for step in trajectory.steps),
        "observation_tokens": sum(count(step.observation) for step in trajectory.steps),
        "usage_prompt_tokens": trajectory.usage.prompt_tokens,
        "usage_completion_tokens": trajectory.usage.completion_tokens,
    }


TRAJECTORY_SCHEMA: dict[str, type[pl.DataType]] = {
    "id": pl.String, "task_id": pl.String, "task_type": pl.String, "domain": pl.String, "split": pl.String,
    "env": pl.String,
    "teacher_model": pl.String, "teacher_backend": pl.String, "sample_index": pl.Int64, "success": pl.Boolean,
    "reward": pl.Float64,
    "stop_reason": pl.String, "steps": pl.Int64, "labels": pl.Int64, "output_tokens": pl.Int64,
    "observation_tokens": pl.Int64, "usage_prompt_tokens": pl.Int64, "usage_completion_tokens": pl.Int64,
}
LABEL_SCHEMA: dict[str, type[pl.DataType]] = {
    "trajectory_id": pl.String, "task_type": pl.String, "teacher_model": pl.String, "mode": pl.String,
    "step": pl.Int64, "confidence": pl.Float64,
}


def trajectory_frames(
    trajectories: Iterable[Trajectory], count: TokenCounter = estimate_tokens
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``(episodes, labels)``: one row per trajectory and one row per label, in a single pass."""
    episodes: list[dict[str, Any]] = []
    labels: list[dict[str, Any]] = []
    for trajectory in trajectories:
        episodes.append(trajectory_row(trajectory, count))
        labels.extend(
            {
                "trajectory_id": trajectory.id,
                "task_type": trajectory.task.type or "unknown",
                "teacher_model": trajectory.teacher.model,
                "mode": label.mode,
                "step": label.step,
                "confidence": label.confidence,
            }
            for label in trajectory.labels
        )
    return pl.DataFrame(episodes, schema=TRAJECTORY_SCHEMA), pl.DataFrame(labels, schema=LABEL_SCHEMA)


# --------------------------------------------------------------------------------------
# Aggregations


def counts(frame: pl.DataFrame, *columns: str) -> list[dict[str, Any]]:
    """Row counts per value combination of ``columns``, largest first (ties by value)."""
    if frame.is_empty():
        return []
    grouped = frame.group_by(list(columns)).len(name="count")
    return grouped.sort(["count", *columns], descending=[True, *([False] * len(columns))]).to_dicts()


def quantiles(frame: pl.DataFrame, columns: Sequence[str], qs: Sequence[float] = QUANTILES) -> dict[str, Any]:
    """Mean, min, max and the given quantiles of each numeric column."""
    result: dict[str, Any] = {}
    for column in columns:
        series = frame[column].drop_nulls()
        if series.is_empty():
            result[column] = {}
            continue
        summary: dict[str, Any] = {"mean": round(float(series.mean()), 2), "min": int(series.min()),
                                   "max": int(series.max())}
        for q in qs:
            summary[f"p{round(q * 100)}"] = float(series.quantile(q, interpolation="nearest"))
        result[column] = summary
    return result


def pass_at_k_table(episodes: pl.DataFrame) -> dict[str, float]:
    """Mean pass@k over tasks, for k = 1, 2, 4, ... up to the fewest samples any task has
    (episodes whose outcome is unknown left out)."""
    episodes = episodes.filter(pl.col("success").is_not_null())
    if episodes.is_empty():
        return {}
    per_task = episodes.group_by("task_id").agg(
        pl.len().alias("n"), pl.col("success").cast(pl.Int64).sum().alias("c")
    )
    return mean_pass_at_k({task: (n, c) for task, n, c in per_task.select("task_id", "n", "c").iter_rows()})


def pass_at_k_by_domain(episodes: pl.DataFrame) -> list[dict[str, Any]]:
    """Per domain: tasks, episodes and mean pass@k for every k all its tasks have samples for
    (the cards report pass@1 and pass@4 per domain; episodes whose outcome is unknown left out)."""
    episodes = episodes.filter(pl.col("success").is_not_null())
    if episodes.is_empty():
        return []
    per_task = episodes.group_by("domain", "task_id").agg(
        pl.len().alias("n"), pl.col("success").cast(pl.Int64).sum().alias("c")
    )
    rows: list[dict[str, Any]] = []
    for (domain,), group in sorted(per_task.group_by("domain"), key=lambda item: str(item[0][0])):
        outcomes = {task: (n, c) for task, n, c in group.select("task_id", "n", "c").iter_rows()}
        rows.append({
            "domain": domain,
            "tasks": len(outcomes),
            "episodes": int(group["n"].sum()),
            **mean_pass_at_k(outcomes),
        })
    ks = list(dict.fromkeys(key for row in rows for key in row if key.startswith("pass@")))
    return [{**row, **{k: row.get(k) for k in ks}} for row in rows]


def success_by(episodes: pl.DataFrame, column: str) -> list[dict[str, Any]]:
    """Episodes, successes and success rate per value of ``column`` (the rate over the episodes whose
    outcome is known; None where none is)."""
    if episodes.is_empty():
        return []
    grouped = episodes.group_by(column).agg(
        pl.len().alias("episodes"),
        pl.col("success").cast(pl.Int64).sum().alias("successes"),
        pl.col("success").cast(pl.Float64).mean().round(4).alias("success_rate"),
        pl.col("steps").mean().round(2).alias("mean_steps"),
    )
    return grouped.sort(column).to_dicts()


def pair_stats(frame: pl.DataFrame) -> dict[str, Any]:
    """Everything ``prefbuild stats`` reports about pairs, as plain data."""
    return {
        "kind": "pair",
        "pairs": frame.height,
        "by_reason": counts(frame, "reason"),
        "by_strategy": counts(frame, "strategy"),
        "by_split": counts(frame, "split"),
        "by_task_type": counts(frame, "task_type"),
        "by_teacher_model": counts(frame, "teacher_model"),
        "by_env": counts(frame, "env"),
        "by_reason_split": counts(frame, "reason", "split"),
        "tokens": quantiles(frame, ["prompt_tokens", "chosen_tokens", "rejected_tokens"]),
    }


def trajectory_stats(episodes: pl.DataFrame, labels: pl.DataFrame) -> dict[str, Any]:
    """Everything ``prefbuild stats`` reports about trajectories, as plain data."""
    unknown = episodes["success"].null_count() if episodes.height else 0
    known = episodes.height - unknown
    # Over the episodes whose outcome is known; None when no episode's is (imported DBBench logs).
    success_rate = round(float(episodes["success"].cast(pl.Float64).mean()), 4) if known else None
    return {
        "kind": "trajectory",
        "trajectories": episodes.height,
        "tasks": episodes["task_id"].n_unique() if episodes.height else 0,
        "success_rate": success_rate if episodes.height else 0.0,
        "outcome_unknown": unknown,
        "simulated": SIMULATED_BACKEND in set(episodes["teacher_backend"].to_list()) if episodes.height else False,
        "pass_at_k": pass_at_k_table(episodes),
        "pass_at_k_by_domain": pass_at_k_by_domain(episodes),
        "by_teacher_backend": counts(episodes, "teacher_backend"),
        "by_split": counts(episodes, "split"),
        "by_stop_reason": counts(episodes, "stop_reason"),
        "success_by_task_type": success_by(episodes, "task_type"),
        "success_by_teacher_model": success_by(episodes, "teacher_model"),
        "labels_by_mode": counts(labels, "mode"),
        "labels_by_teacher_model": counts(labels, "teacher_model", "mode"),
        "steps": quantiles(episodes, ["steps"]),
        "tokens": quantiles(episodes, ["output_tokens", "observation_tokens"]),
    }


# --------------------------------------------------------------------------------------
# Files and run directories


def record_files(path: str | os.PathLike[str]) -> dict[str, list[Path]]:
    """Trajectory and pair files of one record file, or of a run directory (each episode listed once).

    Args:
        path: a trajectory or pair ``.jsonl`` file, or a directory ``prefbuild run`` wrote.

    Returns:
        ``{"trajectory": [...], "pair": [...]}``; a run directory gives its labelled
        trajectories if present, else the raw ones (``prefbuild.io.rundir.run_record_files``).

    Raises:
        PrefbuildError: the path does not exist, or is a directory that is not a run directory.

    Example:
        >>> record_files("runs/simulate")  # doctest: +SKIP
        {'trajectory': [PosixPath('runs/simulate/labelled.jsonl')], 'pair': [PosixPath('runs/simulate/pairs.jsonl')]}
    """
    target = Path(path)
    if target.is_dir():
        files = run_record_files(target)
        return {"trajectory": list(files.trajectories), "pair": [files.pairs] if files.pairs else []}
    if not target.is_file():
        raise PrefbuildError(f"{target}: no such file or directory")
    if target.stat().st_size == 0:
        return {"trajectory": [], "pair": []}
    kind = detect_kind(target)
    return {"trajectory": [target] if kind == "trajectory" else [], "pair": [target] if kind == "pair" else []}


def iter_pairs(paths: Iterable[Path], *, strict: bool = False) -> Iterator[Pair]:
    """Pairs of every file, streaming, in file order.

    ``strict`` makes a cut-off last line an error (for exports: a dropped record must not go
    unnoticed); otherwise it is skipped with a warning, as a killed writer leaves it.
    """
    for path in paths:
        yield from read_records(path, Pair, tolerate_truncated_tail=not strict)


def iter_trajectories(paths: Iterable[Path], *, strict: bool = False) -> Iterator[Trajectory]:
    """Trajectories of every file, streaming, in file order (``strict`` as for ``iter_pairs``)."""
    for path in paths:
        yield from read_records(path, Trajectory, tolerate_truncated_tail=not strict)


def collect_stats(path: str | os.PathLike[str], count: TokenCounter = estimate_tokens) -> dict[str, Any]:
    """Statistics of a record file or a run directory.

    Args:
        path: a trajectory or pair file, or a run directory.
        count: token counter (``estimate_tokens`` or ``tokenizer_counter(folder)``).

    Returns:
        ``{"path", "files": {"trajectory": [...], "pair": [...]}, "trajectory": {...}, "pair": {...}}``
        (a kind is absent when there are no records of it).

    Raises:
        PrefbuildError: nothing to read; RecordError: a bad record, at ``file:line``.

    Example:
        >>> collect_stats("runs/simulate")["trajectory"]["trajectories"]  # doctest: +SKIP
        50
    """
    grouped = record_files(path)
    if not grouped["pair"] and not grouped["trajectory"]:
        raise PrefbuildError(f"{path}: no trajectory or pair records")
    result: dict[str, Any] = {"path": str(path), "files": {kind: [str(p) for p in ps] for kind, ps in grouped.items()}}
    if grouped["trajectory"]:
        episodes, labels = trajectory_frames(iter_trajectories(grouped["trajectory"]), count)
        result["trajectory"] = trajectory_stats(episodes, labels)
    if grouped["pair"]:
        result["pair"] = pair_stats(pair_frame(iter_pairs(grouped["pair"]), count))
    return result
