"""Rebuild the live env of a recorded episode at any step, to try other actions from there.

``best_of_n`` ranks teacher samples by what they do in the env, and the scripted teacher
needs the live env to answer; both start from a recorded trajectory. Replaying is exact
because envs are deterministic: reset to the recorded task, then send every executed
command (``Step.facts.executed_action`` where the protocol changed it, else the parsed
action; turns without an action did not touch the env). Each replayed observation is
compared with the recorded feedback, so a trajectory from another env version fails
loudly (``ReplayError``) instead of producing pairs from the wrong state.

Env options that are not in the trajectory (recipe ``env.options``) take their defaults;
the dialect is recorded and used.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from prefbuild.envs import Env, EnvTask, Protocol, make_env
from prefbuild.recipe import expand_placeholders
from prefbuild.records import EXTERNAL_SPLIT, TaskInfo, Trajectory, as_record


class ReplayError(RuntimeError):
    """A trajectory cannot be replayed in its env (unknown task, diverging observation)."""


def _household_task(info: TaskInfo) -> EnvTask:
    from prefbuild.envs.household.env import task_info

    index = info.meta.get("index")
    if index is None or info.seed is None:
        raise ReplayError(f"household task {info.id!r} has no meta.index or seed to regenerate it from")
    task = _generated_household_task(info.split, info.seed, int(index))
    # The recorded info stands for a task that regenerates under the same id (``task_for`` keeps
    # it anyway); the regenerated record is built only to report a mismatch.
    return EnvTask(info=info if task.id == info.id else task_info(task), payload=task)


@lru_cache(maxsize=256)
def _generated_household_task(split: str, seed: int, index: int) -> Any:
    """``generate_task(split, seed, index)``, kept for the episodes replayed again (a pure function)."""
    from prefbuild.envs.household.tasks import generate_task

    return generate_task(split, seed, index)


# Envs that can rebuild one task from its TaskInfo directly; others are searched in env.tasks().
TASK_RESOLVERS: dict[str, Callable[[TaskInfo], EnvTask]] = {"household": _household_task}
SCAN_LIMIT = 10_000


@lru_cache(maxsize=256)
def _resolve(env_name: str, dialect: str | None, options_json: str, info_json: str) -> EnvTask:
    """The task of an env without a resolver, searched in ``env.tasks()`` (``task_for`` keys it)."""
    info = TaskInfo.model_validate_json(info_json)
    env = make_env(env_name, dialect=dialect, options=json.loads(options_json))
    limit = int(info.meta.get("index", SCAN_LIMIT - 1)) + 1 if "index" in info.meta else SCAN_LIMIT
    seed = info.seed if info.seed is not None else 0
    try:
        task = next((t for t in env.tasks(info.split, limit, seed) if t.info.id == info.id), None)
    except ValueError as error:  # an unknown split or task file: the env cannot list the recorded task
        raise ReplayError(f"env {env_name!r} cannot regenerate task {info.id!r}: {error}") from error
    if task is None:
        raise ReplayError(f"env {env_name!r} has no task {info.id!r} in split {info.split!r} (seed {seed})")
    if task.info.id != info.id:
        raise ReplayError(f"regenerated task {task.info.id!r} does not match the recorded task {info.id!r}")
    # The recorded TaskInfo, not the regenerated one: its meta may carry the env options the
    # episode ran with (e.g. bfcl's hints), which a default-constructed env cannot know.
    return EnvTask(info=info, payload=task.payload)


def task_for(trajectory: Trajectory) -> EnvTask:
    """The env task a trajectory was played on, regenerated from its ``TaskInfo``."""
    resolver = TASK_RESOLVERS.get(trajectory.env.name)
    info = as_record(trajectory.task, TaskInfo)  # the record, also where the trajectory is a struct
    if info.split == EXTERNAL_SPLIT:
        raise ReplayError(f"task {info.id!r} comes from an imported log; prefbuild cannot regenerate it")
    if resolver is not None:
        # What ``_resolve`` returns for it, without its key: a resolver rebuilds the task from the
        # TaskInfo alone (env options and dialect play no part) and caches the expensive part itself.
        task = resolver(info)
        if task.info.id != info.id:
            raise ReplayError(f"regenerated task {task.info.id!r} does not match the recorded task {info.id!r}")
        return EnvTask(info=info, payload=task.payload)
    options = json.dumps(expand_placeholders(trajectory.env.options), sort_keys=True)
    return _resolve(trajectory.env.name, trajectory.env.dialect, options, info.model_dump_json())


def replay(trajectory: Trajectory, upto: int, protocol: Protocol | None = None) -> Env:
    """A fresh env in the state the episode was in just before step ``upto`` (0 = after reset)."""
    _check_upto(trajectory, upto)
    env = _fresh_env(trajectory)
    _advance(env, trajectory, 0, upto)
    return env


def _check_upto(trajectory: Trajectory, upto: int) -> None:
    if not 0 <= upto <= len(trajectory.steps):
        raise ReplayError(f"trajectory {trajectory.id} has no step {upto}")


def _fresh_env(trajectory: Trajectory) -> Env:
    env = make_env(trajectory.env.name, dialect=trajectory.env.dialect,
                   options=expand_placeholders(trajectory.env.options))
    env.reset(task_for(trajectory))
    return env


def _advance(env: Env, trajectory: Trajectory, start: int, upto: int) -> None:
    """Send the executed commands of steps ``start`` to ``upto - 1`` to ``env``, checking each reply."""
    for step in trajectory.steps[start:upto]:
        if step.action is None:
            continue
        command = str(step.facts.executed_action or step.action)
        result = env.step(command)
        if step.feedback and result.observation != step.feedback:
            raise ReplayError(
                f"trajectory {trajectory.id} step {step.index}: replaying {command!r} gave "
                f"{result.observation[:80]!r}, the recording says {step.feedback[:80]!r}"
            )


class ReplayCursor:
    """Replays one trajectory at a time, forward: asking for its steps in order replays each step once.

    ``replay`` starts from reset at every call, so visiting k steps of an n-step episode costs
    O(k * n) env steps; the cursor keeps the env of its last call and moves it forward. The
    env it returns is its own: read it (``expert_action``), do not step it.

    Example:
        >>> cursor = ReplayCursor()
        >>> # [cursor.at(trajectory, i).expert_action() for i in (2, 5)]  # replays steps 0-4 once
    """

    def __init__(self) -> None:
        self._trajectory: Trajectory | None = None
        self._env: Env | None = None
        self._position = 0

    def at(self, trajectory: Trajectory, upto: int) -> Env:
        """The env just before step ``upto`` of ``trajectory`` (as ``replay`` gives it).

        Raises:
            ReplayError: as ``replay``.
        """
        _check_upto(trajectory, upto)
        if self._env is None or self._trajectory is not trajectory or upto < self._position:
            self._env, self._trajectory, self._position = None, None, 0
            env = _fresh_env(trajectory)
        else:
            env = self._env
        start, self._env = self._position, None  # a failed replay leaves no half-moved env behind
        _advance(env, trajectory, start, upto)
        self._env, self._trajectory, self._position = env, trajectory, upto
        return env
