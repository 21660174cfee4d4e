"""A refusal of the very first request for the context window is a configuration error (a too small
--max-model-len, a max_tokens larger than the window): the episode is an error, as it was, not a
context_limit failure with no step that a resume never plays again."""

from __future__ import annotations

import asyncio

import pytest

from prefbuild import registry
from prefbuild.recipe import load_recipe_text
from prefbuild.records import StopReason
from prefbuild.rollout import EpisodeRunner, plan_episodes, rollout
from prefbuild.teachers.base import Completion, ContextLimitError, TeacherRequest
from tests.rollout.toy import ProgrammedTeacher

RECIPE = """\
name: window
seed: 1
env: {name: count, protocol: count, num_tasks: 1, samples_per_task: 1, max_steps: 6}
teacher: {backend: scripted, model: toy, concurrency: 1}
"""


class WindowTeacher(ProgrammedTeacher):
    """Refuses every request from the ``refuse_from``-th on as too long for the context window."""

    def __init__(self, refuse_from: int) -> None:
        super().__init__(lambda messages, n: "ACTION: inc")
        self.refuse_from = refuse_from

    async def complete(self, request: TeacherRequest) -> list[Completion]:
        if len(self.requests) + 1 >= self.refuse_from:
            self.requests.append(list(request.messages))
            raise ContextLimitError("HTTP 400: This model's maximum context length is 2048 tokens")
        return await super().complete(request)


@pytest.fixture(autouse=True)
def _register(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.BUILTINS["envs"], "count", "tests.rollout.toy:CountEnv")


def _play(teacher: WindowTeacher):
    recipe = load_recipe_text(RECIPE, "window.yaml").recipe

    async def collect():
        return [t async for t in rollout(plan_episodes(recipe), EpisodeRunner(recipe, teacher), concurrency=1)]

    return asyncio.run(collect())


def test_context_limit_on_the_first_request_is_an_error() -> None:
    [trajectory] = _play(WindowTeacher(refuse_from=1))
    assert trajectory.outcome.stop_reason is StopReason.error
    assert "maximum context length" in (trajectory.outcome.error or "")


def test_context_limit_after_played_steps_ends_the_episode_as_context_limit() -> None:
    [trajectory] = _play(WindowTeacher(refuse_from=3))
    assert trajectory.outcome.stop_reason is StopReason.context_limit
    assert len(trajectory.steps) == 2 and trajectory.outcome.error is None
