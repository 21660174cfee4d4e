"""Labelers for the ``sql`` (DBBench) env: failing SQL, wrong answers, premature answers, repeated queries.

They read the typed facts the sql env records on every step (``Step.facts.sql``: turn,
executed SQL, error, mutated, answer, expected; ``Step.facts.won``) and fall back on the
action text (``Operation: <sql>`` / ``Answer:<text>``) for logs that lack them. Each labeler
finds one failure mode and quotes the SQL, error or answer it saw.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from prefbuild.envs.sql.actions import parse_action
from prefbuild.envs.sql.items import is_mutation
from prefbuild.labelers.base import Labeler
from prefbuild.labelers.sql.answers import Observed, answer_values, is_position, judge_answer, looked_up, parse_result
from prefbuild.labelers.text import format_steps, short
from prefbuild.records import FailureMode, Label, Step, Trajectory

_SPACES = re.compile(r"\s+")
_AROUND_PUNCTUATION = re.compile(r"\s*([(),=<>!])\s*")
# "AS total" before the next select-list item or FROM (not "CAST(x AS SIGNED)", which a parenthesis closes).
_COLUMN_ALIAS = re.compile(r"\s*\bas\s+(?:\w+|'[^']*'|\"[^\"]*\")(?=\s*,|\s+from\b)")


def step_kind(step: Step) -> str | None:
    """``operation``, ``answer`` or ``invalid`` for a step of the sql env; None when there was no action."""
    kind = step.facts.sql.turn if step.facts.sql is not None else None
    if kind is not None:
        return kind
    if step.action is None:
        return None
    return parse_action(step.action).kind


def executed_sql(step: Step) -> str | None:
    sql = step.facts.sql.executed if step.facts.sql is not None else None
    if sql is not None:
        return sql
    if step.action is not None and step_kind(step) == "operation":
        return parse_action(step.action).text
    return None


def answer_text(step: Step) -> str | None:
    answer = step.facts.sql.answer if step.facts.sql is not None else None
    if answer is not None and step_kind(step) == "answer":
        return answer
    if step.action is not None and step_kind(step) == "answer":
        return parse_action(step.action).text
    return None


def sql_error(step: Step) -> str | None:
    error = step.facts.sql.error if step.facts.sql is not None else None
    return error or None


def mutated(step: Step) -> bool:
    """The step's statement changed the table (as recorded; unknown counts as no)."""
    return bool(step.facts.sql is not None and step.facts.sql.mutated)


def operation_succeeded(step: Step) -> bool:
    return step_kind(step) == "operation" and sql_error(step) is None and step.valid is not False


def normalize_sql(sql: str) -> str:
    """Comparable form of a query: lower case, single spaces, no spaces at punctuation, no trailing ';',
    no backquotes around names, no column aliases in the select list (results print without headers,
    so ``COUNT(*) AS total`` returns what ``COUNT(*)`` does).

    Example:
        >>> normalize_sql("SELECT `Population` FROM `Towns`;") == normalize_sql("select Population from Towns")
        True
        >>> normalize_sql("SELECT COUNT(*) AS total FROM t") == normalize_sql("SELECT COUNT(*) FROM t")
        True
    """
    text = _SPACES.sub(" ", sql.strip().rstrip(";").strip().replace("`", "")).lower()
    if text.startswith("select"):
        text = _COLUMN_ALIAS.sub("", text)
    return _AROUND_PUNCTUATION.sub(r"\1", text)


def _is_mutation_task(trajectory: Trajectory) -> bool:
    if is_mutation(trajectory.task.type) or trajectory.task.meta.get("kind") == "mutation":
        return True
    # A chat log records no task type: an item whose table the agent changed is a mutation item.
    return trajectory.task.type == "unknown" and any(mutated(step) for step in trajectory.steps)


class SqlErrorLabeler(Labeler):
    """Labels every statement that failed; repeated failures in one episode get higher confidence."""

    name: ClassVar[str] = "sql_error"
    mode: ClassVar[str] = FailureMode.sql_error.value
    envs: ClassVar[tuple[str, ...]] = ("sql",)
    defaults: ClassVar[dict[str, Any]] = {"single_confidence": 0.7, "repeated_confidence": 0.95}

    def label(self, trajectory: Trajectory) -> list[Label]:
        labels: list[Label] = []
        failed: list[int] = []
        for step in trajectory.steps:
            error = sql_error(step)
            if step_kind(step) != "operation" or error is None:
                continue
            failed.append(step.index)
            sql = executed_sql(step) or ""
            evidence = f"statement '{short(sql, 70)}' failed: {short(error, 140)}"
            if len(failed) > 1:
                evidence += (
                    f" (failing statement {len(failed)} of this episode, after steps {format_steps(failed[:-1])})"
                )
                confidence = self.config["repeated_confidence"]
            else:
                confidence = self.config["single_confidence"]
            labels.append(self.make_label(step, confidence, evidence))
        return labels


class SqlWrongAnswerLabeler(Labeler):
    """Labels a final answer the grader rejected (queries), or the answer that ended a mutation
    episode whose table does not match the reference after a mutation ran.

    Where the log does not record the grader's verdict (``facts.won`` unknown, as in AgentBench
    ``runs.jsonl``) it never guesses: it labels a query answer only when the evidence shows it
    wrong (``sql.answers``): a value that appears in no observed result and is computed from
    none (a count, sum, average, difference ... of observed values); with ``contradictions``
    also an answer contradicting the last relevant SELECT result (neither read nor computed from
    it) while no other result is that answer. Mutation answers stay unlabelled there.
    """

    name: ClassVar[str] = "sql_wrong_answer"
    mode: ClassVar[str] = FailureMode.wrong_answer.value
    version: ClassVar[int] = 5
    envs: ClassVar[tuple[str, ...]] = ("sql",)
    defaults: ClassVar[dict[str, Any]] = {
        "unobserved_confidence": 0.7,
        # Also label an answer contradicting the last relevant SELECT result when its values were copied
        # from rows of other results (off: the evaluation sets read a copied value as observed).
        "contradictions": False,
        "contradiction_confidence": 0.7,
    }

    def label(self, trajectory: Trajectory) -> list[Label]:
        if trajectory.outcome.success:
            return []
        for step in reversed(trajectory.steps):
            if step_kind(step) != "answer":
                continue
            if step.facts.won is True:
                return []
            if step.facts.won is None:
                return self._unobserved(trajectory, step)
            answer = answer_text(step) or ""
            expected = step.facts.sql.expected if step.facts.sql is not None else None
            if _is_mutation_task(trajectory):
                if not any(mutated(step_) for step_ in trajectory.steps[: step.index]):
                    return []  # nothing was executed: that is premature success, not a wrong result
                evidence = "the table after the episode does not match the reference"
                table = step.facts.sql.table_hash if step.facts.sql is not None else None
                if table is not None and expected is not None:
                    evidence += f" (hash {table} vs expected {expected})"
            else:
                evidence = f"final answer '{short(answer.strip(), 60)}' is wrong"
                if expected is not None:
                    evidence += f"; expected {short(repr(expected), 60)}"
            return [self.make_label(step, 1.0, evidence)]
        return []

    def _unobserved(self, trajectory: Trajectory, step: Step) -> list[Label]:
        if _is_mutation_task(trajectory):
            return []
        observed = [
            Observed(item.index, executed_sql(item) or "", text, parse_result(text))
            for item in trajectory.steps[: step.index]
            if step_kind(item) == "operation"
            and sql_error(item) is None
            and not mutated(item)
            and (text := _result(item))
        ]
        values = answer_values(answer_text(step) or "")
        question = trajectory.task.goal
        named = [value for value in values if looked_up(value, question, observed)]
        if named and len(named) == len(values):
            return []  # "Which is higher, A or B?" answered "B" after looking B up: the candidates were observed
        if is_position(values, question, observed):
            return []  # "In what position did Peru finish?" counted along an ordered result
        verdict = judge_answer(
            [value for value in values if value not in named], observed,
            copied_values=bool(self.config["contradictions"]),
        )
        if verdict is None:
            return []
        shown = ", ".join(f"'{short(value, 30)}'" for value in (verdict.values or ("(empty)",)))
        if verdict.kind == "contradicts" and verdict.against is not None:
            against = verdict.against
            evidence = (
                f"answer {shown} contradicts the last relevant result (step {against.step}, "
                f"'{short(against.sql, 50)}' returned {short(against.text, 60)}): it is not read or computed "
                "from it, and no other result is that answer (the log does not record the grader's verdict)"
            )
            confidence = float(self.config["contradiction_confidence"])
        elif observed:
            evidence = (
                f"answer {shown} appears in none of the {len(observed)} observed result(s) "
                "and cannot be derived from them (the log does not record the grader's verdict)"
            )
            confidence = float(self.config["unobserved_confidence"])
        else:
            evidence = f"answer {shown} was given without any observed query result (no query succeeded)"
            confidence = float(self.config["unobserved_confidence"])
        return [self.make_label(step, confidence, evidence)]


# A final turn saying the change was made: "The row has been inserted.", ["done"], the statement itself,
# or the new state: "Order 5531 is now marked as Shipped.", "The price is set to 12."
_CHANGE_CLAIM = re.compile(
    r"\b(?:inserted|updated|deleted|removed|added|changed|modified|replaced|applied|executed|committed|performed|"
    r"done|completed?|success(?:ful(?:ly)?)?|finished|insert\s+into|update\s+\S+\s+set|delete\s+from|"
    r"(?:is|are|was|were)\s+now|marked|set\s+to|recorded|stored|saved|created|entered)\b",
    re.IGNORECASE,
)
# A failure said anywhere denies the claim; a plain negation only in its own clause ("the title is not there
# yet, so the record has been inserted" still claims the insert).
_CHANGE_FAILED = re.compile(r"\b(?:cannot|unable|failed|fails|impossible)\b", re.IGNORECASE)
_CHANGE_DENIED = re.compile(r"\b(?:not|never|no\s+(?:row|rows|change|changes))\b|n't\b", re.IGNORECASE)
_CLAUSES = re.compile(r"[.;,!?\n]+|\b(?:but|so|however|therefore)\b", re.IGNORECASE)


def _turn_text(step: Step) -> str:
    return (step.raw_output or step.action or "").strip()


_STATEMENT_LINE = re.compile(r"^\s*(?:insert|update|delete|replace)\b.*$", re.IGNORECASE | re.MULTILINE)


def claims_change(step: Step, *, in_words: bool = False) -> bool:
    """The final turn says the table was changed (and does not say it could not be).

    ``in_words``: only the turn's prose counts, not a statement written in it (a turn that ends the run
    without a valid action may hold the statement it meant to run).

    Example:
        >>> claims_change(Step(index=0, observation="", raw_output="The row was inserted. Final Answer: [1]"))
        True
        >>> claims_change(Step(index=0, observation="", raw_output="I could not insert it. Final Answer: []"))
        False
    """
    text = _turn_text(step)
    if in_words:
        text = _STATEMENT_LINE.sub("", text)
    if not _CHANGE_CLAIM.search(text) or _CHANGE_FAILED.search(text):
        return False
    return any(
        _CHANGE_CLAIM.search(clause) and not _CHANGE_DENIED.search(clause) for clause in _CLAUSES.split(text)
    )


class SqlPrematureSuccessLabeler(Labeler):
    """Labels an answer given before any query succeeded, or a final turn of a mutation task saying
    the change was made before any statement changed the table."""

    name: ClassVar[str] = "sql_premature_success"
    mode: ClassVar[str] = FailureMode.premature_success.value
    version: ClassVar[int] = 3
    envs: ClassVar[tuple[str, ...]] = ("sql",)
    defaults: ClassVar[dict[str, Any]] = {"lucky_confidence": 0.5}

    def label(self, trajectory: Trajectory) -> list[Label]:
        mutation = _is_mutation_task(trajectory)
        last = len(trajectory.steps) - 1
        for step in trajectory.steps:
            # The run's last turn can claim the change without a valid action (a DELETE written outside
            # a sql block, "The row has been deleted.").
            final_claim = mutation and step.index == last and step_kind(step) == "invalid"
            if step_kind(step) == "answer" or final_claim:
                earlier = trajectory.steps[: step.index]
                if mutation:
                    if any(mutated(item) for item in earlier) or not claims_change(step, in_words=final_claim):
                        return []
                    evidence = (
                        f"says '{short(_turn_text(step), 60)}' but no INSERT/UPDATE/DELETE changed the table "
                        "before this answer"
                    )
                else:
                    if step.facts.won is None or any(operation_succeeded(item) for item in earlier):
                        # Without the grader's verdict an answer from memory may be right; wrong_answer
                        # judges it on the evidence instead.
                        return []
                    failed = sum(1 for item in earlier if step_kind(item) == "operation")
                    evidence = f"answered '{short((answer_text(step) or '').strip(), 50)}' without a successful query"
                    if failed:
                        evidence += f" ({failed} statement(s) had failed)"
                won = step.facts.won is True or (trajectory.outcome.success and step.done)
                confidence = self.config["lucky_confidence"] if won else 0.95
                return [self.make_label(step, confidence, evidence)]
        return []


class SqlLoopLabeler(Labeler):
    """Labels a statement that repeats an earlier one (normalised) while no other statement changed the
    table and its result did not change (a SELECT re-run to verify an INSERT is not a loop)."""

    name: ClassVar[str] = "sql_loop"
    mode: ClassVar[str] = FailureMode.loop.value
    version: ClassVar[int] = 3
    envs: ClassVar[tuple[str, ...]] = ("sql",)
    defaults: ClassVar[dict[str, Any]] = {"min_repeats": 2}

    def label(self, trajectory: Trajectory) -> list[Label]:
        needed = max(2, int(self.config["min_repeats"]))
        occurrences: dict[str, list[int]] = {}
        labels: list[Label] = []
        for step in trajectory.steps:
            if step_kind(step) != "operation":
                continue
            sql = executed_sql(step)
            if sql is None:
                continue
            key = normalize_sql(sql)
            seen = occurrences.setdefault(key, [])
            # Another result after no change to the table: a fix when it now works (the backquotes the
            # first try lacked) or fails differently (the error moved: news), still the same statement
            # when it worked before and now fails.
            previous = trajectory.steps[seen[-1]] if seen else None
            changed = (
                previous is not None
                and _result(previous) != _result(step)
                and (sql_error(step) is None or sql_error(previous) is not None)
            )
            if changed:
                seen.clear()
            seen.append(step.index)
            if len(seen) >= needed:
                evidence = (
                    f"statement '{short(sql, 70)}' repeats step(s) {format_steps(seen[:-1])} "
                    "with the same result and no other change to the table in between"
                )
                labels.append(self.make_label(step, 0.9 if len(seen) >= 3 else 0.7, evidence))
            if mutated(step):
                # The table changed: an earlier query may now return something new, but running this
                # same statement again (a second identical INSERT) is still a repeat.
                occurrences = {key: seen}
        return labels


def _result(step: Step) -> str:
    """What a statement returned (its error, or the printed rows), comparable across steps."""
    return _SPACES.sub(" ", (sql_error(step) or step.feedback).strip())


SQL_LABELERS: dict[str, type[Labeler]] = {
    "sql_error": SqlErrorLabeler,
    "wrong_answer": SqlWrongAnswerLabeler,
    "premature_success": SqlPrematureSuccessLabeler,
    "loop": SqlLoopLabeler,
}

__all__ = [
    "SQL_LABELERS",
    "SqlErrorLabeler",
    "SqlLoopLabeler",
    "SqlPrematureSuccessLabeler",
    "SqlWrongAnswerLabeler",
    "normalize_sql",
]
