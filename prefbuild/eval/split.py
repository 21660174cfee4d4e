"""The held-out tasks of a recipe, and the check that they share nothing with its training tasks.

A recipe's ``env.split`` names the tasks its pairs are built from. An evaluation plays the
env's held-out split instead: household and ALFWorld ``valid_unseen`` (floor plans that the
training split never uses), the SQL and code envs' ``test``, BFCL's ``heldout`` (the half of each
category its ``train`` split never draws from), tau2-bench's ``test`` tasks. Before a single episode runs,
``check_disjoint`` builds both task lists and fails when any task, or for household any floor
plan, appears in both, so a score can never come from a task the policy was trained on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from prefbuild.envs import EnvTask, make_env
from prefbuild.errors import PrefbuildError
from prefbuild.recipe import EnvConfig

TEST = "test"
HELD_OUT_SPLITS: dict[str, str] = {
    "household": "valid_unseen",
    "alfworld": "valid_unseen",
    "sql": "test",
    "code": "test",
    "bfcl": "heldout",  # the half of each category the train split never draws from
    "tau2": "test",  # tau2-bench's own test tasks of each domain
}
"""Env name -> the split an evaluation plays for ``--tasks test``."""


def held_out_split(env: EnvConfig, tasks: str = TEST) -> str:
    """The split an evaluation of ``env`` plays.

    Args:
        env: the recipe's env section (its ``split`` is the training split).
        tasks: ``test`` for the env's held-out split, or an explicit split name.

    Returns:
        The split name.

    Raises:
        PrefbuildError: the env has no known held-out split, or the split is the training split.

    Example:
        >>> held_out_split(EnvConfig(name="household", protocol="agentbench", split="train"))
        'valid_unseen'
    """
    if tasks == TEST:
        split = HELD_OUT_SPLITS.get(env.name)
        if split is None:
            known = ", ".join(sorted(HELD_OUT_SPLITS))
            raise PrefbuildError(
                f"env {env.name!r}: no known held-out split (known for {known}); name one with --tasks SPLIT"
            )
    else:
        split = tasks
    if split == env.split:
        raise PrefbuildError(
            f"env {env.name!r}: --tasks {tasks} is the training split {env.split!r} the pairs are built from"
        )
    return split


def _household_plan(task: EnvTask) -> str:
    meta = task.info.meta
    return f"{meta.get('room')}-{meta.get('scene')}"


def _task_id(task: EnvTask) -> str:
    return task.info.id


FINGERPRINTS: dict[str, Callable[[EnvTask], str]] = {"household": _household_plan}
"""Env name -> what two tasks must not share across splits (default: the task id)."""


def check_disjoint(train: EnvConfig, held_out: EnvConfig, seed: int) -> None:
    """Fail when the held-out tasks share a task (household: a floor plan) with the training tasks.

    Args:
        train: the env section the pairs are built from.
        held_out: the same section with the held-out split.
        seed: the recipe's seed (tasks derive from it).

    Raises:
        PrefbuildError: naming one shared task or floor plan.
    """
    env = make_env(train.name, dialect=train.dialect, options=train.options)
    try:
        train_tasks = list(env.tasks(train.split, train.num_tasks, seed, train.task_types))
        test_tasks = list(env.tasks(held_out.split, held_out.num_tasks, seed, held_out.task_types))
    except (ValueError, KeyError) as error:
        raise PrefbuildError(f"env {train.name!r}: cannot make tasks: {error}") from None
    for fingerprint in _fingerprints(train.name):
        seen = {fingerprint(task): task.info.id for task in train_tasks}
        for task in test_tasks:
            shared = seen.get(fingerprint(task))
            if shared is not None:
                raise PrefbuildError(
                    f"env {train.name!r}: held-out task {task.info.id} shares {fingerprint(task)!r} with "
                    f"training task {shared}; choose another --tasks split"
                )


def _fingerprints(env_name: str) -> Sequence[Callable[[EnvTask], str]]:
    extra = FINGERPRINTS.get(env_name)
    return (_task_id,) if extra is None else (_task_id, extra)
