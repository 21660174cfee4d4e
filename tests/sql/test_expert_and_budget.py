"""The step budget as AgentBench's dbbench loop runs it, and the expert's plan for each item."""

from __future__ import annotations

from prefbuild.envs.sql import actions
from prefbuild.envs.sql.env import SqlEnv
from prefbuild.envs.sql.expert import answer_observed, reply_shows_label
from prefbuild.envs.sql.generator import literal
from prefbuild.envs.sql.protocol import DBBenchProtocol

from .helpers import TABLE, make_item, make_task, play

T = f"`{TABLE}`"
PROBE = f"SELECT COUNT(*) FROM {T}"
UPDATE_REFERENCE = f"UPDATE {T} SET `Role` = 'Palestine' WHERE `Role` = 'Amos Oz'"


def _operation_turn(sql: str, final_answer: str | None = None) -> str:
    text = f"I look.\nAction: Operation\n```sql\n{sql}\n```"
    return text + (f"\nFinal Answer:{final_answer}" if final_answer is not None else "")


def test_final_answer_beside_an_operation_counts_only_after_the_last_operation() -> None:
    turns = [
        _operation_turn(PROBE, ' ["Wrong"]'),  # within the budget: executed, the answer line ignored
        _operation_turn(PROBE),
        _operation_turn(PROBE, ' ["Montréal"]'),  # the turn after the last operation: its answer counts
    ]
    trajectory = play(make_task(make_item()), turns, max_round=2)
    assert trajectory.outcome.success and len(trajectory.steps) == 3
    assert trajectory.steps[0].feedback == "[(4,)]"


def test_limit_turn_without_answer_is_task_limit() -> None:
    env = SqlEnv(max_round=1)
    env.reset(make_task(make_item()))
    assert env.step_budget == 2
    env.step(actions.operation(PROBE))
    last = env.step(actions.invalid("no 'Final Answer:' line"))
    assert last.done and last.info["status"] == "task limit reached" and not last.won


def test_mutation_table_is_hashed_whatever_ends_the_episode() -> None:
    protocol = DBBenchProtocol()
    item = make_item("UPDATE", label=(), reference_sql=UPDATE_REFERENCE, answer_md5=None)
    for final in ("I am done.", f"Action: Operation\n```sql\n{PROBE}\n```"):
        env = SqlEnv(max_round=1)
        env.reset(make_task(item))
        env.step(actions.operation(UPDATE_REFERENCE))
        result = env.step(protocol.parse(final).action or "")
        assert result.done and result.won, final  # scored on the table, not on the (missing) answer
        assert result.facts.sql.table_hash == result.facts.sql.expected


def test_mutation_without_working_reference_has_no_expert() -> None:
    for reference in ("UPDATE nowhere SET a = 1", None):
        env = SqlEnv()
        _, info = env.reset(make_task(make_item("UPDATE", label=(), reference_sql=reference, answer_md5="[(None,)]")))
        assert env.expert_action() is None  # never a stand-in SELECT *
        assert info["expert"]["available"] is False and info["expert"]["reason"]


def test_mutation_reference_not_reproducing_answer_md5_has_no_expert() -> None:
    env = SqlEnv()
    item = make_item("UPDATE", label=(), reference_sql=UPDATE_REFERENCE, answer_md5="[('0' * 32,)]")
    env.reset(make_task(item))
    assert env.expert_action() is None
    assert env.expert_plan is not None and "answer_md5" in (env.expert_plan.reason or "")


def test_query_expert_prefers_a_statement_whose_reply_shows_the_label() -> None:
    env = SqlEnv()
    # The reference counts rows; its reply does not show the label "Montréal".
    env.reset(make_task(make_item(reference_sql=PROBE)))
    plan = env.expert_plan
    assert plan is not None and plan.shows_label and plan.operation != PROBE
    assert plan.reply is not None and "Montréal" in plan.reply
    assert env.expert_action() == actions.operation(plan.operation or "")


def test_query_expert_with_a_failing_reference_still_finds_the_label() -> None:
    env = SqlEnv()
    env.reset(make_task(make_item(reference_sql="SELECT nope FROM nowhere")))
    plan = env.expert_plan
    assert plan is not None and plan.available and plan.shows_label and plan.operation


def test_unseen_answers_are_flagged() -> None:
    env = SqlEnv()
    env.reset(make_task(make_item()))
    guessed = env.step(actions.answer(' ["Montréal"]'))
    assert guessed.won and guessed.facts.sql.answer_seen is False
    assert guessed.facts is not None and guessed.facts.sql is not None
    assert guessed.facts.sql.answer_seen is False and guessed.facts.sql.answer == ' ["Montréal"]'
    env.reset(make_task(make_item()))
    looked = env.step(actions.operation(f"SELECT `Title` FROM {T}"))
    assert looked.facts is not None and looked.facts.sql is not None and looked.facts.sql.statement == "query"
    seen = env.step(actions.answer(' ["Montréal"]'))
    assert seen.won and seen.facts.sql.answer_seen is True
    assert seen.facts is not None and seen.facts.sql is not None and seen.facts.sql.answer_seen is True


def test_reply_shows_label_reads_numbers_by_value() -> None:
    assert reply_shows_label("[(12,)]", ["12.0"])
    assert reply_shows_label("[('a',), ('b',)]", ["a", "b"])
    assert not reply_shows_label("[('ab',)]", ["a"])
    assert not reply_shows_label("[('x',)][TRUNCATED]", ["x"])
    assert answer_observed(" [4]", ["[(4,)]"]) and not answer_observed(" [5]", ["[(4,)]"])


def test_literal_escapes_like_mysql_and_matches_the_value() -> None:
    value = "line one\nline\ttwo\r\0 it's \\ done"
    assert "\n" not in literal(value) and "\t" not in literal(value)
    env = SqlEnv()
    item = make_item(rows=(("2019", value, "Kou", "Lead"),), label=(value,), reference_sql=None)
    env.reset(make_task(item))
    assert env._sandbox is not None
    reply = env._sandbox.execute(f"SELECT COUNT(*) FROM {T} WHERE `Title` = {literal(value)}").reply
    assert reply == "[(1,)]"
    deleted = env.step(actions.operation(f"DELETE FROM {T} WHERE `Title` = {literal(value)}"))
    assert deleted.facts.sql.mutated and env._sandbox.table_rows() == []
