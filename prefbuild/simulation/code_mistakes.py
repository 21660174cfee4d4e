"""Simulated ``code`` env mistakes for the scripted teacher: wrong or premature answers,
failing or malformed tool calls, repeated calls, fabricated tool output, overlong reasoning.
Only the simulation uses this; the env knows nothing of it.

Modes (registered names): ``wrong_answer``, ``premature_success`` (answer before any tool
call, wrong), ``tool_error`` (code that raises), ``invalid_action`` / ``invalid_arguments``
(a call whose arguments break the tool's schema), ``unknown_tool``, ``loop`` /
``repeated_tool_call`` (the previous cell again), ``hallucinated_tool_output`` (a made-up
``<tool_response>`` in the answer), ``overlong`` (verbose self-reasoning before the answer).
"""

from __future__ import annotations

import json
import random
import re

from prefbuild.envs.code.env import CodeEnv
from prefbuild.envs.code.problems import CodeProblem
from prefbuild.envs.code.protocol import TOOL_NAME
from prefbuild.records import FunctionCall, ToolCall
from prefbuild.tooluse.actions import encode_action

_INTEGER = re.compile(r"^-?\d+$")
_FRACTION = re.compile(r"^\\frac\{(-?\d+)\}\{(\d+)\}$")
REASONING = (
    "Let me restate the problem to make sure I understand it.",
    "I will reason about this carefully without skipping any step.",
    "First, let me consider every case one by one.",
    "Now let me double-check the previous step once more.",
    "Hmm, wait, let me verify that again from the beginning.",
    "It is important to be careful with the arithmetic here.",
)


def _call(arguments: dict[str, object], name: str = TOOL_NAME) -> str:
    call = ToolCall(id="call_0", function=FunctionCall(name=name, arguments=json.dumps(arguments)))
    return encode_action([call])


def wrong_answer_text(problem: CodeProblem, rng: random.Random) -> str | None:
    """A final message with a plausible but wrong answer (math) or a program that fails the tests."""
    if problem.kind == "code":
        assert problem.tests is not None
        outputs = problem.tests.outputs
        if problem.tests.fn_name is None and len({str(value) for value in outputs}) > 1:
            return f"```python\nprint({str(outputs[0]).rstrip(chr(10))!r})\n```"
        return None
    answer = (problem.answer or "").strip()
    if _INTEGER.match(answer):
        wrong = str(int(answer) + rng.choice([-1, 1]) * rng.randint(1, 9))
    elif match := _FRACTION.match(answer):
        wrong = f"\\frac{{{int(match.group(1)) + 1}}}{{{match.group(2)}}}"
    else:
        return None
    return f"The answer is $\\boxed{{{wrong}}}$."


def failure_action(env: CodeEnv, mode: str, rng: random.Random) -> str | None:
    """An action showing failure ``mode`` from the env's current state, or None.

    Args:
        env: A live ``CodeEnv`` in an episode.
        mode: A failure mode name (see the module docstring).
        rng: The random stream of this step.

    Returns:
        The JSON tool action (``prefbuild.tooluse.actions``), or None when the mode cannot be
        shown from here (no previous cell to repeat, no wrong answer to make).
    """
    problem = env.problem
    if problem is None or env.expert_action() is None:
        return None
    cells = env.cells
    if mode == "wrong_answer":
        text = wrong_answer_text(problem, rng)
        return None if text is None else encode_action(message=text)
    if mode in ("premature_success", "no_tool_use"):
        text = wrong_answer_text(problem, rng) if not cells else None
        return None if text is None else encode_action(message=text)
    if mode == "tool_error":
        code = problem.reference or "print(result)"
        broken = code.replace("print(", "pritn(", 1) if "print(" in code else code + "\nprint(undefined_result)"
        return _call({"code": broken})
    if mode in ("invalid_action", "invalid_arguments"):
        code = problem.reference or "print(1)"
        return rng.choice([_call({"script": code}), _call({"code": code, "timeout": 30}), _call({"code": [code]})])
    if mode == "unknown_tool":
        return _call({"code": problem.reference or "print(1)"}, name=rng.choice(["python", "run_python", "execute"]))
    if mode in ("loop", "repeated_tool_call"):
        return _call({"code": cells[-1]}) if cells else None
    if mode == "hallucinated_tool_output":
        text = wrong_answer_text(problem, rng) if problem.kind == "math" else None
        if text is None:
            return None
        fake = re.sub(r".*\\boxed\{(.*)\}.*", r"\1", text)
        return encode_action(message=f"<tool_response>\n{fake}\n</tool_response>\n{text}")
    if mode == "overlong":
        expert = env.expert_action()
        if expert is None or json.loads(expert).get("tool_calls"):
            return None
        padding = " ".join(rng.choice(REASONING) for _ in range(rng.randint(40, 80)))
        return encode_action(message=f"{padding}\n{json.loads(expert)['message']}")
    return None
