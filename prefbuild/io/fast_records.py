"""Records at raw-JSON speed: msgspec structs derived from the pydantic record models.

The pydantic models in ``prefbuild.records`` are the contract: their schema, their error
messages, their JSON. Decoding and validating a trajectory with pydantic costs about 11 us
a step and serialising it about 7 us, more than a whole ``label`` step may cost at
100,000 steps/s per core. ``struct_type`` derives, from a record model, a msgspec struct
with the same fields in the same order, the same defaults, the same constraints
(``ge``/``le``/``min_length``), the same literal and enum types, unknown fields refused,
and the model's own validators run after decoding; msgspec decodes into it and encodes it
about 3-4x faster. Nothing is written twice by hand: a field added to a record model is in
its struct too.

``read_fast_records`` streams a JSONL file as such structs. A line msgspec refuses is
handed to the pydantic reader, which reports it exactly as before (``file:line field:
message``), or, where pydantic's lax mode accepts it (a number written as a string, say),
returns pydantic's reading converted to the struct, so both layers accept the same files and
read them to the same values. ``encode_record`` writes structs byte for byte as pydantic
writes the models (the tests compare both on every fixture).

Example:
    >>> from prefbuild.records import Label
    >>> FastLabel = struct_type(Label)
    >>> label = msgspec.json.decode(b'{"mode":"loop","step":2,"confidence":0.9,"evidence":"x","labeler":"loop@5"}',
    ...                             type=FastLabel)
    >>> label.step, encode_record(label) == Label(**msgspec.structs.asdict(label)).model_dump_json().encode()
    (2, True)
"""

from __future__ import annotations

import functools
import os
import types
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import annotated_types
import msgspec
from pydantic import AfterValidator, BaseModel
from pydantic_core import PydanticUndefined

from prefbuild.io.jsonl import JsonlWriter, RecordError, iter_raw_lines, record_of_line

RecordT = TypeVar("RecordT", bound=BaseModel)

_CONSTRAINTS: dict[type, str] = {
    annotated_types.Ge: "ge",
    annotated_types.Le: "le",
    annotated_types.Gt: "gt",
    annotated_types.Lt: "lt",
    annotated_types.MinLen: "min_length",
    annotated_types.MaxLen: "max_length",
}


def _struct_annotation(annotation: Any) -> Any:
    """``annotation`` with every record model inside it replaced by its struct."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return struct_type(annotation)
    origin = typing.get_origin(annotation)
    if origin is None or origin is typing.Literal:
        return annotation
    arguments = tuple(_struct_annotation(argument) for argument in typing.get_args(annotation))
    if origin is types.UnionType or origin is typing.Union:
        return functools.reduce(lambda left, right: left | right, arguments)
    return origin[arguments]


def _field(annotation: Any, metadata: list[Any]) -> tuple[Any, list[Callable[[Any], Any]]]:
    """The struct annotation of one model field and the field's after-validators."""
    constraints: dict[str, Any] = {}
    after: list[Callable[[Any], Any]] = []
    for item in metadata:
        name = _CONSTRAINTS.get(type(item))
        if name is not None:
            constraints[name] = getattr(item, name)
        elif isinstance(item, AfterValidator):
            after.append(item.func)  # type: ignore[arg-type]
        else:
            raise TypeError(f"no msgspec form for the field constraint {item!r}")
    converted = _struct_annotation(annotation)
    if constraints:
        converted = _constrained(converted, msgspec.Meta(**constraints))
    return converted, after


def _constrained(annotation: Any, meta: msgspec.Meta) -> Any:
    """``annotation`` with ``meta`` on its value type (``float | None`` -> ``Annotated[float, meta] | None``)."""
    origin = typing.get_origin(annotation)
    if origin is types.UnionType or origin is typing.Union:
        members = [
            member if member is type(None) else typing.Annotated[member, meta] for member in typing.get_args(annotation)
        ]
        return functools.reduce(lambda left, right: left | right, members)
    return typing.Annotated[annotation, meta]


@functools.cache
def struct_type(model: type[BaseModel]) -> type[msgspec.Struct]:
    """The msgspec struct of a record model (cached: one per model class).

    Args:
        model: a ``prefbuild.records`` model (strict: ``extra="forbid"``).

    Returns:
        A struct class with the model's fields, defaults, constraints, validators and properties.

    Example:
        >>> from prefbuild.records import Usage
        >>> struct_type(Usage)().prompt_tokens
        0
    """
    fields: list[tuple[str, Any, Any]] = []
    checks: list[tuple[str, Callable[[Any], Any]]] = []
    for name, info in model.model_fields.items():
        annotation, after = _field(info.annotation, list(info.metadata))
        checks.extend((name, check) for check in after)
        if info.default_factory is not None:
            factory = info.default_factory
            if factory in (list, dict):
                default: Any = msgspec.field(default_factory=factory)
            else:  # a factory building a record model: build its struct instead
                default = msgspec.field(default_factory=struct_type(type(factory())))  # type: ignore[call-arg]
            fields.append((name, annotation, default))
        elif info.default is PydanticUndefined:
            fields.append((name, annotation, msgspec.NODEFAULT))
        else:
            fields.append((name, annotation, info.default))
    validators = [
        decorator.func
        for decorator in model.__pydantic_decorators__.model_validators.values()
        if decorator.info.mode == "after"
    ]

    def __post_init__(self: Any) -> None:
        for name, check in checks:
            check(getattr(self, name))
        for validator in validators:
            validator(self)

    namespace: dict[str, Any] = {
        name: value for name, value in vars(model).items() if isinstance(value, property)
    }
    if not checks and len(validators) == 1:
        # The model's one validator is the whole check (its return value, the record, is ignored):
        # called directly, without the loops, as it runs for every message and step read.
        namespace["__post_init__"] = validators[0]
    elif checks or validators:
        namespace["__post_init__"] = __post_init__
    return msgspec.defstruct(
        f"Fast{model.__name__}",
        [(name, annotation) if default is msgspec.NODEFAULT else (name, annotation, default)
         for name, annotation, default in fields],
        kw_only=True,
        forbid_unknown_fields=True,
        namespace=namespace,
        module=__name__,
    )


def encode_record(record: msgspec.Struct) -> bytes:
    """One struct as compact UTF-8 JSON, the bytes pydantic's ``model_dump_json`` gives its model."""
    return JsonlWriter.encode(record)


def is_struct(record: object) -> bool:
    """Whether ``record`` is a struct of this module (rather than a pydantic record)."""
    return isinstance(record, msgspec.Struct)


def replace_record(record: Any, **changes: Any) -> Any:
    """A copy of a record, pydantic model or struct, with ``changes`` (the input is not mutated).

    Example:
        >>> from prefbuild.records import Usage
        >>> replace_record(struct_type(Usage)(), prompt_tokens=3).prompt_tokens
        3
    """
    if isinstance(record, msgspec.Struct):
        return msgspec.structs.replace(record, **changes)
    return record.model_copy(update=changes)


def struct_of(record: BaseModel) -> msgspec.Struct:
    """A small validated record (a ``Label``, say) as its struct, field by field.

    A record model refuses unknown fields (``extra="forbid"``), so its ``__dict__`` holds exactly
    its fields: the struct is built from it directly.
    """
    return struct_type(type(record))(**record.__dict__)


def to_struct(record: BaseModel) -> msgspec.Struct:
    """A pydantic record as its struct (through its JSON, so values are exactly what a file holds)."""
    return msgspec.json.decode(record.__pydantic_serializer__.to_json(record), type=struct_type(type(record)))


def read_fast_records(path: str | os.PathLike[str], model: type[RecordT]) -> Iterator[Any]:
    """Stream the records of a JSONL file as ``struct_type(model)`` instances.

    Accepts and refuses exactly what ``jsonl.read_records(path, model)`` does, with its errors
    (``RecordError`` at ``file:line``) and its tolerance of a cut-off last line. A line only
    pydantic can read is pydantic's record as a struct, or, in the rare case its values have
    no struct form, the pydantic record itself (consumers read attributes, so both serve).

    Args:
        path: a JSONL file of ``model`` records.
        model: the record model.

    Returns:
        An iterator of structs, one per line.

    Example:
        >>> # [t.id for t in read_fast_records("episodes.jsonl", Trajectory)]
    """
    if not Path(path).is_file():
        raise RecordError(path, 0, "", "no such file")
    decode = msgspec.json.Decoder(struct_type(model)).decode
    for number, raw, unterminated in iter_raw_lines(path):
        try:
            yield decode(raw)
            continue
        except ValueError:  # handled: msgspec refused the line (its errors are ValueErrors): pydantic reads it
            pass
        record = record_of_line(path, number, raw, unterminated, model)
        if record is None:
            return  # a cut-off last line, skipped with pydantic's warning
        try:
            yield to_struct(record)
        except ValueError:  # handled: a value JSON cannot carry (a lone surrogate in a text): the record itself
            yield record
