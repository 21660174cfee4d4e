"""The sql env end to end: generated tasks, the expert, turn limit, failure actions, the data-file loader."""

from __future__ import annotations

import collections
import json
import random
import re
from pathlib import Path

import pytest

from prefbuild.envs import get_env
from prefbuild.envs.sql import actions
from prefbuild.envs.sql.env import SqlEnv
from prefbuild.envs.sql.generator import table_fingerprint
from prefbuild.envs.sql.items import MUTATION_TYPES, QUERY_TYPES, TASK_TYPES
from prefbuild.envs.sql.loader import SqlDataError
from prefbuild.envs.sql.protocol import DBBenchProtocol
from prefbuild.simulation import failure_action

from .helpers import answer, make_item, make_task, operation, play

DATA = Path(__file__).parent / "data" / "dbbench_sample.jsonl"


def run_expert(env: SqlEnv, task, protocol: DBBenchProtocol) -> tuple[bool, int]:
    env.reset(task)
    for turn in range(20):
        action = env.expert_action()
        assert action is not None
        parsed = protocol.parse(protocol.render(action))
        assert parsed.action == action and parsed.format_ok
        result = env.step(parsed.action)
        assert result.facts is not None and result.facts.sql is not None and result.valid is not None
        if result.done:
            return result.won, turn + 1
    raise AssertionError("the expert did not finish")


def test_registered() -> None:
    assert get_env("sql") is SqlEnv
    assert SqlEnv.protocols["dbbench"] is DBBenchProtocol


def test_expert_solves_every_generated_item() -> None:
    env, protocol = SqlEnv(), DBBenchProtocol()
    tasks = list(env.tasks("train", 440, seed=7)) + list(env.tasks("test", 110, seed=3))
    assert len(tasks) == 550
    assert {task.info.type for task in tasks} == set(TASK_TYPES)
    failures = []
    for task in tasks:
        won, turns = run_expert(env, task, protocol)
        assert turns == 2  # one operation, one answer
        if not won:
            failures.append(task.info.id)
    assert failures == []


def test_generated_tables_look_like_dbbench() -> None:
    tasks = list(SqlEnv().tasks("dev", 120, seed=1))
    widths = [len(task.payload.columns) for task in tasks]
    heights = [len(task.payload.rows) for task in tasks]
    assert min(widths) >= 3 and max(widths) <= 12 and min(heights) >= 7 and max(heights) <= 100
    assert any(" " in task.payload.table_name for task in tasks)
    assert any(any(ch in column for ch in "/#%.?") for task in tasks for column in task.payload.columns)
    for task in tasks:
        item = task.payload
        assert all(isinstance(cell, str) for row in item.rows for cell in row)
        assert task.info.goal == item.description
        assert item.prompt == (
            f"{item.description}\nThe name of this table is {item.table_name}, and the headers of this table are "
            f"{','.join(item.columns)}."
        )
        if item.mutation:
            assert item.answer_md5 and item.answer_md5.startswith("[('") and not item.label
        else:
            assert len(item.label) == 1 and isinstance(item.label[0], str)


def test_tasks_are_deterministic() -> None:
    first = [(t.info, t.payload) for t in SqlEnv().tasks("train", 60, seed=11)]
    second = [(t.info, t.payload) for t in SqlEnv().tasks("train", 60, seed=11)]
    other = [t.info.id for t in SqlEnv().tasks("train", 60, seed=12)]
    assert first == second
    assert [info.id for info, _ in first] != other
    assert len({info.id for info, _ in first}) == 60


def test_task_types_filter() -> None:
    tasks = list(SqlEnv().tasks("dev", 12, seed=0, task_types=["INSERT", "aggregation-AVG"]))
    assert collections.Counter(t.info.type for t in tasks) == {"INSERT": 6, "aggregation-AVG": 6}
    with pytest.raises(ValueError, match="unknown sql task type"):
        list(SqlEnv().tasks("dev", 1, seed=0, task_types=["JOIN"]))
    with pytest.raises(ValueError, match="unknown sql split"):
        list(SqlEnv().tasks("nope", 1, seed=0))


def test_no_table_appears_in_two_splits() -> None:
    seen: dict[str, set[str]] = {}
    for split in ("train", "dev", "test"):
        for seed in (0, 1):
            for task in SqlEnv().tasks(split, 150, seed=seed):
                item = task.payload
                seen.setdefault(table_fingerprint(item.table_name, item.columns, item.rows), set()).add(split)
    assert all(len(splits) == 1 for splits in seen.values())
    assert sum(1 for splits in seen.values() if splits == {"train"}) > 100
    # The benchmark's own name for the test split reads the same tables.
    standard = [t.payload for t in SqlEnv().tasks("standard", 5, seed=0)]
    assert standard == [t.payload for t in SqlEnv().tasks("test", 5, seed=0)]


def test_turn_limit_counts_operations() -> None:
    task = make_task(make_item())
    probe = "SELECT COUNT(*) FROM `Table of Year, Title, and Role`"
    env = SqlEnv(max_round=3)
    env.reset(task)
    for _ in range(3):
        result = env.step(actions.operation(probe))
        assert not result.done and result.observation == "[(4,)]"
    last = env.step(actions.operation(probe))  # the turn after the budget is final
    assert last.done and not last.won and last.info["status"] == "task limit reached"
    assert last.info["operations"] == 3 and last.observation == ""
    after = env.step(actions.answer(' ["Montréal"]'))
    assert after.done and not after.valid


def test_answer_after_the_last_operation_still_counts() -> None:
    probe = operation("SELECT 1")
    trajectory = play(make_task(make_item()), [probe, probe, answer(' ["Montréal"]')], max_round=2)
    assert trajectory.outcome.success and len(trajectory.steps) == 3


def test_step_info_and_reward() -> None:
    trajectory = play(
        make_task(make_item()),
        [
            operation("SELECT `Title` FROM `Table of Year, Title, and Role` WHERE Foo = 1"),
            operation("SELECT `Title` FROM `Table of Year, Title, and Role` WHERE `Role` = 'Johnson'"),
            answer(' ["Montréal"]'),
        ],
    )
    bad, good, final = trajectory.steps
    assert (
        bad.valid is False
        and bad.facts.sql.error.startswith("1054 (42S22)")
        and bad.feedback == bad.facts.sql.error
    )
    assert good.valid and good.facts.sql.error is None and good.feedback == "[('Montréal',)]"
    assert good.facts.sql.executed.endswith("= 'Johnson'") and good.facts.sql.mutated is False
    assert final.facts.sql.answer == ' ["Montréal"]' and final.facts.won and final.reward == 1.0 and final.done
    assert final.facts.sql.expected == ["Montréal"]


def test_validation_failure_ends_the_episode_but_mutations_are_still_scored() -> None:
    reference = "INSERT INTO `Table of Year, Title, and Role` VALUES ('2020', 'Orange', 'Kakeru', NULL)"
    env = SqlEnv()
    scratch_task = make_task(make_item("INSERT", label=(), reference_sql=reference))
    env.reset(scratch_task)  # no answer_md5: the target is the reference replayed on a fresh copy
    assert env.step(actions.operation(reference)).facts.sql.mutated
    result = env.step(DBBenchProtocol().parse("I am done, it is inserted.").action or "")
    assert result.done and result.won and result.info["status"] == "agent validation failed"
    query = play(make_task(make_item()), ["Action: Operation\nSELECT 1"])
    assert not query.outcome.success and query.steps[0].info["status"] == "agent validation failed"


def test_failure_actions() -> None:
    rng = random.Random(0)
    task = make_task(make_item())
    env = SqlEnv()
    env.reset(task)
    premature = failure_action(env, "premature_success", rng)
    assert premature is not None and premature.startswith("Answer: [")
    for mode in ("invalid_action", "sql_error"):
        for _ in range(10):
            broken = failure_action(env, mode, rng)
            assert broken is not None and broken.startswith("Operation: ")
            scratch = SqlEnv()
            scratch.reset(task)
            assert scratch.step(broken).facts.sql.error
    assert failure_action(env, "loop", rng) is None
    assert failure_action(env, "implausible_location", rng) is None
    env.step(actions.operation("SELECT `Title` FROM `Table of Year, Title, and Role`"))
    assert failure_action(env, "premature_success", rng) is None  # it has queried now
    assert failure_action(env, "loop", rng) == "Operation: SELECT `Title` FROM `Table of Year, Title, and Role`"
    wrong = failure_action(env, "wrong_answer", rng)
    assert wrong is not None and not env.step(wrong).won
    mutation = SqlEnv()
    mutation.reset(
        make_task(
            make_item("UPDATE", label=(), reference_sql="UPDATE `Table of Year, Title, and Role` SET `Role` = 'x'")
        )
    )
    assert not mutation.step(failure_action(mutation, "premature_success", rng) or "").won


UPDATE_REFERENCE = "UPDATE `Table of Year, Title, and Role` SET `Role` = 'Palestine' WHERE `Role` = 'Amos Oz'"
INSERT_REFERENCE = "INSERT INTO `Table of Year, Title, and Role` VALUES ('2020', 'Orange', 'Kakeru', NULL)"


@pytest.mark.parametrize(
    ("kind", "reference", "damage", "repairs"),
    [
        ("UPDATE", UPDATE_REFERENCE, ["DELETE FROM `Table of Year, Title, and Role` WHERE `Year` = '2019'"], 2),
        ("UPDATE", UPDATE_REFERENCE, ["UPDATE `Table of Year, Title, and Role` SET `Role` = 'Palestine'"], 4),
        ("INSERT", INSERT_REFERENCE, [INSERT_REFERENCE, INSERT_REFERENCE], 2),  # duplicate insert
        ("INSERT", INSERT_REFERENCE, [INSERT_REFERENCE.replace("Kakeru", "kakeru")], 2),  # wrong case
        (
            "DELETE",
            "DELETE FROM `Table of Year, Title, and Role` WHERE `Year` = '999'",
            ["DROP TABLE `Table of Year, Title, and Role`"],
            2,
        ),  # create the table, insert the target rows
    ],
)
def test_expert_repairs_a_damaged_table(kind: str, reference: str, damage: list[str], repairs: int) -> None:
    env = SqlEnv()
    env.reset(make_task(make_item(kind, label=(), reference_sql=reference)))
    assert env.expert_action() == actions.operation(reference)
    for sql in damage:
        assert env.step(actions.operation(sql)).facts.sql.error is None
    assert env.progress() == 0.0
    statements = []
    while (action := env.expert_action()) is not None and action.startswith("Operation: "):
        statements.append(action)
        assert env.step(action).facts.sql.error is None
        assert len(statements) <= 5
    assert len(statements) == repairs and env.progress() == 1.0
    assert env.step(action or "").won


def test_no_expert_when_the_table_cannot_be_repaired() -> None:
    env = SqlEnv()
    env.reset(make_task(make_item("UPDATE", label=(), reference_sql=UPDATE_REFERENCE)))
    env.step(actions.operation("ALTER TABLE `Table of Year, Title, and Role` DROP COLUMN `Role`"))
    assert env.expert_action() is None  # no chosen side rather than an answer that fails


def test_query_progress() -> None:
    query = SqlEnv()
    query.reset(make_task(make_item()))
    assert query.progress() == 0.0
    query.step(query.expert_action() or "")
    assert query.progress() == 0.5
    query.step(query.expert_action() or "")
    assert query.progress() == 1.0


def test_data_file_items_play_and_score() -> None:
    env, protocol = SqlEnv(data_file=DATA), DBBenchProtocol()
    tasks = list(env.tasks("standard", 100, seed=0))
    assert [t.info.type for t in tasks] == [
        "other",
        "counting",
        "aggregation-AVG",
        "aggregation-MAX",
        "INSERT",
        "UPDATE",
    ]
    assert (
        tasks[0].info.id == "dbbench-dbbench_sample-0001" and tasks[0].info.meta["source"] == "dbbench_sample.jsonl:1"
    )
    assert all(run_expert(SqlEnv(data_file=DATA), task, protocol)[0] for task in tasks)
    assert [t.info.type for t in env.tasks("standard", 1, seed=0, task_types=["UPDATE"])] == ["UPDATE"]
    # The stored add_description is used as written.
    assert tasks[0].payload.prompt.endswith("the headers of this table are Result,Opponent,Method,Notes.")
    # A wrong UPDATE does not match the stored hash; the answer text cannot rescue it.
    update = tasks[-1]
    wrong = play(
        update, [operation("UPDATE speeches SET Nationality = 'palestine' WHERE Speaker = 'Amos Oz'"), answer(" []")]
    )
    assert not wrong.outcome.success


def _write(tmp_path: Path, lines: list[object]) -> Path:
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n")
    return path


def _duplicate_column(item: dict) -> None:
    item["table"]["table_info"]["columns"].append({"name": "notes", "type": "TEXT"})
    for row in item["table"]["table_info"]["rows"]:
        row.append("x")


def _empty_column_name(item: dict) -> None:
    item["table"]["table_info"]["columns"][1]["name"] = ""


BAD_LINES = [
    (
        lambda d: d["table"]["table_info"]["rows"][3].pop(),
        r"bad\.jsonl:2: table\.table_info\.rows\.3: expected 4 values, got 3",
    ),
    (lambda d: d.pop("description"), r"bad\.jsonl:2: description: missing$"),
    (lambda d: d.update(type=["JOIN"]), r"bad\.jsonl:2: type: unknown type 'JOIN'"),
    (lambda d: d.update(label="x"), r"bad\.jsonl:2: label: a query item"),
    (lambda d: d["table"].update(table_name=7), r"bad\.jsonl:2: table\.table_name: expected text$"),
    (_duplicate_column, r"bad\.jsonl:2: table\.table_info\.columns: duplicate column name 'notes'"),
    (_empty_column_name, r"bad\.jsonl:2: table\.table_info\.columns\.1\.name: empty column name"),
]


@pytest.mark.parametrize(("mutate", "message"), BAD_LINES)
def test_bad_lines_name_file_line_and_field(tmp_path: Path, mutate, message: str) -> None:
    good = json.loads(DATA.read_text().splitlines()[0])
    bad = json.loads(DATA.read_text().splitlines()[0])
    mutate(bad)
    path = _write(tmp_path, [good, bad])
    with pytest.raises(SqlDataError, match=message):
        list(SqlEnv(data_file=path, on_invalid_item="error").tasks("dev", 10, seed=0))
    env = SqlEnv(data_file=path)  # default: skip, with a file:line warning and a count
    assert len(list(env.tasks("dev", 10, seed=0))) == 1
    assert len(env.invalid_items) == 1 and re.match(message, str(env.invalid_items[0]).split("/")[-1])
    assert not env.invalid_items[0].kept


def test_bad_json_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SqlDataError, match=r"bad\.jsonl:1: not valid JSON"):
        list(SqlEnv(data_file=_write(tmp_path, ["{nope"]), on_invalid_item="error").tasks("dev", 10, seed=0))
    with pytest.raises(SqlDataError, match="cannot read DBBench data"):
        list(SqlEnv(data_file=tmp_path / "missing.jsonl").tasks("dev", 10, seed=0))
    with pytest.raises(ValueError, match="on_invalid_item must be one of skip, error, as_benchmark"):
        SqlEnv(on_invalid_item="ignore")


def test_a_data_file_without_a_playable_item_is_an_error_not_zero_episodes(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(ValueError, match=r"empty\.jsonl: no DBBench item in it$"):
        list(SqlEnv(data_file=empty).tasks("dev", 10, seed=0))
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b"\xff\xfe{}\n")
    env = SqlEnv(data_file=binary)  # a line that is not UTF-8 is an invalid item at its file:line
    with pytest.raises(ValueError, match=r"binary\.jsonl: no DBBench item in it \(1 invalid, skipped\)"):
        list(env.tasks("dev", 10, seed=0))
    assert re.search(r"binary\.jsonl:1: not UTF-8 text", str(env.invalid_items[0]))
    with pytest.raises(ValueError, match=r"no DBBench item of the task types \['ranking'\] in it"):
        list(SqlEnv(data_file=DATA).tasks("dev", 10, seed=0, task_types=["ranking"]))


def _query_item(mutate) -> dict:
    item = json.loads(
        next(
            line
            for line in DATA.read_text().splitlines()
            if '"INSERT"' not in line and '"UPDATE"' not in line and '"DELETE"' not in line
        )
    )
    mutate(item)
    return item


@pytest.mark.parametrize(
    ("mutate", "table_rows"),
    [
        (_duplicate_column, None),  # CREATE TABLE fails on MySQL: there is no table
        (_empty_column_name, None),
        (lambda d: d["table"]["table_info"]["rows"][1].pop(), []),  # the multi-row INSERT fails: empty table
    ],
)
def test_as_benchmark_builds_what_mysql_builds(tmp_path: Path, mutate, table_rows) -> None:
    item = _query_item(mutate)
    path = _write(tmp_path, [item])
    env = SqlEnv(data_file=path, on_invalid_item="as_benchmark")
    tasks = list(env.tasks("dev", 10, seed=0))
    assert len(tasks) == 1 and len(env.invalid_items) == 1 and env.invalid_items[0].kept
    env.reset(tasks[0])
    assert env._sandbox is not None and env._sandbox.table_rows() == table_rows
    label = tasks[0].payload.label
    assert env.step(actions.answer(" " + json.dumps(list(label)))).won  # still scored on its label


def test_generated_items_round_trip_through_the_loader(tmp_path: Path) -> None:
    tasks = list(SqlEnv().tasks("dev", 22, seed=5))
    path = tmp_path / "generated.jsonl"
    path.write_text("".join(json.dumps(task.payload.to_json(), ensure_ascii=False) + "\n" for task in tasks))
    loaded = list(SqlEnv(data_file=path).tasks("dev", 100, seed=0))
    assert [t.payload.to_json() for t in loaded] == [t.payload.to_json() for t in tasks]
    assert {t.info.type for t in loaded} == set(QUERY_TYPES) | set(MUTATION_TYPES)
    protocol = DBBenchProtocol()
    assert all(run_expert(SqlEnv(data_file=path), task, protocol)[0] for task in loaded)
