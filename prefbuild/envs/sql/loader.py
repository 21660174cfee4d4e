"""Read the benchmark's own JSONL (``dev.jsonl``, ``standard.jsonl``) into ``SqlItem``s.

A user who has the released DBBench files runs prefbuild on them with
``SqlEnv(data_file=PATH)``. Messages name the file, the line and the field
(``standard.jsonl:17: table.table_info.rows.3: expected 4 values, got 3``), never a traceback.

The released files hold a few items the real server cannot build as written (duplicate
column names, a row with the wrong number of values, an empty column name). What happens to
them is ``on_invalid_item``:

* ``skip`` (default): leave the item out, with one ``file:line: reason`` warning each;
* ``error``: stop with that message (``SqlDataError``);
* ``as_benchmark``: keep the item as the benchmark runs it: the table is built the way MySQL
  builds it (``CREATE TABLE`` fails on a bad column list, so there is no table; a multi-row
  ``INSERT`` with a short row fails whole, so the table is empty), and the item is scored on
  its label as usual.

Structural problems (not JSON, a missing field, an unknown type) are never kept: ``skip`` and
``as_benchmark`` skip them with a warning, ``error`` stops.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from prefbuild.envs.sql.items import QUERY_TYPES, TASK_TYPES, SqlItem, is_mutation

logger = logging.getLogger(__name__)

ON_INVALID_ITEM: tuple[str, ...] = ("skip", "error", "as_benchmark")


class SqlDataError(ValueError):
    """A DBBench data file has a line prefbuild cannot use; the message names file:line and field."""


class _TableError(SqlDataError):
    """The item is well-formed JSON of the right shape, but MySQL could not build its table as written."""


@dataclass(frozen=True)
class InvalidItem:
    """One item the loader did not take as written: ``source`` is ``file:line``."""

    source: str
    reason: str
    kept: bool  # kept as the benchmark runs it (``as_benchmark``)

    def __str__(self) -> str:
        return f"{self.source}: {self.reason}"


def check_on_invalid_item(value: str) -> str:
    """``value`` if it is a known ``on_invalid_item`` policy; raises ``ValueError`` naming the option."""
    if value not in ON_INVALID_ITEM:
        raise ValueError(f"sql env: on_invalid_item must be one of {', '.join(ON_INVALID_ITEM)}, got {value!r}")
    return value


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)


class _Column(_Model):
    name: str
    type: str = "TEXT"


class _TableInfo(_Model):
    columns: list[_Column] = Field(min_length=1)
    rows: list[list[str | int | float | None]]


def table_problem(columns: list[str], rows: list[list[Any]]) -> tuple[str, str] | None:
    """``(field, reason)`` for a table MySQL cannot build as written, else None.

    Example:
        >>> table_problem(["a", "A"], [])
        ('table.table_info.columns', "duplicate column name 'A' (column names ignore case)")
    """
    seen: set[str] = set()
    for index, name in enumerate(columns):
        if not name.strip():
            return f"table.table_info.columns.{index}.name", "empty column name"
        if name.casefold() in seen:
            return "table.table_info.columns", f"duplicate column name {name!r} (column names ignore case)"
        seen.add(name.casefold())
    for index, row in enumerate(rows):
        if len(row) != len(columns):
            return f"table.table_info.rows.{index}", f"expected {len(columns)} values, got {len(row)}"
    return None


class _Table(_Model):
    table_name: str = Field(min_length=1)
    table_info: _TableInfo


class _Sql(_Model):
    query: str | None = None


class _Item(_Model):
    description: str = Field(min_length=1)
    add_description: str | None = None
    table: _Table
    type: list[str] | str
    label: list[str | int | float | None] | str | None = None
    answer_md5: str | None = None
    sql: _Sql | None = None


def _location(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc) or "(line)"


_PLAIN = {
    "missing": "missing",
    "string_type": "expected text",
    "list_type": "expected a list",
    "dict_type": "expected an object",
    "model_type": "expected an object",
    "int_type": "expected a number",
    "float_type": "expected a number",
    "too_short": "must not be empty",
    "string_too_short": "must not be empty",
}


def _plain_message(error: dict[str, Any]) -> str:
    """A short message for one pydantic error, without pydantic's wording."""
    kind = str(error.get("type", ""))
    if kind in _PLAIN:
        return _PLAIN[kind]
    if kind.endswith("_type") or kind == "union_tag_invalid":
        return f"unexpected value {error.get('input')!r}"
    return str(error.get("msg", "invalid value")).split(",")[0].lower()


def parse_item(data: Any, *, source: str = "<item>", as_benchmark: bool = False) -> SqlItem:
    """One benchmark JSON object as an ``SqlItem``; raises ``SqlDataError`` naming ``source`` and the field.

    Args:
        data: the decoded JSON object of one line.
        source: ``file:line`` for messages.
        as_benchmark: keep a table MySQL cannot build as written (the sandbox then builds what
            the server builds); otherwise such an item raises.

    Returns:
        The item.

    Example:
        >>> parse_item({"description": "q", "table": {"table_name": "t", "table_info": {
        ...     "columns": [{"name": "a"}], "rows": [["1"]]}}, "type": ["other"], "label": ["1"]}).columns
        ('a',)
    """
    try:
        raw = _Item.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        loc = tuple(part for part in first["loc"] if not (isinstance(part, str) and "[" in part))
        return _fail(source, _location(loc), _plain_message(dict(first)))
    columns_list = [column.name for column in raw.table.table_info.columns]
    problem = table_problem(columns_list, [list(row) for row in raw.table.table_info.rows])
    if problem is not None and not as_benchmark:
        raise _TableError(f"{source}: {problem[0]}: {problem[1]}")
    task_type = raw.type if isinstance(raw.type, str) else (raw.type[0] if raw.type else "")
    if task_type not in TASK_TYPES:
        return _fail(source, "type", f"unknown type {task_type!r}; known: {', '.join(TASK_TYPES)}")
    columns = tuple(column.name for column in raw.table.table_info.columns)
    rows = tuple(tuple(row) for row in raw.table.table_info.rows)
    common: dict[str, Any] = {
        "description": raw.description,
        "table_name": raw.table.table_name,
        "columns": columns,
        "rows": rows,
        "type": task_type,
        "add_description": raw.add_description,
        "column_types": tuple(column.type for column in raw.table.table_info.columns),
    }
    if is_mutation(task_type):
        statement = raw.label if isinstance(raw.label, str) else (raw.label[0] if raw.label else None)
        if raw.answer_md5 is None and not isinstance(statement, str):
            return _fail(source, "answer_md5", f"a {task_type} item needs answer_md5 or a reference statement in label")
        return SqlItem(
            **common,
            reference_sql=statement if isinstance(statement, str) else None,
            answer_md5=raw.answer_md5,
        )
    if not isinstance(raw.label, list):
        return _fail(source, "label", f"a query item ({', '.join(QUERY_TYPES)}) needs label as a list of answers")
    return SqlItem(**common, label=tuple(raw.label), reference_sql=raw.sql.query if raw.sql else None)


def _fail(source: str, field: str, message: str) -> NoReturn:
    raise SqlDataError(f"{source}: {field}: {message}")


def load_items(
    path: str | Path, *, on_invalid_item: str = "error", invalid: list[InvalidItem] | None = None
) -> Iterator[tuple[int, SqlItem]]:
    """Every item of a DBBench JSONL file with its 1-based line number (blank lines skipped).

    Args:
        path: the JSONL file.
        on_invalid_item: ``skip``, ``error`` or ``as_benchmark`` (see the module docstring).
        invalid: when given, every item not taken as written is appended here (for the manifest).

    Returns:
        An iterator of ``(line, item)``.

    Example:
        >>> skipped: list[InvalidItem] = []
        >>> items = list(load_items("standard.jsonl", on_invalid_item="skip", invalid=skipped))  # doctest: +SKIP
    """
    check_on_invalid_item(on_invalid_item)
    for number, source, data in _lines(Path(path)):
        try:
            if isinstance(data, SqlDataError):
                raise data
            item = parse_item(data, source=source, as_benchmark=on_invalid_item == "as_benchmark")
        except SqlDataError as error:
            if on_invalid_item == "error":
                raise
            reason = str(error)[len(source) + 2 :] if str(error).startswith(source) else str(error)
            _record(invalid, InvalidItem(source, reason, kept=False))
            continue
        if on_invalid_item == "as_benchmark" and (problem := _table_problem_of(data)) is not None:
            _record(invalid, InvalidItem(source, problem, kept=True))
        yield number, item


def _table_problem_of(data: dict[str, Any]) -> str | None:
    info = data["table"]["table_info"]
    problem = table_problem([column["name"] for column in info["columns"]], info["rows"])
    return None if problem is None else f"{problem[0]}: {problem[1]} (kept as the benchmark builds it)"


def _record(invalid: list[InvalidItem] | None, entry: InvalidItem) -> None:
    logger.warning("%s", entry)
    if invalid is not None:
        invalid.append(entry)


def _lines(file_path: Path) -> Iterator[tuple[int, str, Any]]:
    """``(line number, file:line, decoded object or the SqlDataError it raised)`` for each non-blank line."""
    try:
        handle = file_path.open("rb")  # decoded line by line, so a byte that is not UTF-8 is reported at its line
    except OSError as error:
        raise SqlDataError(f"{file_path}: cannot read DBBench data: {error.strerror or error}") from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            source = f"{file_path}:{number}"
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                problem = f"not UTF-8 text ({error.reason} at column {error.start + 1})"
                yield number, source, SqlDataError(f"{source}: {problem}")
                continue
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as error:
                yield number, source, SqlDataError(f"{source}: not valid JSON: {error.msg} at column {error.colno}")
                continue
            if not isinstance(data, dict):
                yield number, source, SqlDataError(f"{source}: expected a JSON object, got {type(data).__name__}")
                continue
            yield number, source, data
