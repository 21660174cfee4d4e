"""JSONL storage for records: append-and-flush writers, validating readers, atomic artefacts.

Why this shape: a run can be killed at any moment (SIGKILL, OOM, Ctrl+C). Appending one
record per line and flushing before the next one is counted means every finished episode
is on disk; a reader that names ``file:line`` and the field path of the first bad record
lets a user fix their data instead of guessing; a truncated last line (the one being
written when the process died) is reported and skipped, the lines before it are kept.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import sys
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Literal, TypeVar

import msgspec
from pydantic import BaseModel, ValidationError

from prefbuild.errors import LocatedError, describe_validation_error
from prefbuild.io.overwrite import check_replaceable_file
from prefbuild.records import Pair, Trajectory

RecordT = TypeVar("RecordT", bound=BaseModel)
RecordKind = Literal["trajectory", "pair"]


_STRUCT_ENCODER = msgspec.json.Encoder()
# Records are kilobytes long: a 1 MiB buffer splits lines about 3x cheaper than the default 8 KiB.
_READ_BUFFER = 1 << 20


class RecordError(LocatedError):
    """A bad record: where it is (file, line, field path) and what is wrong with it."""


class TruncatedLineWarning(UserWarning):
    """The last line of a JSONL file is incomplete (the writer was killed mid-line); it was skipped."""


def validation_error(path: str | os.PathLike[str], line: int, error: ValidationError) -> RecordError:
    """The first problem of a pydantic error, located at ``path:line``."""
    field, message = describe_validation_error(error)
    return RecordError(path, line, field, message)


def _decoded(path: str | os.PathLike[str], number: int, raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise RecordError(path, number, "", f"not UTF-8 text ({error.reason} at column {error.start + 1})") from None


# A JSON string (skipped whole, escapes included) or a token the limits below look for.
_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_BRACKETS = re.compile(_STRING + r"|[\[\]{}]")


def decode_json_line(text: str | bytes) -> Any:
    """The JSON value of one line, as ``json.loads`` reads it, its limits reported as decode errors.

    ``json.loads`` raises ``RecursionError`` on arrays and objects nested about a thousand
    deep, and a bare ``ValueError`` on an integer longer than ``sys.get_int_max_str_digits()``
    digits (4300); both become a ``json.JSONDecodeError`` at the column of the value at fault,
    so every reader reports them as it reports a malformed line (``file:line: not valid JSON
    (...)``). ``NaN`` and ``Infinity`` are read as ``json.loads`` reads them: the record models
    refuse them in their float fields, naming the field.

    Args:
        text: the line (trailing newline allowed).

    Returns:
        The decoded value.

    Raises:
        json.JSONDecodeError: the line is not JSON, or is nested too deep or holds too long an integer.

    Example:
        >>> decode_json_line('{"a": [1, 2]}')
        {'a': [1, 2]}
        >>> decode_json_line('{"a": ' + "[" * 5000 + "]" * 5000 + "}")
        Traceback (most recent call last):
        ...
        json.decoder.JSONDecodeError: exceeded maximum nesting depth: line 1 column 5006 (char 5005)
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        document = _as_text(text)
        raise json.JSONDecodeError("exceeded maximum nesting depth", document, _deepest(document)) from None
    except ValueError as error:  # int(): more digits than sys.get_int_max_str_digits() (json's other errors are above)
        document = _as_text(text)
        position = _long_integer(document)
        if position is None:
            raise json.JSONDecodeError(str(error), document, 0) from None
        limit = sys.get_int_max_str_digits()
        raise json.JSONDecodeError(f"an integer of more than {limit} digits", document, position) from None


def _as_text(text: str | bytes) -> str:
    return text.decode("utf-8", errors="replace") if isinstance(text, bytes) else text


def _deepest(document: str) -> int:
    """Where ``document`` first reaches its deepest nesting: its innermost opening bracket (0 if none)."""
    depth = deepest = position = 0
    for match in _BRACKETS.finditer(document):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > deepest:
                deepest, position = depth, match.start()
        elif token in "]}":
            depth -= 1
    return position


def _long_integer(document: str) -> int | None:
    """Where the first number of more than ``sys.get_int_max_str_digits()`` digits starts, outside strings."""
    limit = sys.get_int_max_str_digits()
    for match in re.finditer(_STRING + rf"|-?\d{{{limit + 1},}}", document):
        if not match.group().startswith('"'):
            return match.start()
    return None


def iter_raw_lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, bytes, bool]]:
    """``(line number, bytes, is_last_and_unterminated)`` for every non-blank line, streaming, undecoded.

    Readers hand the bytes straight to a JSON decoder (no ``str`` copy of each line) and
    decode them only to report a bad line.

    Example:
        >>> # [number for number, _, _ in iter_raw_lines("pairs.jsonl")] == [1, 2, 3]
    """
    with open(path, "rb", buffering=_READ_BUFFER) as handle:
        previous: tuple[int, bytes] | None = None
        for number, raw in enumerate(handle, start=1):
            if previous is not None and previous[1].strip():
                yield previous[0], previous[1], False
            previous = (number, raw)
        if previous is not None and previous[1].strip():
            yield previous[0], previous[1], not previous[1].endswith(b"\n")


def _line_text(path: str | os.PathLike[str], number: int, raw: bytes, unterminated: bool) -> str:
    if unterminated:  # possibly cut inside a character by a kill: readers skip or report it as cut off
        return raw.decode("utf-8", errors="replace")
    return _decoded(path, number, raw)


def iter_lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, str, bool]]:
    """``(line number, text, is_last_and_unterminated)`` for every non-blank line, streaming.

    Raises:
        RecordError: a line that is not UTF-8 text, at its ``file:line``.
    """
    for number, raw, unterminated in iter_raw_lines(path):
        yield number, _line_text(path, number, raw, unterminated), unterminated


def read_records(
    path: str | os.PathLike[str], model: type[RecordT], *, tolerate_truncated_tail: bool = True
) -> Iterator[RecordT]:
    """Yield validated records from a JSONL file, raising ``RecordError`` at the first bad line.

    An unterminated last line that is not valid JSON is what a killed writer leaves behind:
    it is skipped with a ``TruncatedLineWarning`` instead of failing the whole file.
    """
    if not Path(path).is_file():
        raise RecordError(path, 0, "", "no such file")
    validate_json = model.__pydantic_validator__.validate_json
    for number, raw, unterminated in iter_raw_lines(path):
        try:  # the fast path: pydantic parses the UTF-8 bytes and validates them in one pass
            yield validate_json(raw)
            continue
        except ValidationError:  # handled: located below, with the encoding, JSON and record errors told apart
            pass
        record = record_of_line(path, number, raw, unterminated, model, tolerate_truncated_tail=tolerate_truncated_tail)
        if record is None:
            return
        yield record


def record_of_line(
    path: str | os.PathLike[str],
    number: int,
    raw: bytes,
    unterminated: bool,
    model: type[RecordT],
    *,
    tolerate_truncated_tail: bool = True,
) -> RecordT | None:
    """The record of one JSONL line, validated by ``model`` (None: a cut-off last line, skipped).

    Args:
        path: the file (named in errors).
        number: the line number (1-based).
        raw: the line's bytes.
        unterminated: the line is the file's last and has no newline.
        model: the record model.
        tolerate_truncated_tail: skip (with a ``TruncatedLineWarning``) a cut-off last line.

    Returns:
        The record, or None for a skipped cut-off last line.

    Raises:
        RecordError: the line is not UTF-8, not JSON, not an object or not a valid record,
            located at ``path:number`` and the field at fault.

    Example:
        >>> # record_of_line("t.jsonl", 3, b'{"id": ...}', False, Trajectory).id
    """
    text = _line_text(path, number, raw, unterminated)
    try:
        payload = decode_json_line(text)
    except json.JSONDecodeError as error:
        if unterminated and tolerate_truncated_tail:
            warnings.warn(
                f"{path}:{number}: incomplete last line (interrupted write) skipped",
                TruncatedLineWarning,
                stacklevel=3,
            )
            return None
        raise RecordError(path, number, "", f"not valid JSON ({error.msg} at column {error.colno})") from None
    if not isinstance(payload, dict):
        raise RecordError(path, number, "", f"expected a JSON object, got {type(payload).__name__}")
    try:
        return model.model_validate(payload)
    except ValidationError as error:
        raise validation_error(path, number, error) from None


def detect_kind(path: str | os.PathLike[str]) -> RecordKind:
    """Whether a JSONL file holds trajectories or pairs, from the keys of its first record."""
    for number, text, _ in iter_lines(path):
        try:
            payload = decode_json_line(text)
        except json.JSONDecodeError as error:
            raise RecordError(path, number, "", f"not valid JSON ({error.msg})") from None
        if isinstance(payload, dict) and "steps" in payload:
            return "trajectory"
        if isinstance(payload, dict) and "chosen" in payload:
            return "pair"
        raise RecordError(path, number, "", "neither a trajectory (no 'steps') nor a pair (no 'chosen')")
    raise RecordError(path, 0, "", "empty file: no records")


MODELS_BY_KIND: dict[RecordKind, type[BaseModel]] = {"trajectory": Trajectory, "pair": Pair}


def repair_tail(path: Path) -> int:
    """Make an interrupted file end on a clean line so appends stay valid JSONL.

    A killed writer leaves either a partial line (cut off; returns the bytes removed) or a
    complete record whose newline was not written yet (the newline is added; it is kept,
    because readers already count it as finished).

    Args:
        path: a JSONL file (a missing or empty one is left alone).

    Returns:
        How many bytes of a cut-off last line were removed (0 when none).
    """
    if not path.exists() or path.stat().st_size == 0:
        return 0
    with open(path, "rb+") as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return 0
        # Walk back to the last newline in chunks.
        position = size
        keep = 0
        while position > 0:
            step = min(65536, position)
            position -= step
            handle.seek(position)
            chunk = handle.read(step)
            cut = chunk.rfind(b"\n")
            if cut != -1:
                keep = position + cut + 1
                break
        handle.seek(keep)
        tail = handle.read()
        try:
            decode_json_line(tail)
        except ValueError:  # handled: the last line is cut off: it is removed and its size returned
            handle.truncate(keep)
            return size - keep
        handle.seek(size)
        handle.write(b"\n")
        return 0


class JsonlWriter:
    """Append records to a JSONL file, one per line, flushed (and optionally fsynced) per record.

    Opening repairs a truncated last line left by a crash, so the file stays valid JSONL.
    ``flush=False`` suits files renamed into place only when complete (``atomic_path``): a
    killed writer leaves nothing there to resume, so per-record flushes would buy nothing.
    """

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = False, flush: bool = True) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.repaired_bytes = repair_tail(self.path)
        self._fsync = fsync
        self._flush = flush
        # Without per-record flushes, a large buffer turns many small writes into few system calls.
        buffering = -1 if flush or fsync else _READ_BUFFER
        self._handle: IO[bytes] = open(self.path, "ab", buffering=buffering)  # noqa: SIM115 - closed in close()

    @staticmethod
    def encode(record: BaseModel | msgspec.Struct | dict[str, object]) -> bytes:
        """One record as compact UTF-8 JSON without the newline (``model_dump_json``, as bytes).

        Example:
            >>> JsonlWriter.encode({"a": 1})
            b'{"a":1}'
        """
        if isinstance(record, BaseModel):
            return record.__pydantic_serializer__.to_json(record)
        if isinstance(record, msgspec.Struct):  # a record read by the fast layer: the same bytes
            return _STRUCT_ENCODER.encode(record)
        return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    def write(self, record: BaseModel | msgspec.Struct | dict[str, object]) -> None:
        try:
            self._handle.write(self.encode(record) + b"\n")  # one write per record, newline included
            if self._flush:
                self._handle.flush()
            if self._fsync:
                os.fsync(self._handle.fileno())
        except OSError as error:
            raise with_path(error, self.path) from error

    def close(self) -> None:
        if not self._handle.closed:
            try:
                self._handle.close()
            except OSError as error:
                raise with_path(error, self.path) from error

    def __enter__(self) -> JsonlWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# Errors of writing to a file, which the OS reports without the file's name.
_WRITE_ERRNOS = frozenset({errno.EFBIG, errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS})


def with_path(error: OSError, path: str | os.PathLike[str]) -> OSError:
    """``error`` naming ``path`` where it is a write error that names no file (a full disk, a file
    too large), so the one error line says where; other errors unchanged.

    Example:
        >>> with_path(OSError(errno.ENOSPC, "No space left on device"), "pairs.jsonl").filename
        'pairs.jsonl'
    """
    if error.filename is None and error.errno in _WRITE_ERRNOS:
        return OSError(error.errno, error.strerror, str(path))
    return error


def temporary_refused(error: OSError, target: str | os.PathLike[str]) -> OSError:
    """``error`` of creating the hidden temporary next to ``target``, naming ``target`` instead (the
    user never named the temporary: ``pairs.jsonl: read-only file system``).

    Example:
        >>> temporary_refused(OSError(errno.EROFS, "Read-only file system", ".p.jsonl.x1.tmp"), "p.jsonl").filename
        'p.jsonl'
    """
    return OSError(error.errno, error.strerror, str(target))


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; rename it over ``path`` only if the block succeeds.

    A crash or an error inside the block leaves ``path`` exactly as it was. A ``path`` that holds a
    directory or a device is refused (``OutputError``) before anything is written.
    """
    target = Path(path)
    check_replaceable_file(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as error:  # a read-only or unwritable folder: the output, not the hidden temporary, is named
        raise temporary_refused(error, target) from None
    os.close(handle)
    temporary_path = Path(temporary)
    try:
        yield temporary_path
        os.replace(temporary_path, target)
    except OSError as error:
        # A write into the temporary file names the temporary file or nothing: say which output it was.
        if error.errno in _WRITE_ERRNOS and error.filename in (None, str(temporary_path)):
            raise OSError(error.errno, error.strerror, str(target)) from error
        raise
    finally:
        temporary_path.unlink(missing_ok=True)


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write a whole text file atomically (temp file + rename)."""
    with atomic_path(path) as temporary:
        temporary.write_text(text, encoding="utf-8")


def write_records(path: str | os.PathLike[str], records: Iterator[BaseModel] | list[BaseModel]) -> int:
    """Write a final artefact of records atomically; returns how many were written."""
    count = 0
    with atomic_path(path) as temporary, JsonlWriter(temporary) as writer:
        for record in records:
            writer.write(record)
            count += 1
    return count
