"""The sql env's ``mysql`` backend on a real MariaDB server started by prefbuild (skips without one)."""

from __future__ import annotations

import ast
import gc
import json
from pathlib import Path

import pytest

from prefbuild.envs.sql.env import SqlEnv
from prefbuild.envs.sql.grader import printed_hash, table_hash
from prefbuild.envs.sql.items import TASK_TYPES, SqlItem
from prefbuild.envs.sql.loader import load_items
from prefbuild.envs.sql.mariadb import MARIADB_COLLATION, MYSQL8_SQL_MODE
from prefbuild.envs.sql.mysql_backend import OUT_OF_SYNC, MySqlBackend
from tests.sql.helpers import COLUMNS, ROWS, TABLE, make_item, make_task

DATA = Path(__file__).parent / "data" / "dbbench_sample.jsonl"


@pytest.fixture
def sandbox(mysql_backend: MySqlBackend):
    opened = mysql_backend.open(make_item(), timeout_s=1.0)
    yield opened
    opened.close()


def _databases(backend: MySqlBackend) -> set[str]:
    return {row[0] for row in backend.admin_query("SHOW DATABASES")}


def test_server_runs_with_mysql8_settings(sandbox) -> None:
    reply = sandbox.execute(
        "SELECT @@sql_mode, @@collation_server, @@collation_connection, @@group_concat_max_len, "
        "@@lower_case_table_names"
    ).reply
    assert ast.literal_eval(reply) == [(MYSQL8_SQL_MODE, MARIADB_COLLATION, MARIADB_COLLATION, 1024, 0)]


def test_table_is_built_as_the_benchmark_builds_it(sandbox) -> None:
    assert sandbox.database == TABLE  # the benchmark names the database after the table
    assert sandbox.execute(f"SELECT * FROM `{TABLE}`").reply == str(list(ROWS))
    types = sandbox.execute(
        f"SELECT DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_NAME = '{TABLE}' ORDER BY ORDINAL_POSITION"
    ).reply
    assert ast.literal_eval(types) == [("text",)] * len(COLUMNS)


def test_collation_is_case_and_accent_insensitive_without_padding(sandbox) -> None:
    assert sandbox.execute(f"SELECT `Title` FROM `{TABLE}` WHERE `Title` = 'MONTREAL'").reply == "[('Montréal',)]"
    assert sandbox.execute(f"SELECT COUNT(*) FROM `{TABLE}` WHERE `Role` = 'johnson '").reply == "[(0,)]"


def test_numbers_bound_into_text_columns_are_stored_as_the_client_writes_them(mysql_backend) -> None:
    item = make_item(rows=(("2019", 1.5, 7, None),))
    opened = mysql_backend.open(item)
    try:
        assert opened.execute(f"SELECT * FROM `{TABLE}`").reply == "[('2019', '1.5', '7', None)]"
    finally:
        opened.close()


def test_replies_are_capped_at_800_characters(sandbox) -> None:
    result = sandbox.execute(f"SELECT * FROM `{TABLE}` a, `{TABLE}` b, `{TABLE}` c")
    assert result.error is None
    assert len(result.reply) == 800 + len("[TRUNCATED]") and result.reply.endswith("[TRUNCATED]")
    assert result.reply.startswith("[('2019', 'Aoharu Ride'")
    assert sandbox.execute("SELECT 1").reply == "[(1,)]"  # the connection is still in a clean state


def test_a_result_too_big_to_drain_drops_the_connection_and_keeps_working(sandbox) -> None:
    result = sandbox.execute(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 60000) SELECT i FROM n"
    )
    assert result.error is None and result.reply.endswith("[TRUNCATED]")
    assert sandbox.execute(f"SELECT COUNT(*) FROM `{TABLE}`").reply == "[(4,)]"


def test_errors_read_as_the_benchmark_shows_them(sandbox) -> None:
    assert sandbox.execute("SELECT * FROM nope").reply == f"1146 (42S02): Table '{TABLE}.nope' doesn't exist"
    assert sandbox.execute(f"SELECT `Year` FROM `{TABLE}` WHERE y = 1").reply == (
        "1054 (42S22): Unknown column 'y' in 'where clause'"
    )
    syntax = sandbox.execute("SELEC 1").reply
    assert syntax.startswith(
        "1064 (42000): You have an error in your SQL syntax; check the manual that corresponds "
        "to your MySQL server version for the right syntax to use near 'SELEC 1' at line 1"
    )


def test_mutations_commit_and_report_their_kind(sandbox) -> None:
    result = sandbox.execute(f"UPDATE `{TABLE}` SET `Year` = 2020 WHERE `Role` = 'Johnson'")
    assert (result.reply, result.kind, result.mutated) == ("[]", "mutation", True)
    assert sandbox.execute(f"SELECT `Year` FROM `{TABLE}` WHERE `Role` = 'Johnson'").reply == "[('2020',)]"
    assert sandbox.execute(f"DELETE FROM `{TABLE}` WHERE 1 = 0").mutated is False


def test_multi_statement_blocks_answer_out_of_sync_and_keep_nothing(sandbox) -> None:
    before = sandbox.printed_table_hash()
    result = sandbox.execute(f"DELETE FROM `{TABLE}`; SELECT 1")
    assert result.reply == OUT_OF_SYNC and result.error == OUT_OF_SYNC
    assert sandbox.printed_table_hash() == before
    assert sandbox.execute(f"SELECT COUNT(*) FROM `{TABLE}`;").reply == "[(4,)]"  # a trailing ; is one statement


def test_statements_are_bounded_in_time_even_after_the_agent_lifts_the_limit(sandbox) -> None:
    expected = "3024 (HY000): Query execution was interrupted, maximum statement execution time exceeded"
    assert sandbox.execute("SELECT SLEEP(5)").reply == expected
    assert sandbox.execute("SET SESSION max_statement_time = 0").error is None
    assert sandbox.execute("SELECT SLEEP(5)").reply == expected  # the session is reset before each statement


def test_the_account_reaches_only_its_own_database(mysql_backend: MySqlBackend, sandbox) -> None:
    other = mysql_backend.open(make_item(table_name="Other table"))
    try:
        assert sandbox.execute("SELECT * FROM `Other table`.`Other table`").reply.startswith(
            "1142 (42000): SELECT command denied"
        )
        assert sandbox.execute("SELECT user FROM mysql.user").reply.startswith("1142 (42000)")
        assert sandbox.execute("CREATE DATABASE escape").reply.startswith("1044 (42000): Access denied")
        assert sandbox.execute("SELECT * FROM information_schema.PROCESSLIST").error is None
    finally:
        other.close()


def test_close_drops_the_database_and_the_account(mysql_backend: MySqlBackend) -> None:
    opened = mysql_backend.open(make_item(table_name="Dropped at close"))
    user = opened.account.user
    assert "Dropped at close" in _databases(mysql_backend)
    opened.close()
    assert "Dropped at close" not in _databases(mysql_backend)
    assert mysql_backend.admin_query("SELECT COUNT(*) FROM mysql.user WHERE User = %s", (user,)) == [(0,)]


def test_a_second_sandbox_of_one_table_gets_its_own_database(mysql_backend: MySqlBackend, sandbox) -> None:
    second = mysql_backend.open(make_item())
    try:
        assert second.database != sandbox.database and second.database.startswith(TABLE)
        second.execute(f"DELETE FROM `{TABLE}`")
        assert sandbox.execute(f"SELECT COUNT(*) FROM `{TABLE}`").reply == "[(4,)]"
    finally:
        second.close()


def test_server_hash_reproduces_the_benchmarks_stored_answers(mysql_backend: MySqlBackend) -> None:
    mutations = [item for _, item in load_items(DATA) if item.mutation]
    assert mutations
    for item in mutations:
        opened = mysql_backend.open(item)
        try:
            assert opened.execute(item.reference_sql or "").reply == "[]"
            assert opened.printed_table_hash() == item.answer_md5
        finally:
            opened.close()


def test_server_hash_agrees_with_the_python_grader(mysql_backend: MySqlBackend) -> None:
    env = SqlEnv()
    for task in env.tasks("test", 40, 3):
        item = task.payload
        opened = mysql_backend.open(item)
        try:
            rows = opened.table_rows()
            assert rows is not None
            assert opened.printed_table_hash() == printed_hash(table_hash(rows)), item.table_name
        finally:
            opened.close()


def test_empty_and_broken_items_are_built_as_the_server_builds_them(mysql_backend: MySqlBackend) -> None:
    empty = mysql_backend.open(make_item(rows=()))
    duplicate = mysql_backend.open(make_item(table_name="Dup", columns=("A", "a"), rows=(("1", "2"),)))
    ragged = mysql_backend.open(make_item(table_name="Ragged", rows=(("1", "2", "3", "4"), ("1", "2"))))
    try:
        assert empty.printed_table_hash() == "[(None,)]"
        assert duplicate.table_exists() is False and duplicate.printed_table_hash() is None
        assert ragged.table_exists() is True and ragged.printed_table_hash() == "[(None,)]"
    finally:
        for opened in (empty, duplicate, ragged):
            opened.close()


@pytest.mark.parametrize("task_type", TASK_TYPES)
def test_expert_wins_every_task_type_on_the_real_server(mysql_backend: MySqlBackend, task_type: str) -> None:
    env = SqlEnv(backend="mysql")
    for task in env.tasks("dev", 2, 5, [task_type]):
        env.reset(task)
        for _ in range(20):
            action = env.expert_action()
            assert action is not None
            result = env.step(action)
            if result.done:
                break
        assert result.done and result.won, (task.info.id, result.info)
    env.close()


def test_env_mutation_grading_uses_the_server_hash(mysql_backend: MySqlBackend) -> None:
    item = SqlItem(
        description="Insert a row.",
        table_name=TABLE,
        columns=COLUMNS,
        rows=ROWS,
        type="INSERT",
        reference_sql=f"INSERT INTO `{TABLE}` (`Year`, `Title`) VALUES ('2024', 'New')",
    )
    env = SqlEnv(backend="mysql")
    env.reset(make_task(item))
    assert env.step(f"Operation: INSERT INTO `{TABLE}` (`Title`, `Year`) VALUES ('New', 2024)").observation == "[]"
    final = env.step("Answer: []")
    assert final.won and final.facts.sql.table_hash == final.facts.sql.expected
    env.close()


def test_python_grader_cuts_the_hash_input_where_the_server_does(mysql_backend: MySqlBackend) -> None:
    rows = tuple((f"row {index}", str(index)) for index in range(300))  # 300 prefixes: 1799 bytes joined
    opened = mysql_backend.open(make_item(table_name="Long table", columns=("Name", "Value"), rows=rows))
    try:
        assert opened.printed_table_hash() == printed_hash(table_hash(rows))
    finally:
        opened.close()


def test_a_recipe_runs_its_sql_episodes_on_the_real_server(mysql_backend: MySqlBackend, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from prefbuild.cli import main

    out = tmp_path / "run"
    overrides = [
        "teacher.backend=scripted",
        "teacher.model=scripted-expert",
        "env.0.num_tasks=6",
        "env.1.num_tasks=1",
        "env.0.options.backend=mysql",
    ]
    args = ["run", "agentbench-ironguard", "--out", str(out), "--quiet"]
    for override in overrides:
        args += ["--set", override]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    episodes = [json.loads(line) for line in (out / "labelled.jsonl").read_text().splitlines()]
    sql = [episode for episode in episodes if episode["env"]["name"] == "sql"]
    assert len(sql) == 6 and sum(episode["outcome"]["success"] for episode in sql) >= 3
    gc.collect()  # the rollout engine drops its envs without close(): their databases go with them
    system = {"information_schema", "mysql", "performance_schema", "sys"}
    assert _databases(mysql_backend) <= system


def test_a_server_given_by_url_is_used_over_tcp(mysql_backend: MySqlBackend) -> None:
    from urllib.parse import quote

    admin = mysql_backend.address
    url = f"mysql://{quote(admin.user)}:{quote(admin.password)}@127.0.0.1:{admin.port}/"
    env = SqlEnv(backend="mysql", db_url=url)
    for task in env.tasks("test", 3, 11, ["counting", "UPDATE"]):
        env.reset(task)
        assert env._sandbox is not None and env._sandbox.account.unix_socket is None  # TCP, account for host %
        for _ in range(20):
            result = env.step(env.expert_action() or "Answer: []")
            if result.done:
                break
        assert result.won, (task.info.id, result.info)
    env.close()
