"""Differential fidelity: the same agent statements through the ``sqlite`` and ``mysql`` backends.

The battery (``battery.yaml`` beside this file) holds statement templates by category. Each
template is filled in for generated tables of several domains and played as a one-operation
episode through ``SqlEnv`` on both backends: reset, ``Operation: <sql>``, then an answer so
the env hashes the final table. A case agrees on its reply when the two observations are the
same text, and on its table when the two final-table hashes are the same.

Example:
    >>> cases = build_cases(load_battery(), domain_tables(), domains_per_statement=1)
    >>> len(cases) >= 150
    True
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from prefbuild.envs.base import EnvTask
from prefbuild.envs.sql import actions
from prefbuild.envs.sql.domains import DOMAINS
from prefbuild.envs.sql.env import SqlEnv, task_info
from prefbuild.envs.sql.generator import GenTable, ident, make_table
from prefbuild.envs.sql.items import SqlItem

__all__ = [
    "BATTERY_PATH",
    "Case",
    "CaseResult",
    "CategorySummary",
    "Statement",
    "build_cases",
    "domain_tables",
    "load_battery",
    "run_cases",
    "summarize",
]

BATTERY_PATH = Path(__file__).with_name("battery.yaml")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    sql: str
    mysql8_differs: str


class _Battery(BaseModel):
    model_config = ConfigDict(extra="forbid")
    statements: dict[str, list[str | _Entry]]


@dataclass(frozen=True)
class Statement:
    """One battery template; ``mysql8_differs`` says why MariaDB is no reference for it (else None)."""

    category: str
    template: str
    mysql8_differs: str | None = None


@dataclass(frozen=True)
class Case:
    """One filled-in statement on one table."""

    category: str
    template: str
    domain: str
    table: GenTable
    sql: str
    mysql8_differs: str | None = None


@dataclass(frozen=True)
class CaseResult:
    """What each backend replied and how the table ended up."""

    case: Case
    sqlite_reply: str
    mysql_reply: str
    sqlite_hash: str | None
    mysql_hash: str | None

    @property
    def same_reply(self) -> bool:
        return self.sqlite_reply == self.mysql_reply

    @property
    def same_hash(self) -> bool:
        return self.sqlite_hash == self.mysql_hash


@dataclass(frozen=True)
class CategorySummary:
    """Agreement in one category, over the cases where MariaDB stands for MySQL 8."""

    category: str
    cases: int
    same_reply: int
    same_hash: int
    excluded: int = 0

    @property
    def reply_share(self) -> float:
        return self.same_reply / self.cases if self.cases else 1.0

    @property
    def hash_share(self) -> float:
        return self.same_hash / self.cases if self.cases else 1.0


def load_battery(path: str | Path = BATTERY_PATH) -> list[Statement]:
    """The battery's statements in file order; a malformed file raises ``ValueError``."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        battery = _Battery.model_validate(data)
    except (OSError, yaml.YAMLError, ValidationError) as error:
        raise ValueError(f"{path}: not a statement battery: {error}") from None
    return [
        Statement(category, entry) if isinstance(entry, str) else Statement(category, entry.sql, entry.mysql8_differs)
        for category, entries in battery.statements.items()
        for entry in entries
    ]


def domain_tables(split: str = "test", scan: int = 400) -> list[GenTable]:
    """The first generated table of every domain (in ``DOMAINS`` order), from ``split``."""
    found: dict[str, GenTable] = {}
    for index in range(scan):
        table = make_table(split, index)
        if table.domain.name not in found and table.of_role("num") and table.of_role("cat"):
            found[table.domain.name] = table
        if len(found) == len(DOMAINS):
            break
    return [found[domain.name] for domain in DOMAINS if domain.name in found]


def _quoted(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"


def _number_of(values: Iterable[str]) -> str:
    for value in values:
        if value and _NUMBER.fullmatch(value.strip()):
            return value.strip()
    return "10"


def placeholders(table: GenTable) -> dict[str, str]:
    """The template values for one table (see the battery's header)."""
    key = table.of_role("key")[0]
    cat = table.of_role("cat")[0]
    num = table.of_role("num")[0]
    text = (table.of_role("text") or [cat])[0]
    rows = table.rows
    row = rows[len(rows) // 2]
    key_value = row[key]
    numbers = [r[num] for r in rows]
    return {
        "T": ident(table.name),
        "Tbare": table.name,
        "Tlow": ident(table.name.lower()) if table.name.lower() != table.name else ident(table.name.upper()),
        "tname": table.name.replace("'", "''"),
        "K": ident(table.columns[key]),
        "Kbare": table.columns[key],
        "C": ident(table.columns[cat]),
        "N": ident(table.columns[num]),
        "X": ident(table.columns[text]),
        "k": _quoted(key_value),
        "kl": _quoted(key_value.lower()),
        "kpre": _quoted(key_value[:3] + "%"),
        "c": _quoted(row[cat]),
        "n": _number_of([row[num], *sorted(numbers)]),
        "cols": ", ".join(ident(name) for name in table.columns),
        "row": ", ".join(_quoted(f"new {name}") if i != num else "'7'" for i, name in enumerate(table.columns)),
    }


def build_cases(
    battery: Sequence[Statement], tables: Sequence[GenTable], *, domains_per_statement: int = 2
) -> list[Case]:
    """Each template on ``domains_per_statement`` tables, rotating so every domain is used evenly."""
    cases = []
    count = max(1, min(domains_per_statement, len(tables)))
    stride = max(1, len(tables) // count)
    for index, statement in enumerate(battery):
        for offset in range(count):
            table = tables[(index + offset * stride) % len(tables)]
            sql = statement.template.format_map(placeholders(table))
            cases.append(
                Case(statement.category, statement.template, table.domain.name, table, sql, statement.mysql8_differs)
            )
    return cases


def _task(table: GenTable) -> EnvTask:
    item = SqlItem(
        description="Fidelity probe.",
        table_name=table.name,
        columns=table.columns,
        rows=table.rows,
        type="UPDATE",
        reference_sql=None,
        answer_md5=None,
    )
    return EnvTask(info=task_info(f"fidelity-{table.domain.name}", item, "test", 0, "fidelity"), payload=item)


class _Player:
    """One backend's env, kept on one table while statements leave it untouched."""

    def __init__(self, env: SqlEnv) -> None:
        self.env = env
        self.task: EnvTask | None = None
        self.initial: str | None = None
        self.dirty = True

    def play(self, task: EnvTask, sql: str) -> tuple[str, str | None, bool]:
        """The reply, the table hash after the statement, and whether the statement touched anything."""
        if self.dirty or task is not self.task:
            self.env.reset(task)
            self.task, self.initial, self.dirty = task, self.env.table_hash(), False
        result = self.env.step(actions.operation(sql))
        table_hash = self.env.table_hash()
        touched = bool(result.info.get("mutated")) or result.info.get("statement") in ("mutation", "ddl")
        return result.observation, table_hash, touched or table_hash != self.initial


def run_cases(cases: Sequence[Case], *, db_url: str | None = None) -> list[CaseResult]:
    """Play every case on both backends (``db_url`` None: the private MariaDB server).

    A case starts on the freshly built table; consecutive cases on one table share an episode
    until a statement changes (or may have changed) either backend's database.
    """
    players = (
        _Player(SqlEnv(backend="sqlite", max_round=1_000_000)),
        _Player(SqlEnv(backend="mysql", db_url=db_url, max_round=1_000_000)),
    )
    tasks: dict[str, EnvTask] = {}
    order = sorted(range(len(cases)), key=lambda index: cases[index].domain)
    results: dict[int, CaseResult] = {}
    try:
        for index in order:
            case = cases[index]
            task = tasks.setdefault(case.domain, _task(case.table))
            (sqlite_reply, sqlite_hash, sqlite_touched), (mysql_reply, mysql_hash, mysql_touched) = (
                player.play(task, case.sql) for player in players
            )
            if sqlite_touched or mysql_touched:
                for player in players:
                    player.dirty = True
            results[index] = CaseResult(case, sqlite_reply, mysql_reply, sqlite_hash, mysql_hash)
    finally:
        for player in players:
            player.env.close()
    return [results[index] for index in range(len(cases))]


def _summary(name: str, group: Sequence[CaseResult]) -> CategorySummary:
    kept = [r for r in group if r.case.mysql8_differs is None]
    same_reply = sum(r.same_reply for r in kept)
    return CategorySummary(name, len(kept), same_reply, sum(r.same_hash for r in kept), len(group) - len(kept))


def summarize(results: Sequence[CaseResult]) -> list[CategorySummary]:
    """Per-category agreement, in battery order, then an ``all`` row (``mysql8_differs`` cases left out)."""
    by_category: dict[str, list[CaseResult]] = defaultdict(list)
    for result in results:
        by_category[result.case.category].append(result)
    return [*(_summary(name, group) for name, group in by_category.items()), _summary("all", results)]


def format_table(summary: Sequence[CategorySummary]) -> str:
    """The summary as a Markdown table (category, cases, identical replies, identical final tables)."""
    lines = [
        "| category | cases | identical replies | identical final tables | left out (MariaDB is not MySQL 8 there) |",
        "|---|---:|---:|---:|---:|",
    ]
    for row in summary:
        lines.append(
            f"| {row.category} | {row.cases} | {row.same_reply} ({_percent(row.reply_share)}) "
            f"| {row.same_hash} ({_percent(row.hash_share)}) | {row.excluded} |"
        )
    return "\n".join(lines)


def _percent(share: float) -> str:
    return f"{math.floor(share * 1000) / 10:.1f}%"
