"""One DBBench item: a question or instruction about one table, and how it is scored.

The fields mirror the benchmark's JSONL so that generated items can be written in the same
format as the released ``dev.jsonl`` / ``standard.jsonl`` and read back by the loader.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

QUERY_TYPES: tuple[str, ...] = (
    "other",
    "counting",
    "comparison",
    "ranking",
    "aggregation-SUM",
    "aggregation-MIN",
    "aggregation-MAX",
    "aggregation-AVG",
)
MUTATION_TYPES: tuple[str, ...] = ("INSERT", "UPDATE", "DELETE")
TASK_TYPES: tuple[str, ...] = QUERY_TYPES + MUTATION_TYPES

Cell = str | int | float | None


def is_mutation(task_type: str) -> bool:
    """INSERT/UPDATE/DELETE items are scored on the table hash, every other type on the answer."""
    return task_type.upper() in MUTATION_TYPES


def add_description(table_name: str, headers: list[str]) -> str:
    """The benchmark's fixed second line: headers joined by a bare comma, no spaces."""
    return f"The name of this table is {table_name}, and the headers of this table are {','.join(headers)}."


@dataclass(frozen=True)
class SqlItem:
    """A DBBench item. ``label`` is the answer list for queries and the reference statement for mutations."""

    description: str
    table_name: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    type: str
    label: tuple[Any, ...] = ()
    reference_sql: str | None = None
    answer_md5: str | None = None
    add_description: str | None = None
    column_types: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def mutation(self) -> bool:
        return is_mutation(self.type)

    @property
    def second_line(self) -> str:
        if self.add_description is not None:
            return self.add_description
        return add_description(self.table_name, list(self.columns))

    @property
    def prompt(self) -> str:
        """The first user turn of the dialogue: ``description + "\\n" + add_description``."""
        return f"{self.description}\n{self.second_line}"

    def to_json(self) -> dict[str, Any]:
        """The item in the benchmark's JSONL layout (readable by ``load_items``)."""
        types = self.column_types or tuple("TEXT" for _ in self.columns)
        data: dict[str, Any] = {
            "description": self.description,
            "add_description": self.second_line,
            "table": {
                "table_name": self.table_name,
                "table_info": {
                    "columns": [{"name": name, "type": kind} for name, kind in zip(self.columns, types, strict=True)],
                    "rows": [list(row) for row in self.rows],
                },
            },
            "heads": list(self.columns),
            "type": [self.type],
        }
        if self.mutation:
            data["label"] = self.reference_sql
            data["answer_md5"] = self.answer_md5
        else:
            data["label"] = list(self.label)
            data["sql"] = {"query": self.reference_sql}
        return data
