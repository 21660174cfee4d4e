"""YAML fixture sources read strictly: every mapping and list remembers its line, errors name ``file:line``.

PyYAML silently turns an unquoted comma inside a ``{...}`` flow mapping into a new key
(``{t: Next, I take it., a: ...}`` becomes ``t: Next`` plus a key ``I take it.``), so
fixture sources are validated with pydantic models that forbid unknown keys, and every
error is reported at the line of the offending entry.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

Model = TypeVar("Model", bound=BaseModel)


class StrictModel(BaseModel):
    """A fixture entry: unknown keys and type coercions are errors."""

    model_config = ConfigDict(extra="forbid", strict=True)


class FixtureError(ValueError):
    """A fixture source is malformed; the message is ``file:line field: message``."""


class LineDict(dict):
    """A YAML mapping that knows the line it starts on (1-based)."""

    line = 0


class LineList(list):
    """A YAML sequence that knows the line it starts on (1-based)."""

    line = 0


class _LineLoader(yaml.SafeLoader):
    pass


def _mapping(loader: _LineLoader, node: yaml.MappingNode) -> LineDict:
    found = LineDict(loader.construct_mapping(node, deep=True))
    found.line = node.start_mark.line + 1
    return found


def _sequence(loader: _LineLoader, node: yaml.SequenceNode) -> LineList:
    found = LineList(loader.construct_sequence(node, deep=True))
    found.line = node.start_mark.line + 1
    return found


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)
_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _sequence)


def load_yaml(path: Path) -> Any:
    """The YAML document at ``path`` with line-aware mappings and lists.

    Args:
        path: a YAML file.

    Returns:
        The document; mappings are ``LineDict`` and lists ``LineList``, each with ``.line``.

    Example:
        >>> load_yaml(Path("tests/labelers/fixtures/episodes.yaml"))["episodes"][0].line
        28
    """
    try:
        return yaml.load(path.read_text(encoding="utf-8"), Loader=_LineLoader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 0
        raise FixtureError(f"{path}:{line} yaml: {getattr(error, 'problem', error)}") from error


def line_of(data: Any, loc: tuple[Any, ...]) -> int:
    """The line of the deepest mapping or list on the path ``loc`` into ``data`` (0 if unknown)."""
    line = getattr(data, "line", 0)
    node = data
    for part in loc:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            break
        line = getattr(node, "line", 0) or line
    return line


def validate(model: type[Model], data: Any, path: Path, prefix: tuple[Any, ...] = ()) -> Model:
    """``model`` validated from ``data`` (a part of ``path`` found at ``prefix``); ``FixtureError`` names file:line.

    Args:
        model: a pydantic model (``extra='forbid'`` to reject unknown keys).
        data: the loaded YAML part.
        path: the source file, for the message.
        prefix: where ``data`` sits in the document, for the field name.

    Returns:
        The validated model.

    Example:
        >>> validate(Episode, document["episodes"][0], path, ("episodes", 0))
    """
    try:
        return model.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        loc = tuple(first.get("loc", ()))
        field = ".".join(str(part) for part in prefix + loc) or "document"
        message = first.get("msg", "invalid")
        if first.get("type") == "extra_forbidden":
            message = f"unknown key {loc[-1]!r} (an unquoted comma in a flow mapping?)"
        raise FixtureError(f"{path}:{line_of(data, loc)} {field}: {message}") from error
