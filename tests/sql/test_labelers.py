"""SQL labelers on trajectories played through the real env and protocol."""

from __future__ import annotations

from prefbuild.labelers.base import Labeler
from prefbuild.labelers.sql.labelers import (
    SQL_LABELERS,
    SqlErrorLabeler,
    SqlLoopLabeler,
    SqlPrematureSuccessLabeler,
    SqlWrongAnswerLabeler,
    normalize_sql,
)
from prefbuild.records import FailureMode, Trajectory

from .helpers import answer, make_item, make_task, operation, play

T = "`Table of Year, Title, and Role`"
GOOD_QUERY = f"SELECT `Title` FROM {T} WHERE `Role` = 'Johnson'"
QUERY_TASK = make_task(make_item())
INSERT = f"INSERT INTO {T} VALUES ('2020', 'Orange', 'Kakeru', NULL)"
INSERT_TASK = make_task(make_item("INSERT", label=(), reference_sql=INSERT), "sql-test-insert")


def modes(trajectory: Trajectory, labeler: Labeler) -> list[tuple[int, FailureMode]]:
    return [(label.step, label.mode) for label in labeler.label(trajectory)]


def test_registry() -> None:
    assert set(SQL_LABELERS) == {"sql_error", "wrong_answer", "premature_success", "loop"}
    for name, cls in SQL_LABELERS.items():
        assert issubclass(cls, Labeler) and cls.envs == ("sql",)
        assert cls.mode == name
    assert SqlErrorLabeler().applies_to(play(QUERY_TASK, [answer(" []")]))


def test_clean_episode_has_no_labels() -> None:
    trajectory = play(QUERY_TASK, [operation(GOOD_QUERY), answer(' ["Montréal"]')])
    assert trajectory.outcome.success
    for cls in SQL_LABELERS.values():
        assert cls().label(trajectory) == []


def test_sql_error_quotes_the_error_and_rates_repeats_higher() -> None:
    trajectory = play(
        QUERY_TASK,
        [
            operation(f"SELECT Title FROM {T[1:-1]}"),  # table name with spaces not back-quoted
            operation(f"SELECT `Name` FROM {T}"),
            operation(GOOD_QUERY),
            answer(' ["Montréal"]'),
        ],
    )
    labels = SqlErrorLabeler().label(trajectory)
    assert [label.step for label in labels] == [0, 1]
    assert "1064 (42000)" in labels[0].evidence and "1054 (42S22): Unknown column 'Name'" in labels[1].evidence
    assert labels[1].confidence > labels[0].confidence
    assert all(label.mode == FailureMode.sql_error and label.labeler == "sql_error@1" for label in labels)


def test_wrong_answer() -> None:
    wrong = play(QUERY_TASK, [operation(GOOD_QUERY), answer(' ["Montreal"]')])
    labels = SqlWrongAnswerLabeler().label(wrong)
    assert [(label.step, label.confidence) for label in labels] == [(1, 1.0)]
    assert "Montreal" in labels[0].evidence and "Montréal" in labels[0].evidence
    unbracketed = play(QUERY_TASK, [operation(GOOD_QUERY), answer(" Montréal")])  # leading space: wrong
    assert modes(unbracketed, SqlWrongAnswerLabeler()) == [(1, FailureMode.wrong_answer)]
    # No answer at all (format failure) is not a wrong answer.
    assert modes(play(QUERY_TASK, [operation(GOOD_QUERY), "I think it is Montréal."]), SqlWrongAnswerLabeler()) == []
    # A mutation that ran but left the wrong table.
    bad_insert = play(INSERT_TASK, [operation(INSERT.replace("Kakeru", "kakeru")), answer(" []")])
    assert modes(bad_insert, SqlWrongAnswerLabeler()) == [(1, FailureMode.wrong_answer)]
    assert modes(play(INSERT_TASK, [operation(INSERT), answer(" []")]), SqlWrongAnswerLabeler()) == []


def test_premature_success() -> None:
    guess = play(QUERY_TASK, [answer(' ["Aoharu Ride"]')])
    labels = SqlPrematureSuccessLabeler().label(guess)
    assert [(label.step, label.confidence) for label in labels] == [(0, 0.95)]
    after_failure = play(QUERY_TASK, [operation(f"SELECT nope FROM {T}"), answer(' ["Aoharu Ride"]')])
    label = SqlPrematureSuccessLabeler().label(after_failure)[0]
    assert label.step == 1 and "1 statement(s) had failed" in label.evidence
    lucky = play(QUERY_TASK, [answer(' ["Montréal"]')])
    assert [label.confidence for label in SqlPrematureSuccessLabeler().label(lucky)] == [0.5]
    claimed = play(INSERT_TASK, [operation(f"SELECT * FROM {T}"), answer(' ["Done"]')])
    assert modes(claimed, SqlPrematureSuccessLabeler()) == [(1, FailureMode.premature_success)]
    assert SqlPrematureSuccessLabeler().label(play(INSERT_TASK, [operation(INSERT), answer(" []")])) == []
    assert SqlPrematureSuccessLabeler().label(play(QUERY_TASK, [operation(GOOD_QUERY), answer(' ["x"]')])) == []


def test_loop() -> None:
    probe = f"SELECT * FROM {T}"
    looping = play(
        QUERY_TASK,
        [
            operation(probe),
            operation("select * from " + T + " ;"),
            operation("select  *  from " + T),
            answer(' ["Montréal"]'),
        ],
    )
    labels = SqlLoopLabeler().label(looping)
    assert [(label.step, label.confidence) for label in labels] == [(1, 0.7), (2, 0.9)]
    assert "repeats step(s) 0" in labels[0].evidence
    assert SqlLoopLabeler(min_repeats=3).label(looping)[0].step == 2
    # Re-reading the table after changing it is checking, not looping.
    checked = play(INSERT_TASK, [operation(probe), operation(INSERT), operation(probe), answer(" []")])
    assert SqlLoopLabeler().label(checked) == []
    # Inserting the same row twice is a repeat.
    twice = play(INSERT_TASK, [operation(INSERT), operation(INSERT), answer(" []")])
    assert modes(twice, SqlLoopLabeler()) == [(1, FailureMode.loop)]
    assert not twice.outcome.success


def test_normalize_sql() -> None:
    assert normalize_sql("SELECT  COUNT( * ) FROM t ;") == normalize_sql("select count(*) from t")
    assert normalize_sql("SELECT 1") != normalize_sql("SELECT 2")


def test_labelers_fall_back_on_action_text() -> None:
    trajectory = play(
        QUERY_TASK, [operation(f"SELECT `x` FROM {T}"), operation(f"SELECT `x` FROM {T}"), answer(' ["a"]')]
    )
    stripped = trajectory.model_copy(
        update={"steps": [step.model_copy(update={"info": {}}) for step in trajectory.steps]}
    )
    assert modes(stripped, SqlLoopLabeler()) == [(1, FailureMode.loop)]
    assert modes(stripped, SqlPrematureSuccessLabeler()) == [(2, FailureMode.premature_success)]
