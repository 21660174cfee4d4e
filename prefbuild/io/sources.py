"""Streaming input and output for labelling: one trajectory in memory at a time.

Inputs are prefbuild trajectory files or external logs (AgentBench ``runs.jsonl``, chat
``messages`` JSONL); the format is detected from the first record unless given. Output
goes to a temporary file next to the target and is renamed into place only when every
record was written, so an interrupted run never leaves a half-written file behind.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from prefbuild.errors import PrefbuildError, describe_validation_error
from prefbuild.io.fast_records import read_fast_records
from prefbuild.io.importers import (
    ExternalLogError,
    agentbench_trajectory,
    is_agentbench_record,
    is_messages_record,
    messages_trajectory,
    source_name,
)
from prefbuild.io.jsonl import JsonlWriter, RecordError, atomic_path, iter_lines, read_records
from prefbuild.records import Trajectory

FORMATS = ("auto", "prefbuild", "agentbench", "messages")


class LabelInputError(PrefbuildError, ValueError):
    """A record of an input file cannot be read; the message starts with ``file:line``."""


def detect_format(record: Any) -> str:
    """``prefbuild``, ``agentbench`` or ``messages`` for one decoded JSON record."""
    if isinstance(record, dict) and "steps" in record and "outcome" in record:
        return "prefbuild"
    if is_agentbench_record(record):
        return "agentbench"
    if is_messages_record(record):
        return "messages"
    raise ValueError(
        "not a prefbuild trajectory ('steps', 'outcome'), an AgentBench runs.jsonl record ('output.history') "
        "or a chat log ('messages')"
    )


def read_trajectories(
    path: str | Path, fmt: str = "auto", model: str = "unknown", *, fast: bool = False
) -> Iterator[Trajectory]:
    """Trajectories of ``path``, streamed; ``LabelInputError`` names ``file:line`` and the field at fault.

    Args:
        path: a prefbuild trajectory file or an external log.
        fmt: ``auto`` or one of ``FORMATS``.
        model: the model name recorded on trajectories imported from external logs.
        fast: read prefbuild trajectory files into the structs of ``io.fast_records`` (the same
            values, accepted and refused alike, about 3x cheaper; for code that only reads
            attributes, like the built-in labelers). External logs are always imported as records.

    Returns:
        An iterator of trajectories.
    """
    if fmt not in FORMATS:
        raise LabelInputError(f"unknown input format {fmt!r}; known: {', '.join(FORMATS)}")
    path = Path(path)
    if not path.is_file():
        raise LabelInputError(f"{path}: no such file")
    chosen = None if fmt == "auto" else fmt
    if chosen is None:
        chosen = _detect(path)
    if chosen == "prefbuild":
        try:
            yield from (read_fast_records if fast else read_records)(path, Trajectory)
        except RecordError as error:
            raise LabelInputError(str(error)) from error
        return
    source = source_name(path)
    for number, line, _ in iter_lines(path):
        where = f"{path}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise LabelInputError(f"{where}: invalid JSON ({error.msg} at column {error.colno})") from error
        yield _external(record, chosen, where, source, model, number)


def _detect(path: Path) -> str:
    for number, line, _ in iter_lines(path):
        try:
            return detect_format(json.loads(line))
        except json.JSONDecodeError as error:
            raise LabelInputError(f"{path}:{number}: invalid JSON ({error.msg} at column {error.colno})") from error
        except ValueError as error:
            raise LabelInputError(f"{path}:{number}: {error}") from error
    return "prefbuild"  # an empty file holds no records of any kind


def _external(record: Any, fmt: str, where: str, source: str, model: str, number: int) -> Trajectory:
    if not isinstance(record, dict):
        raise LabelInputError(f"{where}: expected a JSON object, got {type(record).__name__}")
    try:
        if fmt == "agentbench":
            return agentbench_trajectory(record, source=source, model=model, where=where)
        return messages_trajectory(record, default_id=f"{source}#{number}", model=model, where=where)
    except ExternalLogError as error:
        raise LabelInputError(str(error)) from error
    except ValidationError as error:
        field, message = describe_validation_error(error)
        raise LabelInputError(f"{where}: cannot build a trajectory: {field}: {message}") from error


@contextmanager
def atomic_writer(path: str | Path) -> Iterator[JsonlWriter]:
    """A JSONL writer whose file replaces ``path`` only when the block ends without error."""
    with atomic_path(path) as temporary, JsonlWriter(temporary, flush=False) as writer:
        yield writer
