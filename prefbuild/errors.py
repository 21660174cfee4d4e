"""The errors a user can act on, and the one way their messages are written.

Library code raises ``PrefbuildError`` (or its located form ``LocatedError``: file, line,
field, message) for anything a user can fix; the command line prints ``error: <message>``
and exits non-zero, never with a traceback. ``describe_validation_error`` is the one
translation of a pydantic error into a field path and a plain message.
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import ValidationError


class PrefbuildError(RuntimeError):
    """A failure the user can act on; the message says what and where."""

    exit_code: int = 1


class LocatedError(PrefbuildError, ValueError):
    """A bad input at a known place: ``file:line field: message`` (line and field optional).

    Example:
        >>> str(LocatedError("pairs.jsonl", 7, "chosen", "must not be empty"))
        'pairs.jsonl:7 chosen: must not be empty'
    """

    def __init__(self, source: str | os.PathLike[str], line: int | None, field: str, message: str) -> None:
        self.source = str(source)
        self.line = line
        self.field = field
        self.message = message
        super().__init__(str(self))

    @property
    def path(self) -> str:
        return self.source

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}" if self.line else self.source
        return f"{where} {self.field}: {self.message}" if self.field else f"{where}: {self.message}"


def field_path(location: tuple[int | str, ...] | list[int | str]) -> str:
    """Pydantic's error location as a dotted path: ``steps.3.labels.0.step``."""
    return ".".join(str(part) for part in location) or "<record>"


def plain_message(error: dict[str, Any]) -> str:
    """Pydantic's message for one error, in the words prefbuild uses."""
    if error.get("type") == "extra_forbidden":
        return "unknown field"
    if error.get("type") == "missing":
        return "required field is missing"
    return str(error.get("msg", "invalid")).removeprefix("Value error, ")


def describe_validation_error(error: ValidationError, *, count_more: bool = True) -> tuple[str, str]:
    """(field path, message) of the first problem of a pydantic error; more problems are counted.

    Example:
        >>> from pydantic import BaseModel
        >>> class M(BaseModel):
        ...     n: int
        >>> try:
        ...     M(n="x")
        ... except ValidationError as e:
        ...     describe_validation_error(e)
        ('n', 'Input should be a valid integer, unable to parse string as an integer')
    """
    problems = error.errors()
    first = problems[0]
    message = plain_message(first)
    if count_more and len(problems) > 1:
        message += f" (and {len(problems) - 1} more)"
    return field_path(tuple(first.get("loc", ()))), message
