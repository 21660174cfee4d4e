"""Reading fields of an external log with errors that name where they are: ``file:line field``.

The importers of JSON logs (tau2-bench results files, tool-calling chat logs) check each field
they read and refuse a wrong one with one line, e.g. ``results.json:40 simulations[2].messages[5].role:
unknown role 'robot'``. A ``Locate`` turns the JSON path of a field into its ``file:line``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from prefbuild.io.importers.convert import ExternalLogError

# A JSON path in a log record, e.g. ("simulations", 2, "messages", 5, "role").
JsonPath = tuple[str | int, ...]
Locate = Callable[[JsonPath], str]


def field_name(path: JsonPath) -> str:
    """``simulations[2].messages[5].role`` for a JSON path.

    Example:
        >>> field_name(("simulations", 2, "messages", 5, "role"))
        'simulations[2].messages[5].role'
    """
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def fail(locate: Locate, path: JsonPath, message: str) -> ExternalLogError:
    """The error for the field at ``path``: ``file:line field: message``.

    Example:
        >>> str(fail(lambda path: "log.jsonl:3", ("messages", 1, "role"), "unknown role 'robot'"))
        "log.jsonl:3 messages[1].role: unknown role 'robot'"
    """
    where = locate(path)
    return ExternalLogError(f"{where} {field_name(path)}: {message}" if path else f"{where}: {message}")


def get_field(value: dict[str, Any], key: str, kind: type | tuple[type, ...], locate: Locate, path: JsonPath,
              *, required: bool = True) -> Any:
    """``value[key]`` checked to be of ``kind`` (None when optional and absent or null).

    Args:
        value: the object holding the field.
        key: the field's name.
        kind: the accepted type(s); a bool is never taken for a number.
        locate: ``file:line`` of a JSON path.
        path: the path of ``value`` itself.
        required: refuse a missing or null field.

    Returns:
        The field's value, or None.

    Raises:
        ExternalLogError: the field is missing (and required) or of another type.

    Example:
        >>> get_field({"n": 3}, "n", int, lambda path: "f:1", ())
        3
    """
    item = value.get(key)
    if item is None:
        if required:
            raise fail(locate, (*path, key), "missing")
        return None
    if not isinstance(item, kind) or (isinstance(item, bool) and kind in (int, float, (int, float))):
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise fail(locate, (*path, key), f"expected {type_words(names)}, got {type(item).__name__}")
    return item


def type_words(names: str) -> str:
    """Python type names as an error message says them.

    Example:
        >>> type_words("dict")
        'an object'
    """
    return {"dict": "an object", "list": "a list", "str": "a string", "int": "an integer",
            "float": "a number", "int or float": "a number", "bool": "true or false"}.get(names, names)
