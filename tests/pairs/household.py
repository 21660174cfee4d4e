"""Labelled household trajectories from the real env, protocol, rollout engine and scripted teacher.

``RecordingTeacher`` keeps the exact message list of every request, so tests can compare a
pair's prompt with what the teacher (the model) really saw at that step.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from functools import lru_cache
from typing import ClassVar

from prefbuild.labelers import build_labelers, label_trajectory
from prefbuild.recipe import load_recipe_text
from prefbuild.records import Message, Trajectory
from prefbuild.rollout import EpisodeRunner, plan_episodes, rollout
from prefbuild.simulation.scripted import ScriptedTeacher
from prefbuild.teachers.base import Completion, EnvView, Teacher, TeacherRequest

RATES = {
    "loop": 0.08,
    "premature_success": 0.04,
    "implausible_location": 0.08,
    "invalid_action": 0.06,
    "verbose_filler": 0.12,
    "format_violation": 0.04,
}

RECIPE = """
name: pairs-test
seed: {seed}
env: {{name: household, dialect: classic, protocol: {protocol}, split: train, num_tasks: {tasks},
      samples_per_task: {samples}, max_steps: {max_steps}, protocol_options: {{fewshot: {fewshot}}}}}
teacher: {{backend: scripted, model: scripted-expert}}
"""


@dataclass
class RecordingTeacher(Teacher):
    """The scripted teacher, plus a record of every prompt it was sent (by episode and step)."""

    inner: ScriptedTeacher
    reads_env_state: ClassVar[bool] = True
    seen: dict[tuple[str, int], list[Message]] = field(default_factory=dict)
    backend: str = "scripted"
    model: str = "scripted-expert"

    async def complete(self, request: TeacherRequest) -> list[Completion]:
        context = request.env_view
        if isinstance(context, EnvView):
            self.seen[(context.episode_id, context.step_index)] = list(request.messages)
        return await self.inner.complete(request)


def play(
    *,
    tasks: int = 6,
    samples: int = 2,
    seed: int = 3,
    max_steps: int = 20,
    protocol: str = "agentbench",
    rates: dict[str, float] | None = None,
    fewshot: bool = True,
) -> tuple[list[Trajectory], RecordingTeacher]:
    """Labelled trajectories of ``tasks`` x ``samples`` household episodes."""
    recipe = load_recipe_text(
        RECIPE.format(
            seed=seed,
            protocol=protocol,
            tasks=tasks,
            samples=samples,
            max_steps=max_steps,
            fewshot=str(fewshot).lower(),
        )
    ).recipe
    teacher = RecordingTeacher(ScriptedTeacher(RATES if rates is None else rates))
    runner = EpisodeRunner(recipe, teacher)

    async def collect() -> list[Trajectory]:
        order = {episode.id: position for position, episode in enumerate(plan_episodes(recipe))}
        finished = [t async for t in rollout(plan_episodes(recipe), runner, concurrency=4)]
        return sorted(finished, key=lambda trajectory: order[trajectory.id])  # plan order, as files have

    labelers = build_labelers(None, env="household")
    trajectories = [label_trajectory(t, labelers) for t in asyncio.run(collect())]
    return trajectories, teacher


@lru_cache(maxsize=4)
def cached(
    tasks: int = 6, samples: int = 2, seed: int = 3, protocol: str = "agentbench", fewshot: bool = True
) -> tuple[Trajectory, ...]:
    """Shared across tests of one session (trajectories are immutable records)."""
    return tuple(play(tasks=tasks, samples=samples, seed=seed, protocol=protocol, fewshot=fewshot)[0])
