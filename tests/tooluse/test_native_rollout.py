"""Structured tool calls through the episode loop, on the real code and bfcl envs.

The teacher answers as vLLM's hermes tool parser does: an empty (or short) ``content`` and
``tool_calls`` with server ids. Checked: the env runs exactly those calls and answers each id;
the records carry the calls; and ``prompt_messages`` rebuilds, message for message, what the
teacher received at every step (tool results, BFCL's next user question included).
"""

from __future__ import annotations

import asyncio
import itertools

import pytest

from prefbuild.envs.code.sandbox import namespaces_available
from prefbuild.recipe import load_recipe_text
from prefbuild.records import Role, Trajectory, prompt_messages
from prefbuild.rollout import EpisodeRunner, plan_episodes, rollout
from prefbuild.teachers.base import Completion, Teacher, TeacherRequest
from prefbuild.tooluse.actions import decode_action
from prefbuild.tooluse.hermes import render_tool_turn


class NativeExpert(Teacher):
    """Plays the env's expert and answers in the OpenAI layout (calls structured, not in text)."""

    backend = "test-native"
    model = "native-expert"
    reads_env_state = True

    def __init__(self, *, hermes_text: bool = False) -> None:
        self.requests: dict[str, list[TeacherRequest]] = {}
        self.hermes_text = hermes_text
        self.ids = itertools.count()

    async def complete(self, request: TeacherRequest) -> list[Completion]:
        assert request.env_view is not None
        self.requests.setdefault(request.env_view.episode_id, []).append(request)
        action = decode_action(request.env_view.env.expert_action() or '{"message": "I cannot tell."}')
        calls = [call.model_copy(update={"id": f"chatcmpl-tool-{next(self.ids)}"}) for call in action.calls]
        if self.hermes_text:
            return [Completion(render_tool_turn(calls, content=action.message), "stop", 1, 1, 0.0)]
        return [Completion(action.message or "", "stop", 1, 1, 0.0, tool_calls=tuple(calls))]


def run(recipe_text: str, teacher: NativeExpert) -> list[Trajectory]:
    recipe = load_recipe_text(recipe_text, "native.yaml").recipe
    runner = EpisodeRunner(recipe, teacher)

    async def collect() -> list[Trajectory]:
        return [t async for t in rollout(plan_episodes(recipe), runner, concurrency=2)]

    return asyncio.run(collect())


def dumped(messages) -> list[dict]:
    return [message.model_dump(mode="json", exclude_none=True) for message in messages]


def check_prompts(trajectory: Trajectory, teacher: NativeExpert) -> None:
    requests = teacher.requests[trajectory.id]
    assert len(requests) == len(trajectory.steps)
    for index, request in enumerate(requests):
        assert dumped(request.messages) == dumped(prompt_messages(trajectory, index)), (trajectory.id, index)


CODE = """\
name: native-code
seed: 3
env: {name: code, protocol: hermes, num_tasks: 3, samples_per_task: 1, max_steps: 6,
      task_types: [arithmetic, number_theory, programs]}
teacher: {backend: scripted, model: native-expert}
"""


@pytest.mark.skipif(namespaces_available() is not None, reason=f"no sandbox: {namespaces_available()}")
def test_code_env_runs_structured_calls_and_prompts_rebuild_exactly() -> None:
    teacher = NativeExpert()
    trajectories = run(CODE, teacher)
    assert len(trajectories) == 3
    for trajectory in trajectories:
        assert trajectory.outcome.success, trajectory.outcome
        check_prompts(trajectory, teacher)
        requests = teacher.requests[trajectory.id]
        assert all(r.tools and r.tools[0]["function"]["name"] == "code_interpreter" for r in requests)
        call_step, answer = trajectory.steps[0], trajectory.steps[-1]
        assert call_step.native_tool_calls and call_step.tool_calls
        assert call_step.tool_calls[0].id.startswith("chatcmpl-tool-")
        # The env answered the server's id, and the next prompt shows the structured call.
        assert [fact.call_id for fact in call_step.facts.tools] == [call.id for call in call_step.tool_calls]
        shown = answer.observation_messages
        assert shown and shown[0].role is Role.tool and shown[0].tool_call_id == call_step.tool_calls[0].id
        assistant = requests[-1].messages[-2]
        assert assistant.role is Role.assistant and assistant.tool_calls == call_step.tool_calls
        assert answer.tool_calls is None and not answer.native_tool_calls


@pytest.mark.skipif(namespaces_available() is not None, reason=f"no sandbox: {namespaces_available()}")
def test_hermes_text_calls_are_recorded_and_stay_in_the_text() -> None:
    teacher = NativeExpert(hermes_text=True)
    trajectories = run(CODE, teacher)
    for trajectory in trajectories:
        assert trajectory.outcome.success
        check_prompts(trajectory, teacher)
        first = trajectory.steps[0]
        assert first.tool_calls and not first.native_tool_calls and "<tool_call>" in first.raw_output
        # The history turn is the text as written: no structured calls rendered a second time.
        assert teacher.requests[trajectory.id][1].messages[-2].tool_calls is None
        assert first.tool_calls[0].id == first.facts.tools[0].call_id


BFCL = """\
name: native-bfcl
seed: 7
env: {name: bfcl, protocol: hermes, split: test, task_types: [miss_func], num_tasks: 1,
      samples_per_task: 1, max_steps: 60, protocol_options: {tools_in_prompt: false}}
teacher: {backend: scripted, model: native-expert}
"""


def test_bfcl_per_task_tools_grow_and_user_turns_are_in_the_prompt() -> None:
    teacher = NativeExpert()
    (trajectory,) = run(BFCL, teacher)
    assert trajectory.outcome.success, trajectory.outcome
    check_prompts(trajectory, teacher)
    requests = teacher.requests[trajectory.id]
    counts = [len(request.tools or []) for request in requests]
    assert counts[0] > 0 and counts[-1] > counts[0], counts  # the held-out function was revealed
    users = [step for step in trajectory.steps[1:] if step.observation_messages and
             step.observation_messages[0].role is Role.user]
    assert users, "the next user question arrives as a user message"
    assert not trajectory.messages or "# Tools" not in trajectory.messages[0].content


TAU2 = """\
name: native-tau2
seed: 1
env: {name: tau2, protocol: hermes, split: base, num_tasks: 4, samples_per_task: 1, max_steps: 30,
      options: {domain: mock, user: scripted}}
teacher: {backend: scripted, model: native-expert}
"""


def test_tau2_tool_results_and_customer_replies_rebuild_exactly() -> None:
    pytest.importorskip("tau2")
    teacher = NativeExpert()
    trajectories = run(TAU2, teacher)
    assert trajectories
    for trajectory in trajectories:
        assert trajectory.outcome.stop_reason != "error", trajectory.outcome
        check_prompts(trajectory, teacher)
        for step, following in zip(trajectory.steps, trajectory.steps[1:], strict=False):
            # A message to the customer is answered by the customer (a user turn), a call by its result.
            expected = Role.tool if step.tool_calls else Role.user
            assert following.observation_messages and following.observation_messages[0].role is expected
    assert any(step.native_tool_calls and step.facts.tools for t in trajectories for step in t.steps)
