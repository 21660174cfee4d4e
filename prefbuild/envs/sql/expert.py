"""The sql env's oracle plan: which statement the expert runs for an item, or why there is none.

A query item's expert runs one statement and answers the label. The statement should show the
label in its reply, so the chosen side of a pair never answers something it did not see: the
reference SQL when its reply shows the label, else ``SELECT *`` of the table when that reply
(untruncated) shows it, else a ``SELECT * ... WHERE col = value`` finding each label value. When
nothing shows the label the reference (if it runs) is kept and the plan says so.

A mutation item's expert runs the reference statement only when it runs and reproduces the
stored ``answer_md5``; otherwise there is no expert (no chosen side), never a stand-in query.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from prefbuild.envs.sql.backends import printed_table_hash
from prefbuild.envs.sql.engine import TRUNCATED
from prefbuild.envs.sql.generator import ident, literal
from prefbuild.envs.sql.grader import parse_answer, printed_hash
from prefbuild.envs.sql.items import SqlItem

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")


class _Result(Protocol):
    reply: str
    error: str | None


class _Sandbox(Protocol):
    def execute(self, sql: str) -> Any: ...

    def table_rows(self) -> list[tuple[Any, ...]] | None: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class ExpertPlan:
    """What the expert does for one item, and the evidence for it.

    ``operation``: the statement the expert runs (None: it runs none). ``reply``: that
    statement's reply on the pristine table. ``available``: the expert can solve the item.
    ``shows_label``: the reply shows every label value (queries). ``reason``: why there is no
    expert, or why the reply does not show the label. ``target_hash``/``target_rows``: the
    mutation's goal table when the reference reproduces it.
    """

    operation: str | None
    reply: str | None
    available: bool
    shows_label: bool = False
    reason: str | None = None
    target_hash: str | None = None
    target_rows: tuple[tuple[Any, ...], ...] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "available": self.available,
            "operation": self.operation,
            "shows_label": self.shows_label,
            "reason": self.reason,
        }


def value_shown(value: Any, reply: str) -> bool:
    """Whether one answer value can be read off ``reply`` (text as printed, numbers by value).

    Example:
        >>> value_shown("Montréal", "[('Montréal',)]"), value_shown("12.0", "[(12,)]"), value_shown("x", "[]")
        (True, True, False)
    """
    text = str(value)
    if text and (repr(text) in reply or f'"{text}"' in reply):
        return True
    try:
        number = float(text)
    except ValueError:  # handled: a non-numeric answer can only match as text (checked above)
        return False
    return any(float(found) == number for found in _NUMBER.findall(reply))


def reply_shows_label(reply: str | None, label: Sequence[Any]) -> bool:
    """Whether every label value appears in a successful, untruncated reply."""
    if reply is None or reply.endswith(TRUNCATED) or not label:
        return False
    return all(value_shown(value, reply) for value in label)


def answer_observed(answer: str, replies: Sequence[str]) -> bool:
    """Whether every value of a submitted answer appears in some observation the agent was shown.

    Example:
        >>> answer_observed(' ["Ann"]', ["[('Ann', '3')]"]), answer_observed(' ["Bob"]', ["[('Ann',)]"])
        (True, False)
    """
    values = parse_answer(answer)
    if not values:
        return True
    return all(any(value_shown(value, reply) for reply in replies) for value in values)


def plan_expert(item: SqlItem, new_sandbox: Callable[[SqlItem], _Sandbox]) -> ExpertPlan:
    """The expert's plan for ``item``, found on scratch copies of its table.

    Args:
        item: the DBBench item.
        new_sandbox: builds a fresh sandbox holding the item's table (same backend as the episode).

    Returns:
        The plan.

    Example:
        >>> from prefbuild.envs.sql.engine import SqlSandbox
        >>> item = SqlItem("q", "t", ("a",), (("1",), ("2",)), "counting", ("2",), "SELECT COUNT(*) FROM t")
        >>> plan_expert(item, lambda i: SqlSandbox(i.table_name, i.columns, i.rows)).operation
        'SELECT COUNT(*) FROM t'
    """
    if item.mutation:
        return _mutation_plan(item, new_sandbox)
    return _query_plan(item, new_sandbox)


def _run(
    item: SqlItem, new_sandbox: Callable[[SqlItem], _Sandbox], sql: str
) -> tuple[str | None, list[tuple[Any, ...]] | None, str]:
    """The reply (None on error), the table's rows and its printed hash after running ``sql``."""
    scratch = new_sandbox(item)
    try:
        result = scratch.execute(sql)
        rows = scratch.table_rows()
        digest = printed_table_hash(scratch) or printed_hash(None)  # type: ignore[arg-type]
    finally:
        scratch.close()
    return (None if result.error is not None else result.reply), rows, digest


def _mutation_plan(item: SqlItem, new_sandbox: Callable[[SqlItem], _Sandbox]) -> ExpertPlan:
    if not item.reference_sql:
        return ExpertPlan(None, None, False, reason="no reference statement", target_hash=item.answer_md5)
    reply, rows, replayed = _run(item, new_sandbox, item.reference_sql)
    if reply is None:
        return ExpertPlan(None, None, False, reason="the reference statement fails", target_hash=item.answer_md5)
    target = item.answer_md5 or replayed
    if replayed != target:
        return ExpertPlan(
            None, None, False, reason="the reference statement does not reproduce answer_md5", target_hash=target
        )
    return ExpertPlan(
        item.reference_sql, reply, True, shows_label=True, target_hash=target, target_rows=tuple(rows or [])
    )


def _query_plan(item: SqlItem, new_sandbox: Callable[[SqlItem], _Sandbox]) -> ExpertPlan:
    reference_reply = None
    if item.reference_sql:
        reference_reply = _run(item, new_sandbox, item.reference_sql)[0]
        if reply_shows_label(reference_reply, item.label):
            return ExpertPlan(item.reference_sql, reference_reply, True, shows_label=True)
    for sql in _label_finders(item):
        reply = _run(item, new_sandbox, sql)[0]
        if reply_shows_label(reply, item.label):
            return ExpertPlan(sql, reply, True, shows_label=True)
    if reference_reply is not None:
        return ExpertPlan(
            item.reference_sql, reference_reply, True, reason="no statement found whose reply shows the label"
        )
    reason = "the reference statement fails" if item.reference_sql else "no reference statement"
    return ExpertPlan(None, None, True, reason=f"{reason}; the expert answers unseen")


def _label_finders(item: SqlItem) -> list[str]:
    """``SELECT *`` of the table, then one lookup per label value (the first column holding it)."""
    table = ident(item.table_name)
    statements = [f"SELECT * FROM {table}"]
    conditions: list[str] = []
    for value in item.label:
        text = str(value)
        for index, column in enumerate(item.columns):
            if any(len(row) > index and row[index] is not None and str(row[index]) == text for row in item.rows):
                conditions.append(f"{ident(column)} = {literal(text)}")
                break
        else:
            return statements
    statements.append(f"SELECT * FROM {table} WHERE " + " OR ".join(conditions))
    return statements
