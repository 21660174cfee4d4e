"""``ranked_samples``: best-of-n across the samples of one task, by outcome or by progress."""

from __future__ import annotations

from prefbuild.pairs.strategies.ranked import RankedSamplesStrategy
from prefbuild.records import EnvInfo, Outcome, Step, StepFacts, TaskInfo, TeacherInfo, Trajectory

TOOLS = [{"type": "function", "function": {"name": "cd", "parameters": {"type": "object"}}}]


def sample(index: int, progress: float, *, success: bool = False, task: str = "multi_turn_base_0") -> Trajectory:
    steps = [Step(index=0, observation="Go to the docs folder.", raw_output=f"answer {index}", done=success,
                  facts=StepFacts(progress=progress, won=success))]
    outcome = Outcome(success=success, progress=progress,
                      stop_reason="success" if success else "agent_finished")
    return Trajectory(id=f"{task}-{index}", task=TaskInfo(id=task, type="base", goal="g", split="test"),
                      env=EnvInfo(name="bfcl", protocol="hermes"), teacher=TeacherInfo(backend="b", model="m"),
                      sample_index=index, tools=TOOLS, steps=steps, outcome=outcome)


def test_progress_ranks_partial_successes_and_pairs_best_against_the_worst_first() -> None:
    strategy = RankedSamplesStrategy(rank_by="progress", max_pairs_per_task=2, min_margin=0.2)
    samples = [sample(0, 0.25), sample(1, 0.75), sample(2, 0.0), sample(3, 0.7)]
    pairs = list(strategy.pairs(samples))
    assert [(p.source.chosen_trajectory_id, p.source.trajectory_id) for p in pairs] == [
        ("multi_turn_base_0-1", "multi_turn_base_0-2"), ("multi_turn_base_0-1", "multi_turn_base_0-0")]
    assert pairs[0].scores == {"chosen_score": 0.75, "rejected_score": 0.0, "margin": 0.75}
    assert pairs[0].tools == TOOLS and pairs[0].chosen[0].content == "answer 1"
    assert strategy.stats.skipped["margin_too_small"] == 0  # sample 3 was never reached (cap of 2)


def test_outcome_ranks_success_first_and_skips_lone_samples() -> None:
    strategy = RankedSamplesStrategy()
    pairs = list(strategy.pairs([sample(0, 0.9), sample(1, 1.0, success=True), sample(0, 0.0, task="other")]))
    assert len(pairs) == 1 and pairs[0].source.chosen_trajectory_id == "multi_turn_base_0-1"
    assert pairs[0].scores["margin"] == 1.1
    assert strategy.stats.skipped["single_sample"] == 1
