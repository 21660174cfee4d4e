"""DBBench answers judged on the evidence of the replies (AgentBench logs do not record correctness).

Written from the definitions: an answer is wrong when it appears in no observed result and is
computed from none (a cell is copied exactly, as the benchmark compares floats; a count, sum,
average, min / max of several rows or a difference / ratio of observed numbers is computed, and
may be rounded by the agent). With ``contradictions`` the labeler also judges an answer against
the last relevant SELECT result: wrong when neither read nor computed from it while no other
result *is* that answer, even if its value was copied from another result's row. What cannot
be derived is never labelled. Episodes are AgentBench v0.2 ``runs.jsonl`` lines read by the
real importer.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prefbuild.io.sources import read_trajectories
from prefbuild.labelers import build_labelers, label_trajectory
from prefbuild.labelers.sql.answers import (
    Observed,
    aggregates,
    judge_answer,
    number_of,
    parse_result,
    same_number,
)
from tests.labelers.heldout.build import SqlEpisode, dbbench_record

TABLE = "The name of this table is Results, and the headers of this table are Team,Player,Goals."


def _select(sql: str, reply: str, words: str = "") -> dict[str, str]:
    return {"raw": f"{words}\nAction: Operation\n```sql\n{sql}\n```".lstrip(), "o": reply}


def _answer(values: str) -> dict[str, str]:
    return {"raw": f"Action: Answer\nFinal Answer: {values}"}


def _wrong_answer_steps(tmp_path: Path, *turns: dict[str, str], contradictions: bool = False) -> list[int]:
    episode = SqlEpisode(id="t", type="SELECT", question="Q?", table=TABLE, steps=list(turns))
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(dbbench_record(0, episode)) + "\n", encoding="utf-8")
    (trajectory,) = read_trajectories(path)
    assert trajectory.task.meta["outcome_known"] is False
    configs = [{"name": "wrong_answer", "params": {"contradictions": contradictions}}] if contradictions else None
    labelled = label_trajectory(trajectory, build_labelers(configs, env="sql"))
    return [step.index for step in labelled.steps for label in step.labels if label.mode == "wrong_answer"]


ALL_ROWS = "[('Ajax', 'Suarez', '35'), ('PSV', 'Lozano', '17'), ('Ajax', 'Dolberg', '16'), ('PSV', 'Bergwijn', '12')]"
SUM_SQL = "SELECT SUM(`Goals`) FROM `Results` WHERE `Team` = 'Ajax'"


CONTRADICTED = [
    # The SUM the agent computed last says 51; 17 is a cell of the earlier listing, not that sum.
    [_select("SELECT * FROM `Results`", ALL_ROWS), _select(SUM_SQL, "[(51.0,)]"), _answer('["17"]')],
    # The single value the last SELECT returned is contradicted by another player seen earlier.
    [
        _select("SELECT * FROM `Results`", ALL_ROWS),
        _select("SELECT `Player` FROM `Results` WHERE `Goals` = '17'", "[('Lozano',)]"),
        _answer('["Dolberg"]'),
    ],
    # A list answer naming a value the last list result does not hold.
    [
        _select("SELECT * FROM `Results`", ALL_ROWS),
        _select("SELECT `Player` FROM `Results` WHERE `Team` = 'Ajax'", "[('Suarez',), ('Dolberg',)]"),
        _answer('["Suarez", "Dolberg", "Lozano"]'),
    ],
]


@pytest.mark.parametrize("turns", CONTRADICTED)
def test_answers_contradicting_the_last_relevant_result_are_labelled_when_asked(
    tmp_path: Path, turns: list[dict[str, str]]
) -> None:
    assert _wrong_answer_steps(tmp_path, *turns, contradictions=True) == [len(turns) - 1]
    # By default a value copied from an observed row counts as observed (the evaluation sets' reading).
    assert _wrong_answer_steps(tmp_path, *turns) == []


@pytest.mark.parametrize(
    ("turns", "wrong"),
    [
        # Never observed: a SUM says 51.
        ([_select(SUM_SQL, "[(51.0,)]"), _answer('["48"]')], [1]),
        # A rounded form of a printed value is not that value (the benchmark compares floats exactly).
        ([_select("SELECT AVG(`Goals`) FROM `Results`", "[(17.25,)]"), _answer('["17"]')], [1]),
        ([_select("SELECT AVG(`Goals`) FROM `Results`", "[(Decimal('22.6667'),)]"), _answer('["22.67"]')], [1]),
        # A wrong count is not rescued by arithmetic on unrelated cells of a listing.
        (
            [
                _select("SELECT * FROM `Results`", "[('Ajax', 'Suarez', '1'), ('PSV', 'Lozano', '2')]"),
                _select("SELECT COUNT(*) FROM `Results` WHERE `Team` = 'Ajax'", "[(3,)]"),
                _answer('["4"]'),
            ],
            [2],
        ),
        # A multi-value answer with one value seen nowhere.
        (
            [
                _select("SELECT `Player` FROM `Results` WHERE `Team` = 'Ajax'", "[('Suarez',), ('Dolberg',)]"),
                _answer('["Suarez", "Dolberg", "Huntelaar"]'),
            ],
            [1],
        ),
    ],
)
def test_answers_observed_nowhere_are_labelled(tmp_path: Path, turns: list[dict[str, str]], wrong: list[int]) -> None:
    assert _wrong_answer_steps(tmp_path, *turns) == wrong
    assert _wrong_answer_steps(tmp_path, *turns, contradictions=True) == wrong


@pytest.mark.parametrize(
    "turns",
    [
        # Read from the last result, with the client's formatting and case aside.
        [_select(SUM_SQL, "[(51.0,)]"), _answer('["51"]')],
        [_select("SELECT `Player` FROM `Results` WHERE `Goals` = '17'", "[('Lozano',)]"), _answer('["lozano"]')],
        # Computed from the last result: a count, a sum, an average the agent rounded.
        [_select("SELECT * FROM `Results`", ALL_ROWS), _answer('["4"]')],
        [_select("SELECT `Goals` FROM `Results` WHERE `Team` = 'Ajax'", "[('35',), ('16',)]"), _answer('["51"]')],
        [_select("SELECT `Goals` FROM `Results` WHERE `Team` = 'Ajax'", "[('35',), ('16',)]"), _answer('["25.5"]')],
        [_select("SELECT `Goals` FROM `Results`", "[('35',), ('17',), ('16',)]"), _answer('["22.67"]')],
        [_select("SELECT AVG(`Goals`) FROM `Results`", "[(Decimal('22.6667'),)]"), _answer("[22.6667]")],
        # A difference of two single-value results.
        [
            _select(SUM_SQL, "[(51.0,)]"),
            _select("SELECT SUM(`Goals`) FROM `Results` WHERE `Team` = 'PSV'", "[(17.0,)]"),
            _answer('["34"]'),
        ],
        # A trailing check of another kind does not hide the result the answer came from.
        [
            _select("SELECT `Player` FROM `Results` WHERE `Goals` = '35'", "[('Suarez',)]"),
            _select("SELECT COUNT(*) FROM `Results` WHERE `Player` = 'Suarez'", "[(1,)]"),
            _answer('["Suarez"]'),
        ],
        # The answer is exactly an earlier result; the last one was a verification of something else.
        [
            _select("SELECT `Player` FROM `Results` WHERE `Goals` = '35'", "[('Suarez',)]"),
            _select("SELECT `Team` FROM `Results` WHERE `Player` = 'Suarez'", "[('Ajax',)]"),
            _answer('["Suarez"]'),
        ],
        # An empty last result and a none-like answer; a list answer that is a subset (top rows).
        [_select("SELECT `Player` FROM `Results` WHERE `Goals` > '50'", "[]"), _answer('["None"]')],
        [
            _select("SELECT `Player` FROM `Results` ORDER BY `Goals` DESC", "[('Suarez',), ('Lozano',), ('Dolberg',)]"),
            _answer('["Suarez"]'),
        ],
        # A last result that cannot be read (cut by the harness) is not judged.
        [
            _select("SELECT * FROM `Results`", ALL_ROWS),
            _select("SELECT `Player` FROM `Results`", "[('Suarez',), ('Lozano',), ('Dolb"),
            _answer('["PSV"]'),
        ],
        # Yes / no answers are not judged when something was observed.
        [_select(SUM_SQL, "[(51.0,)]"), _answer('["Yes"]')],
    ],
)
def test_answers_read_or_computed_from_the_replies_are_not_labelled(
    tmp_path: Path, turns: list[dict[str, str]]
) -> None:
    assert _wrong_answer_steps(tmp_path, *turns) == []
    assert _wrong_answer_steps(tmp_path, *turns, contradictions=True) == []


def test_replies_are_read_as_the_mysql_client_prints_them() -> None:
    assert parse_result("[('a', Decimal('2.50')), (None, 3)]") == (("a", "2.50"), (None, 3.0))
    assert parse_result("[(datetime.date(2020, 1, 5),)]") == (("2020-01-05",),)
    assert parse_result("1064 (42000): You have an error") is None
    assert parse_result("[('cut',), ('of") is None
    assert number_of("30,720") == 30720.0 and number_of("25%") == 25.0 and number_of("2.1 million") is None
    assert same_number("12", 12.0) and not same_number("17", 17.25) and not same_number("3.33", 3.3333)
    assert same_number("3.33", 3.3333, rounded=True) and not same_number("3.34", 3.3333, rounded=True)
    assert aggregates((("a", 3.0), ("b", 4.0), ("c", 5.0), ("d", 6.0), ("e", 7.0))) == [5.0, 25.0, 5.0, 3.0, 7.0]
    assert 1.0 in aggregates((("a", 3.0), ("b", 4.0)))  # two numbers side by side: their difference


def test_the_verdict_names_the_result_it_contradicts() -> None:
    listing = Observed(0, "SELECT * FROM t", ALL_ROWS, parse_result(ALL_ROWS))
    total = Observed(1, SUM_SQL, "[(51.0,)]", ((51.0,),))
    verdict = judge_answer(["17"], [listing, total], copied_values=True)
    assert verdict is not None and verdict.kind == "contradicts" and verdict.against is total
    assert judge_answer(["17"], [listing, total]) is None
    assert judge_answer(["51"], [listing, total], copied_values=True) is None
