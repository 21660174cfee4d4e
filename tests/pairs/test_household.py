"""Every strategy on labelled trajectories from the household env played by the scripted teacher."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from prefbuild.envs import cached_protocol as protocol_for
from prefbuild.pairs import build_pairs, build_strategy
from prefbuild.pairs.replay import ReplayError, replay
from prefbuild.records import FailureMode, Role, prompt_messages
from prefbuild.simulation.scripted import ScriptedTeacher
from tests.pairs.household import RATES, RecordingTeacher, cached, play


def dumps(messages) -> bytes:
    return json.dumps([m.model_dump(mode="json") for m in messages], ensure_ascii=False).encode()


@pytest.fixture(scope="module")
def episodes():
    trajectories, teacher = play(tasks=8, samples=2, seed=3)
    return trajectories, teacher


def test_household_run_has_the_failures_the_strategies_need(episodes):
    trajectories, _ = episodes
    outcomes = Counter(t.outcome.success for t in trajectories)
    assert outcomes[True] >= 3 and outcomes[False] >= 3
    modes = Counter(label.mode for t in trajectories for label in t.labels)
    assert modes[FailureMode.verbose_filler] and modes[FailureMode.invalid_action] and modes[FailureMode.loop]


def test_stepwise_prompt_is_byte_for_byte_what_the_teacher_was_sent(episodes):
    trajectories, teacher = episodes
    pairs = list(build_strategy("stepwise", {"expert": "oracle"}).pairs(trajectories))
    assert len(pairs) >= 5
    protocol = protocol_for("household", "agentbench")
    by_id = {t.id: t for t in trajectories}
    for pair in pairs:
        seen = teacher.seen[(pair.source.trajectory_id, pair.source.step)]
        assert dumps(pair.prompt) == dumps(seen)
        step = by_id[pair.source.trajectory_id].steps[pair.source.step]
        assert pair.rejected[0].content == step.raw_output
        assert protocol.parse(pair.chosen[0].content).action == step.expert_action
        assert any(label.mode is pair.reason for label in step.labels)
        assert pair.reason not in (FailureMode.verbose_filler, FailureMode.overlong)


def test_stepwise_with_teacher_thoughts_validates_each_thought(episodes):
    trajectories, _ = episodes
    teacher = RecordingTeacher(ScriptedTeacher({"verbose_filler": 0.5, "loop": 0.2}))
    strategy = build_strategy("stepwise", {"chosen": "teacher", "max_attempts": 3, "seed": 5}, teacher=teacher)
    pairs = list(strategy.pairs(trajectories))
    action_pairs = list(build_strategy("stepwise", {}).pairs(trajectories))
    protocol = protocol_for("household", "agentbench")
    assert len(pairs) + strategy.stats.skipped["teacher_thought_rejected"] == len(action_pairs)
    assert pairs
    for pair in pairs:
        parsed = protocol.parse(pair.chosen[0].content)
        step = next(t for t in trajectories if t.id == pair.source.trajectory_id).steps[pair.source.step]
        assert parsed.action == step.expert_action
        assert parsed.thought and parsed.thought.count(".") <= 1 and len(parsed.thought) <= 200
    # the hint reached the teacher: its prompts end with the expert action to justify
    hinted = [
        messages for messages in teacher.seen.values() if "correct next action is exactly" in messages[-1].content
    ]
    assert hinted


def test_style_pairs_from_verbose_turns_keep_the_action(episodes):
    trajectories, _ = episodes
    pairs = list(build_strategy("style", {}).pairs(trajectories))
    assert pairs
    protocol = protocol_for("household", "agentbench")
    for pair in pairs:
        chosen, rejected = protocol.parse(pair.chosen[0].content), protocol.parse(pair.rejected[0].content)
        assert chosen.action == rejected.action and chosen.action is not None
        assert len(pair.chosen[0].content) < len(pair.rejected[0].content)
        assert pair.reason in (FailureMode.verbose_filler, FailureMode.overlong)


def test_trajectory_pairs_on_the_same_task(episodes):
    trajectories, _ = episodes
    pairs = list(build_strategy("trajectory", {}).pairs(trajectories))
    by_id = {t.id: t for t in trajectories}
    from_teacher = [p for p in pairs if p.source.chosen_trajectory_id is not None]
    from_expert = [p for p in pairs if p.source.chosen_trajectory_id is None]
    assert from_teacher and from_expert
    for pair in from_teacher:
        chosen, rejected = by_id[pair.source.chosen_trajectory_id], by_id[pair.source.trajectory_id]
        assert chosen.task.id == rejected.task.id == pair.source.task_id
        assert chosen.outcome.success and not rejected.outcome.success
        assert dumps(pair.prompt) == dumps(prompt_messages(rejected, 0))
        turns = sum(m.role is Role.assistant for m in pair.rejected)
        assert turns == min(len(rejected.steps), len(chosen.steps) + 5)
    protocol = protocol_for("household", "agentbench")
    for pair in from_expert:
        rejected = by_id[pair.source.trajectory_id]
        assert not any(t.outcome.success for t in trajectories if t.task.id == rejected.task.id)
        assert dumps(pair.prompt) == dumps(prompt_messages(rejected, 0))
        # the oracle demonstration wins when its actions are played from the start
        env = replay(rejected, 0)
        results = [env.step(protocol.parse(m.content).action) for m in pair.chosen if m.role is Role.assistant]
        assert results[-1].won and not any(r.won for r in results[:-1])
    without_expert = list(build_strategy("trajectory", {"expert_fallback": False}).pairs(trajectories))
    assert len(without_expert) == len(from_teacher)


def test_replay_reaches_the_recorded_state_and_detects_divergence(episodes):
    trajectories, _ = episodes
    trajectory = max(trajectories, key=lambda t: len(t.steps))
    middle = len(trajectory.steps) // 2
    env = replay(trajectory, middle)
    assert env.expert_action() == trajectory.steps[middle].expert_action
    broken = trajectory.model_copy(deep=True)
    broken.steps[0].feedback = "Something else entirely."
    with pytest.raises(ReplayError, match="step 0"):
        replay(broken, 2)


def test_best_of_n_ranks_samples_by_progress(episodes):
    trajectories, _ = episodes
    teacher = ScriptedTeacher(RATES)
    strategy = build_strategy(
        "best_of_n", {"n": 4, "states_per_trajectory": 3, "min_margin": 1.0, "seed": 2}, teacher=teacher
    )
    pairs = list(strategy.pairs(trajectories[:10]))
    assert pairs
    for pair in pairs:
        assert pair.scores["margin"] >= 1.0
        assert pair.scores["chosen_score"] > pair.scores["rejected_score"]
    again = [
        p.id
        for p in build_strategy(
            "best_of_n", {"n": 4, "states_per_trajectory": 3, "seed": 2}, teacher=ScriptedTeacher(RATES)
        ).pairs(trajectories[:10])
    ]
    assert again == [p.id for p in pairs]


def test_all_strategies_through_the_pipeline_keep_tasks_out_of_both_splits():
    trajectories = cached(tasks=12, samples=2, seed=4)
    report = build_pairs(
        trajectories,
        [{"name": "stepwise", "params": {"chosen": "template"}}, {"name": "style"}, {"name": "trajectory"}],
        max_per_reason=6,
        max_per_trajectory=4,
        test_fraction=0.3,
        seed=1,
    )
    pairs = report.collect()
    counts = report.counts
    assert counts.trajectories == len(trajectories)
    assert {p.strategy for p in pairs} == {"stepwise", "style", "trajectory"}
    assert all(n <= 6 for n in Counter(p.reason for p in pairs).values())
    assert all(n <= 4 for n in Counter(p.source.trajectory_id for p in pairs).values())
    assert counts.kept == len(pairs) == sum(counts.by_split.values())
    assert counts.invalid == {}
    assert counts.balanced_out and counts.capped_per_trajectory  # both limits were exercised
    assert sum(counts.built.values()) == (
        counts.kept + counts.duplicates + counts.capped_per_trajectory + sum(counts.balanced_out.values())
    )
    tasks_by_split: dict[str, set[str]] = {"train": set(), "test": set()}
    for pair in pairs:
        tasks_by_split[pair.split].add(pair.source.task_id)
    assert tasks_by_split["train"] and tasks_by_split["test"]
    assert not tasks_by_split["train"] & tasks_by_split["test"]


def test_style_rewritten_by_the_teacher_keeps_the_action(episodes):
    trajectories, _ = episodes
    teacher = RecordingTeacher(ScriptedTeacher({}))
    strategy = build_strategy("style", {"rewrite": "teacher"}, teacher=teacher)
    pairs = list(strategy.pairs(trajectories))
    trimmed = list(build_strategy("style", {}).pairs(trajectories))
    assert pairs and len(pairs) <= len(trimmed)
    protocol = protocol_for("household", "agentbench")
    for pair in pairs:
        chosen, rejected = protocol.parse(pair.chosen[0].content), protocol.parse(pair.rejected[0].content)
        assert chosen.action == rejected.action
        assert chosen.thought and "Sure" not in chosen.thought
    assert all("correct next action is exactly" in m[-1].content for m in teacher.seen.values())
