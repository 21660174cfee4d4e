"""DBBench scoring (spec section 6.2), as pure functions.

Queries compare the agent's answer list with the label list: one element each -> float
equality when both read as floats, else exact equality; otherwise set equality. Mutations
compare a hash of the whole table with the stored ``answer_md5``, printed the way the MySQL
client prints the hash query's result (``[('<32 hex>',)]``, or ``[(None,)]`` for an empty
table).

The benchmark evaluates the answer text with Python's ``eval``; prefbuild uses
``ast.literal_eval``, which reads every literal the same way and never runs code.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterable, Sequence
from typing import Any


def parse_answer(answer: str) -> list[Any]:
    """The answer list the benchmark scores: the literal as a list, else ``[answer]`` unchanged.

    ``' ["a", "b"]'`` -> ``["a", "b"]``; ``' 12'`` -> ``[' 12']`` (a bare number is no list);
    ``' Soviet Union'`` -> ``[' Soviet Union']`` (leading space kept); ``"'ab'"`` -> ``['a', 'b']``.
    """
    try:
        value = ast.literal_eval(answer)
        return list(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        # handled: an answer that is not a Python literal is one value, as in DBBench's grader
        return [answer]


def _as_float(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        # handled: a value that is not a number is compared as text by the caller
        return None


def answers_match(answer: str, label: Sequence[Any]) -> bool:
    """Whether the raw answer text (what follows ``Final Answer:``) scores as correct against ``label``."""
    given = parse_answer(answer)
    expected = list(label)
    if len(given) == 1 and len(expected) == 1:
        left, right = _as_float(given[0]), _as_float(expected[0])
        if left is not None and right is not None:
            return left == right
        return _equal(given[0], expected[0])
    try:
        return set(given) == set(expected)
    except TypeError:
        # handled: unhashable elements (a nested list) cannot form the benchmark's set
        return False


def _equal(left: Any, right: Any) -> bool:
    try:
        return bool(left == right)
    except Exception:
        # handled: boundary: answer values may fail to compare in any way; such values differ
        return False


GROUP_CONCAT_MAX_LEN = 1024  # MySQL's default; the benchmark's hash query runs under it


def _cell_text(value: Any) -> str:
    """A stored cell as MySQL's ``CONCAT_WS`` sees it: the stored text."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def table_hash(rows: Iterable[Sequence[Any]]) -> str | None:
    """The benchmark's table hash: MD5 of the sorted 5-char row-hash prefixes; None for no rows.

    Per row: ``CONCAT_WS(',', ...)`` of every column (NULLs skipped), MD5, first 5 hex characters;
    then the sorted prefixes joined by ``,`` (``GROUP_CONCAT``, cut at MySQL's default
    ``group_concat_max_len`` of 1024 bytes, which tables of more than 170 rows reach), MD5 again.
    """
    prefixes = sorted(
        hashlib.md5(",".join(_cell_text(v) for v in row if v is not None).encode("utf-8")).hexdigest()[:5]
        for row in rows
    )
    if not prefixes:
        return None
    return hashlib.md5(",".join(prefixes).encode("utf-8")[:GROUP_CONCAT_MAX_LEN]).hexdigest()


def printed_hash(digest: str | None) -> str:
    """The hash as the benchmark stores it in ``answer_md5``: the printed one-row result."""
    return "[(None,)]" if digest is None else f"[('{digest}',)]"


def mutation_correct(rows: Iterable[Sequence[Any]] | None, answer_md5: str) -> bool:
    """Whether the final table (None when it no longer exists) matches the stored hash exactly."""
    if rows is None:
        return False
    return printed_hash(table_hash(rows)) == answer_md5
