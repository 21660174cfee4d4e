"""Streaming input and output for labelling: one trajectory in memory at a time.

Inputs are prefbuild trajectory files or external logs (AgentBench ``runs.jsonl``, chat
``messages`` or ShareGPT ``conversations`` JSONL of household, DBBench or tool-calling agents,
slime tau2 pipeline trajectories, tau2-bench results files, BFCL multi-turn result files: one
trajectory per entry, replayed through the bfcl env), one record per line or, as dataset dumps ship
them, one JSON array of records (read whole), or one indented JSON document (a tau2 results file,
read whole: one trajectory per simulation); the format is detected from the first record unless
given (a chat log's record is read as a household, DBBench, tool or slime log by its own turns).
Output goes to a temporary file next to the target and is renamed into place only when every
record was written, so an interrupted run never leaves a half-written file behind.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
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
    is_slime_record,
    messages_trajectory,
    slime_trajectory,
    source_name,
)
from prefbuild.io.importers.bfcl import bfcl_trajectories, is_bfcl_result
from prefbuild.io.importers.located import JsonPath, Locate
from prefbuild.io.importers.tau2 import is_tau2_results, tau2_trajectories
from prefbuild.io.importers.tool_chat import tool_chat_trajectory
from prefbuild.io.jsonl import JsonlWriter, RecordError, atomic_path, decode_json_line, iter_lines, read_records
from prefbuild.records import Trajectory

# ``tools`` reads every record of a chat log as a tool-calling log, ``slime`` as a slime tau2 pipeline
# trajectory (``auto`` and ``messages`` tell per record).
FORMATS = ("auto", "prefbuild", "agentbench", "messages", "tools", "slime", "tau2", "bfcl")


class LabelInputError(PrefbuildError, ValueError):
    """A record of an input file cannot be read; the message starts with ``file:line``."""


def detect_format(record: Any) -> str:
    """``prefbuild``, ``agentbench``, ``messages``, ``tau2`` or ``bfcl`` for one decoded JSON record."""
    if isinstance(record, dict) and "steps" in record and "outcome" in record:
        return "prefbuild"
    if is_agentbench_record(record):
        return "agentbench"
    if is_messages_record(record):
        return "messages"
    if is_tau2_results(record):
        return "tau2"
    if is_bfcl_result(record):
        return "bfcl"
    raise ValueError(
        "not a prefbuild trajectory ('steps', 'outcome'), an AgentBench runs.jsonl record ('output.history'), "
        "a chat log ('messages' or 'conversations'), a slime tau2 trajectory ('prompt' turns with [ACTION] or "
        "<tool_call> actions), a tau2-bench results file ('info', 'tasks', 'simulations') "
        "or a BFCL result entry ('id', 'result', 'inference_log')"
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
    if _is_json_document(path):
        yield from _document(path, chosen, model)
        return
    array = _is_json_array(path)
    if chosen is None:
        chosen = _detect(path, array)
    if chosen == "prefbuild" and not array:
        try:
            yield from (read_fast_records if fast else read_records)(path, Trajectory)
        except RecordError as error:
            raise LabelInputError(str(error)) from error
        return
    source = source_name(path)
    first = True
    for number, ordinal, record, locate in _decoded_records(path, array):
        where = f"{path}:{number}"
        if chosen == "prefbuild":
            yield _validated(record, where)
        elif chosen == "tau2":  # a results file written on one line: many trajectories
            # ids as the indented file gets them; a later results record of the file is told apart by its line
            named = source if first else f"{source}:{number}"
            yield from _tau2(record, path, lambda _, where=where: where, model, named)
        elif chosen == "bfcl":
            yield from _bfcl(record, path, locate, model)
        else:
            yield _external(record, chosen, locate, source, model, ordinal)
        first = False


def _is_json_document(path: Path) -> bool:
    """Does the file hold one indented JSON object (``tau2 run`` writes its results so): a first
    line of ``{`` alone, which no JSONL record is?"""
    with open(path, "rb") as handle:
        first = handle.readline(4096).lstrip(b"\xef\xbb\xbf").strip()
    return first == b"{"


def _document(path: Path, chosen: str | None, model: str) -> Iterator[Trajectory]:
    """The trajectories of a file holding one indented JSON document (read whole)."""
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise LabelInputError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    try:
        record = decode_json_line(text)
    except json.JSONDecodeError as error:
        raise LabelInputError(f"{path}:{error.lineno}: invalid JSON ({error.msg} at column {error.colno})") from None
    if chosen is None:
        try:
            chosen = detect_format(record)
        except ValueError as error:
            raise LabelInputError(f"{path}:1: {error}") from error
    if chosen == "bfcl":
        yield from _bfcl(record, path, lambda where: f"{path}:{line_of(text, where)}", model)
        return
    if chosen != "tau2":
        yield _validated(record, f"{path}:1") if chosen == "prefbuild" else _external(
            record, chosen, lambda where: f"{path}:{line_of(text, where)}", source_name(path), model, 0
        )
        return
    yield from _tau2(record, path, lambda where: f"{path}:{line_of(text, where)}", model)


def _tau2(
    record: Any, path: Path, locate: Callable[[JsonPath], str], model: str, source: str | None = None
) -> Iterator[Trajectory]:
    """The trajectories of one tau2 results file (``locate``: ``file:line`` of a JSON path; ``source``:
    the prefix of their ids, the file's own name by default)."""
    if not isinstance(record, dict):
        raise LabelInputError(f"{locate(())}: expected a tau2 results object, got {type(record).__name__}")
    try:
        yield from tau2_trajectories(record, source=source or source_name(path), model=model, locate=locate)
    except ExternalLogError as error:
        raise LabelInputError(str(error)) from error
    except ValidationError as error:
        field, message = describe_validation_error(error)
        raise LabelInputError(f"{locate(())}: cannot build a trajectory: {field}: {message}") from error


def _bfcl(record: Any, path: Path, locate: Locate, model: str) -> Iterator[Trajectory]:
    """The trajectory of one BFCL result entry (none for an entry whose inference failed); the model is
    the result folder's (``result/<model>/multi_turn/``) unless ``--model`` names one; ids are
    ``<model folder>/<file stem>#<entry id>`` (``<folder>/<file stem>#<entry id>`` elsewhere)."""
    source = source_name(path)
    if path.parent.name == "multi_turn" and path.parent.parent.name:
        source = f"{path.parent.parent.name}/{path.stem}"
        model = path.parent.parent.name if model == "unknown" else model
    try:
        yield from bfcl_trajectories(record, source=source, model=model, locate=locate)
    except ExternalLogError as error:
        raise LabelInputError(str(error)) from error
    except ValidationError as error:
        field, message = describe_validation_error(error)
        raise LabelInputError(f"{locate(())}: cannot build a trajectory: {field}: {message}") from error


def line_of(text: str, where: JsonPath) -> int:
    r"""The line of ``text`` (valid JSON) where the value at ``where`` starts; as deep as it exists
    (a missing key gives the line of the object that lacks it).

    Example:
        >>> line_of('{\n "a": [\n  1,\n  {"b": 2}\n ]\n}', ("a", 1, "b"))
        4
    """
    decoder = json.JSONDecoder()
    position = _BLANK.match(text, 0).end()
    for part in where:
        found = _member(text, position, part, decoder)
        if found is None:
            break
        position = found
    return text.count("\n", 0, position) + 1


def _member(text: str, position: int, part: str | int, decoder: json.JSONDecoder) -> int | None:
    """Where the member ``part`` (a key of the object, or an index of the array, at ``position``) starts."""
    opening = text[position : position + 1]
    if (opening, isinstance(part, int)) not in (("{", False), ("[", True)):
        return None
    position = _BLANK.match(text, position + 1).end()
    index = 0
    while position < len(text) and text[position] not in "}]":
        if opening == "{":
            key, position = json.decoder.scanstring(text, position + 1)
            position = _BLANK.match(text, _BLANK.match(text, position).end() + 1).end()
            if key == part:
                return position
        elif index == part:
            return position
        _, position = decoder.raw_decode(text, position)
        position = _BLANK.match(text, position).end()
        if text[position : position + 1] == ",":
            position = _BLANK.match(text, position + 1).end()
        index += 1
    return None


def _detect(path: Path, array: bool) -> str:
    for number, _, record, _ in _decoded_records(path, array):
        try:
            return detect_format(record)
        except ValueError as error:
            raise LabelInputError(f"{path}:{number}: {error}") from error
    return "prefbuild"  # an empty file holds no records of any kind


def _is_json_array(path: Path) -> bool:
    """Does the file hold one JSON array (a dataset dump) rather than one record per line?"""
    with open(path, "rb") as handle:
        head = handle.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith(b"[")


def _decoded_records(path: Path, array: bool) -> Iterator[tuple[int, int, Any, Locate]]:
    """``(line, ordinal, decoded JSON value, locate)`` of every record: per line of a JSONL file (the
    ordinal is the line number), or per element of an array (its index); ``locate`` gives the
    ``file:line`` of a JSON path within the record (the record's own line in a JSONL file)."""
    if array:
        yield from _array_elements(path)
        return
    try:
        for number, line, _ in iter_lines(path):
            try:
                yield number, number, decode_json_line(line), lambda _, where=f"{path}:{number}": where
            except json.JSONDecodeError as error:
                raise LabelInputError(f"{path}:{number}: invalid JSON ({error.msg} at column {error.colno})") from error
    except RecordError as error:
        raise LabelInputError(str(error)) from error


_BLANK = re.compile(r"[ \t\n\r]*")


def _array_elements(path: Path) -> Iterator[tuple[int, int, Any, Locate]]:
    """The elements of a file holding one JSON array, each with the line it starts on, its index and
    the ``file:line`` of a JSON path within it (read whole)."""
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise LabelInputError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    decoder = json.JSONDecoder()
    position = _BLANK.match(text, text.index("[") + 1).end()
    line, counted, index = 1, 0, 0
    after_comma = False  # a value must follow: a trailing comma is not JSON
    while position < len(text) and (after_comma or text[position] != "]"):
        try:
            value, end = decoder.raw_decode(text, position)
        except json.JSONDecodeError as error:
            where = f"{path}:{error.lineno}"
            raise LabelInputError(f"{where}: invalid JSON ({error.msg} at column {error.colno})") from None
        except (RecursionError, ValueError):  # too deep, or an integer past Python's digit limit
            raise _element_error(path, text, position) from None
        line += text.count("\n", counted, position)
        counted = position
        yield line, index, value, _element_locate(path, text[position:end], line)
        index += 1
        position = _BLANK.match(text, end).end()
        if position >= len(text):
            break  # reported below: the array is not closed
        after_comma = text[position] == ","
        if after_comma:
            position = _BLANK.match(text, position + 1).end()
        elif text[position] != "]":
            number = text.count("\n", 0, position) + 1
            raise LabelInputError(f"{path}:{number}: invalid JSON (expected ',' or ']' after an array element)")
    if position >= len(text):
        raise LabelInputError(f"{path}:{text.count(chr(10)) + 1}: invalid JSON (the array is not closed with ']')")
    if _BLANK.match(text, position + 1).end() != len(text):
        number = text.count("\n", 0, position) + 1
        raise LabelInputError(f"{path}:{number}: invalid JSON (text after the array's closing ']')")
    if index == 0:  # as an empty JSONL file: nothing to label is a mistake worth a line, not an empty output
        raise LabelInputError(f"{path}: empty array: no records")


def _element_locate(path: Path, element: str, line: int) -> Locate:
    """``file:line`` of a JSON path within an array element (its text) that starts on ``line``."""
    return lambda where: f"{path}:{line - 1 + line_of(element, where)}"


def _element_error(path: Path, text: str, position: int) -> LabelInputError:
    """The located error of the array element at ``position`` that ``json`` cannot read (nested too
    deep, an integer too long): ``decode_json_line`` says what and where within the element."""
    try:
        decode_json_line(text[position:])
    except json.JSONDecodeError as error:
        line = text.count("\n", 0, position) + error.lineno
        column = error.colno + (position - text.rfind("\n", 0, position) - 1 if error.lineno == 1 else 0)
        return LabelInputError(f"{path}:{line}: invalid JSON ({error.msg} at column {column})")
    return LabelInputError(f"{path}:{text.count(chr(10), 0, position) + 1}: invalid JSON")


def _validated(record: Any, where: str) -> Trajectory:
    """A prefbuild trajectory given as a decoded JSON value (an element of a JSON array file)."""
    try:
        return Trajectory.model_validate(record)
    except ValidationError as error:
        field, message = describe_validation_error(error)
        raise LabelInputError(f"{where} {field}: {message}") from error


def _external(record: Any, fmt: str, locate: Locate, source: str, model: str, ordinal: int) -> Trajectory:
    where = locate(())
    if not isinstance(record, dict):
        raise LabelInputError(f"{where}: expected a JSON object, got {type(record).__name__}")
    try:
        if fmt == "agentbench":
            return agentbench_trajectory(record, source=source, model=model, where=where)
        if fmt == "slime" or (fmt == "tools" and is_slime_record(record)):
            return slime_trajectory(record, default_id=f"{source}#{ordinal}", model=model, locate=locate)
        if fmt == "tools":
            return tool_chat_trajectory(record, default_id=f"{source}#{ordinal}", model=model, locate=locate)
        return messages_trajectory(record, default_id=f"{source}#{ordinal}", model=model, where=where, locate=locate)
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
