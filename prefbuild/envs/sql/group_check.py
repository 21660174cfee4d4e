"""MySQL 8's ``ONLY_FULL_GROUP_BY`` (on by default; reference manual 12.20.3) for one-table SELECTs.

SQLite returns an arbitrary row's value for a column that is neither grouped nor aggregated;
MySQL 8 refuses the query:

* with GROUP BY: ``1055 Expression #N of SELECT list is not in GROUP BY clause and contains
  nonaggregated column 'db.t.c' which is not functionally dependent on columns in GROUP BY
  clause; this is incompatible with sql_mode=only_full_group_by``;
* with an aggregate but no GROUP BY: ``1140 In aggregated query without GROUP BY, expression #N
  of SELECT list contains nonaggregated column 'db.t.c'; this is incompatible with
  sql_mode=only_full_group_by``.

With GROUP BY, a column equated to a constant in the WHERE clause counts as grouped (MySQL's
functional dependence, 12.20.4). Joins, unions, window functions and subqueries in the select
list are left to the engine (no check), so the check never refuses a query MySQL accepts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prefbuild.envs.sql.mysql_errors import MySqlError

AGGREGATES = frozenset(
    {
        "COUNT", "SUM", "AVG", "MIN", "MAX", "GROUP_CONCAT", "STD", "STDDEV", "STDDEV_POP", "STDDEV_SAMP",
        "VAR_POP", "VAR_SAMP", "VARIANCE", "BIT_AND", "BIT_OR", "BIT_XOR", "JSON_ARRAYAGG", "JSON_OBJECTAGG",
        "ANY_VALUE",
    }
)  # fmt: skip
_CLAUSE_WORDS = frozenset({"FROM", "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "UNION", "WINDOW", "INTO"})
_SKIP_WORDS = frozenset({"JOIN", "UNION", "OVER", "WINDOW", "SELECT", "ROLLUP", "EXCEPT", "INTERSECT"})


def _split_items(tokens: Sequence[Any]) -> list[list[Any]]:
    items: list[list[Any]] = [[]]
    depth = 0
    for token in tokens:
        if token.text == "(":
            depth += 1
        elif token.text == ")":
            depth -= 1
        if depth == 0 and token.text == ",":
            items.append([])
        else:
            items[-1].append(token)
    return [item for item in items if item]


def _without_alias(item: list[Any]) -> list[Any]:
    if len(item) >= 3 and item[-2].upper == "AS":
        return item[:-2]
    if (
        len(item) >= 2
        and item[-1].identifier is not None
        and item[-2].text not in (".",)
        and (item[-2].kind in ("quoted", "number", "string") or item[-2].text == ")" or item[-2].kind == "word")
    ):
        return item[:-1]
    return item


def _free_columns(item: list[Any], columns: dict[str, str]) -> list[str]:
    """Table columns the expression uses outside any aggregate call, in order."""
    found: list[str] = []
    skip_depth: int | None = None
    depth = 0
    for index, token in enumerate(item):
        following = item[index + 1] if index + 1 < len(item) else None
        if token.text == "(":
            depth += 1
            continue
        if token.text == ")":
            depth -= 1
            if skip_depth is not None and depth < skip_depth:
                skip_depth = None
            continue
        if skip_depth is not None:
            continue
        if token.kind == "word" and token.upper in AGGREGATES and following is not None and following.text == "(":
            skip_depth = depth + 1
            continue
        name = token.identifier
        if name is None or (following is not None and following.text in ("(", ".")):
            continue
        if token.kind == "word" and name.casefold() not in columns:
            continue
        if name.casefold() in columns:
            found.append(columns[name.casefold()])
    return found


def _has_aggregate(tokens: Sequence[Any]) -> bool:
    return any(
        token.kind == "word" and token.upper in AGGREGATES and index + 1 < len(tokens) and tokens[index + 1].text == "("
        for index, token in enumerate(tokens)
    )


def _constant_columns(where: Sequence[Any], columns: dict[str, str]) -> set[str]:
    """Columns fixed by ``col = constant`` in an AND-only WHERE clause."""
    if any(token.upper == "OR" or token.text == "||" for token in where):
        return set()
    fixed: set[str] = set()
    for index, token in enumerate(where):
        if token.text != "=" or index == 0 or index + 1 >= len(where):
            continue
        left, right = where[index - 1], where[index + 1]
        for column, other in ((left, right), (right, left)):
            name = column.identifier
            if name is not None and name.casefold() in columns and other.kind in ("string", "number"):
                fixed.add(columns[name.casefold()])
    return fixed


def check_only_full_group_by(tokens: Sequence[Any], *, database: str, table_columns: dict[str, list[str]]) -> None:
    """Raise MySQL 8's ONLY_FULL_GROUP_BY error for a one-table SELECT that violates it.

    Args:
        tokens: the statement's significant tokens (``dialect.Token``).
        database: the database name for the message.
        table_columns: every table's columns, by table name.

    Example:
        ``SELECT a, COUNT(*) FROM t`` raises ``1140 (42000): In aggregated query without GROUP BY...``.
    """
    if not tokens or tokens[0].upper != "SELECT":
        return
    depth, clauses = 0, {}
    for index, token in enumerate(tokens):
        if token.text == "(":
            depth += 1
        elif token.text == ")":
            depth -= 1
        elif token.kind == "word" and token.upper in _SKIP_WORDS and index > 0:
            return
        elif depth == 0 and token.kind == "word" and token.upper in _CLAUSE_WORDS and token.upper not in clauses:
            clauses[token.upper] = index
    if "FROM" not in clauses or depth != 0:
        return
    start = clauses["FROM"] + 1
    if start >= len(tokens) or tokens[start].identifier is None:
        return
    table = tokens[start].identifier
    if table not in table_columns:
        return
    after_from = [position for word, position in clauses.items() if position > clauses["FROM"]]
    from_end = min(after_from, default=len(tokens))
    if from_end - start > 3 or any(token.text == "," for token in tokens[start:from_end]):
        return  # more than one table (or a derived one): no check
    columns = {name.casefold(): name for name in table_columns[table]}
    select_list = list(tokens[1 : clauses["FROM"]])
    if select_list and select_list[0].upper in ("DISTINCT", "ALL"):
        select_list = select_list[1:]
    raw_items = _split_items(select_list)
    items = [_without_alias(item) for item in raw_items]
    aliases = {
        raw[-1].identifier.casefold(): item
        for raw, item in zip(raw_items, items, strict=True)
        if len(raw) > len(item) and raw[-1].identifier is not None
    }
    expanded: list[list[Any]] = []
    for item in items:
        if (len(item) == 1 and item[0].text == "*") or (len(item) == 3 and item[-1].text == "*"):
            expanded.extend([_Name(name)] for name in table_columns[table])
        else:
            expanded.append(item)

    def clause(word: str) -> list[Any]:
        if word not in clauses:
            return []
        begin = clauses[word] + (2 if word in ("GROUP", "ORDER") else 1)
        later = [position for position in clauses.values() if position > clauses[word]]
        return list(tokens[begin : min(later, default=len(tokens))])

    fixed = _constant_columns(clause("WHERE"), columns)
    group = clause("GROUP")
    having = clause("HAVING")
    if group:
        grouped = set(fixed)
        texts = {" ".join(t.text for t in item).casefold() for item in _split_items(group)}
        for item in _split_items(group):
            if len(item) == 1 and item[0].kind == "number":
                position = int(item[0].text) - 1
                if 0 <= position < len(expanded):
                    grouped.update(_free_columns(expanded[position], columns))
                continue
            alias = item[0].identifier.casefold() if len(item) == 1 and item[0].identifier else None
            if alias is not None and alias in aliases and alias not in columns:
                grouped.update(_free_columns(aliases[alias], columns))
                texts.add(" ".join(t.text for t in aliases[alias]).casefold())
                continue
            grouped.update(_free_columns(item, columns))
        for number, item in enumerate(expanded, start=1):
            if " ".join(t.text for t in item).casefold() in texts:
                continue
            _refuse_free_column(item, number, columns, grouped, f"{database}.{table}", grouped_query=True)
        return
    if _has_aggregate(select_list) or _has_aggregate(having):
        for number, item in enumerate(expanded, start=1):  # no functional dependence without GROUP BY
            _refuse_free_column(item, number, columns, set(), f"{database}.{table}", grouped_query=False)


def _refuse_free_column(
    item: list[Any], number: int, columns: dict[str, str], allowed: set[str], where: str, *, grouped_query: bool
) -> None:
    """Raise 1055 (with GROUP BY) or 1140 (aggregate without it) for a column outside ``allowed``."""
    for column in _free_columns(item, columns):
        if column in allowed:
            continue
        if grouped_query:
            raise MySqlError(
                1055,
                "42000",
                f"Expression #{number} of SELECT list is not in GROUP BY clause and contains nonaggregated column "
                f"'{where}.{column}' which is not functionally dependent on columns in GROUP BY clause; this is "
                "incompatible with sql_mode=only_full_group_by",
            )
        raise MySqlError(
            1140,
            "42000",
            f"In aggregated query without GROUP BY, expression #{number} of SELECT list contains nonaggregated "
            f"column '{where}.{column}'; this is incompatible with sql_mode=only_full_group_by",
        )


class _Name:
    """A column name standing for one item of an expanded ``*``."""

    kind = "quoted"
    upper = ""

    def __init__(self, name: str) -> None:
        self.text = self.identifier = name
