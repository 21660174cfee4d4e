"""Read the benchmark's own JSONL (``dev.jsonl``, ``standard.jsonl``) into ``SqlItem``s.

A user who has the released DBBench files runs prefbuild on them with
``SqlEnv(data_file=PATH)``. A bad line stops the run with one message naming the file,
the line and the field (``standard.jsonl:17: table.table_info.rows.3: expected 4 values,
got 3``), never a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from prefbuild.envs.sql.items import QUERY_TYPES, TASK_TYPES, SqlItem, is_mutation


class SqlDataError(ValueError):
    """A DBBench data file has a line prefbuild cannot use; the message names file:line and field."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)


class _Column(_Model):
    name: str = Field(min_length=1)
    type: str = "TEXT"


class _TableInfo(_Model):
    columns: list[_Column] = Field(min_length=1)
    rows: list[list[str | int | float | None]]

    @model_validator(mode="after")
    def _rows_fit(self) -> _TableInfo:
        width = len(self.columns)
        for index, row in enumerate(self.rows):
            if len(row) != width:
                raise _FieldError(f"rows.{index}", f"expected {width} values, got {len(row)}")
        seen: dict[str, str] = {}
        for column in self.columns:
            key = column.name.casefold()
            if key in seen:
                raise _FieldError("columns", f"duplicate column name {column.name!r} (column names ignore case)")
            seen[key] = column.name
        return self


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


class _FieldError(ValueError):
    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


def _location(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc) or "(line)"


def parse_item(data: Any, *, source: str = "<item>") -> SqlItem:
    """One benchmark JSON object as an ``SqlItem``; raises ``SqlDataError`` naming ``source`` and the field."""
    try:
        raw = _Item.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        context = first.get("ctx", {}).get("error")
        loc = first["loc"]
        if isinstance(context, _FieldError):
            prefix = [part for part in loc if part != "__root__"]
            return _fail(source, _location((*prefix, *context.path.split("."))), context.message)
        return _fail(source, _location(loc), first["msg"])
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


def load_items(path: str | Path) -> Iterator[tuple[int, SqlItem]]:
    """Every item of a DBBench JSONL file with its 1-based line number (blank lines skipped)."""
    file_path = Path(path)
    try:
        handle = file_path.open(encoding="utf-8")
    except OSError as error:
        raise SqlDataError(f"{file_path}: cannot read DBBench data: {error.strerror or error}") from None
    with handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            source = f"{file_path}:{number}"
            try:
                data = json.loads(line)
            except json.JSONDecodeError as error:
                raise SqlDataError(f"{source}: not valid JSON: {error.msg} at column {error.colno}") from None
            if not isinstance(data, dict):
                raise SqlDataError(f"{source}: expected a JSON object, got {type(data).__name__}")
            yield number, parse_item(data, source=source)
