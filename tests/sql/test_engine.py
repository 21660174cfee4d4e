"""The SQLite engine answers like the benchmark's MySQL server (spec sections 5 and 10.2)."""

from __future__ import annotations

import re

import pytest

from prefbuild.envs.sql.engine import REPLY_LIMIT, TRUNCATED, SqlSandbox, mysql_number

from .helpers import COLUMNS, ROWS, TABLE

T = f"`{TABLE}`"
ERROR = re.compile(r"^\d{4} \([0-9A-Z]{5}\): ")


@pytest.fixture
def db() -> SqlSandbox:
    return SqlSandbox(TABLE, COLUMNS, ROWS, timeout_s=1.0)


@pytest.mark.parametrize(
    ("sql", "reply"),
    [
        (f"SELECT `Title` FROM {T} WHERE `Role` = 'johnson'", "[('Montréal',)]"),  # case-insensitive
        (f"SELECT `Title` FROM {T} WHERE `Title` = 'Montreal'", "[('Montréal',)]"),  # accent-insensitive
        (f"SELECT `Title` FROM {T} WHERE `Title` LIKE 'montr%'", "[('Montréal',)]"),
        (f"SELECT COUNT(*) FROM {T}", "[(4,)]"),
        (f"SELECT SUM(`Year`) FROM {T} WHERE `Year` > 2010", "[(4031.0,)]"),  # numeric comparison, double sum
        (f"SELECT AVG(`Year`) FROM {T} WHERE `Year` IN (2019, 2007)", "[(2013.0,)]"),
        (f"SELECT MAX(`Year`) FROM {T}", "[('999',)]"),  # string maximum over TEXT
        (f"SELECT `Title` FROM {T} WHERE `Year` < 2000", "[('Blue River',)]"),  # '999' < 2000 numerically
        (f"SELECT `Title` FROM {T} WHERE `Year` BETWEEN 2000 AND 2010", "[('Montréal',)]"),
        (f"SELECT `Title` FROM {T} WHERE 2019 = `Year`", "[('Aoharu Ride',)]"),
        (f"SELECT SUM(`Notes/Extra`) FROM {T}", "[(4.0,)]"),  # '4,567' reads as 4, text as 0
        (f'SELECT "Notes" FROM {T} LIMIT 1', "[('Notes',)]"),  # double quotes make a string
        (f"SELECT `Notes/Extra` FROM {T} WHERE `Year` = '999'", "[(None,)]"),
        (f"SELECT `Title` FROM {T} WHERE `Year` = 2050", "[]"),
        ("SELECT 'It\\'s', 'a\\nb', 'x\\%'", "[(\"It's\", 'a\\nb', 'x\\\\%')]"),  # backslash escapes
        (f"SELECT * FROM {T}.{T} WHERE `Year` = '2019'", "[('2019', 'Aoharu Ride', 'Kou Mabuchi', 'Lead')]"),
        (f"SELECT GROUP_CONCAT(`Year` SEPARATOR ';') FROM {T} WHERE `Year` > 2010", "[('2019;2012',)]"),
        (f"SELECT LEFT(`Title`, 4), CONCAT(`Year`, '-', `Role`) FROM {T} LIMIT 1", "[('Aoha', '2019-Kou Mabuchi')]"),
        (f"SELECT CAST(`Year` AS SIGNED) + 1 FROM {T} LIMIT 1", "[(2020,)]"),
        ("SELECT MD5('a')", "[('0cc175b9c0f1b6a831c399e269772661',)]"),
        (
            f"SELECT `Title` FROM {T} WHERE `Year` = 2019 || `Year` = 999 ORDER BY `Title`",
            "[('Aoharu Ride',), ('Blue River',)]",
        ),
        ("SHOW TABLES", f"[('{TABLE}',)]"),
        (
            f"DESCRIBE {T}",
            "[('Year', 'text', 'YES', '', None, ''), ('Title', 'text', 'YES', '', None, ''), "
            "('Role', 'text', 'YES', '', None, ''), ('Notes/Extra', 'text', 'YES', '', None, '')]",
        ),
        (f"USE {T}", "[]"),
        ("BEGIN", "[]"),
        ("SELECT 1; ", "[(1,)]"),  # a trailing ';' is one statement
        (f"SELECT COUNT(*) FROM {T} # a MySQL comment", "[(4,)]"),
    ],
)
def test_mysql_semantics(db: SqlSandbox, sql: str, reply: str) -> None:
    result = db.execute(sql)
    assert result.error is None, result.error
    assert result.reply == reply
    assert db.table_rows() is not None and len(db.table_rows() or []) == 4


@pytest.mark.parametrize(
    ("sql", "error"),
    [
        (
            f"SELECT * FROM {TABLE}",
            "1064 (42000): You have an error in your SQL syntax; check the manual that "
            "corresponds to your MySQL server version for the right syntax to use near "
            "'Table of Year, Title, and Role' at line 1",
        ),
        (f'SELECT * FROM "{TABLE}"', "1064 (42000):"),
        (f"SELECT [Year] FROM {T}", "1064 (42000):"),
        (f"SELECT TOP 1 * FROM {T}", "1064 (42000):"),
        ("SELECT * FROM nope", f"1146 (42S02): Table '{TABLE}.nope' doesn't exist"),
        (f"SELECT Foo FROM {T}", "1054 (42S22): Unknown column 'Foo' in 'field list'"),
        (f"SELECT * FROM {T} WHERE Foo = 'x'", "1054 (42S22): Unknown column 'Foo' in 'where clause'"),
        (f"INSERT INTO {T} VALUES ('1', '2')", "1136 (21S01): Column count doesn't match value count at row 1"),
        (f"SELECT LEN(`Title`) FROM {T}", f"1305 (42000): FUNCTION {TABLE}.LEN does not exist"),
        ("", "1065 (42000): Query was empty"),
        ("SELECT 'abc", "1064 (42000):"),
        ("USE other", "1049 (42000): Unknown database 'other'"),
    ],
)
def test_errors_read_like_mysql(db: SqlSandbox, sql: str, error: str) -> None:
    result = db.execute(sql)
    assert result.error is not None and result.error.startswith(error), result.error
    assert result.reply == result.error
    assert result.kind == "error" and not result.mutated


def test_mutations_reply_empty_and_commit(db: SqlSandbox) -> None:
    result = db.execute(f"INSERT INTO {T} (`Year`, `Title`, `Role`) VALUES ('2020', 'Orange', 'Kakeru')")
    assert (result.reply, result.kind, result.mutated) == ("[]", "mutation", True)
    assert db.execute("ROLLBACK").reply == "[]"  # every statement is already committed
    assert ("2020", "Orange", "Kakeru", None) in (db.table_rows() or [])
    nothing = db.execute(f"UPDATE {T} SET `Role` = 'x' WHERE `Year` = '1800'")
    assert nothing.error is None and not nothing.mutated


def test_numbers_are_stored_as_text() -> None:
    db = SqlSandbox("t", ["a", "b"], [[1, 2.5], ["x", None]])
    assert db.table_rows() == [("1", "2.5"), ("x", None)]
    db.execute("INSERT INTO t VALUES (2019, 1.0)")
    assert ("2019", "1.0") in (db.table_rows() or [])


def test_long_replies_are_truncated(db: SqlSandbox) -> None:
    for index in range(200):
        db.execute(f"INSERT INTO {T} VALUES ('{index}', 'Title number {index}', 'Role', 'x')")
    reply = db.execute(f"SELECT * FROM {T}").reply
    assert len(reply) == REPLY_LIMIT + len(TRUNCATED) and reply.endswith(TRUNCATED)
    assert reply.startswith("[('2019', 'Aoharu Ride'")


def test_dropping_the_table_is_allowed_and_scored_as_gone(db: SqlSandbox) -> None:
    assert db.execute(f"DROP TABLE {T}").mutated
    assert db.table_rows() is None


@pytest.mark.parametrize(
    ("text", "number"), [("12", 12.0), (" 4,567", 4.0), ("2.5%", 2.5), ("abc", 0.0), ("-1e2x", -100.0)]
)
def test_mysql_number(text: str, number: float) -> None:
    assert mysql_number(text) == number


def test_identifiers_may_start_with_a_digit() -> None:
    db = SqlSandbox("1952_British_Grand_Prix_0", ["Driver", "Grid"], [["Alberto Ascari", "1"]])
    result = db.execute("INSERT INTO 1952_British_Grand_Prix_0 (Driver, Grid) VALUES ('Nino Farina', '2')")
    assert result.error is None and result.mutated
    assert db.execute("SELECT Driver FROM 1952_British_Grand_Prix_0 WHERE Grid = 2").reply == "[('Nino Farina',)]"
    assert db.execute("SHOW COLUMNS FROM 1952_British_Grand_Prix_0").reply.startswith("[('Driver', 'text'")


def test_time_bound_interrupts_with_the_mysql_error() -> None:
    db = SqlSandbox("t", ["a"], [["1"]], timeout_s=0.05)
    bomb = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT COUNT(*) FROM c"
    assert (
        db.execute(bomb).error
        == "3024 (HY000): Query execution was interrupted, maximum statement execution time exceeded"
    )
    assert db.execute("SELECT COUNT(*) FROM t").reply == "[(1,)]"  # the next statement runs normally
