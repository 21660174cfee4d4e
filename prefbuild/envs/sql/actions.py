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


def operation(sql: str) -> str:
    """The action that executes ``sql`` (made one line, as the benchmark does)."""
    return OPERATION + sql.strip().replace("\n", " ")


def answer(raw: str) -> str:
    """The action that commits ``raw``, the text after ``Final Answer:`` (keep its leading space)."""
    return ANSWER + raw.split("\n", 1)[0]


def invalid(reason: str) -> str:
    return INVALID + " ".join(reason.split())


def parse_action(action: str) -> SqlAction:
    """Read an action string; never raises."""
    if action.startswith(OPERATION):
        return SqlAction("operation", action[len(OPERATION) :].strip())
    if action.startswith(ANSWER):
        return SqlAction("answer", action[len(ANSWER) :])
    if action.startswith(INVALID):
        return SqlAction("invalid", action[len(INVALID) :])
    return SqlAction("invalid", f"not an sql env action: {action[:80]!r}")
