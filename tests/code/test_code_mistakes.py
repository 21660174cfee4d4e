"""The code env's mistake maker: every mode yields an action the env scores as that mistake."""

from __future__ import annotations

import json
import random

import pytest

from prefbuild.envs.base import EnvTask
from prefbuild.envs.code.env import CodeEnv, task_info
from prefbuild.envs.code.generator import generate_problems
from prefbuild.envs.code.sandbox import namespaces_available
from prefbuild.simulation import failure_action
from prefbuild.tooluse.actions import decode_action

pytestmark = pytest.mark.skipif(namespaces_available() is not None, reason=f"no sandbox: {namespaces_available()}")


def _fresh(kind: str = "number_theory") -> CodeEnv:
    env = CodeEnv(sandbox={"wall_seconds": 5})
    problem = next(iter(generate_problems("train", 1, 5, [kind])))
    env.reset(EnvTask(info=task_info(problem, "train", 5), payload=problem))
    return env


@pytest.mark.parametrize("kind", ["arithmetic", "number_theory", "combinatorics", "algebra", "programs"])
def test_wrong_and_premature_answers_are_graded_incorrect(kind: str) -> None:
    for mode in ("wrong_answer", "premature_success"):
        env = _fresh(kind)
        action = failure_action(env, mode, random.Random(1))
        assert action is not None and decode_action(action).message
        result = env.step(action)
        assert result.done and result.info["outcome"] == "incorrect", (kind, mode, result.info)
    env = _fresh(kind)
    env.step(env.expert_action() or "")
    assert failure_action(env, "premature_success", random.Random(1)) is None


def test_tool_mistakes_show_in_the_facts() -> None:
    rng = random.Random(3)
    env = _fresh()
    assert failure_action(env, "loop", rng) is None
    cases = {"tool_error": "NameError", "invalid_arguments": "argument", "unknown_tool": "unknown tool"}
    for mode, expected in cases.items():
        action = failure_action(env, mode, rng)
        assert action is not None
        facts = env.step(action).facts
        assert facts is not None and not facts.tools[0].ok and expected in (facts.tools[0].error or ""), mode
    repeated = failure_action(env, "loop", rng)
    assert repeated is not None and json.loads(repeated)["tool_calls"][0]["arguments"]["code"] == env.cells[-1]


def test_hallucinated_output_and_overlong_answers() -> None:
    env = _fresh()
    fake = failure_action(env, "hallucinated_tool_output", random.Random(0))
    assert fake is not None and "<tool_response>" in (decode_action(fake).message or "")
    assert failure_action(env, "overlong", random.Random(0)) is None  # the expert still wants to call the tool
    env.step(env.expert_action() or "")
    long = failure_action(env, "overlong", random.Random(0))
    assert long is not None and len((decode_action(long).message or "").split()) > 200
    result = env.step(long)
    assert result.info["outcome"] == "correct"
    assert failure_action(env, "wrong_answer", random.Random(0)) is None  # the episode is over
