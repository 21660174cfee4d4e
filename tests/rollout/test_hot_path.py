"""Rules of the generate hot path: where ``env.step`` runs, the collector settings of a rollout,
and caches that stay bounded however many episodes a run plays."""

from __future__ import annotations

import asyncio
import gc
import json
import threading
import weakref

import pytest

from prefbuild.collector import fewer_collections
from prefbuild.envs import base as env_base
from prefbuild.envs.base import StepResult
from prefbuild.recipe import load_recipe_text
from prefbuild.records import Message
from prefbuild.rollout import EpisodeRunner, plan_episodes, rollout
from prefbuild.teachers.base import Sampling, TeacherRequest
from prefbuild.teachers.openai_backend import PayloadEncoder, build_payload
from tests.rollout.toy import CountEnv, ProgrammedTeacher

RECIPE = """\
name: toy
seed: 1
env: {name: NAME, protocol: count, num_tasks: 3, max_steps: 4}
teacher: {backend: scripted, model: toy, concurrency: 2}
"""

STEP_THREADS: list[int] = []


class ThreadRecordingEnv(CountEnv):
    """The counting env, noting the thread each ``step`` runs in."""

    def step(self, action: str) -> StepResult:
        STEP_THREADS.append(threading.get_ident())
        return super().step(action)


class FastThreadRecordingEnv(ThreadRecordingEnv):
    fast_step = True


@pytest.fixture(autouse=True)
def _register(monkeypatch: pytest.MonkeyPatch) -> None:
    from prefbuild import registry

    monkeypatch.setitem(registry.BUILTINS["envs"], "slow", "tests.rollout.test_hot_path:ThreadRecordingEnv")
    monkeypatch.setitem(registry.BUILTINS["envs"], "fast", "tests.rollout.test_hot_path:FastThreadRecordingEnv")
    assert issubclass(ThreadRecordingEnv, env_base.Env)
    STEP_THREADS.clear()


def _play(env_name: str) -> tuple[list, int]:
    recipe = load_recipe_text(RECIPE.replace("NAME", env_name), "toy.yaml").recipe
    runner = EpisodeRunner(recipe, ProgrammedTeacher(lambda messages, n: "ACTION: inc"))

    async def collect() -> tuple[list, int]:
        loop_thread = threading.get_ident()
        return [t async for t in rollout(plan_episodes(recipe), runner, concurrency=2)], loop_thread

    return asyncio.run(collect())


def test_fast_step_envs_step_in_the_event_loop_and_others_in_worker_threads() -> None:
    fast, loop_thread = _play("fast")
    assert STEP_THREADS and set(STEP_THREADS) == {loop_thread}
    STEP_THREADS.clear()
    slow, loop_thread = _play("slow")
    assert STEP_THREADS and loop_thread not in STEP_THREADS
    # Where the step runs changes nothing in the records (ids differ: the env name is in the plan hash).
    def records(trajectories: list) -> list[dict]:
        return sorted((t.model_dump(exclude={"env", "id"}) for t in trajectories), key=lambda t: t["task"]["id"])

    assert records(fast) == records(slow)
    assert all(t.outcome.success for t in fast)


def test_household_env_declares_fast_steps() -> None:
    from prefbuild.envs import make_env

    assert make_env("household").fast_step is True
    assert env_base.Env.fast_step is False


def test_fewer_collections_restores_the_collector_and_still_frees_cycles() -> None:
    before = gc.get_threshold()

    class Node:
        pass

    with fewer_collections(young_threshold=before[0] + 1000, older_threshold=3):
        assert gc.get_threshold() == (before[0] + 1000, 3, 3)
        node = Node()
        node.self = node  # a reference cycle made while the rollout runs
        alive = weakref.ref(node)
        del node
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert alive() is None


def test_payload_caches_drop_finished_episodes_and_keep_live_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    from prefbuild.teachers import openai_backend

    encoded: list[str] = []
    original = openai_backend._message_dict
    monkeypatch.setattr(openai_backend, "_message_dict", lambda m: encoded.append(m.content) or original(m))
    encoder = PayloadEncoder("m", max_histories=4, max_entries=16)
    sampling = Sampling()

    def check(request: TeacherRequest) -> None:
        body = json.loads(encoder.encode(request, 1, None))
        counted = len(encoded)
        assert body == build_payload("m", request, 1, None)
        del encoded[counted:]  # only the encoder's own serialisations are counted

    live = [Message(role="user", content="live 0")]
    for episode in range(40):  # a long run: many short episodes pass while one stays in flight
        finished = [Message(role="user", content=f"episode {episode}")]
        for step in range(3):
            check(TeacherRequest(list(finished), sampling))
            finished += [Message(role="assistant", content="a"), Message(role="user", content=f"o{step}")]
        live.append(Message(role="assistant", content=f"live out {episode}"))
        check(TeacherRequest(list(live), sampling))
        assert len(encoder._histories) <= 4 and len(encoder._messages) <= 16
    # The live episode's prefix stayed cached: each of its messages was serialised once.
    assert encoded.count("live 0") == 1
    assert all(encoded.count(f"live out {episode}") == 1 for episode in range(40))
