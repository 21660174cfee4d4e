"""The emulation's answers to agent-style statements, each expected reply from the MySQL 8 reference manual.

Every case names the manual section its expected reply comes from. Where the differential
battery's real server is available, ``test_fidelity_battery`` runs the same kind of statements
on both backends.
"""

from __future__ import annotations

import pytest

from prefbuild.envs.sql.engine import SqlSandbox
from prefbuild.envs.sql.grader import printed_hash, table_hash
from prefbuild.envs.sql.items import SqlItem
from prefbuild.envs.sql.mysql_functions import collation_key, number_literal_text

T = "players"
COLUMNS = ("Name", "Score", "Born", "Note")
ROWS = (
    ("Ann", "10", "2019-05-01", "a-1"),
    ("bob", "7", "2020-01-02", "a1"),
    ("-x", "abc", None, "a_1"),
    ("1a", "5.5", None, None),
)
SYNTAX = "1064 (42000): You have an error in your SQL syntax; check the manual that corresponds to your MySQL server "
SYNTAX += "version for the right syntax to use near "


@pytest.fixture
def db() -> SqlSandbox:
    return SqlSandbox(T, COLUMNS, ROWS, timeout_s=1.0)


REPLY_CASES = [
    # 12.6.1 Arithmetic operators: "/" of exact values is DECIMAL with scale + div_precision_increment (4).
    ("SELECT 5/2, 1/3, 10/4", "[(Decimal('2.5000'), Decimal('0.3333'), Decimal('2.5000'))]"),
    ("SELECT 1.50/2", "[(Decimal('0.750000'),)]"),  # scale of the dividend (2) + 4
    ("SELECT 1/0", "[(None,)]"),  # division by zero is NULL
    (f"SELECT COUNT(*)/3 FROM {T}", "[(Decimal('1.3333'),)]"),
    (f"SELECT `Score`/2 FROM {T} WHERE `Name` = 'bob'", "[(3.5,)]"),  # text operand: double
    ("SELECT 5 DIV 2, -7 DIV 2, 7 MOD 3, -7 % 3, MOD(7, -3), 7.5 MOD 2", "[(2, -3, 1, -1, 1, Decimal('1.5'))]"),
    # 12.8.2 Regular expressions: REGEXP / RLIKE, case-insensitive under a _ci collation.
    ("SELECT 'Apple' REGEXP '^a', 'abc' RLIKE 'b$', 'x' NOT REGEXP 'y'", "[(1, 0, 1)]"),
    (f"SELECT `Name` FROM {T} WHERE `Name` REGEXP '^[0-9]'", "[('1a',)]"),
    # 12.11 Cast functions.
    ("SELECT CAST('3.14159' AS DECIMAL(5,2)), CAST(2.345 AS DECIMAL(4,2))", "[(Decimal('3.14'), Decimal('2.35'))]"),
    ("SELECT CAST('12.7' AS SIGNED), CAST(12.5 AS SIGNED), CAST('x' AS SIGNED)", "[(12, 13, 0)]"),
    ("SELECT CONVERT('12', SIGNED), CONVERT('abc' USING utf8mb4), CAST(5 AS CHAR)", "[(12, 'abc', '5')]"),
    ("SELECT CAST(999.999 AS DECIMAL(4,1))", "[(Decimal('999.9'),)]"),  # clipped to the type's range
    # 12.3 Type conversion in expression evaluation: a string compared with a number is a number.
    ("SELECT 'abc' = 0, '1abc' = 1, 0 = 'x', '10' > 9", "[(1, 1, 1, 1)]"),
    (f"SELECT `Name` FROM {T} WHERE `Score` = 0", "[('-x',)]"),
    # 12.8 String functions.
    ("SELECT SUBSTRING_INDEX('a,b,c', ',', 2), SUBSTRING_INDEX('a,b,c', ',', -1)", "[('a,b', 'c')]"),
    (
        "SELECT LPAD('7', 3, '0'), RPAD('ab', 4, 'xy'), LPAD('abc', 2, '0'), REPEAT('ab', 3)",
        "[('007', 'abxy', 'ab', 'ababab')]",
    ),
    ("SELECT STRCMP('a', 'B'), STRCMP('b', 'a'), STRCMP('é', 'E')", "[(-1, 1, 0)]"),
    ("SELECT LENGTH('é'), CHAR_LENGTH('é')", "[(2, 1)]"),
    # 12.6.2 Mathematical functions.
    (
        "SELECT TRUNCATE(1.239, 2), TRUNCATE(-1.239, 1), TRUNCATE(123, -1)",
        "[(Decimal('1.23'), Decimal('-1.2'), 120)]",
    ),
    # 12.7 Date and time functions.
    (f"SELECT YEAR(`Born`), MONTH(`Born`) FROM {T} WHERE `Name` = 'Ann'", "[(2019, 5)]"),
    ("SELECT YEAR('2019'), YEAR(NULL)", "[(None, None)]"),
    ("SELECT STR_TO_DATE('01/05/2019', '%d/%m/%Y'), STR_TO_DATE('x', '%Y')", "[(datetime.date(2019, 5, 1), None)]"),
    (
        "SELECT DATE_FORMAT('2019-05-01', '%M %e, %Y'), DATE_FORMAT('2019-05-01 13:04:00', '%H:%i')",
        "[('May 1, 2019', '13:04')]",
    ),
    ("SELECT VERSION() LIKE '8.0.%'", "[(1,)]"),
    # 12.19.1 GROUP_CONCAT with ORDER BY, DISTINCT and SEPARATOR.
    (f"SELECT GROUP_CONCAT(`Name` ORDER BY `Name` DESC SEPARATOR ';') FROM {T}", "[('bob;Ann;1a;-x',)]"),
    (f"SELECT GROUP_CONCAT(DISTINCT `Note` ORDER BY `Note`) FROM {T}", "[('a_1,a-1,a1',)]"),
    (f"SELECT GROUP_CONCAT(`Score`) FROM {T} WHERE `Score` > 6", "[('10,7',)]"),
    # 10.3 utf8mb4_0900_ai_ci: punctuation sorts before digits, digits before letters; case/accent folded.
    (f"SELECT `Name` FROM {T} ORDER BY `Name`", "[('-x',), ('1a',), ('Ann',), ('bob',)]"),
    (f"SELECT MIN(`Note`), MAX(`Note`) FROM {T}", "[('a_1', 'a1')]"),
    # 26.3.8 INFORMATION_SCHEMA.COLUMNS for the task's table.
    (
        f"SELECT COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_NAME = '{T}' "
        "ORDER BY ORDINAL_POSITION",
        "[('Name', 'text'), ('Score', 'text'), ('Born', 'text'), ('Note', 'text')]",
    ),
    # 12.6.1 Arithmetic: + - * keep exact values exact (DECIMAL scale), text operands make doubles.
    (
        "SELECT 2 * 3.5, 0.1 + 0.2, 1 - 2 - 3, 2 + 3 * 4, (1 + 2) * 3",
        "[(Decimal('7.0'), Decimal('0.3'), -4, 14, 9)]",
    ),
    ("SELECT '10' + 5, '3 apples' + 2, -'5'", "[(15.0, 5.0, -5.0)]"),
    (f"SELECT MAX(`Score` + 0) FROM {T}", "[(10.0,)]"),
    ("SELECT COUNT(*) * 100.0 / 3 FROM (SELECT 1) AS x", "[(Decimal('33.33333'),)]"),
    (
        "SELECT FLOOR(-1.5), CEIL(1.2), ABS(-3), ROUND(2.456, 2), ROUND(2.5)",
        "[(-2, 2, 3, Decimal('2.46'), Decimal('3'))]",
    ),
    # 10.3 Literals compare under the connection collation (accent/case-insensitive, no pad).
    ("SELECT 'Montreal' = 'Montréal', 'abc' = 'ABC', 'a' = 'a ', 'B' > 'a'", "[(1, 1, 0, 1)]"),
    ("SELECT UPPER('Montréal'), LOWER('ÅSA')", "[('MONTRÉAL', 'åsa')]"),
    # 12.7 Dates: DATE results print as datetime.date; INTERVAL arithmetic.
    (
        "SELECT CAST('2019-01-02' AS DATE), DATE('2021-12-25 10:00:00')",
        "[(datetime.date(2019, 1, 2), datetime.date(2021, 12, 25))]",
    ),
    (
        "SELECT DATEDIFF('2020-03-01', '2020-02-01'), DATE_ADD('2020-01-31', INTERVAL 1 MONTH)",
        "[(29, '2020-02-29')]",
    ),
    (
        f"SELECT `Born` + INTERVAL 1 DAY, DATE_SUB(`Born`, INTERVAL 1 YEAR) FROM {T} LIMIT 1",
        "[('2019-05-02', '2018-05-01')]",
    ),
    (
        "SELECT DAYNAME('2021-12-25'), MONTHNAME('2021-12-25'), DAYOFWEEK('2021-12-25')",
        "[('Saturday', 'December', 7)]",
    ),
    ("SELECT FORMAT(1234567.891, 2), REVERSE('abc'), DATABASE()", f"[('1,234,567.89', 'cba', '{T}')]"),
    # 13.2.15 HAVING without GROUP BY filters rows and may use select aliases.
    (f"SELECT `Name`, `Score` AS s FROM {T} HAVING s > 8", "[('Ann', '10')]"),
    # 28.3.38 INFORMATION_SCHEMA.TABLES.
    (
        "SELECT TABLE_NAME, TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()",
        f"[('{T}', 4)]",
    ),
    # 12.8 String functions: TRIM forms, INSTR under the collation, CHAR gives bytes, no case expansion.
    ("SELECT TRIM(BOTH 'a' FROM 'aabaa'), TRIM(LEADING '0' FROM '007'), TRIM('x' FROM 'xax')", "[('b', '7', 'a')]"),
    (f"SELECT INSTR(`Name`, 'a'), MID(`Name`, 2, 2) FROM {T} WHERE `Name` = 'Ann'", "[(1, 'nn')]"),
    ("SELECT HEX('A'), HEX(255), ASCII('a'), CHAR(65), SPACE(2) = '  '", "[('41', 'FF', 97, b'A', 1)]"),
    ("SELECT UPPER('straße'), CONCAT(1.50, '|', 1e3, '|', 0.1 + 0.2)", "[('STRAßE', '1.50|1000|0.3')]"),
    # 12.20.1 SUM/AVG of exact values are DECIMAL; of text, doubles; -0.0 prints as 0.0.
    ("SELECT SUM(x), AVG(x) FROM (SELECT 1 AS x UNION ALL SELECT 2) AS n", "[(Decimal('3'), Decimal('1.5000'))]"),
    (f"SELECT SUM(`Score`), -0.0 FROM {T} WHERE `Score` > 6", "[(17.0, Decimal('0.0'))]"),
    # 12.20.3 Grouped or aggregated columns, positions, aliases and WHERE constants satisfy ONLY_FULL_GROUP_BY.
    (f"SELECT `Note` AS k, COUNT(*) AS n FROM {T} GROUP BY k ORDER BY n DESC, k LIMIT 1", "[(None, 1)]"),
    (f"SELECT `Name`, COUNT(*) FROM {T} WHERE `Name` = 'Ann' GROUP BY 1", "[('Ann', 1)]"),
    (f"SELECT `Name`, COUNT(*) FROM {T} WHERE `Name` = 'bob' GROUP BY `Score`", "[('bob', 1)]"),
    (f"SELECT UPPER(`Name`), COUNT(*) FROM {T} GROUP BY UPPER(`Name`) ORDER BY 1 LIMIT 1", "[('-X', 1)]"),
    # 13.7.7.39 SHOW [FULL] TABLES [LIKE].
    ("SHOW FULL TABLES", f"[('{T}', 'BASE TABLE')]"),
    ("SHOW TABLES LIKE 'play%'", f"[('{T}',)]"),
    # 13.2.17 UPDATE with a table alias; FOR UPDATE is accepted.
    (f"SELECT COUNT(*) FROM {T} FOR UPDATE", "[(4,)]"),
    # 9.2 Schema object names: a reserved word is fine after a qualifier.
    (f"SELECT {T}.rank FROM (SELECT 1 AS `rank`) AS {T}", "[(1,)]"),
]
# Where MariaDB is no MySQL 8 reference: its version text, and functional dependence on WHERE
# constants (MySQL 8 only, reference manual 12.20.4).
_MARIADB_DIFFERS = ("VERSION()", "GROUP BY `Score`")


@pytest.mark.parametrize(("sql", "reply"), REPLY_CASES)
def test_mysql_reply(db: SqlSandbox, sql: str, reply: str) -> None:
    result = db.execute(sql)
    assert result.error is None, result.error
    assert result.reply == reply


@pytest.mark.parametrize(
    ("sql", "error"),
    [
        # 13.2.15 / client: several statements in one call are refused and nothing runs.
        (
            f"UPDATE {T} SET `Score` = '0'; SELECT 1",
            "2014 (HY000): Commands out of sync; you can't run this command now",
        ),
        # 9.2.3 Identifier case sensitivity: table names are case-sensitive on Linux.
        ("SELECT * FROM Players", f"1146 (42S02): Table '{T}.Players' doesn't exist"),
        (f"SELECT * FROM {T}.PLAYERS", f"1146 (42S02): Table '{T}.PLAYERS' doesn't exist"),
        # 9.3 Keywords and reserved words: RANK, MATCH, RELEASE... unquoted are syntax errors.
        (f"SELECT Rank FROM {T}", SYNTAX + f"'Rank FROM {T}' at line 1"),
        (f"SELECT `Name` AS match FROM {T}", SYNTAX + f"'match FROM {T}' at line 1"),
        (f"SELECT `Name` FROM {T} WHERE release = 1", SYNTAX + "'release = 1' at line 1"),
        (f"SELECT `Name` FROM {T} ORDER BY `Name` LIMIT 1; SELECT 2", "2014 (HY000): Commands out of sync"),
        (f"SELECT `Name` FROM {T} ORDER BY Key", SYNTAX + "'Key' at line 1"),
        # Error positions survive the rewrites; unknown columns name MySQL's clause.
        (f"SELECT `Score` / 2 FROM {T} WHER `Score` = 1", SYNTAX + "'`Score` = 1' at line 1"),
        (f"SELECT `Name` FROM {T} WHERE `Score` = 1 ORDER BY", SYNTAX + "'' at line 1"),
        (f"SELECT `Name` FROM {T} WHERE `Nme` = 1", "1054 (42S22): Unknown column 'Nme' in 'where clause'"),
        (f"SELECT `Name` FROM {T} GROUP BY `Nme`", "1054 (42S22): Unknown column 'Nme' in 'group statement'"),
        (f"SELECT `Name` FROM {T} ORDER BY `Nme`", "1054 (42S22): Unknown column 'Nme' in 'order clause'"),
        (f"SELECT `Name` FROM {T} ORDER BY 9", "1054 (42S22): Unknown column '9' in 'order clause'"),
        (f"UPDATE {T} SET `Nme` = 1 WHERE `Score` = 2", "1054 (42S22): Unknown column 'Nme' in 'field list'"),
        (f"DELETE FROM {T} WHERE `Nme` = 2", "1054 (42S22): Unknown column 'Nme' in 'where clause'"),
        (f"DELETE FROM information_schema.COLUMNS WHERE TABLE_NAME = '{T}'", "1044 (42000): Access denied"),
        ("UPDATE information_schema.TABLES SET TABLE_ROWS = 0", "1044 (42000): Access denied"),
        ("SELECT * FROM information_schema.NOPE", "1109 (42S02): Unknown table 'NOPE' in information_schema"),
        (f"SELECT * FROM other_db.{T}", f"1146 (42S02): Table 'other_db.{T}' doesn't exist"),
        (f"INSERT INTO {T} (nosuch) VALUES (1)", "1054 (42S22): Unknown column 'nosuch' in 'field list'"),
        (f"SELECT `Name` FROM {T} HAVING nosuch > 1", "1054 (42S22): Unknown column 'nosuch' in 'having clause'"),
        (f"SELECT COUNT(*) FROM {T} WHERE `Name` ==  'Ann'", SYNTAX + "'=  'Ann'' at line 1"),
        (f"SELECT * FROM {T} LIMIT -1", SYNTAX + "'-1' at line 1"),
        (f"SELECT `Name` FROM {T} ORDER `Name`", SYNTAX + "'`Name`' at line 1"),
        (f"SELECT `Name` AS desc FROM {T}", SYNTAX + f"'desc FROM {T}' at line 1"),
        (f"SELECT `Name` FROM {T} WHERE `Name` = 'It's'", SYNTAX + "'s'' at line 1"),
        ("SELECT printf('%d', 1)", f"1305 (42000): FUNCTION {T}.printf does not exist"),
        # 12.2 / 13.2.13: an alias of the select list is unknown in WHERE.
        (f"SELECT `Name` AS n FROM {T} WHERE n = 'Ann'", "1054 (42S22): Unknown column 'n' in 'where clause'"),
        # 12.20.3 ONLY_FULL_GROUP_BY (MySQL 8's default sql_mode).
        (
            f"SELECT `Name`, `Score` FROM {T} GROUP BY `Name`",
            "1055 (42000): Expression #2 of SELECT list is not in GROUP BY clause and contains nonaggregated column "
            f"'{T}.{T}.Score' which is not functionally dependent on columns in GROUP BY clause; this is "
            "incompatible with sql_mode=only_full_group_by",
        ),
        (
            f"SELECT `Name`, MAX(`Score`) FROM {T}",
            "1140 (42000): In aggregated query without GROUP BY, expression #1 of SELECT list contains "
            f"nonaggregated column '{T}.{T}.Name'; this is incompatible with sql_mode=only_full_group_by",
        ),
        (f"SELECT `Name` FROM {T} WHERE `Name` IN ()", SYNTAX + "')' at line 1"),
        ("SELECT * FROM Jiu-Jitsu Results", SYNTAX + "'-Jitsu Results' at line 1"),
        ("SELECT * FROM Climate data for weather stations", SYNTAX + "'weather stations' at line 1"),
        (f"UPDATE {T} `Score` = 1", SYNTAX + "'= 1' at line 1"),
        ("SELECT 1; -- trailing comment", "2014 (HY000): Commands out of sync"),
        (f"SELECT `Name` FROM {T} WHERE `Score` = (SELECT `Name`, `Score` FROM {T})", "1241 (21000): Operand should"),
    ],
)
def test_mysql_error(db: SqlSandbox, sql: str, error: str) -> None:
    result = db.execute(sql)
    assert result.error is not None and result.error.startswith(error), result.error
    assert db.table_rows() == list(ROWS)  # nothing changed


@pytest.mark.parametrize(
    ("sql", "stored"),
    [
        # The UPDATE SET rewrite bug: an assignment is not a comparison.
        (f"UPDATE {T} SET `Score` = 12 WHERE `Name` = 'Ann'", "12"),
        (f"UPDATE {T} SET `Score` = 12, `Note` = 3 WHERE `Name` = 'Ann'", "12"),
        (f"UPDATE {T} SET `Score` = CASE WHEN `Score` = 10 THEN 11 ELSE 0 END WHERE `Name` = 'Ann'", "11"),
        # 11.1.1 / 12.3: a number literal stored in a text column keeps MySQL's text of the literal.
        (f"UPDATE {T} SET `Score` = 1.50 WHERE `Name` = 'Ann'", "1.50"),
        (f"UPDATE {T} SET `Score` = -0.5 WHERE `Name` = 'Ann'", "-0.5"),
        (f"UPDATE {T} SET `Score` = 1e3 WHERE `Name` = 'Ann'", "1000"),
        (f"UPDATE {T} SET `Score` = 007 WHERE `Name` = 'Ann'", "7"),
        (f"UPDATE {T} SET `Score` = `Score` + 1 WHERE `Name` = 'Ann'", "11"),
        (f"UPDATE {T} SET `Score` = 5 / 2 WHERE `Name` = 'Ann'", "2.5000"),
    ],
)
def test_update_stores_mysql_text(db: SqlSandbox, sql: str, stored: str) -> None:
    result = db.execute(sql)
    assert result.error is None, result.error
    assert (db.table_rows() or [])[0][1] == stored


@pytest.mark.parametrize(
    ("sql", "reply"), [case for case in REPLY_CASES if not any(marker in case[0] for marker in _MARIADB_DIFFERS)]
)
def test_reply_matches_the_real_server(mysql_backend, sql: str, reply: str) -> None:
    """The same statement on a real MariaDB with MySQL 8 settings (skips without one)."""
    item = SqlItem("q", T, COLUMNS, ROWS, "other", ("x",))
    sandbox = mysql_backend.open(item, timeout_s=2.0)
    try:
        assert sandbox.execute(sql).reply == reply
    finally:
        sandbox.close()


def test_insert_set_form_and_hex_literal(db: SqlSandbox) -> None:
    assert db.execute(f"INSERT INTO {T} SET `Name` = 'Set', `Score` = 1.50").error is None
    assert db.execute(f"INSERT INTO {T} (`Name`, `Score`) VALUES ('Hex', 0x41), ('Div', 10 / 4)").error is None
    rows = db.table_rows() or []
    assert rows[-3:] == [("Set", "1.50", None, None), ("Hex", "A", None, None), ("Div", "2.5000", None, None)]


def test_update_with_table_alias(db: SqlSandbox) -> None:
    assert db.execute(f"UPDATE {T} p SET p.`Score` = '9' WHERE p.`Name` = 'bob'").error is None
    assert (db.table_rows() or [])[1][1] == "9"


def test_alter_table_add_column_works(db: SqlSandbox) -> None:
    result = db.execute(f"ALTER TABLE {T} ADD COLUMN extra TEXT")
    assert result.error is None and result.mutated, result.error
    assert db.execute(f"SELECT extra FROM {T} LIMIT 1").reply == "[(None,)]"


def test_insert_of_unquoted_numbers_hashes_like_mysql(db: SqlSandbox) -> None:
    result = db.execute(f"INSERT INTO {T} VALUES ('Zed', 1.50, 1e3, -2)")
    assert result.error is None, result.error
    rows = db.table_rows() or []
    assert rows[-1] == ("Zed", "1.50", "1000", "-2")
    expected = [*ROWS, ("Zed", "1.50", "1000", "-2")]
    assert printed_hash(table_hash(rows)) == printed_hash(table_hash(expected))


def test_on_duplicate_key_update_assigns(db: SqlSandbox) -> None:
    db.execute("CREATE TABLE k (id TEXT PRIMARY KEY, v TEXT)")
    db.execute("INSERT INTO k VALUES ('1', '1')")
    result = db.execute("INSERT INTO k VALUES ('1', '2') ON DUPLICATE KEY UPDATE v = 5")
    assert result.error is None or "syntax" in result.error  # SQLite lacks the clause; never a wrong rewrite
    assert "mysql_number" not in (result.error or "")


@pytest.mark.parametrize(
    ("literal", "negative", "text"),
    [
        ("1.50", False, "1.50"),
        ("1e3", False, "1000"),
        ("007", False, "7"),
        (".5", True, "-0.5"),
        ("2.5E-1", False, "0.25"),
    ],
)
def test_number_literal_text(literal: str, negative: bool, text: str) -> None:
    assert number_literal_text(literal, negative) == text


def test_collation_orders_punctuation_digits_letters() -> None:
    values = ["b", "B2", "10", "-1", "_z", "Á", "a", "$", "(x"]
    assert sorted(values, key=collation_key) == ["_z", "-1", "(x", "$", "10", "Á", "a", "b", "B2"]
    assert collation_key("Montréal") == collation_key("MONTREAL")


def test_size_bombs_answer_null_quickly() -> None:
    db = SqlSandbox("t", ["a"], [["x"]], timeout_s=1.0)
    reply = db.execute(
        "SELECT LPAD('a', 999999999, 'b'), SPACE(999999999), REPEAT('ab', 999999999), LENGTH(FORMAT(1, 99))"
    )
    assert reply.reply == "[(None, None, None, 32)]"  # FORMAT keeps at most 30 decimals


def test_regexp_backtracking_pattern_answers() -> None:
    db = SqlSandbox("t", ["a"], [["a" * 40 + "b"]], timeout_s=0.5)
    assert db.execute("SELECT a REGEXP '^(a+)+$', a REGEXP '(a|aa)+b' FROM t").reply == "[(0, 1)]"
    assert db.execute("SELECT 'x' REGEXP '('").error is not None
