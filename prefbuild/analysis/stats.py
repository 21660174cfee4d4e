"""Statistics of trajectory and pair files: what a user checks before training on a dataset.

Records are streamed once and reduced to one small row of numbers per record, so memory
grows with the number of records, never with their text. Aggregations are polars group-bys
over those rows; the same frames feed ``prefbuild stats``, the dataset card and the HTML
report, so the three always agree.

Token lengths are estimated with a word/punctuation regex unless a tokenizer is given: the
estimate is within a small factor of BPE counts and needs no model download.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from prefbuild.errors import PrefbuildError
from prefbuild.io.jsonl import RecordError, detect_kind, read_records
from prefbuild.records import Message, Pair, Trajectory

TokenCounter = Callable[[str], int]

_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)
QUANTILES: tuple[float, ...] = (0.5, 0.9, 0.99)


def estimate_tokens(text: str) -> int:
    """Words and punctuation marks in ``text``: a tokenizer-free estimate of its token count."""
    return sum(1 for _ in _TOKEN.finditer(text))


def tokenizer_counter(path: str | os.PathLike[str]) -> TokenCounter:
    """A token counter backed by a local Hugging Face tokenizer (a folder with tokenizer files)."""
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


def trajectory_row(trajectory: Trajectory, count: TokenCounter = estimate_tokens) -> dict[str, Any]:
    """One flat row of facts about an episode (no text), for group-bys."""
    return {
        "id": trajectory.id,
        "task_id": trajectory.task.id,
        "task_type": trajectory.task.type or "unknown",
        "split": trajectory.task.split,
        "env": trajectory.env.name,
        "teacher_model": trajectory.teacher.model,
        "sample_index": trajectory.sample_index,
        "success": trajectory.outcome.success,
        "reward": trajectory.outcome.reward,
        "stop_reason": trajectory.outcome.stop_reason.value,
        "steps": len(trajectory.steps),
        "labels": len(trajectory.labels),
        "output_tokens": sum(count(step.raw_output) for step in trajectory.steps),
        "observation_tokens": sum(count(step.observation) for step in trajectory.steps),
        "usage_prompt_tokens": trajectory.usage.prompt_tokens,
        "usage_completion_tokens": trajectory.usage.completion_tokens,
    }


TRAJECTORY_SCHEMA: dict[str, type[pl.DataType]] = {
    "id": pl.String, "task_id": pl.String, "task_type": pl.String, "split": pl.String, "env": pl.String,
    "teacher_model": pl.String, "sample_index": pl.Int64, "success": pl.Boolean, "reward": pl.Float64,
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


def pass_at_k(samples: int, successes: int, k: int) -> float:
    """Unbiased pass@k for one task: the chance that at least one of k of the samples succeeds."""
    if samples - successes < k:
        return 1.0
    return 1.0 - math.comb(samples - successes, k) / math.comb(samples, k)


def pass_at_k_table(episodes: pl.DataFrame) -> dict[str, float]:
    """Mean pass@k over tasks, for k = 1, 2, 4, ... up to the fewest samples any task has."""
    if episodes.is_empty():
        return {}
    per_task = episodes.group_by("task_id").agg(
        pl.len().alias("n"), pl.col("success").cast(pl.Int64).sum().alias("c")
    )
    fewest = int(per_task["n"].min())
    ks = [k for k in (1, 2, 4, 8, 16, 32, 64) if k <= fewest]
    table = {}
    for k in ks:
        values = [pass_at_k(n, c, k) for n, c in per_task.select("n", "c").iter_rows()]
        table[f"pass@{k}"] = round(sum(values) / len(values), 4)
    return table


def success_by(episodes: pl.DataFrame, column: str) -> list[dict[str, Any]]:
    """Episodes, successes and success rate per value of ``column``."""
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
    success_rate = float(episodes["success"].cast(pl.Float64).mean()) if episodes.height else 0.0
    return {
        "kind": "trajectory",
        "trajectories": episodes.height,
        "tasks": episodes["task_id"].n_unique() if episodes.height else 0,
        "success_rate": round(success_rate, 4),
        "pass_at_k": pass_at_k_table(episodes),
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


def find_record_files(path: str | os.PathLike[str]) -> list[Path]:
    """The JSONL files ``path`` stands for: itself, or every ``*.jsonl`` below a directory."""
    target = Path(path)
    if target.is_file():
        return [target]
    if target.is_dir():
        files = sorted(p for p in target.rglob("*.jsonl") if p.is_file() and not p.name.startswith("."))
        if not files:
            raise PrefbuildError(f"{target}: no .jsonl trajectory or pair files in this directory")
        return files
    raise RecordError(target, 0, "", "no such file or directory")


def _foreign_jsonl(path: Path) -> bool:
    """A JSONL file whose first line is a JSON object but neither a trajectory nor a pair (an export, a log)."""
    with open(path, encoding="utf-8") as handle:
        first = next((line for line in handle if line.strip()), "")
    try:
        payload = json.loads(first)
    except json.JSONDecodeError:
        return False  # a broken record file: let the reader report it with its line
    return isinstance(payload, dict) and "steps" not in payload and "chosen" not in payload


def files_by_kind(paths: Iterable[Path], *, skip_foreign: bool = False) -> dict[str, list[Path]]:
    """Group record files into trajectory files and pair files (empty files are skipped).

    ``skip_foreign`` leaves out other JSONL files found while walking a directory.
    """
    grouped: dict[str, list[Path]] = {"trajectory": [], "pair": []}
    for path in paths:
        if path.stat().st_size == 0 or (skip_foreign and _foreign_jsonl(path)):
            continue
        grouped[detect_kind(path)].append(path)
    return grouped


def record_files(path: str | os.PathLike[str]) -> dict[str, list[Path]]:
    """Trajectory and pair files of a record file or of a run directory."""
    return files_by_kind(find_record_files(path), skip_foreign=Path(path).is_dir())


def iter_pairs(paths: Iterable[Path]) -> Iterator[Pair]:
    for path in paths:
        yield from read_records(path, Pair)


def iter_trajectories(paths: Iterable[Path]) -> Iterator[Trajectory]:
    for path in paths:
        yield from read_records(path, Trajectory)


def collect_stats(path: str | os.PathLike[str], count: TokenCounter = estimate_tokens) -> dict[str, Any]:
    """Statistics of a record file or a run directory: ``{"files": ..., "pair": ..., "trajectory": ...}``."""
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
