"""Trajectories of the slime tau2 pipeline (legacy ``[ACTION]`` and native ``<tool_call>`` turns)
imported, labelled and paired: the labels ``data/slime_expected.json`` names, the steps, calls and
facts, the record's task and outcome, the protocols that read and write the turns, and the CLI from
``label`` through ``pair --strategy style``, ``export`` and ``stats``."""

from __future__ import annotations

import doctest
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from prefbuild.cli import main
from prefbuild.envs import cached_protocol
from prefbuild.envs.tau2 import slime as slime_protocol
from prefbuild.io.importers import ExternalLogError, slime, slime_turns
from prefbuild.io.jsonl import read_records
from prefbuild.io.sources import detect_format, read_trajectories
from prefbuild.labelers import build_labelers
from prefbuild.labelers import service_success as service_labels
from prefbuild.labelers.stage import label_trajectories
from prefbuild.records import Pair, Role, StopReason, Trajectory
from prefbuild.tooluse import slime as slime_text
from prefbuild.tooluse.actions import decode_action
from tests.chatimport.test_slime_fixtures import ACTION, DATA, NATIVE, records

FILES = (ACTION, NATIVE)
REPO = Path(__file__).resolve().parents[2]


def expected() -> dict[str, Any]:
    return json.loads((DATA / "slime_expected.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def trajectories() -> dict[str, Trajectory]:
    return {trajectory.id: trajectory for path in FILES for trajectory in read_trajectories(path)}


@pytest.mark.parametrize("path", FILES, ids=lambda path: path.name)
def test_each_episode_gets_exactly_the_expected_labels(path: Path) -> None:
    pytest.importorskip("tau2")  # the tools (and so the schema checks) are the installed tau2's
    wanted = expected()
    labelled = list(label_trajectories(read_trajectories(path), build_labelers(None)))
    assert len(labelled) == len(records(path))
    for trajectory in labelled:
        case = wanted[trajectory.id]
        assert len(trajectory.steps) == case["steps"], trajectory.id
        got = sorted((label.step, label.mode) for label in trajectory.labels)
        assert got == sorted(map(tuple, case["labels"])), (trajectory.id, [lab.evidence for lab in trajectory.labels])


def test_episodes_are_tau2_trajectories_of_their_task(trajectories: dict[str, Trajectory]) -> None:
    pytest.importorskip("tau2")
    from prefbuild.envs.tau2.package import new_environment, openai_tools

    for path in FILES:
        for record in records(path):
            trajectory = trajectories[record["task_id"]]
            metadata = record["metadata"]
            domain = metadata["domain"]
            assert (trajectory.env.name, trajectory.env.options) == ("tau2", {"domain": domain})
            assert trajectory.env.protocol == ("slime-action" if path == ACTION else "slime")
            assert trajectory.task.type == domain and trajectory.task.split == "external"
            assert trajectory.task.id == f"tau2-{domain}-{metadata['tau2_task_id']}"
            meta = trajectory.task.meta
            assert meta["source"] == "slime" and meta["task_id"] == record["task_id"]
            assert meta["tau2_task_id"] == metadata["tau2_task_id"] and meta.get("partial_score") == metadata.get(
                "partial_score")
            assert meta["outcome_known"] is ("success" in metadata)
            assert trajectory.outcome.success is metadata.get("success", False)
            assert trajectory.outcome.progress == metadata.get("partial_score")
            assert trajectory.sample_index == int(record["task_id"].rsplit("[sample_", 1)[1].rstrip("]"))
            assert trajectory.teacher.backend == "external" and trajectory.teacher.model == "unknown"
            # no tools in the record: the installed tau2's tools of the domain, as tau2 offers them to its agent
            assert trajectory.tools == openai_tools(new_environment(domain))
            # the system prompt is the prefix; the customer's first message the task and the first observation
            turns = record.get("prompt", record.get("messages"))
            assert [m.role for m in trajectory.messages] == [Role.system]
            assert trajectory.task.goal == turns[1]["content"] == trajectory.steps[0].observation
            assert [step.raw_output for step in trajectory.steps] == [
                turn["content"] for turn in turns if turn["role"] == "assistant"]


def test_calls_are_structured_and_respond_and_done_are_no_calls(trajectories: dict[str, Trajectory]) -> None:
    clean = trajectories["[airline]5[sample_0]"]
    lookup, _, respond, done = clean.steps
    assert not lookup.native_tool_calls
    assert lookup.raw_output.endswith('[ACTION]\nget_user_details(user_id="mia_li_3668")\n[/ACTION]')
    assert [(c.id, c.function.name, c.function.arguments) for c in lookup.tool_calls] == [
        ("call_0", "get_user_details", '{"user_id": "mia_li_3668"}')]
    assert lookup.thought == "The customer gave a user id. I look the user up first."
    assert [(f.name, f.arguments, f.ok, f.offered) for f in lookup.facts.tools] == [
        ("get_user_details", {"user_id": "mia_li_3668"}, True, True)]
    # the result is a tool message of the call's id, the slime wrapper taken off
    (result,) = clean.steps[1].observation_messages
    assert (result.role, result.tool_call_id, result.name) == (Role.tool, "call_0", "get_user_details")
    assert result.content.startswith('{"user_id": "mia_li_3668"') and "[TOOL_RESULT]" not in result.content
    assert lookup.feedback == result.content
    # respond: a message to the customer (no call, not final); done: tau2's agent stop, the final step
    assert respond.tool_calls is None and decode_action(respond.action).message == (
        "Your reservation NO6JO3 from JFK to SEA on flight HAT100 is active.")
    assert respond.valid is True and not respond.facts.final and respond.facts.tools == []
    assert done.tool_calls is None and decode_action(done.action).message == "###STOP###"
    assert done.facts.final and done.done and done.facts.won is True and done.info["tau2"]["success"] is True
    assert clean.steps[3].observation == "Great, that's all I needed."
    # native: double-encoded arguments read as the object, <thinking> as reasoning
    roaming = trajectories["[telecom]roaming_2[sample_0]"]
    assert roaming.steps[0].thought == "I find the customer by phone."
    assert roaming.steps[1].tool_calls[0].function.arguments == '{"id": "L1002"}'
    assert "arguments given as a JSON string" in roaming.steps[1].normalized and roaming.steps[1].format_ok


def test_results_failures_and_the_customers_reply_that_came_with_a_result(
    trajectories: dict[str, Trajectory],
) -> None:
    corrected = trajectories["[retail]22[sample_0]"]
    (fact,) = corrected.steps[0].facts.tools
    assert (fact.ok, fact.error, fact.offered) == (False, "Error: Order #W0000000 not found", True)
    shown = corrected.steps[1].observation_messages
    assert [(m.role, m.content) for m in shown] == [
        (Role.tool, "Error: Order #W0000000 not found"), (Role.user, "Sorry, I mistyped it: the order is #W2378156.")]
    assert corrected.steps[1].observation_role == "tool"
    unknown = trajectories["[retail]22[sample_3]"].steps[0].facts.tools[0]
    assert (unknown.name, unknown.ok, unknown.offered) == ("lookup_order", False, False)
    broken = trajectories["[airline]3[sample_0]"].steps[0]
    assert broken.tool_calls is None and broken.action is None and not broken.format_ok and broken.valid is False
    assert broken.facts.problems == ["tool call is not a keyword call: positional arguments (keyword arguments only)"]
    assert trajectories["[airline]3[sample_0]"].steps[1].observation.startswith("Format error:")


def test_outcomes_and_the_graders_verdict(trajectories: dict[str, Trajectory]) -> None:
    unknown = trajectories["[retail]22[sample_3]"]  # no success in its metadata
    assert unknown.task.meta["outcome_known"] is False and not unknown.outcome.success
    assert unknown.outcome.stop_reason is StopReason.agent_finished and "tau2" not in unknown.steps[-1].info
    failed = trajectories["[airline]18[sample_0]"]
    assert failed.outcome.stop_reason is StopReason.agent_finished and failed.outcome.progress == 0.0
    assert failed.steps[-1].done and failed.steps[-1].facts.won is False
    assert failed.steps[-1].info["tau2"] == {"reward": 0.0, "success": False, "reward_info": None}
    kept = trajectories["[retail]40[sample_5]"].steps[-1].info["tau2"]["reward_info"]
    assert kept["reward_breakdown"] == {"DB": 1.0, "COMMUNICATE": 0.0}  # the pipeline's reward_info, as tau2 keeps it
    success = trajectories["[airline]9[sample_1]"]
    assert success.outcome.success and success.outcome.stop_reason is StopReason.success and success.steps[-1].done


def test_the_protocols_read_every_turn_as_the_importer_did_and_write_it_back(
    trajectories: dict[str, Trajectory],
) -> None:
    """Each readable turn, written again by its trajectory's protocol (with or without its reasoning),
    is read back as the same action: what the ``style`` strategy relies on for chosen turns."""
    for trajectory in trajectories.values():
        protocol = cached_protocol("tau2", trajectory.env.protocol)
        for step in trajectory.steps:
            assert protocol.parse(step.raw_output).action == step.action, (trajectory.id, step.index)
            if step.action is None:
                continue
            for thought in (step.thought, None):
                written = protocol.render(step.action, thought)
                parsed = protocol.parse(written)
                assert parsed.action == step.action and parsed.format_ok, (trajectory.id, step.index, written)
                assert ("[ACTION]" in written) is (trajectory.env.protocol == "slime-action")


@pytest.mark.parametrize(("line", "arguments"), [
    ('f(a="x", b=2, c=-1.5, d=True, e=None, f=[1, (2, 3)], g={"k": [False]})',
     {"a": "x", "b": 2, "c": -1.5, "d": True, "e": None, "f": [1, [2, 3]], "g": {"k": [False]}}),
    ("f()", {}),
    ('f(text="line one\\nline \\"two\\"")', {"text": 'line one\nline "two"'}),
])
def test_an_action_line_reads_as_json_arguments_and_writes_back(line: str, arguments: dict[str, Any]) -> None:
    name, read, notes = slime_text.read_call_line(line)
    assert (name, read, notes) == ("f", arguments, [])
    assert slime_text.read_call_line(slime_text.python_call("f", read))[1] == arguments


@pytest.mark.parametrize(("text", "problem"), [
    ('[ACTION]\nf(x=1)\ng(y=2)\n[/ACTION]', "tool call is not one line: the [ACTION] block holds 2 lines"),
    ('[ACTION]\nf("x")\n[/ACTION]', "tool call is not a keyword call: positional arguments (keyword arguments only)"),
    ("[ACTION]\nf(**k)\n[/ACTION]", "tool call is not a keyword call: **arguments (keyword arguments only)"),
    ("[ACTION]\nf\n[/ACTION]", "tool call is not a keyword call: not a function call"),
    ("[ACTION]\nobj.f(x=1)\n[/ACTION]",
     "tool call is not a keyword call: the called name is not a plain function name"),
    ("[ACTION]\nf(x=g(1))\n[/ACTION]", "tool call is not a keyword call: argument 'x' is not a literal (Call)"),
    ('<think>\nplan\n</think>\n[ACTION]\nf(x=1)', "tool call is not closed: no [/ACTION]"),
    ('<tool_call>\n{"name": "f", "arguments": {"x": 1}\n</tool_call>', "tool call is not valid JSON"),
    ('[ACTION]\nrespond(content="")\n[/ACTION]',
     "arguments of 'respond' are not a message: it needs a non-empty content text"),
])
def test_an_action_the_harness_cannot_read_is_a_broken_call(text: str, problem: str) -> None:
    from prefbuild.labelers.tools.calls import broken_call_problems
    from prefbuild.records import Step, StepFacts

    parsed = slime_protocol.parsed_output(text)
    assert parsed.action is None and not parsed.format_ok and parsed.problems == (problem,)
    step = Step(index=0, observation="", raw_output=text, facts=StepFacts(problems=list(parsed.problems)))
    assert broken_call_problems(step) == [problem]  # so malformed_tool_call names it


def test_a_turn_without_an_action_or_with_a_bare_name_is_a_format_problem_not_a_broken_call() -> None:
    from prefbuild.labelers.tools.calls import broken_call_problems
    from prefbuild.records import Step, StepFacts

    plain = slime_protocol.parsed_output("Let me check that for you.")
    assert plain.action is None and plain.problems == ("no action: neither [ACTION] nor a call",)
    bare = slime_protocol.parsed_output("[ACTION]\nget_user_details(user_id=mia_li_3668)\n[/ACTION]")
    assert json.loads(bare.action)["tool_calls"][0]["arguments"] == {"user_id": "mia_li_3668"}  # as the harness ran it
    assert bare.problems == ("argument 'user_id' is the bare name mia_li_3668, read as the text 'mia_li_3668'",)
    for parsed in (plain, bare):
        step = Step(index=0, observation="", raw_output="", facts=StepFacts(problems=list(parsed.problems)))
        assert broken_call_problems(step) == []  # format_violation's, not malformed_tool_call's


def test_label_pair_style_export_and_stats_from_the_cli(tmp_path: Path) -> None:
    pytest.importorskip("tau2")
    runner = CliRunner()
    labelled = tmp_path / "labelled.jsonl"
    result = runner.invoke(main, ["label", *map(str, FILES), "-o", str(labelled)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    for mode in ("unknown_tool", "invalid_arguments", "tool_error", "repeated_tool_call", "malformed_tool_call",
                 "hallucinated_tool_output", "premature_success", "verbose_filler", "wrong_answer"):
        assert mode in result.output
    written = list(read_records(labelled, Trajectory))
    assert sorted(t.id for t in written) == sorted(expected())
    pairs_path = tmp_path / "pairs.jsonl"
    args = ["pair", str(labelled), "-o", str(pairs_path), "--strategy", "style", "--test-fraction", "0"]
    result = runner.invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    pairs = {pair.source.trajectory_id: pair for pair in read_records(pairs_path, Pair)}
    assert set(pairs) == {"[airline]21[sample_0]", "[retail]40[sample_2]"}  # the filler around a good call
    legacy, native = pairs["[airline]21[sample_0]"], pairs["[retail]40[sample_2]"]
    # the chosen turn is written in the episode's own form, the same call with a concise thought
    assert legacy.chosen[0].content == ('<think>\nI check the flight status.\n</think>\n[ACTION]\n'
                                        'get_flight_status(flight_number="HAT100", date="2024-05-20")\n[/ACTION]')
    assert native.chosen[0].content.startswith("<think>\nI look the order up.\n</think>\n<tool_call>\n")
    assert all(pair.reason == "verbose_filler" and pair.tools for pair in pairs.values())
    result = runner.invoke(main, ["export", str(pairs_path), "-o", str(tmp_path / "trl"), "--format", "trl", "--jsonl"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(main, ["stats", str(labelled)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "1 episode(s) from logs that do not record whether they succeeded" in result.output
    assert "tau2/airline" in result.output and "tau2/telecom" in result.output


def test_detection_takes_slime_records_and_leaves_the_other_shapes(tmp_path: Path) -> None:
    native = records(NATIVE)
    under_messages = next(record for record in native if "messages" in record)
    assert detect_format(records(ACTION)[0]) == "messages" and slime_turns.is_slime_record(records(ACTION)[0])
    assert slime_turns.is_slime_record(under_messages)
    # without its metadata a native record under "messages" still shows the pipeline's result turns
    assert slime_turns.is_slime_record({k: v for k, v in under_messages.items() if k != "metadata"})
    # a preference dataset's text prompt, and Hermes chat logs (tool_call text, <tool_response> results) are not
    assert not slime_turns.is_slime_record({"prompt": "Translate: cat", "chosen": "chat", "rejected": "chien"})
    hermes = json.loads((DATA / "hermes.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert not slime_turns.is_slime_record(hermes)
    assert not slime_turns.is_slime_record({**under_messages, "tools": []})  # a tool list: OpenAI's shape
    # a Hermes log that carries tau2 metadata is still a Hermes log: its results are <tool_response> turns
    assert not slime_turns.is_slime_record({**hermes, "metadata": {"tau2_task_id": "1"}})
    with pytest.raises(ValueError, match="a slime tau2 trajectory"):
        detect_format({"prompt": "Translate: cat", "chosen": "chat"})


def test_the_slime_and_tools_formats_read_a_record_detection_would_not(tmp_path: Path) -> None:
    """A native record under ``messages`` with neither metadata nor results looks like a Hermes log;
    ``--format slime`` (or ``tools``, which knows the pipeline's records it detects) says what it is."""
    record = {"messages": [{"role": "system", "content": "Help."}, {"role": "user", "content": "Hi"},
                           {"role": "assistant", "content": '<tool_call>\n{"name": "respond", "arguments": '
                                                            '{"content": "Hello!"}}\n</tool_call>'}]}
    path = tmp_path / "log.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    (as_hermes,) = read_trajectories(path)
    assert as_hermes.steps[0].tool_calls[0].function.name == "respond"  # read as a Hermes tool call
    (as_slime,) = read_trajectories(path, fmt="slime")
    assert as_slime.steps[0].tool_calls is None and json.loads(as_slime.steps[0].action) == {"message": "Hello!"}
    assert as_slime.task.type == "chat" and as_slime.tools is None and as_slime.task.meta["outcome_known"] is False
    assert {t.env.protocol for t in read_trajectories(ACTION, fmt="tools")} == {"slime-action"}
    assert {t.task.meta["shape"] for t in read_trajectories(NATIVE, fmt="slime")} == {"slime-native"}


def test_a_service_message_is_what_the_turn_said_not_its_reasoning(tmp_path: Path) -> None:
    """tau2's message labelers read the message the protocol read (no <think> block): a claim in the
    reasoning alone is no claim to the customer; a claim in the message is one."""
    def labels(last: str) -> list[tuple[int, str]]:
        record = {"env": "tau2", "success": False, "messages": [
            {"role": "user", "content": "Cancel my reservation AIXC49."},
            {"role": "assistant", "content": last}]}
        path = tmp_path / "log.jsonl"
        path.write_text(json.dumps(record) + "\n", encoding="utf-8")
        (trajectory,) = label_trajectories(read_trajectories(path), build_labelers(None))
        return [(label.step, label.mode) for label in trajectory.labels]

    assert labels("<think>\nIt has been cancelled, I think.\n</think>\nCould you confirm your user id?") == []
    assert labels("<think>\nConfirmed.\n</think>\nYour reservation AIXC49 has been cancelled.") == [
        (0, "premature_success")]


def test_without_tau2_the_tools_are_missing_and_the_error_texts_tell(tmp_path: Path) -> None:
    """With tau2 made unimportable the files still import: no tools (warned once per domain), unknown
    tools read from tau2's "Tool 'x' not found.", a failure the schema would have named a tool error."""
    code = (
        "import sys, json; sys.modules['tau2'] = None\n"
        "from prefbuild.io.sources import read_trajectories\n"
        "from prefbuild.labelers import build_labelers\n"
        "from prefbuild.labelers.stage import label_trajectories\n"
        f"found = [t for p in {[str(p) for p in FILES]!r} for t in read_trajectories(p)]\n"
        "labelled = {t.id: sorted((l.step, l.mode) for l in t.labels)\n"
        "            for t in label_trajectories(iter(found), build_labelers(None))}\n"
        "print(json.dumps({'tools': sorted({str(t.tools) for t in found}), 'labels': labelled}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=600,
                          check=True)
    report = json.loads(done.stdout)
    assert report["tools"] == ["None"]
    assert done.stderr.count("cannot be taken from tau2") == 3  # airline, retail, telecom: once each
    labels = {key: [tuple(pair) for pair in value] for key, value in report["labels"].items()}
    assert labels["[airline]9[sample_1]"] == [(0, "unknown_tool")]
    assert labels["[retail]22[sample_3]"] == [(0, "unknown_tool")]
    assert labels["[airline]14[sample_0]"] == [(0, "tool_error")]  # pydantic's text names no argument rule
    assert labels["[retail]31[sample_2]"] == [(0, "tool_error"), (1, "repeated_tool_call"), (1, "tool_error")]


def test_the_docstring_examples_run() -> None:
    for module in (slime, slime_turns, slime_text, slime_protocol, service_labels):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0 and result.attempted > 0, module.__name__


def test_a_result_before_any_call_is_refused_on_import() -> None:
    turns = [{"role": "user", "content": "Hi"}, {"role": "user", "content": "Tool result for f():\nok"}]
    with pytest.raises(ExternalLogError, match=r"^log:1 prompt\[1\]\.content: a tool result with no call"):
        slime_turns.slime_turns(turns, "prompt", lambda path: "log:1")


def test_the_harness_order_a_tool_call_first_then_an_action_block() -> None:
    """As the pipeline's parser: a readable <tool_call> wins; an unreadable one falls back to [ACTION]."""
    both = '<tool_call>\n{"name": "f", "arguments": {"x": 1}}\n</tool_call>\n[ACTION]\ng(y=2)\n[/ACTION]'
    assert slime_text.parse_slime_turn(both).name == "f"
    fallback = '<tool_call>\n{"name": "f", "arguments": {\n</tool_call>\n[ACTION]\ng(y=2)\n[/ACTION]'
    turn = slime_text.parse_slime_turn(fallback)
    assert (turn.form, turn.name, turn.arguments) == ("action", "g", {"y": 2})
    deep = "[ACTION]\nf(x=" + "[" * 10000 + "]" * 10000 + ")\n[/ACTION]"
    assert slime_text.parse_slime_turn(deep).problems[0].startswith("tool call is not a keyword call: not Python")
