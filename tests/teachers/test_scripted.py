"""The scripted teacher: configured failure rates are what it really does, and it is deterministic.

Most tests use a tiny corridor env defined here (every failure mode is possible at every
step but the first, which has nothing to repeat), so rates can be measured exactly; one
test plays the real household env when it is importable.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

import pytest

from prefbuild.envs.base import Env, EnvTask, ParsedOutput, Protocol, StepResult
from prefbuild.records import Message, StepFacts, TaskInfo
from prefbuild.simulation import register_mistake_maker
from prefbuild.simulation.scripted import ENGLISH_FILLER, JAPANESE_FILLER, ScriptedTeacher
from prefbuild.teachers import make_teacher
from prefbuild.teachers.base import EnvView, Sampling, TeacherError, TeacherRequest
from prefbuild.teachers.config import TeacherConfigError

RATES = {
    "loop": 0.10,
    "premature_success": 0.05,
    "implausible_location": 0.08,
    "verbose_filler": 0.12,
    "format_violation": 0.10,
    "invalid_action": 0.07,
}
# Observed rate over 2,000 steps must be within this absolute distance of the configured
# rate: about 4 binomial standard deviations at p = 0.12, plus the 2% of steps (one per
# 50-step episode) where nothing can be repeated yet.
TOLERANCE = 0.035


class TaggedProtocol(Protocol):
    """``THOUGHT: ...`` then one ``ACTION: ...`` line; anything else is a format violation."""

    name = "tagged"

    def prefix_messages(self, task: EnvTask) -> list[Message]:
        return [Message(role="system", content="Walk to the end of the corridor.")]

    def observation_turn(self, observation: str, *, first: bool, task: EnvTask, admissible=None) -> str:
        return observation

    def parse(self, text: str) -> ParsedOutput:
        actions = re.findall(r"^ACTION: (.+)$", text, flags=re.MULTILINE)
        thought = re.search(r"^THOUGHT: (.+)$", text, flags=re.MULTILINE)
        fenced = "```" in text
        if not actions:
            return ParsedOutput(thought and thought.group(1), None, False, problems=("no action line",))
        action = actions[0].strip()
        return ParsedOutput(
            thought and thought.group(1),
            action,
            format_ok=len(actions) == 1 and not fenced,
            final=action == "Task succeeded.",
        )

    def render(self, action: str, thought: str | None = None) -> str:
        return f"THOUGHT: {thought}\nACTION: {action}" if thought else f"ACTION: {action}"

    def final_turn(self, answer: str | None = None) -> str | None:
        return "ACTION: Task succeeded."


class CorridorEnv(Env):
    """Rooms 0..length; the expert always walks to the next room."""

    name: ClassVar[str] = "corridor"
    protocols: ClassVar[dict[str, type[Protocol]]] = {"tagged": TaggedProtocol}

    def __init__(self, length: int = 100) -> None:
        self.length = length
        self.position = 0

    def tasks(self, split: str, n: int, seed: int, task_types: Sequence[str] | None = None) -> Iterator[EnvTask]:
        for index in range(n):
            yield EnvTask(TaskInfo(id=f"corridor-{seed}-{index}", type="walk", goal="reach the end", split=split))

    def reset(self, task: EnvTask) -> tuple[str, dict[str, Any]]:
        self.position = 0
        return "You are in room 0.", {}

    def admissible_actions(self) -> list[str]:
        return [f"go to room {room}" for room in range(self.length + 1)]

    def step(self, action: str) -> StepResult:
        if action == f"go to room {self.position + 1}":
            self.position += 1
            done = self.position == self.length
            room = f"You are in room {self.position}."
            return StepResult(room, float(done), done, facts=StepFacts(won=done), valid=True)
        return StepResult("Nothing happens.", 0.0, False, valid=False)

    def expert_action(self) -> str | None:
        return f"go to room {self.position + 1}"

    def failure_action(self, mode: str, rng: random.Random) -> str | None:
        if mode == "implausible_location":
            return f"search the ceiling of room {rng.randint(0, self.length)}"
        if mode == "invalid_action":
            return rng.choice(["fly to the moon", "teleport home", "eat the corridor"])
        return None


register_mistake_maker("corridor", lambda env, mode, rng: env.failure_action(mode, rng))


async def play(teacher: ScriptedTeacher, *, seed: int, episode: int, steps: int) -> list[tuple[Any, ...]]:
    """One episode; returns (text, simulated, expert, parsed, valid) per step."""
    env, protocol = CorridorEnv(), TaggedProtocol()
    env.reset(next(env.tasks("train", 1, seed)))
    outputs: list[str] = []
    record = []
    for index in range(steps):
        expert = env.expert_action()
        context = EnvView(env, protocol, index, tuple(outputs), seed=seed, episode_id=f"episode-{episode}")
        request = TeacherRequest([Message(role="user", content="go on")], Sampling(), env_view=context)
        [completion] = await teacher.complete(request)
        parsed = protocol.parse(completion.text)
        valid = env.step(parsed.action).valid if parsed.action and not parsed.final else None
        record.append((completion.text, completion.simulated, expert, parsed, valid))
        outputs.append(completion.text)
    return record


def run_episodes(teacher: ScriptedTeacher, seed: int, episodes: int = 40, steps: int = 50) -> list[list[tuple]]:
    async def go():
        return await asyncio.gather(*(play(teacher, seed=seed, episode=e, steps=steps) for e in range(episodes)))

    return asyncio.run(go())


def test_observed_failure_rates_match_the_configuration():
    runs = run_episodes(ScriptedTeacher(RATES), seed=3)
    steps = [step for run in runs for step in run]
    assert len(steps) == 2000
    counts = Counter(simulated for _, simulated, *_ in steps)
    for mode, rate in RATES.items():
        observed = counts[mode] / len(steps)
        assert abs(observed - rate) <= TOLERANCE, f"{mode}: observed {observed:.3f}, configured {rate}"
    expected_expert = 1 - sum(RATES.values())
    assert abs(counts["expert"] / len(steps) - expected_expert) <= TOLERANCE


def test_each_simulated_behaviour_is_what_it_claims():
    runs = run_episodes(ScriptedTeacher(RATES), seed=5, episodes=10, steps=50)
    fillers = ENGLISH_FILLER + JAPANESE_FILLER
    seen = set()
    for run in runs:
        previous = None
        for text, simulated, expert, parsed, valid in run:
            seen.add(simulated)
            if simulated == "expert":
                assert parsed.format_ok and parsed.action == expert and valid is True
            elif simulated == "loop":
                assert text == previous
            elif simulated == "premature_success":
                assert parsed.final
            elif simulated == "format_violation":
                assert not parsed.format_ok
            elif simulated == "verbose_filler":
                assert parsed.format_ok and parsed.action == expert
                assert any(phrase in text for phrase in fillers)
            elif simulated in ("implausible_location", "invalid_action"):
                assert parsed.format_ok and parsed.action != expert and valid is False
            previous = text
    assert seen == {"expert", *RATES}


def test_same_seed_same_outputs_in_any_order_and_other_seeds_differ():
    teacher = ScriptedTeacher(RATES)

    def texts(runs):
        return [[step[0] for step in run] for run in runs]

    first = texts(run_episodes(teacher, seed=11, episodes=6, steps=30))
    again = texts(run_episodes(ScriptedTeacher(RATES), seed=11, episodes=6, steps=30))
    assert first == again

    async def reversed_order():
        return await asyncio.gather(*(play(teacher, seed=11, episode=e, steps=30) for e in reversed(range(6))))

    assert texts(asyncio.run(reversed_order()))[::-1] == first
    assert texts(run_episodes(teacher, seed=12, episodes=6, steps=30)) != first


def test_n_samples_differ_and_count_whitespace_tokens():
    env, protocol = CorridorEnv(), TaggedProtocol()
    context = EnvView(env, protocol, 3, ("ACTION: go to room 1",), seed=1, episode_id="e")
    request = TeacherRequest([Message(role="user", content="three words here")], Sampling(n=8), env_view=context)
    completions = asyncio.run(ScriptedTeacher({"verbose_filler": 0.5, "loop": 0.5}).complete(request))
    assert len(completions) == 8
    assert len({c.text for c in completions}) > 1
    for completion in completions:
        assert completion.prompt_tokens == 3
        assert completion.completion_tokens == len(completion.text.split())
        assert completion.latency_s == 0.0  # a measured time would make reruns differ


def test_zero_rates_is_the_plain_expert():
    [run] = run_episodes(ScriptedTeacher(), seed=0, episodes=1, steps=20)
    assert [text.split("\n")[1] for text, *_ in run] == [f"ACTION: go to room {room}" for room in range(1, 21)]
    assert all(text.startswith("THOUGHT: ") for text, *_ in run)
    assert all(simulated == "expert" and valid for _, simulated, _, _, valid in run)


def test_bad_rates_and_missing_context_are_clear_errors():
    with pytest.raises(TeacherConfigError, match=r"teacher\.scripted\.lopo: unknown failure mode"):
        make_teacher({"backend": "scripted", "scripted": {"lopo": 0.1}})
    with pytest.raises(TeacherConfigError, match=r"add up to 1\.200"):
        make_teacher({"backend": "scripted", "scripted": {"loop": 0.6, "verbose_filler": 0.6}})
    teacher = make_teacher({"backend": "scripted", "scripted": {"loop": 0.2}})
    assert teacher.backend == "scripted"
    with pytest.raises(TeacherError, match=r"needs TeacherRequest\.env_view"):
        asyncio.run(teacher.complete(TeacherRequest([Message(role="user", content="x")], Sampling())))


def test_household_env_with_every_protocol():
    household = pytest.importorskip("prefbuild.envs.household.env")
    teacher = ScriptedTeacher(RATES)
    for protocol_name, protocol_class in household.HouseholdEnv.protocols.items():
        env = household.HouseholdEnv()
        protocol = protocol_class()
        task = next(iter(env.tasks("train", 1, 0)))
        env.reset(task)
        outputs: list[str] = []
        simulated = Counter()
        for index in range(40):
            context = EnvView(env, protocol, index, tuple(outputs), seed=0, episode_id=protocol_name)
            request = TeacherRequest([Message(role="user", content="go")], Sampling(), env_view=context)
            expert = env.expert_action()
            if expert is None:
                break
            [completion] = asyncio.run(teacher.complete(request))
            simulated[completion.simulated] += 1
            parsed = protocol.parse(completion.text)
            if completion.simulated == "expert":
                assert parsed.action == expert, (protocol_name, completion.text)
            if completion.simulated == "format_violation":
                assert not parsed.format_ok
            outputs.append(completion.text)
            if parsed.action is not None and not parsed.final:
                result = env.step(protocol.executed_action(parsed.action, env.admissible_actions()))
                if result.done:
                    break
        assert simulated["expert"] > 0, protocol_name
