"""The expert's trajectories, scored by tau2's own evaluator, succeed; mistakes fail.

Slices of each domain's package split are played with the scripted user; the verdict is
``tau2.evaluator.evaluator.evaluate_simulation`` on the conversation (database / environment
assertions, expected actions, communicated information).
"""

from __future__ import annotations

import pytest

pytest.importorskip("tau2")

from prefbuild.envs.tau2.env import Tau2Env
from prefbuild.envs.tau2.goals import CLOSING
from prefbuild.tooluse.actions import encode_action
from tests.tau2.helpers import play_expert, task_by_id

# (domain, split, how many tasks from the start of the split). Airline and retail databases
# take about a second to load and tau2's evaluator loads two, so their slices are small.
SLICES = [("mock", "base", 9), ("airline", "test", 2), ("retail", "test", 2), ("telecom", "test", 3)]


@pytest.mark.parametrize(("domain", "split", "count"), SLICES)
def test_expert_succeeds_where_it_exists(domain: str, split: str, count: int) -> None:
    env = Tau2Env(domain=domain)
    played = 0
    for task in env.tasks(split, count, 0):
        if not task.info.meta["has_expert"]:
            assert task.payload.task.evaluation_criteria.actions is None
            continue
        results, verdict = play_expert(env, task)
        assert verdict["success"], (task.info.id, verdict["reward_info"])
        assert verdict["termination"] == "user_stop"
        assert verdict["reward"] == results[-1].reward == 1.0
        assert results[-1].facts.won and results[-1].facts.progress == 1.0
        played += 1
    assert played >= 1


def test_telecom_expert_has_the_user_act_on_the_device() -> None:
    env = Tau2Env(domain="telecom")
    task = next(t for t in env.tasks("test", 40, 0) if t.info.meta["user_actions"] >= 2)
    _results, verdict = play_expert(env, task)
    assert verdict["success"]
    device_calls = [call for message in env.trajectory if message.role == "user" for call in message.tool_calls or []]
    assert len(device_calls) >= task.info.meta["user_actions"]
    assert all(call.requestor == "user" for call in device_calls)


def test_premature_closing_fails_and_progress_says_how_far() -> None:
    env = Tau2Env(domain="mock")
    task = task_by_id(env, "base", "create_task_1")
    env.reset(task)
    assert env.progress() == 0.0
    result = env.step(encode_action(message=CLOSING))
    assert result.done and not result.facts.won and result.reward == 0.0
    assert result.info["tau2"]["reward_info"]["db_check"]["db_match"] is False
    assert result.facts.progress == 0.0


def test_a_wrong_write_fails_the_database_check() -> None:
    env = Tau2Env(domain="mock")
    task = task_by_id(env, "base", "create_task_1")
    env.reset(task)
    expert = env.expert_action()
    wrong = expert.replace("Important Meeting", "Unimportant Meeting")
    assert wrong != expert
    first = env.step(wrong)
    assert first.facts.tools[0].ok and first.facts.progress < 1.0
    last = env.step(encode_action(message=CLOSING))
    assert last.done and not last.facts.won
    assert last.info["tau2"]["reward_info"]["reward_breakdown"]["DB"] == 0.0


def test_tasks_follow_the_package_splits() -> None:
    env = Tau2Env(domain="airline")
    test_ids = [task.payload.task.id for task in env.tasks("test", 100, 0)]
    assert len(test_ids) == 20 and len(set(test_ids)) == 20
    infos = [task.info for task in env.tasks("test", 3, 0)]
    assert [info.type for info in infos] == ["airline"] * 3
    assert infos[0].id == f"tau2-airline-{test_ids[0]}"
    with pytest.raises(ValueError, match="no split 'dev'"):
        list(env.tasks("dev", 1, 0))
    assert list(env.tasks("test", 5, 0, task_types=["retail"])) == []


def test_bad_options_name_the_key() -> None:
    with pytest.raises(ValueError, match="unknown domain 'bank'"):
        Tau2Env(domain="bank")
    with pytest.raises(ValueError, match="hints must be one of"):
        Tau2Env(domain="mock", hints="always")
    with pytest.raises(ValueError, match=r"user\.model"):
        Tau2Env(domain="mock", user={"base_url": "http://127.0.0.1:1"})


def test_an_assertion_on_missing_state_scores_zero_instead_of_raising() -> None:
    env = Tau2Env(domain="mock")
    env.reset(task_by_id(env, "base", "create_task_1_with_env_assertions"))
    result = env.step(encode_action(message=CLOSING))
    assert result.done and result.reward == 0.0 and not result.facts.won
    assert result.info["tau2"]["error"] == "ValueError: Task task_2 not found"
