"""Backend selection and the parts of the mysql backend that need no server."""

from __future__ import annotations

import pytest

from prefbuild.envs.sql.backends import open_sandbox, printed_table_hash
from prefbuild.envs.sql.env import SqlEnv
from prefbuild.envs.sql.grader import printed_hash, table_hash
from prefbuild.envs.sql.mysql8_wording import mysql8_text
from prefbuild.envs.sql.mysql_backend import hash_query, statement_kind
from prefbuild.envs.sql.mysql_client import parse_db_url
from tests.sql.helpers import ROWS, make_item


def test_unknown_backend_and_stray_db_url_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match="unknown backend 'postgres'"):
        SqlEnv(backend="postgres")
    with pytest.raises(ValueError, match="db_url is only read by backend: mysql"):
        SqlEnv(db_url="mysql://root@127.0.0.1/")


def test_mysql_backend_without_its_packages_is_refused_up_front(monkeypatch: pytest.MonkeyPatch) -> None:
    from prefbuild.envs.sql import backends

    monkeypatch.setattr(backends, "client_available", lambda: "mysql-connector-python missing")
    with pytest.raises(ValueError, match="backend mysql: mysql-connector-python missing"):
        SqlEnv(backend="mysql")
    monkeypatch.setattr(backends, "client_available", lambda: None)
    monkeypatch.setattr(backends, "mariadb_available", lambda: "mariadbd not found")
    with pytest.raises(ValueError, match="backend mysql: mariadbd not found"):
        SqlEnv(backend="mysql")
    SqlEnv(backend="mysql", db_url="mysql://root@127.0.0.1:3306/")  # a given server needs no local MariaDB


def test_sqlite_sandbox_hash_is_the_python_grader_hash() -> None:
    sandbox = open_sandbox(make_item(), backend="sqlite", db_url=None, timeout_s=1.0, reply_limit=800)
    try:
        assert printed_table_hash(sandbox) == printed_hash(table_hash(ROWS))
    finally:
        sandbox.close()


def test_db_url_is_parsed_with_escapes_and_socket() -> None:
    address = parse_db_url("mysql://agent:p%40ss@db.local:3307/?unix_socket=/run/my.sock")
    assert (address.user, address.password, address.host, address.port, address.unix_socket) == (
        "agent",
        "p@ss",
        "db.local",
        3307,
        "/run/my.sock",
    )
    assert parse_db_url("mariadb://root@127.0.0.1").port == 3306


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("postgres://u@h/", "scheme must be one of"),
        ("mysql://127.0.0.1:3306/", "no user name"),
        ("mysql://u@h/?ssl=1", "unknown query parameter 'ssl'"),
        ("mysql://u@h:notaport/", "db_url:"),
    ],
)
def test_bad_db_urls_say_what_is_wrong(url: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_db_url(url)


def test_hash_query_is_the_benchmarks_query() -> None:
    # The query DBBench's harness runs after the episode (columns back-quoted, table quoted).
    assert hash_query("Table of Year", ["Year", "Title"]) == (
        "select md5(group_concat(rowhash order by rowhash)) as hash from( SELECT substring(MD5(CONCAT_WS(',', "
        "`Year`,`Title`)), 1, 5) AS rowhash FROM `Table of Year`) as sub;"
    )
    assert "FROM `db`.`t`)" in hash_query("t", ["a"], "db")


@pytest.mark.parametrize(
    ("sql", "kind"),
    [
        ("  /* c */ select 1", "query"),
        ("(SELECT 1)", "query"),
        ("-- x\nUPDATE t SET a = 1", "mutation"),
        ("truncate table t", "mutation"),
        ("DROP TABLE t", "ddl"),
        ("SHOW TABLES", "meta"),
        ("SET @a = 1", "noop"),
    ],
)
def test_statement_kind_reads_the_first_word(sql: str, kind: str) -> None:
    assert statement_kind(sql) == kind


@pytest.mark.parametrize(
    ("mariadb", "mysql"),
    [
        ("1054 (42S22): Unknown column 'x' in 'SELECT'", "1054 (42S22): Unknown column 'x' in 'field list'"),
        ("1054 (42S22): Unknown column 'x' in 'GROUP BY'", "1054 (42S22): Unknown column 'x' in 'group statement'"),
        ("1052 (23000): Column 'a' in WHERE is ambiguous", "1052 (23000): Column 'a' in where clause is ambiguous"),
        (
            "1969 (70100): Query execution was interrupted (max_statement_time exceeded)",
            "3024 (HY000): Query execution was interrupted, maximum statement execution time exceeded",
        ),
        (
            "1064 (42000): You have an error in your SQL syntax; check the manual that corresponds to your MariaDB "
            "server version for the right syntax to use near 'x' at line 1",
            "1064 (42000): You have an error in your SQL syntax; check the manual that corresponds to your MySQL "
            "server version for the right syntax to use near 'x' at line 1",
        ),
        ("1146 (42S02): Table 'd.SELECT' doesn't exist", "1146 (42S02): Table 'd.SELECT' doesn't exist"),
    ],
)
def test_mariadb_texts_are_reworded_as_mysql8_writes_them(mariadb: str, mysql: str) -> None:
    assert mysql8_text(mariadb) == mysql


def test_generate_records_how_many_data_items_were_skipped(tmp_path) -> None:
    """A malformed benchmark item is skipped with a warning, and the run's manifest counts it."""
    import json
    from pathlib import Path

    from prefbuild import api

    source = Path(__file__).parent / "data" / "dbbench_sample.jsonl"
    good = source.read_text(encoding="utf-8").splitlines()[:2]
    broken = json.loads(good[0])
    broken["table"]["table_info"]["columns"].append(dict(broken["table"]["table_info"]["columns"][0]))  # duplicate
    data = tmp_path / "items.jsonl"
    data.write_text("\n".join([good[0], json.dumps(broken), good[1]]) + "\n", encoding="utf-8")
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(
        "name: skipped-items\nseed: 0\n"
        f"env: {{name: sql, protocol: dbbench, num_tasks: 3, max_steps: 5, options: {{data_file: {data}}}}}\n"
        "teacher: {backend: scripted, model: scripted-expert}\n",
        encoding="utf-8",
    )
    result = api.generate(recipe, out=tmp_path / "run")
    manifest = json.loads((result.run_dir / "manifest.json").read_text())
    assert manifest["counts"]["invalid_items"] == 1 and manifest["counts"]["episodes"] == 2
