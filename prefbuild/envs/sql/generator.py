"""Synthetic DBBench items: tables from ``domains`` and questions of every benchmark type.

Ground truth is never written by hand: every query label is the printed value of its
reference SQL run on the same engine the agent uses, and every mutation's ``answer_md5``
is the table hash after running its reference statement (spec section 10.3).

Tables belong to exactly one split: table ``k`` of split ``s`` is generated from a seed
derived from ``(s, k)`` alone, and each split draws only from its own sequence; the user's
seed chooses which tables and questions are drawn, never the split a table belongs to.
"""

from __future__ import annotations

import functools
import hashlib
import math
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from prefbuild.envs.sql.domains import DOMAINS, ColumnSpec, Domain
from prefbuild.envs.sql.engine import SqlSandbox, mysql_number
from prefbuild.envs.sql.grader import printed_hash, table_hash
from prefbuild.envs.sql.items import MUTATION_TYPES, TASK_TYPES, SqlItem

SPLITS: tuple[str, ...] = ("train", "dev", "test")
SPLIT_ALIASES = {"standard": "test", "valid": "dev", "validation": "dev", "valid_seen": "dev"}
# How many distinct tables each split can draw from.
POOL_SIZES = {"train": 50_000, "dev": 1_000, "test": 5_000}


def canonical_split(split: str) -> str:
    """``train``/``dev``/``test`` (``standard`` is the benchmark's name for ``test``)."""
    name = SPLIT_ALIASES.get(split, split)
    if name not in SPLITS:
        known = ", ".join([*SPLITS, *SPLIT_ALIASES])
        raise ValueError(f"unknown sql split {split!r}; known: {known}")
    return name


@dataclass(frozen=True)
class GenTable:
    """One generated table and the roles of its columns."""

    split: str
    index: int
    domain: Domain
    name: str
    specs: tuple[ColumnSpec, ...]
    rows: tuple[tuple[str, ...], ...]

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(spec.name for spec in self.specs)

    def of_role(self, *roles: str) -> list[int]:
        return [i for i, spec in enumerate(self.specs) if spec.role in roles]

    def fingerprint(self) -> str:
        return table_fingerprint(self.name, self.columns, self.rows)


def table_fingerprint(name: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Identity of a table's content, for checking that splits share no table."""
    payload = repr((name, tuple(columns), tuple(tuple(row) for row in rows)))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def _seed(*parts: object) -> int:
    text = "/".join(str(part) for part in parts)
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:16], 16)


def _row_count(rng: random.Random) -> int:
    # Mostly 10-40 rows like the benchmark (mean about 25), sometimes small or up to 100.
    return rng.choice(
        (rng.randint(7, 12), rng.randint(10, 40), rng.randint(10, 40), rng.randint(15, 30), rng.randint(40, 100))
    )


@functools.lru_cache(maxsize=512)
def make_table(split: str, index: int) -> GenTable:
    """Table ``index`` of ``split``; a pure function of its arguments."""
    rng = random.Random(_seed("prefbuild-sql-table", split, index))
    domain = rng.choice(DOMAINS)
    key, others = domain.columns[0], list(domain.columns[1:])
    width = rng.randint(3, len(domain.columns))
    chosen = sorted(rng.sample(range(len(others)), width - 1))
    specs = (key, *(others[i] for i in chosen))
    seen_keys: set[str] = set()
    rows: list[tuple[str, ...]] = []
    for _ in range(_row_count(rng)):
        for _attempt in range(40):
            key_value = key.make(rng)
            if key_value.casefold() not in seen_keys:
                break
        else:
            continue
        seen_keys.add(key_value.casefold())
        rows.append((key_value, *(spec.make(rng) for spec in specs[1:])))
    return GenTable(split, index, domain, rng.choice(domain.table_names), specs, tuple(rows))


# -- SQL and wording helpers ------------------------------------------------------------------


def ident(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


_LITERAL_ESCAPES = str.maketrans({"\\": "\\\\", "'": "''", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\0": "\\0"})


def literal(value: str) -> str:
    r"""A MySQL string literal: backslash, quote, newline, carriage return, tab and NUL escaped
    the MySQL way (reference manual 9.1.1), so the statement stays one line and matches the value.

    Example:
        >>> print(literal("it's\na\tb"))
        'it''s\na\tb'
    """
    return "'" + value.translate(_LITERAL_ESCAPES) + "'"


def label_text(value: Any) -> str:
    """A result value written as the benchmark's labels are: text as stored, numbers as Python prints them."""
    return value if isinstance(value, str) else repr(value)


@dataclass(frozen=True)
class Candidate:
    description: str
    sql: str


Builder = Callable[[GenTable, random.Random], Candidate | None]


def _spoken(value: str, rng: random.Random) -> str:
    """Questions often lower-case values (``Method is decision``); MySQL filters ignore case."""
    return value.lower() if rng.random() < 0.25 and value.lower() != value else value


def _pick_row(table: GenTable, rng: random.Random) -> tuple[str, ...]:
    return rng.choice(table.rows)


def _numeric(table: GenTable, column: int) -> list[float]:
    return [float(mysql_number(row[column]) or 0.0) for row in table.rows]


def _table_ref(table: GenTable, rng: random.Random) -> str:
    return rng.choice((f"the '{table.name}' table", f"the {table.name} table"))


def _other(table: GenTable, rng: random.Random) -> Candidate | None:
    t = ident(table.name)
    key = table.specs[0].name
    targets = [i for i in range(1, len(table.specs))]
    if not targets:
        return None
    row = _pick_row(table, rng)
    form = rng.randrange(3)
    if form == 0:
        target = rng.choice(targets)
        name = table.specs[target].name
        value = _spoken(row[0], rng)
        return Candidate(
            rng.choice(
                (
                    f"What is the {name} when the {key} is {value}?",
                    f"What {name} does {value} have?",
                    f"Tell me the {name} for the {key} {value}.",
                )
            ),
            f"SELECT {ident(name)} FROM {t} WHERE {ident(key)} = {literal(value)}",
        )
    if form == 1:
        column = rng.choice(targets)
        name = table.specs[column].name
        value = _spoken(row[column], rng)
        return Candidate(
            rng.choice((f"Which {key} has a {name} of {value}?", f"Name the {key} when {name} is {value}.")),
            f"SELECT {ident(key)} FROM {t} WHERE {ident(name)} = {literal(value)}",
        )
    if len(targets) < 2:
        return None
    first, second = rng.sample(targets, 2)
    target = 0
    v1, v2 = _spoken(row[first], rng), _spoken(row[second], rng)
    n1, n2 = table.specs[first].name, table.specs[second].name
    return Candidate(
        f"What is the {key} when the {n1} is {v1} and the {n2} is {v2}?",
        f"SELECT {ident(table.specs[target].name)} FROM {t} "
        f"WHERE {ident(n1)} = {literal(v1)} AND {ident(n2)} = {literal(v2)}",
    )


def _counting(table: GenTable, rng: random.Random) -> Candidate | None:
    t, entities = ident(table.name), table.domain.entities
    cats, nums = table.of_role("cat"), table.of_role("num")
    form = rng.randrange(3)
    if form == 0 and cats:
        column = rng.choice(cats)
        name = table.specs[column].name
        value = _spoken(_pick_row(table, rng)[column], rng)
        return Candidate(
            rng.choice(
                (f"How many {entities} have a {name} of {value}?", f"How many rows have {name} equal to {value}?")
            ),
            f"SELECT COUNT(*) FROM {t} WHERE {ident(name)} = {literal(value)}",
        )
    if form == 1 and nums:
        column = rng.choice(nums)
        name = table.specs[column].name
        threshold = _pick_row(table, rng)[column]
        word, op = rng.choice((("more than", ">"), ("less than", "<")))
        return Candidate(
            f"How many {entities} have a {name} {word} {threshold}?",
            f"SELECT COUNT(*) FROM {t} WHERE {ident(name)} {op} {threshold}",
        )
    if cats:
        name = table.specs[rng.choice(cats)].name
        return Candidate(
            f"How many different {name} values are there in the table?",
            f"SELECT COUNT(DISTINCT {ident(name)}) FROM {t}",
        )
    return None


def _unique_numbers(table: GenTable, column: int) -> bool:
    values = _numeric(table, column)
    return len(set(values)) == len(values)


def _comparison(table: GenTable, rng: random.Random) -> Candidate | None:
    t, key = ident(table.name), table.specs[0].name
    nums = table.of_role("num")
    if not nums or len(table.rows) < 2:
        return None
    column = rng.choice(nums)
    name = table.specs[column].name
    first, second = rng.sample(table.rows, 2)
    if mysql_number(first[column]) == mysql_number(second[column]):
        return None
    a, b = first[0], second[0]
    if rng.random() < 0.5:
        word, order = rng.choice((("higher", "DESC"), ("lower", "ASC")))
        return Candidate(
            f"Which {key} has a {word} {name}, {a} or {b}?",
            f"SELECT {ident(key)} FROM {t} WHERE {ident(key)} IN ({literal(a)}, {literal(b)}) "
            f"ORDER BY {ident(name)} + 0 {order} LIMIT 1",
        )
    return Candidate(
        f"Is the {name} of {a} greater than the {name} of {b}? Answer yes or no.",
        f"SELECT IF((SELECT {ident(name)} + 0 FROM {t} WHERE {ident(key)} = {literal(a)}) > "
        f"(SELECT {ident(name)} + 0 FROM {t} WHERE {ident(key)} = {literal(b)}), 'yes', 'no')",
    )


def _ranking(table: GenTable, rng: random.Random) -> Candidate | None:
    t, key, entity = ident(table.name), table.specs[0].name, table.domain.entity
    nums = table.of_role("num")
    if not nums:
        return None
    column = rng.choice(nums)
    name = table.specs[column].name
    values = sorted(_numeric(table, column))
    position = rng.choice((0, 0, 1))
    descending = rng.random() < 0.5
    ordered = values[::-1] if descending else values
    if position >= len(ordered) or ordered.count(ordered[position]) != 1:
        return None
    if position == 1 and ordered.count(ordered[0]) != 1:
        return None
    word = (
        ("highest" if descending else "lowest")
        if position == 0
        else ("second highest" if descending else "second lowest")
    )
    order = "DESC" if descending else "ASC"
    limit = "LIMIT 1" if position == 0 else "LIMIT 1, 1"
    targets = [i for i in range(1, len(table.specs)) if i != column]
    if targets and rng.random() < 0.4:
        target = table.specs[rng.choice(targets)].name
        return Candidate(
            f"What is the {target} of the {entity} with the {word} {name}?",
            f"SELECT {ident(target)} FROM {t} ORDER BY {ident(name)} + 0 {order} {limit}",
        )
    return Candidate(
        f"Which {key} has the {word} {name}?",
        f"SELECT {ident(key)} FROM {t} ORDER BY {ident(name)} + 0 {order} {limit}",
    )


def _aggregation(function: str) -> Builder:
    words = {
        "SUM": ("total", "sum of the"),
        "AVG": ("average", "mean"),
        "MIN": ("lowest", "minimum"),
        "MAX": ("highest", "maximum"),
    }[function]

    def build(table: GenTable, rng: random.Random) -> Candidate | None:
        t, entities = ident(table.name), table.domain.entities
        nums, cats = table.of_role("num"), table.of_role("cat")
        if not nums:
            return None
        column = rng.choice(nums)
        name = table.specs[column].name
        argument = f"{ident(name)} + 0" if function in ("MIN", "MAX") else ident(name)
        word = rng.choice(words)
        if cats and rng.random() < 0.7:
            cat = rng.choice(cats)
            cat_name = table.specs[cat].name
            value = _spoken(_pick_row(table, rng)[cat], rng)
            return Candidate(
                rng.choice(
                    (
                        f"What is the {word} {name} of {entities} whose {cat_name} is {value}?",
                        f"What is the {word} {name} when the {cat_name} is {value}?",
                    )
                ),
                f"SELECT {function}({argument}) FROM {t} WHERE {ident(cat_name)} = {literal(value)}",
            )
        return Candidate(f"What is the {word} {name} across all {entities}?", f"SELECT {function}({argument}) FROM {t}")

    return build


def _fresh_row(table: GenTable, rng: random.Random) -> tuple[str, ...] | None:
    keys = {row[0].casefold() for row in table.rows}
    for _ in range(40):
        row = tuple(spec.make(rng) for spec in table.specs)
        if row[0].casefold() not in keys:
            return row
    return None


def _insert(table: GenTable, rng: random.Random) -> Candidate | None:
    row = _fresh_row(table, rng)
    if row is None:
        return None
    columns = ", ".join(ident(name) for name in table.columns)
    values = ", ".join(literal(value) for value in row)
    where = _table_ref(table, rng)
    if rng.random() < 0.5 and not any("'" in value for value in row):
        shown = ", ".join(f"'{value}'" for value in row)
        description = f"Add ({shown}) to {where} through INSERT INTO command."
    else:
        pairs = [f"{name} '{value}'" for name, value in zip(table.columns, row, strict=True)]
        listing = ", ".join(pairs[:-1]) + f" and {pairs[-1]}" if len(pairs) > 1 else pairs[0]
        description = f"Insert a new {table.domain.entity} into {where} with {listing}."
    return Candidate(description, f"INSERT INTO {ident(table.name)} ({columns}) VALUES ({values})")


def _update(table: GenTable, rng: random.Random) -> Candidate | None:
    if len(table.specs) < 2:
        return None
    column = rng.randrange(1, len(table.specs))
    spec = table.specs[column]
    row = _pick_row(table, rng)
    new = spec.make(rng)
    if new.casefold() == row[column].casefold():
        return None
    where = _table_ref(table, rng)
    key = table.specs[0].name
    cats = [i for i in table.of_role("cat") if i != column]
    if cats and rng.random() < 0.3:
        cat = rng.choice(cats)
        cat_name, value = table.specs[cat].name, row[cat]
        return Candidate(
            f"Set the {spec.name} to '{new}' for every {table.domain.entity} whose {cat_name} is {value} in {where}.",
            f"UPDATE {ident(table.name)} SET {ident(spec.name)} = {literal(new)} "
            f"WHERE {ident(cat_name)} = {literal(value)}",
        )
    return Candidate(
        rng.choice(
            (
                f"Change the {spec.name} of {row[0]} in {where} to {new}.",
                f"Update {where} so that the {spec.name} of the {key} {row[0]} is '{new}'.",
            )
        ),
        f"UPDATE {ident(table.name)} SET {ident(spec.name)} = {literal(new)} WHERE {ident(key)} = {literal(row[0])}",
    )


def _delete(table: GenTable, rng: random.Random) -> Candidate | None:
    where = _table_ref(table, rng)
    cats = table.of_role("cat")
    row = _pick_row(table, rng)
    if cats and rng.random() < 0.4:
        cat = rng.choice(cats)
        name, value = table.specs[cat].name, row[cat]
        return Candidate(
            f"Remove every {table.domain.entity} whose {name} is {value} from {where}.",
            f"DELETE FROM {ident(table.name)} WHERE {ident(name)} = {literal(value)}",
        )
    key = table.specs[0].name
    return Candidate(
        f"Delete the row of the {key} {row[0]} from {where}.",
        f"DELETE FROM {ident(table.name)} WHERE {ident(key)} = {literal(row[0])}",
    )


BUILDERS: dict[str, Builder] = {
    "other": _other,
    "counting": _counting,
    "comparison": _comparison,
    "ranking": _ranking,
    "aggregation-SUM": _aggregation("SUM"),
    "aggregation-MIN": _aggregation("MIN"),
    "aggregation-MAX": _aggregation("MAX"),
    "aggregation-AVG": _aggregation("AVG"),
    "INSERT": _insert,
    "UPDATE": _update,
    "DELETE": _delete,
}


def _sandbox(table: GenTable) -> SqlSandbox:
    return SqlSandbox(table.name, table.columns, table.rows, timeout_s=5.0)


def _label_ok(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, str):
        try:
            return math.isfinite(float(value)) or False
        except ValueError:  # handled: a non-numeric text is a value when it is not empty
            return value != ""
    return isinstance(value, int | float) and math.isfinite(value)


def make_item(table: GenTable, task_type: str, rng: random.Random) -> SqlItem | None:
    """One item of ``task_type`` on ``table``, ground truth computed by the engine; None if none fits."""
    candidate = BUILDERS[task_type](table, rng)
    if candidate is None:
        return None
    sandbox = _sandbox(table)
    try:
        result = sandbox.execute(candidate.sql)
        if result.error is not None:
            return None
        base: dict[str, Any] = {
            "description": candidate.description,
            "table_name": table.name,
            "columns": table.columns,
            "rows": table.rows,
            "type": task_type,
            "reference_sql": candidate.sql,
            "extra": {"table_index": table.index, "domain": table.domain.name},
        }
        if task_type in MUTATION_TYPES:
            after = sandbox.table_rows()
            if not result.mutated or after is None or table_hash(after) == table_hash(table.rows):
                return None
            return SqlItem(**base, answer_md5=printed_hash(table_hash(after)))
        rows = result.rows or ()
        if len(rows) != 1 or len(rows[0]) != 1 or not _label_ok(rows[0][0]):
            return None
        return SqlItem(**base, label=(label_text(rows[0][0]),))
    finally:
        sandbox.close()


def item_id(split: str, item: SqlItem) -> str:
    """A stable task id: split, table index and a digest of the question."""
    digest = hashlib.sha256(f"{item.type}\x1f{item.description}\x1f{item.reference_sql}".encode()).hexdigest()[:10]
    return f"sql-{split}-t{item.extra.get('table_index', 0):05d}-{digest}"


def generate_items(
    split: str, n: int, seed: int, task_types: Sequence[str] | None = None
) -> Iterator[tuple[str, SqlItem]]:
    """``n`` distinct generated items of ``split`` (round-robin over ``task_types``) with their ids."""
    split = canonical_split(split)
    types = list(task_types) if task_types else list(TASK_TYPES)
    unknown = [name for name in types if name not in BUILDERS]
    if unknown:
        raise ValueError(f"unknown sql task type(s) {', '.join(unknown)}; known: {', '.join(TASK_TYPES)}")
    rng = random.Random(_seed("prefbuild-sql-tasks", split, seed))
    seen: set[str] = set()
    produced = attempts = 0
    while produced < n:
        attempts += 1
        if attempts > 60 * n + 200:
            raise RuntimeError(f"could not generate {n} distinct sql items of types {types}")
        task_type = types[produced % len(types)]
        table = make_table(split, rng.randrange(POOL_SIZES[split]))
        item = make_item(table, task_type, random.Random(rng.getrandbits(64)))
        if item is None:
            continue
        identifier = item_id(split, item)
        if identifier in seen:
            continue
        seen.add(identifier)
        produced += 1
        yield identifier, item
