"""The ``code`` env driven through its protocol: expert episodes, outcomes, tool errors, facts."""

from __future__ import annotations

import json

import pytest

from prefbuild.envs import get_env, get_protocol
from prefbuild.envs.base import EnvTask
from prefbuild.envs.code.env import CodeEnv, task_info
from prefbuild.envs.code.generator import generate_problems
from prefbuild.envs.code.problems import CodeProblem, IOTests
from prefbuild.envs.code.protocol import SYSTEM_PROMPT, CodeInterpreterProtocol
from prefbuild.envs.code.sandbox import namespaces_available
from prefbuild.records import Role
from prefbuild.tooluse.actions import encode_action
from prefbuild.tooluse.hermes import render_tool_turn

pytestmark = pytest.mark.skipif(namespaces_available() is not None, reason=f"no sandbox: {namespaces_available()}")
LIMITS = {"wall_seconds": 5, "cpu_seconds": 2, "memory_bytes": 512 << 20}


def _env(**options: object) -> CodeEnv:
    return CodeEnv(sandbox=LIMITS, **options)  # type: ignore[arg-type]


def _task(problem: CodeProblem) -> EnvTask:
    return EnvTask(info=task_info(problem, "test", 0), payload=problem)


def _call(code: str, name: str = "code_interpreter") -> str:
    return render_tool_turn([{"name": name, "arguments": {"code": code}}])


MATH = CodeProblem(id="m", kind="math", category="arithmetic", prompt="What is 6 * 7?", answer="42",
                   reference="print(6 * 7)")  # fmt: skip


def test_registered_with_its_protocol() -> None:
    assert get_env("code") is CodeEnv
    protocol = get_protocol("code", "hermes")
    assert isinstance(protocol, CodeInterpreterProtocol)
    assert [m.content for m in protocol.prefix_messages(_task(MATH))] == [SYSTEM_PROMPT]
    assert protocol.tools()[0]["function"]["parameters"]["required"] == ["code"]
    assert protocol.observation_turn("What is 6 * 7?", first=True, task=_task(MATH)) == "What is 6 * 7?"


def test_expert_episodes_are_correct_for_every_family() -> None:
    env, protocol = _env(), CodeInterpreterProtocol()
    for task in env.tasks("train", 5, 4):
        observation, info = env.reset(task)
        assert observation == task.info.goal and info["isolation"] == "bwrap"
        steps = []
        while True:
            action = env.expert_action()
            assert action is not None
            text = protocol.render(action, "Let me work it out.")
            parsed = protocol.parse(text)
            # a call turn reads back as the same action; an answer turn carries the thought too
            assert parsed.format_ok and (parsed.action == action or parsed.final)
            result = env.step(parsed.action)
            steps.append(result)
            if result.done:
                break
        assert len(steps) == 2, task.info.type
        tool_step, final = steps
        assert tool_step.facts is not None and [fact.ok for fact in tool_step.facts.tools] == [True]
        assert tool_step.messages is not None and tool_step.messages[0].role is Role.tool
        assert tool_step.messages[0].tool_call_id == "call_0" and tool_step.messages[0].name == "code_interpreter"
        assert final.won and final.info["outcome"] == "correct" and final.reward == 1.0
        assert final.facts is not None and final.facts.won and final.facts.final
        assert env.expert_action() is None and env.progress() == 1.0


def test_state_carries_over_between_calls_and_wrong_answers_are_incorrect() -> None:
    env, protocol = _env(), CodeInterpreterProtocol()
    env.reset(_task(MATH))
    first = env.step(protocol.parse(_call("x = 6 * 7")).action or "")
    assert first.observation == "(no output)" and not first.done
    second = env.step(protocol.parse(_call("x")).action or "")
    assert second.observation == "42"
    assert env.cells == ["x = 6 * 7", "x"]
    final = env.step(protocol.parse("So the answer is \\boxed{41}.").action or "")
    assert (final.done, final.won, final.info["outcome"], final.info["answer"]) == (True, False, "incorrect", "41")
    assert final.info["tool_calls"] == 2
    over = env.step(encode_action(message="\\boxed{42}"))
    assert over.done and not over.won


def test_no_answer_and_max_turns() -> None:
    env, protocol = _env(max_turns=2), CodeInterpreterProtocol()
    env.reset(_task(MATH))
    assert not env.step(protocol.parse(_call("1")).action or "").done
    last = env.step(protocol.parse(_call("2")).action or "")
    assert last.done and last.info["outcome"] == "no_answer" and last.facts is not None
    assert last.facts.stop == "max turns (2)"
    env.reset(_task(MATH))
    silent = env.step(encode_action(message="I am not sure."))
    assert silent.done and silent.info["outcome"] == "no_answer" and silent.valid is False


def test_tool_errors_bad_arguments_unknown_tools_and_parallel_calls() -> None:
    env = _env()
    env.reset(_task(MATH))
    text = (
        _call("1 / 0")
        + "\n"
        + render_tool_turn([{"name": "code_interpreter", "arguments": {"source": "print(1)"}}])
        + "\n"
        + _call("print(2)", name="python")
        + "\n"
        + _call("print('ok')")
    )
    parsed = CodeInterpreterProtocol().parse(text)
    assert parsed.format_ok and len(json.loads(parsed.action or "")["tool_calls"]) == 4
    result = env.step(parsed.action or "")
    assert result.facts is not None
    facts = result.facts.tools
    assert [fact.ok for fact in facts] == [False, False, False, True]
    assert facts[0].error == "ZeroDivisionError: division by zero"
    assert facts[1].error is not None and "'code' is a required property" in facts[1].error
    assert facts[2].error is not None and facts[2].error.startswith("unknown tool 'python'")
    assert [m.tool_call_id for m in result.messages or []] == ["call_0", "call_1", "call_2", "call_3"]
    assert result.observation.startswith("[code_interpreter] Traceback") and result.valid is False


def test_code_problem_expert_runs_reference_on_the_first_input() -> None:
    problem = CodeProblem(
        id="c", kind="code", category="programs", prompt="Sum two numbers.",
        tests=IOTests(inputs=["1 2\n", "5 5\n"], outputs=["3\n", "10\n"]),
        reference="a, b = map(int, input().split())\nprint(a + b)",
    )  # fmt: skip
    env = _env()
    env.reset(_task(problem))
    assert env.step(env.expert_action() or "").observation == "3"
    final = env.step(env.expert_action() or "")
    assert final.won and final.info["grading"] == "2/2 tests passed"


def test_stateless_option_and_file_tasks(tmp_path) -> None:
    env = _env(stateless=True)
    env.reset(_task(MATH))
    env.step(
        encode_action(calls=None, message=None)
        if False
        else CodeInterpreterProtocol().parse(_call("y = 1")).action or ""
    )
    assert "NameError" in env.step(CodeInterpreterProtocol().parse(_call("y")).action or "").observation
    data = tmp_path / "math.jsonl"
    data.write_text('{"problem": "1+1?", "answer": "2", "type": "easy"}\n{"problem": "2+2?", "answer": "4"}\n')
    file_env = CodeEnv(data_file=data)
    assert [task.info.id for task in file_env.tasks("test", 5, 0)] == ["math-1", "math-2"]
    assert [task.info.id for task in file_env.tasks("test", 5, 0, ["easy"])] == ["math-1"]
    with pytest.raises(ValueError, match=r"no problem of the task_types \['arithmetic'\]; the data has easy, math"):
        list(file_env.tasks("test", 5, 0, ["arithmetic"]))  # the bundled recipe's generated families
    # Several sources are read in turn, so num_tasks draws evenly from each; a shared id is refused.
    other = tmp_path / "other.jsonl"
    other.write_text("".join(f'{{"problem": "{i}+{i}?", "answer": "{2 * i}"}}\n' for i in range(5)))
    both = CodeEnv(data_file=[data, other])
    assert [task.info.id for task in both.tasks("test", 5, 0)] == ["math-1", "other-1", "math-2", "other-2", "other-3"]
    clash = tmp_path / "clash.jsonl"
    clash.write_text('{"id": "math-1", "problem": "3+3?", "answer": "6"}\n')
    with pytest.raises(ValueError, match=r"problem id 'math-1' is also in .*math\.jsonl"):
        list(CodeEnv(data_file=[data, clash]).tasks("test", 5, 0))
    file_env.reset(next(file_env.tasks("test", 1, 0)))
    assert file_env.expert_action() == encode_action(message="The answer is $\\boxed{2}$.")


def test_data_files_that_hold_no_problem_or_are_listed_twice_are_refused(tmp_path) -> None:
    data = tmp_path / "math.jsonl"
    data.write_text('{"problem": "1+1?", "answer": "2"}\n')
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    for files in ([empty], [data, empty], empty):  # no episode of a source is no silent success
        with pytest.raises(ValueError, match=r"empty\.jsonl:0 file: no problem in it"):
            next(iter(CodeEnv(data_file=files).tasks("test", 4, 0)))
    with pytest.raises(ValueError, match=r"data_file lists .*math\.jsonl twice"):
        CodeEnv(data_file=[data, tmp_path / "." / "math.jsonl"])
    with pytest.raises(ValueError, match=r":0 file: a folder, not a file"):
        next(iter(CodeEnv(data_file=[tmp_path]).tasks("test", 4, 0)))
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b'{"problem": "1+1?", "answer": "2"}\n\xff\xfe\n')
    with pytest.raises(ValueError, match=r"binary\.jsonl:2 row: not UTF-8 text"):
        list(CodeEnv(data_file=binary).tasks("test", 4, 0))


def test_a_data_file_error_is_located_at_the_data_file_option(tmp_path) -> None:
    from prefbuild.checks import check_recipe
    from prefbuild.recipe import RecipeError, load_recipe

    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    loaded = load_recipe("code-interpreter", ["teacher.backend=scripted", "teacher.model=scripted-expert",
                                              f"env.options.data_file=[{empty}]"])
    with pytest.raises(RecipeError, match=r"^--set env.options.data_file: .*empty\.jsonl:0 file: no problem in it"):
        check_recipe(loaded)


def test_bad_options() -> None:
    with pytest.raises(ValueError, match="max_turns"):
        CodeEnv(max_turns=0)
    with pytest.raises(ValueError, match="extra"):
        CodeEnv(sandbox={"walltime": 1})
    with pytest.raises(ValueError, match="unknown split"):
        list(CodeEnv().tasks("validation", 1, 0))
    assert [p.id for p in generate_problems("test", 2, 0)] == [t.info.id for t in CodeEnv().tasks("standard", 2, 0)]


def test_a_run_without_math_verify_stops_before_it_plays(tmp_path, monkeypatch) -> None:
    """``pip install prefbuild`` alone, then the code-interpreter recipe: one line naming the extra."""
    import importlib.util

    from click.testing import CliRunner

    from prefbuild.cli.main import main

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *args: None if name == "math_verify" else real(name, *args))
    out = tmp_path / "run"
    result = CliRunner().invoke(main, ["generate", "code-interpreter", "--out", str(out), "--limit", "2",
                                       "--set", "teacher.backend=scripted"], catch_exceptions=False)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "math-verify: pip install 'prefbuild[code]'" in result.output
    assert not any(path.stat().st_size for path in out.rglob("*.jsonl"))  # no episode was played


def test_a_task_type_no_row_has_is_warned_about(tmp_path, caplog) -> None:
    data = tmp_path / "math.jsonl"
    data.write_text('{"problem": "1+1?", "answer": "2", "type": "easy"}\n{"problem": "2+2?", "answer": "4"}\n')
    with caplog.at_level("WARNING"):
        ids = [task.info.id for task in CodeEnv(data_file=data).tasks("test", 5, 0, ["easy", "eazy"])]
    assert ids == ["math-1"]
    assert "no problem of the task_types ['eazy']; the data has easy, math" in caplog.text
