"""The DBBench scoring rules (spec 6.2) on hand-made answers, labels and tables."""

from __future__ import annotations

import hashlib
import sqlite3

import pytest

from prefbuild.envs.sql.grader import answers_match, mutation_correct, parse_answer, printed_hash, table_hash

from .helpers import make_item, make_task, play


@pytest.mark.parametrize(
    ("answer", "label", "expected"),
    [
        # other: exact text, case and whitespace sensitive
        (' ["Women +60kg Bronze"]', ["Women +60kg Bronze"], True),
        (' ["women +60kg bronze"]', ["Women +60kg Bronze"], False),
        (" Soviet Union", ["Soviet Union"], False),  # no brackets: the leading space stays
        ("Soviet Union", ["Soviet Union"], True),
        (" [('Soviet Union',)]", ["Soviet Union"], False),  # tuple copied from the MySQL reply
        (' ["Soviet Union"] extra', ["Soviet Union"], False),
        # counting / aggregation: any numeric form matches via float equality
        (" [12]", ["12.0"], True),
        (' ["12"]', ["12.0"], True),
        (" [12.0]", ["12.0"], True),
        (" 12", ["12.0"], True),  # a bare number is no list: [' 12'] -> float(' 12') == 12.0
        (" [3]", ["3"], True),
        (" [4]", ["3"], False),
        (' ["1,000"]', ["1000"], False),
        (" [True]", ["1.0"], True),  # float(True) == 1.0, as in the benchmark
        (' ["nan"]', ["nan"], False),  # NaN never equals itself
        # comparison / ranking answers are text
        (' ["yes"]', ["yes"], True),
        (' ["Yes"]', ["yes"], False),
        # several values: set equality, order and duplicates ignored, exact elements
        (' ["a", "b"]', ["b", "a"], True),
        (' ["a", "b", "a"]', ["b", "a"], True),
        (' ["a"]', ["a", "b"], False),
        (" [1, 2]", ["1", "2"], False),  # numbers do not equal string labels outside the 1-1 case
        (' ["1", "2"]', ["1", "2"], True),
        # a quoted string becomes a list of characters
        (" 'ab'", ["a", "b"], True),
        (' "x"', ["x"], True),
        ("", ["none"], False),
        (' ["none"]', ["none"], True),
        (" [['a']]", ["a"], False),
        (" [['a'], 'b']", ["a", "b"], False),  # unhashable element: no set, not correct
        (" __import__('os')", ["x"], False),  # never evaluated
    ],
)
def test_query_answers(answer: str, label: list[str], expected: bool) -> None:
    assert answers_match(answer, label) is expected


def test_parse_answer_shapes() -> None:
    assert parse_answer(' ["a", "b"]') == ["a", "b"]
    assert parse_answer(" 12") == [" 12"]
    assert parse_answer(" (1, 2)") == [1, 2]
    assert parse_answer("[") == ["["]


def _independent_hash(columns: list[str], rows: list[tuple[object, ...]]) -> str:
    """The benchmark's hash query (spec 6.2), run in SQL rather than Python."""
    connection = sqlite3.connect(":memory:")
    connection.create_function("md5", 1, lambda v: None if v is None else hashlib.md5(str(v).encode()).hexdigest())
    connection.create_function("concat_ws", -1, lambda sep, *a: sep.join(str(v) for v in a if v is not None))
    connection.execute("CREATE TABLE t (" + ", ".join(f'"{c}" TEXT' for c in columns) + ")")
    connection.executemany(f"INSERT INTO t VALUES ({','.join('?' * len(columns))})", rows)
    names = ", ".join(f'"{c}"' for c in columns)
    (digest,) = connection.execute(
        "SELECT md5(group_concat(rowhash, ',')) FROM "
        f"(SELECT substr(md5(concat_ws(',', {names})), 1, 5) AS rowhash FROM t ORDER BY rowhash)"
    ).fetchone()
    return printed_hash(digest)


def test_table_hash_matches_the_sql_definition() -> None:
    rows = [("2019", "Aoharu Ride", None), ("2007", "Montréal", "Johnson"), ("2007", "Montréal", "Johnson")]
    assert printed_hash(table_hash(rows)) == _independent_hash(["a", "b", "c"], rows)
    assert table_hash(list(reversed(rows))) == table_hash(rows)  # row order is irrelevant
    assert table_hash(rows[:2]) != table_hash(rows)  # a duplicate row changes the hash
    assert table_hash([("2019",)]) != table_hash([("2019.0",)])  # values compare as stored text


def test_empty_table_hashes_to_null() -> None:
    assert table_hash([]) is None
    assert printed_hash(None) == "[(None,)]"
    assert mutation_correct([], "[(None,)]")
    assert not mutation_correct(None, "[(None,)]")


def test_hash_is_format_exact() -> None:
    digest = table_hash([("a",)])
    assert printed_hash(digest) == f"[('{digest}',)]"
    assert not mutation_correct([("a",)], f'[("{digest}",)]')


@pytest.mark.parametrize(
    ("kind", "label", "sql", "good", "bad"),
    [
        ("counting", ("3",), "SELECT COUNT(*) FROM `T` WHERE `Year` > 2000", " [3]", " [2]"),
        ("comparison", ("yes",), "SELECT 'yes'", ' ["yes"]', ' ["no"]'),
        (
            "ranking",
            ("Aoharu Ride",),
            "SELECT `Title` FROM `T` ORDER BY `Year` + 0 DESC LIMIT 1",
            ' ["Aoharu Ride"]',
            ' ["aoharu ride"]',
        ),
        ("aggregation-SUM", ("7037.0",), "SELECT SUM(`Year`) FROM `T`", " [7037]", " [7037.5]"),
        (
            "aggregation-AVG",
            ("2012.6666666666667",),
            "SELECT AVG(`Year`) FROM `T` WHERE `Year` > 1000",
            ' ["2012.6666666666667"]',
            " [2012.67]",
        ),
        ("aggregation-MIN", ("2007.0",), "SELECT MIN(`Year` + 0) FROM `T` WHERE `Year` > 1000", " [2007]", ' ["999"]'),
        ("aggregation-MAX", ("999",), "SELECT MAX(`Year`) FROM `T`", ' ["999"]', ' ["2019"]'),  # text maximum
        ("other", ("Montréal",), "SELECT `Title` FROM `T` WHERE `Role` = 'johnson'", ' ["Montréal"]', ' ["Montreal"]'),
    ],
)
def test_every_query_type_scores_through_the_env(
    kind: str, label: tuple[str, ...], sql: str, good: str, bad: str
) -> None:
    from prefbuild.envs.sql.engine import SqlSandbox

    from .helpers import COLUMNS, ROWS, TABLE

    sql = sql.replace("`T`", f"`{TABLE}`")
    result = SqlSandbox(TABLE, COLUMNS, ROWS).execute(sql)
    assert result.rows is not None and [str(result.rows[0][0])] == list(label)  # the label is the reference result
    item = make_item(kind, label=label, reference_sql=sql)
    task = make_task(item)
    assert play(task, [f"Action: Answer\nFinal Answer:{good}"]).outcome.success
    assert not play(task, [f"Action: Answer\nFinal Answer:{bad}"]).outcome.success


@pytest.mark.parametrize(
    ("kind", "reference", "wrong"),
    [
        (
            "INSERT",
            "INSERT INTO `Table of Year, Title, and Role` VALUES ('2020', 'Orange', 'Kakeru', NULL)",
            "INSERT INTO `Table of Year, Title, and Role` VALUES ('2020', 'Orange', 'kakeru', NULL)",
        ),
        (
            "UPDATE",
            "UPDATE `Table of Year, Title, and Role` SET `Role` = 'Palestine' WHERE `Role` = 'Amos Oz'",
            "UPDATE `Table of Year, Title, and Role` SET `Role` = 'Palestine'",
        ),
        (
            "DELETE",
            "DELETE FROM `Table of Year, Title, and Role` WHERE `Year` = '999'",
            "DELETE FROM `Table of Year, Title, and Role` WHERE `Year` > 1000",
        ),
    ],
)
def test_mutations_score_on_the_table_hash(kind: str, reference: str, wrong: str) -> None:
    from prefbuild.envs.sql.engine import SqlSandbox

    from .helpers import COLUMNS, ROWS, TABLE

    sandbox = SqlSandbox(TABLE, COLUMNS, ROWS)
    assert sandbox.execute(reference).error is None
    target = printed_hash(table_hash(sandbox.table_rows() or []))
    item = make_item(kind, label=(), reference_sql=reference, answer_md5=target)
    task = make_task(item)
    from .helpers import answer, operation

    # The answer text is ignored for mutations: only the table counts.
    assert play(task, [operation(reference), answer(" whatever")]).outcome.success
    assert not play(task, [operation(wrong), answer(' ["done"]')]).outcome.success
    assert not play(task, [answer(' ["done"]')]).outcome.success
    if kind == "INSERT":  # inserting twice leaves a duplicate row
        assert not play(task, [operation(reference), operation(reference), answer(" []")]).outcome.success
