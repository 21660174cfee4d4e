"""prefbuild's own export of played tool episodes, read back as a chat log, gives the same steps.

A tau2 (mock domain, scripted customer) and a BFCL run are played with the scripted teacher, as
the recipe tests play them; ``prefbuild export --format sft`` writes their successful episodes as
chat ``messages`` (tau2: structured ``tool_calls`` and a ``tools`` column; BFCL: Hermes text with
the tools in the system prompt); ``prefbuild label`` reads that file back. Each episode comes back
with the same steps: the same calls and results, the same facts, the same prompts (as the export
wrote them), and the same tool labels.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from prefbuild.cli import main
from prefbuild.exports.tooling import export_messages
from prefbuild.io.jsonl import read_records
from prefbuild.io.sources import read_trajectories
from prefbuild.labelers import build_labelers
from prefbuild.labelers.stage import label_trajectories
from prefbuild.records import Trajectory, assistant_turn, prompt_messages

TOOL_MODES = {"unknown_tool", "invalid_arguments", "tool_error", "repeated_tool_call", "malformed_tool_call",
              "hallucinated_tool_output"}
TAU2_MOCK = """\
name: tau2-mock-scripted
seed: 0
env:
  - name: tau2
    protocol: hermes
    split: base
    num_tasks: 2
    samples_per_task: 3
    max_steps: 30
    options: {domain: mock, hints: "off", user: scripted}
teacher: {backend: scripted, model: scripted-expert, scripted: {invalid_action: 0.3}}
"""
BFCL = ["bfcl-envtuning", "--set", "teacher.backend=scripted", "--set", "teacher.model=scripted-expert",
        "--set", "env.num_tasks=4", "--set", "env.samples_per_task=1", "--set", "teacher.scripted.invalid_action=0.25",
        "--set", "teacher.scripted.format_violation=0", "--set", "pairs.strategies.0.params.states_per_trajectory=1"]


def played_and_exported(tmp_path: Path, recipe: list[str]) -> tuple[list[Trajectory], Path]:
    """The labelled episodes of a scripted run and the ``sft`` export of its successful ones."""
    runner = CliRunner()
    out = tmp_path / "run"
    result = runner.invoke(main, ["run", *recipe[:1], "--out", str(out), "--quiet", *recipe[1:]],
                           catch_exceptions=False)
    assert result.exit_code == 0, result.output
    played = list(read_records(out / "labelled.jsonl", Trajectory))
    exported = tmp_path / "sft"
    args = ["export", str(out / "labelled.jsonl"), "-o", str(exported), "--format", "sft", "--jsonl",
            "--test-fraction", "0"]
    result = runner.invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return played, exported / "sft" / "train.jsonl"


def facts(step: object, *, offered: bool) -> list[tuple[object, ...]]:
    return [(f.call_id, f.name, f.arguments, f.ok) + ((f.offered,) if offered else ())
            for f in step.facts.tools]  # type: ignore[attr-defined]


def assert_same_steps(played: list[Trajectory], rows: Path, *, env_says_offered: bool) -> list[Trajectory]:
    by_id = {trajectory.id: trajectory for trajectory in played}
    back = list(read_trajectories(rows))
    successes = [trajectory for trajectory in played if trajectory.outcome.success]
    assert back and sorted(t.id for t in back) == sorted(t.id for t in successes)
    for trajectory in back:
        original = by_id[trajectory.id]
        assert len(trajectory.steps) == len(original.steps)
        assert [m.model_dump() for m in trajectory.messages] == [
            m.model_dump() for m in export_messages(original.messages, original.tools)]
        for step, before in zip(trajectory.steps, original.steps, strict=True):
            where = (trajectory.id, step.index)
            # what the model saw and wrote, in the form the export wrote it
            assert [m.model_dump() for m in prompt_messages(trajectory, step.index)] == [
                m.model_dump() for m in export_messages(prompt_messages(original, before.index), original.tools)
            ], where
            assert export_messages([assistant_turn(step)], trajectory.tools) == export_messages(
                [assistant_turn(before)], original.tools), where
            assert [(c.function.name, c.function.arguments) for c in step.tool_calls or []] == [
                (c.function.name, c.function.arguments) for c in before.tool_calls or []], where
            # tau2's env does not say whether a tool was offered (None); the imported log's tool list does
            assert facts(step, offered=env_says_offered) == facts(before, offered=env_says_offered), where
            for field in ("thought", "action", "format_ok", "normalized", "valid"):
                assert getattr(step, field) == getattr(before, field), (where, field)
            assert step.facts.problems == before.facts.problems, where
            if step.index < len(trajectory.steps) - 1:  # what the env answered the last turn is in no prompt
                assert step.feedback == before.feedback, where
    relabelled = list(label_trajectories(iter(back), build_labelers(None)))
    for trajectory in relabelled:
        original = by_id[trajectory.id]
        assert {(label.step, label.mode) for label in trajectory.labels if label.mode in TOOL_MODES} == {
            (label.step, label.mode) for label in original.labels if label.mode in TOOL_MODES}, trajectory.id
    return back


def test_a_played_tau2_run_exported_for_sft_reads_back_the_same(tmp_path: Path) -> None:
    pytest.importorskip("tau2")
    recipe = tmp_path / "tau2-mock.yaml"
    recipe.write_text(TAU2_MOCK, encoding="utf-8")
    played, rows = played_and_exported(tmp_path, [str(recipe)])
    back = assert_same_steps(played, rows, env_says_offered=False)
    # structured calls and the tools column: the tools are the trajectory's again
    assert all(trajectory.tools == played[0].tools for trajectory in back)
    steps = [step for trajectory in back for step in trajectory.steps]
    assert any(step.native_tool_calls for step in steps)
    assert any(not fact.ok for step in steps for fact in step.facts.tools)  # a successful episode with failed calls
    assert {fact.offered for step in steps for fact in step.facts.tools} == {True, False}


def test_a_played_bfcl_run_exported_for_sft_reads_back_the_same(tmp_path: Path) -> None:
    played, rows = played_and_exported(tmp_path, BFCL)
    back = assert_same_steps(played, rows, env_says_offered=True)
    # Hermes text with the tools in the system prompt: they stay there, as BFCL recorded them
    assert all(trajectory.tools is None and "<tools>" in trajectory.messages[0].content for trajectory in back)
    steps = [step for trajectory in back for step in trajectory.steps]
    assert any(step.tool_calls for step in steps) and not any(step.native_tool_calls for step in steps)
    assert any(fact.offered is False for step in steps for fact in step.facts.tools)
    assert {label.mode for trajectory in label_trajectories(iter(back), build_labelers(None))
            for label in trajectory.labels} >= {"unknown_tool"}
