"""What an "action" is in the sql env: one line of text in one of three forms.

* ``Operation: <sql>`` — execute one SQL statement. ``<sql>`` is exactly what the benchmark
  executes: the content of the first ```` ```sql ```` block, stripped, newlines replaced by
  spaces (so an action is always one line).
* ``Answer:<text>`` — commit the final answer. ``<text>`` is everything after
  ``Final Answer:`` on that line, **leading space included** (``Answer: ["x"]``), because
  the benchmark scores that raw text (``Final Answer: x`` without brackets is wrong for its
  leading space).
* ``Invalid: <why>`` — the turn matched no pattern (``Action: Operation`` without a sql
  block, or no ``Final Answer:`` line). The benchmark ends the episode there ("agent
  validation failed"): a query item fails, a mutation item is still scored on its table.

An ``Operation`` or ``Invalid`` action may carry a second line ``Answer:<text>``: the turn also
had a ``Final Answer:`` line. The benchmark reads it only from the turn after the last allowed
operation (that turn is final whatever its action word), so the env uses it only there.

Protocols turn model text into these actions (``parse``) and back (``render``); the env
executes them. Any other string is treated as ``Invalid``.
"""

from __future__ import annotations

from dataclasses import dataclass

OPERATION = "Operation: "
ANSWER = "Answer:"
INVALID = "Invalid: "


@dataclass(frozen=True)
class SqlAction:
    kind: str  # "operation", "answer" or "invalid"
    text: str  # the SQL, the raw answer text, or the reason
    final_answer: str | None = None  # a Final Answer line beside an operation or invalid turn


def _with_answer(action: str, final_answer: str | None) -> str:
    return action if final_answer is None else action + "\n" + answer(final_answer)


def operation(sql: str, final_answer: str | None = None) -> str:
    """The action that executes ``sql`` (made one line, as the benchmark does).

    Args:
        sql: the statement.
        final_answer: the raw text after ``Final Answer:`` when the same turn had one.

    Returns:
        The action string.

    Example:
        >>> operation("SELECT 1\\nFROM t")
        'Operation: SELECT 1 FROM t'
    """
    return _with_answer(OPERATION + sql.strip().replace("\n", " "), final_answer)


def answer(raw: str) -> str:
    """The action that commits ``raw``, the text after ``Final Answer:`` (keep its leading space)."""
    return ANSWER + raw.split("\n", 1)[0]


def invalid(reason: str, final_answer: str | None = None) -> str:
    return _with_answer(INVALID + " ".join(reason.split()), final_answer)


def parse_action(action: str) -> SqlAction:
    """Read an action string; never raises."""
    head, _, tail = action.partition("\n")
    final = tail[len(ANSWER) :] if tail.startswith(ANSWER) else None
    if action.startswith(OPERATION):
        return SqlAction("operation", head[len(OPERATION) :].strip(), final)
    if action.startswith(ANSWER):
        return SqlAction("answer", action[len(ANSWER) :])
    if action.startswith(INVALID):
        return SqlAction("invalid", head[len(INVALID) :], final)
    return SqlAction("invalid", f"not an sql env action: {action[:80]!r}")
