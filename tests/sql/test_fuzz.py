"""Hostile and broken SQL never hangs, crashes, escapes to the file system or breaks the episode.

More than 1,000 statements in all: a list of known attacks, attack prefixes with random
tails (hypothesis), and random broken SQL. Each ends in a reply; attacks end in an error
reply; the time bound shows as MySQL's "execution time exceeded" error.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prefbuild.envs.sql import actions
from prefbuild.envs.sql.engine import SqlSandbox
from prefbuild.envs.sql.env import SqlEnv

from .helpers import make_item, make_task

TABLE = "Results (2011, Women's +60kg)"
T = "`" + TABLE + "`"
ROWS = [(str(i), f"Athlete {i}", "x" * (i % 7)) for i in range(40)]
ERROR = re.compile(r"^\d{4} \([0-9A-Z]{5}\): ")
TIMEOUT_ERROR = "3024 (HY000): Query execution was interrupted, maximum statement execution time exceeded"
FILE_NAMES = ("evil.db", "evil2.db", "vacuum.db", "ext.so", "out.txt")
SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture], derandomize=True)


def known_attacks(directory: Path) -> list[str]:
    path = directory / "evil.db"
    relative = "evil2.db"
    cross = ", ".join(f"{T} t{i}" for i in range(8))
    return [
        f"ATTACH DATABASE '{path}' AS evil",
        f"ATTACH '{relative}' AS evil",
        f"attach database '{path}' as evil; create table evil.x(a)",
        f"ATTACH 'file:{relative}?mode=rwc' AS evil",
        "DETACH DATABASE main",
        f"SELECT load_extension('{directory / 'ext.so'}')",
        "SELECT load_extension('libsqlite3')",
        f"CREATE TABLE evil AS SELECT load_extension('{directory / 'ext.so'}')",
        f"VACUUM INTO '{directory / 'vacuum.db'}'",
        "VACUUM INTO 'vacuum.db'",
        "VACUUM",
        "PRAGMA writable_schema = ON",
        "PRAGMA main.journal_mode = WAL",
        f"PRAGMA temp_store_directory = '{directory}'",
        "PRAGMA hard_heap_limit = 1",
        "pragma query_only = 0",
        "/* hidden */ PRAGMA foreign_keys = ON",
        "SELECT * FROM pragma_table_info('x')",
        "SELECT * FROM pragma_database_list",
        f"SELECT writefile('{directory / 'out.txt'}', 'x')",
        "SELECT readfile('/etc/passwd')",
        "SELECT edit('x')",
        "SELECT fts3_tokenizer('simple')",
        "CREATE VIRTUAL TABLE v USING fts5(a)",
        "CREATE VIRTUAL TABLE v USING rtree(id, a, b)",
        "REINDEX",
        "ANALYZE",
        "SAVEPOINT a",
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT COUNT(*) FROM c",
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x FROM c) SELECT * FROM c ORDER BY x",
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT GROUP_CONCAT(x) FROM c",
        "WITH RECURSIVE r(i, s) AS (SELECT 1, 'a' UNION ALL SELECT i + 1, CONCAT(s, s) FROM r WHERE i < 64) "
        "SELECT MAX(LENGTH(s)) FROM r",
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
        "SELECT x FROM c ORDER BY CAST(x AS CHAR) COLLATE utf8mb4_0900_ai_ci LIMIT 1",
        f"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) INSERT INTO {T} (`a`) SELECT x FROM c",
        f"SELECT COUNT(*) FROM {cross}",
        f"SELECT * FROM {cross} ORDER BY RAND()",
        f"INSERT INTO {T} SELECT t0.* FROM {cross}",
        f"CREATE TEMPORARY TABLE big AS SELECT t0.a FROM {cross}",
        "SELECT randomblob(2000000000)",
        "SELECT zeroblob(1000000000)",
        "SELECT REPLACE(HEX(ZEROBLOB(100000000)), '0', 'aa')",
        "SELECT printf('%.*c', 2000000000, 'x')",
        "SELECT format('%.*c', 2000000000, 'x')",
        "SELECT REPLACE(HEX(ZEROBLOB(400000)), '0', 'a') LIKE '%a%a%a%a%a%a%a%a%b'",
        "SELECT REPLACE(HEX(ZEROBLOB(400000)), '0', 'a') GLOB '*a*a*a*a*a*a*a*b'",
        "SELECT 1 " + "UNION SELECT 1 " * 1000,
        "SELECT " + "(" * 5000 + "1" + ")" * 5000,
        "SELECT " + "1 + " * 40000 + "1",
        "x" * 200_000,
        "SELECT '\0'",
        "DROP TABLE sqlite_master",
        "UPDATE sqlite_master SET sql = 'x'",
        f"CREATE TRIGGER t AFTER INSERT ON {T} BEGIN SELECT load_extension('x'); END",
        f"ATTACH '{path}' AS x; SELECT 1",
        f"SELECT * FROM [{TABLE}]",
        f'SELECT * FROM "{TABLE}"',
        f"SELECT * FROM {TABLE}",
        f"SELECT TOP 1 * FROM {T}",
        f"SELECT `nope` FROM {T}",
        f"SELECT * FROM {T} WHERE `a` = 'it's'",
        "SELECT 'unterminated",
        "SELECT `unterminated",
        "SELECT /* unterminated",
        "",
        ";",
        "   -- only a comment",
    ]


def _assert_clean(directory: Path) -> None:
    assert list(directory.iterdir()) == []
    for name in FILE_NAMES:
        assert not (Path(tempfile.gettempdir()) / name).exists()


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working directory: relative file names would land here."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.timeout(120)
def test_known_attacks_end_in_errors(workdir: Path) -> None:
    sandbox = SqlSandbox(TABLE, ["a", "b", "c"], ROWS, timeout_s=0.2)
    attacks = known_attacks(workdir)
    timeouts = 0
    for sql in attacks:
        result = sandbox.execute(sql)
        assert result.error is not None, sql[:80]
        assert ERROR.match(result.reply) and not result.mutated, (sql[:80], result.reply)
        timeouts += result.error == TIMEOUT_ERROR
        assert sandbox.table_rows() == ROWS, sql[:80]
    assert timeouts >= 6  # the bombs were stopped by the time bound, not by luck
    assert sandbox.execute(f"SELECT COUNT(*) FROM {T}").reply == "[(40,)]"  # still usable
    _assert_clean(workdir)


def test_several_statements_run_nothing(workdir: Path) -> None:
    sandbox = SqlSandbox(TABLE, ["a", "b", "c"], ROWS, timeout_s=0.2)
    for head in (f"SELECT COUNT(*) FROM {T}", f"DELETE FROM {T}"):
        for tail in (f"DROP TABLE {T}", "ATTACH 'evil.db' AS e", f"DELETE FROM {T}", "VACUUM INTO 'vacuum.db'"):
            result = sandbox.execute(f"{head}; {tail}")
            assert result.error == "2014 (HY000): Commands out of sync; you can't run this command now"
    assert sandbox.table_rows() == ROWS
    _assert_clean(workdir)


ATTACK_PREFIXES = (
    "ATTACH ",
    "ATTACH DATABASE 'evil.db' AS ",
    "DETACH ",
    "PRAGMA ",
    "VACUUM ",
    "VACUUM INTO 'vacuum.db'",
    "REINDEX ",
    "SELECT load_extension(",
    "SELECT load_extension('ext.so') ",
    "SELECT * FROM [",
    f"SELECT * FROM {T} WHERE [",
    "SELECT printf(",
    f"SELECT * FROM {T} a, {T} b, {T} c, {T} d, {T} e, {T} f, {T} g, {T} h /*",
)


@pytest.mark.timeout(120)
@settings(SETTINGS, max_examples=1000)
@given(prefix=st.sampled_from(ATTACK_PREFIXES), tail=st.text(max_size=60))
def test_attack_prefixes_with_random_tails_end_in_errors(workdir: Path, prefix: str, tail: str) -> None:
    sandbox = _shared_sandbox()
    result = sandbox.execute(prefix + tail)
    assert result.error is not None and ERROR.match(result.reply), (prefix + tail)[:100]
    assert not result.mutated
    assert list(workdir.iterdir()) == []


SQL_WORDS = st.sampled_from(
    [
        "SELECT",
        "*",
        "FROM",
        T,
        "WHERE",
        "`a`",
        "`b`",
        "=",
        "'x'",
        "1",
        "(",
        ")",
        ",",
        ";",
        "UNION",
        "ALL",
        "LIKE",
        "'%a%'",
        "ORDER",
        "BY",
        "GROUP",
        "COUNT(*)",
        "SUM(`a`)",
        "JOIN",
        "ON",
        "AND",
        "OR",
        "NOT",
        "NULL",
        '"',
        "'",
        "`",
        "--",
        "#",
        "/*",
        "*/",
        "\\",
        "WITH",
        "RECURSIVE",
        "c(x)",
        "AS",
        "LIMIT",
        "||",
        "<=>",
        "ATTACH",
        "PRAGMA",
        "load_extension('x')",
        "CAST(",
        "SIGNED",
        "\n",
        "\0",
        "é",
        "🙂",
    ]
)


@pytest.mark.timeout(120)
@settings(SETTINGS, max_examples=400)
@given(words=st.lists(SQL_WORDS, max_size=25), noise=st.text(max_size=20))
def test_random_broken_select_never_escapes(workdir: Path, words: list[str], noise: str) -> None:
    sandbox = _shared_sandbox()
    sql = "SELECT " + " ".join(words) + noise
    result = sandbox.execute(sql)
    assert isinstance(result.reply, str) and result.reply
    assert (result.error is not None and ERROR.match(result.reply)) or result.reply.startswith("[")
    assert sandbox.table_rows() == ROWS  # a SELECT never changes the table
    assert list(workdir.iterdir()) == []


_SANDBOX: list[SqlSandbox] = []


def _shared_sandbox() -> SqlSandbox:
    if not _SANDBOX:
        _SANDBOX.append(SqlSandbox(TABLE, ["a", "b", "c"], ROWS, timeout_s=0.05))
    return _SANDBOX[0]


def test_env_survives_hostile_actions(workdir: Path) -> None:
    task = make_task(make_item())
    env = SqlEnv(timeout_s=0.2, max_round=100)
    env.reset(task)
    for sql in known_attacks(workdir)[:40]:
        result = env.step(actions.operation(sql))
        assert not result.done and result.facts.sql.error and result.valid is False
    assert env.step(actions.answer(' ["Montréal"]')).won
    _assert_clean(workdir)
