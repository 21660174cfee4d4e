"""Tool-calling chat logs (OpenAI messages, Hermes / Qwen3 text, LLaMA-Factory ShareGPT) imported,
labelled and paired: the labels ``data/expected.json`` names, the calls and their facts, and the
CLI from ``label`` through ``pair --strategy style`` and ``stats``."""

from __future__ import annotations

import doctest
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from prefbuild.cli import main
from prefbuild.io.importers import chat_turns, located, tool_chat, tool_defs, tool_steps
from prefbuild.io.jsonl import read_records
from prefbuild.io.sources import LabelInputError, read_trajectories
from prefbuild.labelers import build_labelers
from prefbuild.labelers.stage import label_trajectories
from prefbuild.records import Pair, Role, StopReason, Trajectory, prompt_messages
from tests.chatimport.test_fixtures import DATA, HERMES, OPENAI, SHAREGPT, expected
from tests.labelers.samples import INSTRUCTION, INTRO

FILES = (OPENAI, HERMES, SHAREGPT)


def imported(path: Path) -> dict[str, Trajectory]:
    return {trajectory.id: trajectory for trajectory in read_trajectories(path)}


@pytest.fixture(scope="module")
def trajectories() -> dict[str, Trajectory]:
    found: dict[str, Trajectory] = {}
    for path in FILES:
        found.update(imported(path))
    return found


@pytest.mark.parametrize("path", FILES, ids=lambda path: path.name)
def test_each_episode_gets_exactly_the_expected_labels(path: Path) -> None:
    wanted = expected()
    labelled = list(label_trajectories(iter(imported(path).values()), build_labelers(None)))
    assert labelled
    for trajectory in labelled:
        case = wanted[trajectory.id]
        assert len(trajectory.steps) == case["steps"], trajectory.id
        got = sorted((label.step, label.mode) for label in trajectory.labels)
        assert got == sorted(map(tuple, case["labels"])), (trajectory.id, [lab.evidence for lab in trajectory.labels])


def test_trajectories_are_tool_trajectories_of_the_env_the_record_names(trajectories: dict[str, Trajectory]) -> None:
    for trajectory in trajectories.values():
        want = "code" if trajectory.id == "oa-code-wrong" else "tau2"
        assert (trajectory.env.name, trajectory.env.protocol) == (want, "hermes"), trajectory.id
        assert trajectory.task.split == "external" and trajectory.task.meta["source"] == "chat_tools"
        assert trajectory.task.meta["shape"] == {"oa": "openai", "he": "hermes", "sg": "sharegpt"}[trajectory.id[:2]]
        assert trajectory.teacher.backend == "external"
    assert trajectories["oa-parallel"].teacher.model == "gpt-4o-mini"
    assert trajectories["oa-clean"].teacher.model == "unknown"
    assert trajectories["oa-clean"].task.goal == "What is the weather in Paris?"
    # the system prompt is the prefix; the first user turn the first step's observation
    first = trajectories["sg-clean"]
    assert [m.role for m in first.messages] == [Role.system] and first.steps[0].observation_role == "user"


def test_tools_from_a_tools_list_are_the_trajectorys_and_prompt_tools_stay_in_the_prompt(
    trajectories: dict[str, Trajectory],
) -> None:
    names = ["get_weather", "get_forecast"]
    for key in ("oa-clean", "sg-clean", "he-unknown-tool"):
        tools = trajectories[key].tools
        assert tools is not None and [tool["function"]["name"] for tool in tools] == names
        assert all(tool["type"] == "function" for tool in tools)  # LLaMA-Factory's bare definitions wrapped
    # Hermes tools written into the system prompt are not request tools (an export would show them twice) ...
    clean = trajectories["he-clean"]
    assert clean.tools is None and "<tools>" in clean.messages[0].content
    # ... but calls are still checked against them: offered, and the schema error read here
    (fact,) = trajectories["he-bad-arguments"].steps[0].facts.tools
    assert fact.offered is True and fact.schema_error == "argument 'days': 10 is greater than the maximum of 7"
    (unknown,) = trajectories["he-unknown-tool"].steps[0].facts.tools
    assert (unknown.name, unknown.offered, unknown.ok) == ("search_web", False, False)


def facts_of(trajectory: Trajectory) -> list[list[tuple[Any, ...]]]:
    return [[(f.call_id, f.name, f.arguments, f.ok, f.error, f.offered) for f in step.facts.tools]
            for step in trajectory.steps]


def test_calls_results_and_their_facts(trajectories: dict[str, Trajectory]) -> None:
    paris, oslo = {"city": "Paris"}, {"city": "Oslo"}
    # parallel structured calls, results in the other order: matched by id; one call's arguments an object
    parallel = trajectories["oa-parallel"]
    assert facts_of(parallel) == [[("call_f1", "get_weather", paris, True, None, True),
                                   ("call_f2", "get_weather", oslo, True, None, True)], []]
    step = parallel.steps[0]
    assert step.native_tool_calls and step.raw_output == "" and step.valid is True
    assert [(c.id, c.function.arguments) for c in step.tool_calls] == [("call_f1", '{"city": "Paris"}'),
                                                                       ("call_f2", '{"city": "Oslo"}')]
    results = parallel.steps[1].observation_messages
    assert [(m.role, m.tool_call_id) for m in results] == [(Role.tool, "call_f2"), (Role.tool, "call_f1")]
    assert parallel.steps[0].feedback == parallel.steps[1].observation
    # failures by the result's text: a JSON error member, "Error: ...", a traceback (its last line)
    assert facts_of(trajectories["oa-tool-error"])[0] == [
        ("call_d1", "get_weather", {"city": "Atlantis"}, False, "city not found: Atlantis", True)]
    assert facts_of(trajectories["oa-unknown-tool"])[0] == [
        ("call_b1", "get_current_conditions", oslo, False, "Error: unknown tool 'get_current_conditions'", False)]
    assert facts_of(trajectories["sg-tool-error"])[0] == [
        ("call_0", "get_weather", paris, False, "TimeoutError: upstream service timed out", True)]
    # Hermes text calls: read from the text, ids call_<n>, results as <tool_response> user turns become tool turns
    clean = trajectories["he-clean"]
    assert not clean.steps[0].native_tool_calls and clean.steps[0].raw_output.startswith("<tool_call>")
    assert facts_of(clean)[0] == [("call_0", "get_weather", paris, True, None, True)]
    assert clean.steps[1].observation_role == "tool"
    assert [(m.role, m.tool_call_id, m.content) for m in clean.steps[1].observation_messages] == [
        (Role.tool, "call_0", '{"temperature": 18, "unit": "celsius", "condition": "cloudy"}')]
    think = trajectories["he-think"]
    assert think.steps[0].thought == "The user wants two days." and think.steps[1].thought == "Two entries."
    malformed = trajectories["he-malformed"].steps[0]
    assert malformed.tool_calls is None and not malformed.format_ok and "tool call is not valid JSON" in (
        malformed.facts.problems)


def test_outcomes(trajectories: dict[str, Trajectory]) -> None:
    clean = trajectories["oa-clean"]
    assert clean.outcome.success and clean.steps[-1].done and clean.task.meta["outcome_known"] is True
    unknown = trajectories["he-think"]  # no success / reward in the record
    assert not unknown.outcome.success and unknown.task.meta["outcome_known"] is False
    assert unknown.outcome.stop_reason is StopReason.agent_finished  # it ended on the agent's answer
    wrong = trajectories["oa-code-wrong"]
    assert wrong.outcome.stop_reason is StopReason.agent_finished and wrong.steps[-1].facts.final
    assert wrong.steps[-1].facts.won is False
    assert trajectories["oa-parallel"].outcome.success  # reward 1.0


def test_prompts_rebuild_the_conversation_as_the_model_saw_it(trajectories: dict[str, Trajectory]) -> None:
    """``prompt_messages`` of the last step is the log's conversation before its last assistant turn."""
    for record in [json.loads(line) for line in OPENAI.read_text(encoding="utf-8").splitlines()]:
        trajectory = trajectories[record["id"]]
        shown = prompt_messages(trajectory, len(trajectory.steps) - 1)
        logged = record["messages"][:-1]
        assert [m.role.value for m in shown] == [m["role"] for m in logged]
        assert [m.content for m in shown] == [tool_chat._loose_text(m["content"]) for m in logged]
        assert [m.tool_call_id for m in shown if m.role is Role.tool] == [
            m["tool_call_id"] for m in logged if m["role"] == "tool"]


def test_label_pair_style_export_and_stats_from_the_cli(tmp_path: Path) -> None:
    runner = CliRunner()
    labelled = tmp_path / "labelled.jsonl"
    result = runner.invoke(main, ["label", *map(str, FILES), "-o", str(labelled)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    for mode in ("unknown_tool", "invalid_arguments", "tool_error", "repeated_tool_call", "malformed_tool_call",
                 "hallucinated_tool_output", "verbose_filler", "wrong_answer"):
        assert mode in result.output
    written = list(read_records(labelled, Trajectory))
    assert len(written) == len(expected())
    pairs_path = tmp_path / "pairs.jsonl"
    args = ["pair", str(labelled), "-o", str(pairs_path), "--strategy", "style", "--test-fraction", "0"]
    result = runner.invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    (pair,) = read_records(pairs_path, Pair)  # the filler around oa-verbose's call
    assert pair.source.trajectory_id == "oa-verbose" and pair.reason == "verbose_filler"
    assert pair.rejected[0].tool_calls and pair.chosen[0].tool_calls is None  # chosen: Hermes text, same call
    assert "<tool_call>" in pair.chosen[0].content and pair.tools
    result = runner.invoke(main, ["export", str(pairs_path), "-o", str(tmp_path / "trl"), "--format", "trl", "--jsonl"])
    assert result.exit_code == 0, result.output
    row = json.loads((tmp_path / "trl" / "trl" / "train.jsonl").read_text(encoding="utf-8"))
    assert row["chosen"][0]["tool_calls"][0]["function"]["name"] == "get_weather" and "tools" in row
    result = runner.invoke(main, ["stats", str(labelled)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "1 episode(s) from logs that do not record whether they succeeded" in result.output
    assert "tau2/chat" in result.output and "code/chat" in result.output


def test_a_json_array_of_openai_records_and_the_tools_format(tmp_path: Path) -> None:
    records = [json.loads(line) for line in OPENAI.read_text(encoding="utf-8").splitlines()]
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps(records, indent=2), encoding="utf-8")
    assert [t.id for t in read_trajectories(dump)] == [record["id"] for record in records]
    # a chat log without tools, calls or results is no tool log by its looks; --format tools reads it as one
    plain = tmp_path / "plain.jsonl"
    plain.write_text(json.dumps({"messages": [{"role": "user", "content": "Hi"},
                                              {"role": "assistant", "content": "Hello!"}]}) + "\n")
    refusal = r"plain\.jsonl:1: messages has no user turn .*\(not a tool-calling log\)"
    with pytest.raises(LabelInputError, match=refusal):
        list(read_trajectories(plain))
    (trajectory,) = read_trajectories(plain, fmt="tools")
    assert trajectory.env.name == "tau2" and trajectory.id == f"{tmp_path.name}/plain#1"
    assert [step.raw_output for step in trajectory.steps] == ["Hello!"]


def test_household_logs_with_tool_looking_turns_stay_household(tmp_path: Path) -> None:
    """A household log whose env replies are ShareGPT ``observation`` turns, or whose model wrote a
    Hermes ``<tool_call>`` by mistake, is still read as a household run."""
    turns = [{"from": "human", "value": INSTRUCTION}, {"from": "gpt", "value": "OK"}, {"from": "human", "value": INTRO},
             {"from": "gpt", "value": "Thought: I look for a knife.\nAction: go to countertop 1"},
             {"from": "observation", "value": "Observation: On the countertop 1, you see a knife 1."},
             {"from": "gpt", "value": '<tool_call>{"name": "act", "arguments": {"action": "take knife"}}</tool_call>'},
             {"from": "observation", "value": "Observation: Nothing happens."}]
    path = tmp_path / "alfworld.jsonl"
    path.write_text(json.dumps({"id": "h-0", "conversations": turns}) + "\n")
    (trajectory,) = read_trajectories(path)
    assert trajectory.env.name == "household" and trajectory.steps[0].action == "go to countertop 1"
    assert len(trajectory.steps) == 2 and trajectory.steps[1].tool_calls is None


def test_arguments_that_are_not_json_are_the_models_mistake(tmp_path: Path) -> None:
    """OpenAI's docs warn the model may write arguments that are not valid JSON: the call is kept and
    recorded as failed, as prefbuild's own tool envs record it, and labelled ``invalid_arguments``."""
    record = json.loads(OPENAI.read_text(encoding="utf-8").splitlines()[0])
    record["messages"][2]["tool_calls"][0]["function"]["arguments"] = '{"city": Paris}'
    path = tmp_path / "log.jsonl"
    path.write_text(json.dumps(record) + "\n")
    (trajectory,) = read_trajectories(path)
    step = trajectory.steps[0]
    assert step.tool_calls[0].function.arguments == '{"city": Paris}'
    assert facts_of(trajectory)[0] == [("call_a1", "get_weather", None, False,
                                        "arguments of 'get_weather' are not valid JSON", True)]
    (labelled,) = label_trajectories(iter([trajectory]), build_labelers(None))
    assert [(label.step, label.mode) for label in labelled.labels] == [(0, "invalid_arguments")]


@pytest.mark.parametrize(
    ("text", "failure"),
    [
        ('{"error": "not found"}', "not found"),
        ('{"error": {"code": 404}}', '{"code": 404}'),
        ('{"result": 1, "error": null}', None),
        ('{"error": ""}', None),
        ("Error: timeout", "Error: timeout"),
        ("ERROR 500 upstream", "ERROR 500 upstream"),
        ("error: bad city", "error: bad city"),
        ("KeyError: 'city'", "KeyError: 'city'"),
        ("1\n2\nTraceback (most recent call last):\n  File \"x\"\nZeroDivisionError: division by zero",
         "ZeroDivisionError: division by zero"),
        ("Errors found: 0", None),
        ("The error rate is 2%.", None),
        ("no error", None),
        ('{"temperature": 18}', None),
    ],
)
def test_the_failure_rule(text: str, failure: str | None) -> None:
    assert chat_turns.call_failure(text) == failure


def test_the_docstring_examples_run() -> None:
    for module in (chat_turns, located, tool_chat, tool_defs, tool_steps):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0 and result.attempted > 0, module.__name__


def test_the_fixture_data_dir_holds_only_the_documented_files() -> None:
    assert sorted(path.name for path in DATA.iterdir()) == ["expected.json", "hermes.jsonl", "openai.jsonl",
                                                           "sharegpt.json", "slime_action.jsonl",
                                                           "slime_expected.json", "slime_native.jsonl"]


@pytest.mark.parametrize(("env", "final", "modes"), [
    (None, False, set()), ("tau2", False, set()), ("bfcl", False, set()), ("code", True, {"no_tool_use"}),
])
def test_the_env_hint_chooses_how_a_turn_without_a_call_reads(
    env: str | None, final: bool, modes: set[str], tmp_path: Path
) -> None:
    """An answer without any call: a message to the user in tau2 and BFCL, the final answer in the
    code env, where answering without the tool is ``no_tool_use``."""
    record: dict[str, Any] = {"id": "answer", "success": True, "messages": [
        {"role": "user", "content": "What is 2 + 2?"}, {"role": "assistant", "content": "4"}],
        "tools": [{"type": "function", "function": {"name": "code_interpreter", "parameters": {"type": "object"}}}]}
    if env is not None:
        record["env"] = env
    path = tmp_path / "log.jsonl"
    path.write_text(json.dumps(record) + "\n")
    (trajectory,) = read_trajectories(path)
    assert trajectory.env.name == (env or "tau2")
    assert trajectory.steps[0].facts.final is final and json.loads(trajectory.steps[0].action) == {"message": "4"}
    (labelled,) = label_trajectories(iter([trajectory]), build_labelers(None))
    assert {label.mode for label in labelled.labels} == modes
