"""Simulated DBBench mistakes for the scripted teacher: premature answers, failing SQL,
repeated statements, wrong answers. Only the simulation uses this; the env knows nothing of it."""

from __future__ import annotations

import random

from prefbuild.envs.sql import actions
from prefbuild.envs.sql.env import SqlEnv, answer_literal
from prefbuild.envs.sql.generator import ident


def failure_action(env: SqlEnv, mode: str, rng: random.Random) -> str | None:
    """``premature_success``: answer before any query (or before a mutation ran);
    ``invalid_action``/``sql_error``: a statement that fails (unknown column, bad quoting, T-SQL);
    ``loop``: the last statement again; ``wrong_answer``: a plausible wrong answer to a query."""
    item = env.item
    if env.finished or item is None:
        return None
    if mode == "premature_success":
        if item.mutation:
            return None if env.successful_mutations else actions.answer(' ["Done"]')
        return None if env.successful_queries else actions.answer(" " + answer_literal([_wrong_value(env, rng)]))
    if mode in ("invalid_action", "sql_error"):
        return _broken_statement(env, rng)
    if mode == "loop":
        return actions.operation(env.executed_statements[-1]) if env.executed_statements else None
    if mode == "wrong_answer" and not item.mutation:
        return actions.answer(" " + answer_literal([_wrong_value(env, rng)]))
    return None

def _wrong_value(env: SqlEnv, rng: random.Random) -> str:
    item = env.item
    assert item is not None
    expected = {str(value).casefold() for value in item.label}
    cells = [
        str(cell) for row in item.rows for cell in row if cell is not None and str(cell).casefold() not in expected
    ]
    if cells:
        return rng.choice(cells)
    return "none" if "none" not in expected else "0"

def _broken_statement(env: SqlEnv, rng: random.Random) -> str | None:
    item = env.item
    assert item is not None
    table = item.table_name
    column = rng.choice(item.columns)
    known = {name.casefold() for name in item.columns}
    wrong = "_".join("".join(ch if ch.isalnum() else " " for ch in column.lower()).split()) or "col"
    while wrong.casefold() in known:
        wrong += "_name"
    candidates = [
        f"SELECT {ident(wrong)} FROM {ident(table)}",
        f"SELECT * FROM {ident(table)} WHERE {wrong} = 'x'",
        f'SELECT * FROM "{table}"',
        f"SELECT TOP 1 * FROM {ident(table)}",
        f"SELECT [{column}] FROM {ident(table)}",
    ]
    if table != "".join(ch for ch in table if ch.isalnum() or ch == "_"):
        candidates.append(f"SELECT * FROM {table}")
    rng.shuffle(candidates)
    scratch = env.new_sandbox(item)
    try:
        for sql in candidates:
            if scratch.execute(sql).error is not None:
                return actions.operation(sql)
    finally:
        scratch.close()
    return None

