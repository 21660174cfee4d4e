"""The bfcl env on the package's real tasks: turns, held-out functions, hints, progress, limits."""

from __future__ import annotations

import json

import pytest

from prefbuild.envs.bfcl.data import BfclEntry, load_entries
from prefbuild.envs.bfcl.env import BfclEnv, task_of
from prefbuild.envs.bfcl.expert import TURN_DONE
from prefbuild.envs.bfcl.protocol import BfclHermesProtocol
from prefbuild.records import FunctionCall, ToolCall
from prefbuild.tooluse.actions import decode_action, encode_action


def call(name: str, **arguments: object) -> str:
    return encode_action([ToolCall(id="c0", function=FunctionCall(name=name, arguments=json.dumps(arguments)))])


def test_tasks_are_deterministic_and_filtered() -> None:
    env = BfclEnv()
    first = [task.info.id for task in env.tasks("test", 8, 3, ["miss_param", "base"])]
    assert first == [task.info.id for task in env.tasks("test", 8, 3, ["miss_param", "base"])]
    assert {identifier.rsplit("_", 1)[0] for identifier in first} <= {"multi_turn_miss_param", "multi_turn_base"}
    assert first != [task.info.id for task in env.tasks("test", 8, 4, ["miss_param", "base"])]
    with pytest.raises(ValueError, match="unknown task types"):
        list(env.tasks("test", 1, 0, ["live_simple"]))
    with pytest.raises(ValueError, match="unknown split 'valid'; known: test, train, heldout"):
        list(env.tasks("valid", 1, 0))


def test_data_is_read_strictly() -> None:
    raw = load_entries("base")[0].model_dump()
    raw["unexpected"] = 1
    with pytest.raises(ValueError, match="unexpected"):
        BfclEntry.model_validate(raw)
    assert [len(load_entries(category)) for category in ("base", "miss_func", "miss_param", "long_context")] == [
        200
    ] * 4


def test_one_question_per_turn_and_progress_per_turn() -> None:
    entry = load_entries("base")[0]
    env = BfclEnv()
    observation, _ = env.reset(task_of(entry))
    assert observation == entry.question[0][0].content
    assert env.progress() == 0.0
    while (action := env.expert_action()) != encode_action(message=TURN_DONE):
        result = env.step(action)
        assert result.messages and all(message.role == "tool" for message in result.messages)
        assert result.messages[0].tool_call_id.startswith("call_0_")
    result = env.step(encode_action(message=TURN_DONE))
    assert result.observation == entry.question[1][0].content
    assert [message.role for message in result.messages] == ["user"]
    assert result.facts.progress == pytest.approx(1 / len(entry.question))
    assert result.info["verdict"]["valid"]


def test_a_turn_without_calls_fails_bfcls_empty_turn_check() -> None:
    entry = load_entries("base")[0]
    env = BfclEnv()
    env.reset(task_of(entry))
    result = env.step(encode_action(message="I would rather not."))
    assert result.info["verdict"]["error_type"] == "multi_turn:empty_turn_model_response"
    assert result.facts.progress == 0.0


def test_held_out_function_appears_later() -> None:
    entry = load_entries("miss_func")[0]  # 'sort' is revealed at turn 3
    env = BfclEnv(hints="actionable")
    _, info = env.reset(task_of(entry))
    assert "sort" not in {tool["function"]["name"] for tool in info["tools"]}
    # Called before its turn, it runs as BFCL's executor runs it (every public method of the class):
    # the backend's own answer, not "not defined"; it is still not offered.
    early = env.step(call("sort", file_name="final_report.pdf"))
    assert early.facts.tools[0].error == "sort: final_report.pdf: No such file or directory"
    assert "sort" not in env.offered_functions and early.facts.tools[0].offered is False  # for the labelers
    while env.turn < 3:
        result = env.step(env.expert_action())
    assert "I have updated some more functions you can choose from. What about now?" in result.observation
    assert '"name": "sort"' in result.observation
    assert "sort" in {tool["function"]["name"] for tool in result.info["tools"]}
    assert "sort" in env.offered_functions


def test_hints_say_what_went_wrong_and_what_is_valid_without_changing_results() -> None:
    entry = load_entries("base")[0]
    results = {}
    for hints in ("off", "actionable"):
        env = BfclEnv(hints=hints)
        env.reset(task_of(entry))
        missing = env.step(call("cd", folder="nowhere"))
        unknown = env.step(call("mkdirs", dir_name="temp"))
        wrong_type = env.step(call("mkdir", dir_name=["temp"]))
        results[hints] = (missing, unknown, wrong_type, env.hinted_turns)
    off, on = results["off"], results["actionable"]
    assert [result.facts.tools[0].hinted for result in off[:3]] == [False, False, False]
    assert [result.facts.tools[0].hinted for result in on[:3]] == [True, True, True]
    assert (off[3], on[3]) == ([], [0])
    for plain, hinted in zip(off[:3], on[:3], strict=True):
        assert hinted.observation.startswith(plain.observation + "\nHint: ")
    assert "You are in '/workspace'; it contains: document" in on[0].observation
    assert "Did you mean 'mkdir'?" in on[1].observation
    assert "dir_name: ['temp'] is not of type 'string'" in on[2].observation


def test_authentication_hint_names_the_login_function() -> None:
    entry = next(entry for entry in load_entries("base") if "TwitterAPI" in entry.involved_classes)
    env = BfclEnv(hints="actionable")
    env.reset(task_of(entry))
    raw = dict(entry.initial_config).get("TwitterAPI", {})
    assert raw  # the real scenario
    env._backend.instances["TwitterAPI"].authenticated = False
    result = env.step(call("post_tweet", content="hello"))
    assert result.observation.endswith("call authenticate_twitter.")


def test_force_quit_after_bfcls_step_limit() -> None:
    """BFCL counts a step with calls after running it and quits once the count passes the limit:
    ``max_steps_per_turn`` steps are allowed, the next one force-quits (and the entry fails)."""
    entry = load_entries("base")[0]
    env = BfclEnv(max_steps_per_turn=3)
    env.reset(task_of(entry))
    results = [env.step(call("pwd")) for _ in range(4)]
    assert [result.done for result in results] == [False, False, False, True]
    assert [result.truncated for result in results] == [False, False, False, True] and env.force_quit
    assert results[-1].facts.stop == "force quit: more than 3 steps in turn 0"
    assert not results[-1].facts.won
    assert env.step(call("pwd")).valid is False


def test_a_force_quit_in_the_last_turn_is_scored_as_bfcl_scores_it() -> None:
    """The force-quit entry keeps all its turns when it happens in the last one, so BFCL's checker
    scores it as usual: the ground truth done, then harmless extra calls, still passes."""
    entry = load_entries("base")[0]
    env = BfclEnv(max_steps_per_turn=3)
    env.reset(task_of(entry))
    last = len(entry.question) - 1
    while env._turn < last:
        env.step(env.expert_action() or "")
    while (action := env.expert_action()) != encode_action(message=TURN_DONE):
        env.step(action or "")
    result = env.step(call("pwd"))
    while not result.done:
        result = env.step(call("pwd"))
    assert result.facts.stop is not None and result.facts.stop.startswith("force quit")
    assert result.facts.won and result.reward == 1.0


def test_protocol_shows_task_tools_and_ends_turn_on_text() -> None:
    entry = load_entries("miss_func")[0]
    task = task_of(entry)
    protocol = BfclHermesProtocol()
    system = protocol.prefix_messages(task)[0].content
    assert system.startswith("# Tools") and '"name": "mv"' in system and '"name": "sort"' not in system
    env = BfclEnv()
    env.reset(task)
    parsed = protocol.parse('<tool_call>\n{"name": "cd", "arguments": {"folder": "document"}}\n</tool_call>')
    assert json.loads(env.step(parsed.action).observation) == {"current_working_directory": "document"}
    assert protocol.render(parsed.action).startswith("<tool_call>")
    broken = protocol.parse("<tool_call>{not json")
    assert broken.action is not None and not broken.format_ok and not broken.final
    assert env.step(broken.action).info["verdict"]["turn"] == 0


def test_precondition_hint_points_to_the_functions_that_fix_it() -> None:
    entry = next(entry for entry in load_entries("base") if "VehicleControlAPI" in entry.involved_classes)
    env = BfclEnv(hints="actionable")
    env.reset(task_of(entry))
    result = env.step(call("startEngine", ignitionMode="START"))
    assert result.observation.startswith('{"error": "Brake pedal needs to be pressed when starting the engine."}')
    assert "pressBrakePedal" in result.observation and result.facts.tools[0].hinted
    assert env.offered_functions == sorted(env.offered_functions) and "pressBrakePedal" in env.offered_functions


def test_replay_from_the_task_record_keeps_the_hint_setting() -> None:
    from prefbuild.pairs.replay import task_for
    from prefbuild.records import EnvInfo, Outcome, StopReason, TeacherInfo, Trajectory

    task = next(BfclEnv(hints="actionable", max_steps_per_turn=5).tasks("test", 1, 2, ["base"]))
    assert task.info.meta["hints"] == "actionable"
    trajectory = Trajectory(
        id="t",
        task=task.info,
        env=EnvInfo(name="bfcl", protocol="hermes"),
        teacher=TeacherInfo(backend="scripted", model="m"),
        outcome=Outcome(success=False, stop_reason=StopReason.max_steps),
    )
    env = BfclEnv()  # replays build the env with default options
    env.reset(task_for(trajectory))
    assert (env.hints, env.max_steps_per_turn) == ("actionable", 5)
    assert env.step(call("mkdirs")).facts.tools[0].hinted


def test_calls_record_what_the_prompt_offered_and_the_schema_says() -> None:
    # The tools sit in the system prompt, not in the record: the env says what the labelers cannot see.
    env = BfclEnv()
    env.reset(task_of(load_entries("base")[0]))
    fine, wrong_type = env.step(call("cd", folder="workspace")), env.step(call("cd", folder=5))
    assert (fine.facts.tools[0].offered, fine.facts.tools[0].schema_error) == (True, None)
    assert wrong_type.facts.tools[0].schema_error == "folder: 5 is not of type 'string'"


def test_a_call_that_changed_the_state_is_no_repeat_and_a_lookup_with_the_same_answer_is() -> None:
    """BFCL base_0 as a real agent played it: ``cd temp`` once more after ``cd ..`` and a second ``cd ..``
    each moved (BFCL's ``cd`` answers with the folder it was given); ``ls`` once more with the same answer
    after ``mkdir`` and ``mv`` changed the file system asks a changed env again: no repeat either."""
    from prefbuild.labelers.tools.calls import RepeatedToolCallLabeler
    from prefbuild.records import Step
    from tests.tooluse.test_tool_labelers import trajectory

    env = BfclEnv()
    env.reset(task_of(load_entries("base")[0]))
    played = [
        ("ls", {}), ("cd", {"folder": "document"}), ("mkdir", {"dir_name": "temp"}), ("cd", {"folder": "temp"}),
        ("cd", {"folder": ".."}), ("mv", {"source": "final_report.pdf", "destination": "temp"}),
        ("cd", {"folder": "temp"}), ("cd", {"folder": ".."}), ("cd", {"folder": ".."}), ("ls", {}),
    ]
    steps = []
    for index, (name, arguments) in enumerate(played):
        action = call(name, **arguments)
        result = env.step(action)
        assert result.facts.tools[0].ok, (name, result.observation)
        steps.append(Step(index=index, observation="", raw_output="", tool_calls=decode_action(action).calls,
                          native_tool_calls=True, facts=result.facts, feedback=result.observation, valid=True))
    assert [step.facts.tools[0].changed_state for step in steps] == [
        False, True, True, True, True, True, True, True, True, False]
    labels = RepeatedToolCallLabeler().label(trajectory(steps, success=False, env="bfcl"))
    assert labels == []
