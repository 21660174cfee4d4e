"""Readings added after the first blind test set was scored and retired into development data.

Each test pins one behaviour with a positive and the nearest negative, written from the
definitions in ``tests/labelers/blind_sets.md`` (not copied from the set's episodes).
"""

from __future__ import annotations

from typing import Any

from prefbuild.labelers.format_violation import FormatViolationLabeler
from prefbuild.labelers.loop import LoopLabeler
from prefbuild.labelers.premature_success import PrematureSuccessLabeler
from prefbuild.labelers.sql.answers import Observed, aggregates, judge_answer
from prefbuild.labelers.sql.labelers import SqlLoopLabeler, normalize_sql
from prefbuild.labelers.verbose_filler import VerboseFillerLabeler
from prefbuild.records import SqlFacts
from tests.labelers.test_labelers import _trajectory

NOTHING = "Nothing happens."


def _labelled(labeler: Any, trajectory: Any) -> list[int]:
    return [label.step for label in labeler.label(trajectory)]


def test_guessing_object_numbers_is_a_loop_from_the_second_guess() -> None:
    turns = [
        {"action": "go to countertop 1", "feedback": "On the countertop 1, you see a apple 4, and a bread 6."},
        {"action": "take apple 1 from countertop 1", "feedback": NOTHING},
        {"action": "take apple 2 from countertop 1", "feedback": NOTHING},
        {"action": "take apple 3 from countertop 1", "feedback": NOTHING},
        {"action": "take apple 4 from countertop 1", "feedback": "You pick up the apple 4 from the countertop 1."},
    ]
    assert _labelled(LoopLabeler(), _trajectory(turns, goal="put a clean apple in diningtable.")) == [2, 3]


def test_a_failed_command_retried_elsewhere_after_a_walk_is_not_a_guess() -> None:
    turns = [
        {"action": "go to countertop 1", "feedback": "On the countertop 1, you see a bread 6."},
        {"action": "take apple 1 from countertop 1", "feedback": NOTHING},
        {"action": "go to countertop 2", "feedback": "On the countertop 2, you see a apple 1."},
        {"action": "take apple 1 from countertop 2", "feedback": "You pick up the apple 1 from the countertop 2."},
        # one slot varied, but the second try is not a failure: the variation found something
        {"action": "put apple 1 in/on cabinet 1", "feedback": NOTHING},
        {"action": "put apple 1 in/on countertop 2", "feedback": "You put the apple 1 in/on the countertop 2."},
    ]
    assert _labelled(LoopLabeler(), _trajectory(turns, goal="put a clean apple in diningtable.")) == []


def test_a_put_narrated_beside_a_walk_anywhere_is_a_plan_not_a_claim() -> None:
    goal = "cool some plate and put it in sidetable."
    walk = {"thought": "The plate is cool. Now I put it on the sidetable.", "action": "go to diningtable 1",
            "feedback": "On the diningtable 1, you see a bread 3."}
    look = {"thought": "Now I put the plate on the sidetable.", "action": "look", "feedback": "You are in the room."}
    assert _labelled(PrematureSuccessLabeler(), _trajectory([walk], goal=goal)) == []
    assert _labelled(PrematureSuccessLabeler(), _trajectory([walk, look], goal=goal)) == [1]


def test_years_are_not_averaged_into_an_answer() -> None:
    rows = (("1974", "Marta Oyelaran"), ("1978", "Marta Oyelaran"))
    assert 1976.0 not in aggregates(rows)
    seen = [Observed(0, "SELECT * FROM t", "[('1974', 'Marta Oyelaran'), ('1978', 'Marta Oyelaran')]", rows)]
    assert judge_answer(["1976"], seen) is not None
    assert judge_answer(["1978"], seen) is None
    # a column of ordinary numbers is still averaged ("what is the average score")
    scores = (("a", 12.0), ("b", 14.0))
    assert judge_answer(["13"], [Observed(0, "SELECT * FROM t", "[('a', 12), ('b', 14)]", scores)]) is None


def test_re_listing_the_rows_just_shown_is_filler() -> None:
    rows = "[('1974', 'Marta Oyelaran', 'Nigeria'), ('1978', 'Marta Oyelaran', 'Nigeria')]"
    restated = (
        "The result has two rows. The first row has Year 1974, Champion Marta Oyelaran and Country Nigeria. "
        "The second row has Year 1978, Champion Marta Oyelaran and Country Nigeria."
    )
    turns = [
        {"raw": "Action: Operation\n```sql\nSELECT * FROM t\n```", "action": "Operation: SELECT * FROM t",
         "feedback": rows},
        {"raw": restated + "\nAction: Operation\n```sql\nSELECT 1\n```", "thought": restated,
         "action": "Operation: SELECT 1", "feedback": "[(1,)]"},
        {"raw": "She won in 1978.\nAction: Answer\nFinal Answer: [\"1978\"]", "thought": "She won in 1978.",
         "action": 'Answer: ["1978"]'},
    ]
    trajectory = _trajectory(turns, goal="In which year did Marta Oyelaran win?", name="sql", protocol="dbbench")
    assert _labelled(VerboseFillerLabeler(), trajectory) == [1]


def test_several_statements_in_one_operation_are_a_format_violation() -> None:
    def operation(sql: str) -> dict[str, Any]:
        return {"raw": f"Action: Operation\n```sql\n{sql}\n```", "action": f"Operation: {sql}",
                "facts": {"sql": SqlFacts(turn="operation", executed=sql)}, "feedback": "[]"}

    turns = [
        operation("UPDATE t SET v = 'Ashton Gate' WHERE d = '12 March'; SELECT * FROM t;"),
        operation("SELECT v FROM t WHERE d = 'a;b';"),
        operation("SELECT v FROM t; -- checked"),
        operation("SELECT v FROM t WHERE d = 'unterminated;"),
    ]
    trajectory = _trajectory(turns, goal="Change the venue.", name="sql", protocol="dbbench")
    assert _labelled(FormatViolationLabeler(), trajectory) == [0]


def test_a_query_re_run_with_only_a_column_alias_added_is_a_repeat() -> None:
    aliased = normalize_sql("SELECT COUNT(*) AS total FROM `t` WHERE a = 1")
    assert aliased == normalize_sql("SELECT COUNT(*) FROM t WHERE a = 1")
    assert normalize_sql("SELECT CAST(x AS SIGNED) FROM t") != normalize_sql("SELECT x FROM t")

    def query(sql: str, reply: str) -> dict[str, Any]:
        return {"action": f"Operation: {sql}", "feedback": reply,
                "facts": {"sql": SqlFacts(turn="operation", statement="query", executed=sql)}}

    turns = [query("SELECT COUNT(*) FROM t", "[(14,)]"), query("SELECT COUNT(*) AS total FROM t", "[(14,)]")]
    trajectory = _trajectory(turns, goal="How many?", name="sql", protocol="dbbench")
    assert _labelled(SqlLoopLabeler(), trajectory) == [1]
