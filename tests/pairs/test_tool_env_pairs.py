"""Pairs of tool envs: a chosen call equal to the rejected one (other call ids) is no pair, a
template thought never quotes the action encoding, and a pair offers the tools of its own step."""

from __future__ import annotations

import pytest

from prefbuild.pairs.common import same_action
from prefbuild.pairs.strategies.stepwise import template_thought
from prefbuild.records import Outcome, Step, StopReason, Trajectory, tools_at

CALL = '{"tool_calls": [{"id": "%s", "name": "get_product_details", "arguments": {"product_id": "6086499569"}}]}'


def test_same_action_ignores_tool_call_ids():
    # The rejected call (call_0) and the expert's (expert_1) are the same call: no stepwise pair.
    assert same_action(CALL % "call_0", CALL % "expert_1")
    assert not same_action(CALL % "call_0", CALL.replace("6086499569", "1") % "expert_1")


def test_template_thought_never_quotes_tool_action_json():
    thought = template_thought(CALL % "call_1_0")
    assert thought == "I should call get_product_details now."
    assert template_thought('{"message": "Done."}') is None


def _trajectory(steps):
    return Trajectory.model_validate({
        "id": "t", "task": {"id": "k", "type": "x", "goal": "g", "split": "train"},
        "env": {"name": "bfcl", "protocol": "hermes"}, "teacher": {"backend": "scripted", "model": "m"},
        "tools": [{"type": "function", "function": {"name": "a"}}, {"type": "function", "function": {"name": "b"}}],
        "steps": steps, "outcome": Outcome(success=False, stop_reason=StopReason.max_steps).model_dump(),
    })


def test_tools_at_gives_the_tools_offered_before_a_reveal():
    early = [{"type": "function", "function": {"name": "a"}}]
    trajectory = _trajectory([
        Step(index=0, observation="q", raw_output="x", offered_tools=early).model_dump(),
        Step(index=1, observation="q", raw_output="y").model_dump(),
    ])
    assert tools_at(trajectory, 0) == early
    assert tools_at(trajectory, 1) == trajectory.tools


def _run(tmp_path, recipe: str, *overrides: str):
    from prefbuild.api import run
    from prefbuild.io.jsonl import read_records
    from prefbuild.records import Pair

    run(recipe, overrides=["teacher.backend=scripted", "teacher.model=scripted-expert", *overrides],
        out=tmp_path / "run", quiet=True)
    pairs = list(read_records(tmp_path / "run" / "pairs.jsonl", Pair))
    trajectories = {t.id: t for t in read_records(tmp_path / "run" / "labelled.jsonl", Trajectory)}
    return pairs, trajectories


def test_best_of_n_never_chooses_a_turn_the_protocol_finds_malformed(tmp_path):
    from prefbuild.envs import make_protocol

    pytest.importorskip("math_verify")
    pairs, _ = _run(tmp_path, "code-interpreter", "env.num_tasks=40", "env.samples_per_task=2")
    chosen = [pair for pair in pairs if pair.strategy == "best_of_n"]
    assert chosen
    protocol = make_protocol("code", "hermes")
    for pair in chosen:
        turn = pair.chosen[0]
        parsed = protocol.parse_completion(turn.content or "", ())  # the calls are Hermes text in the content
        assert parsed.format_ok and not parsed.problems, (pair.id, turn.content)


def test_bfcl_pairs_before_a_reveal_offer_only_the_tools_offered_then(tmp_path):
    pytest.importorskip("bfcl_eval")
    pairs, trajectories = _run(tmp_path, "bfcl-envtuning", "env.task_types=[miss_func]", "env.num_tasks=12",
                               "env.samples_per_task=1", "env.protocol_options.tools_in_prompt=false",
                               "teacher.scripted.invalid_action=0.3")
    revealed = 0
    for pair in pairs:  # a whole-episode pair's decision point is its first step
        assert pair.tools is not None
        trajectory = trajectories[pair.source.trajectory_id]
        step = pair.source.step or 0
        offered = {tool["function"]["name"] for tool in tools_at(trajectory, step)}
        assert {tool["function"]["name"] for tool in pair.tools} == offered, pair.strategy
        revealed += trajectory.steps[step].offered_tools is not None
    assert revealed, "no pair at a step before a function was revealed"
    assert all(step.offered_tools is None or len(step.offered_tools) < len(t.tools or [])
               for t in trajectories.values() for step in t.steps)
