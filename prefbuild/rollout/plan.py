"""Planning a run: which episodes a recipe asks for, their stable ids, and shards.

Episodes are planned lazily, one env section and one task at a time, so planning a run of
a million tasks costs the memory of one; ``--limit 2`` builds two tasks, not all of them.
An episode id derives from the recipe's generation hash, the task id and the sample index,
so the same recipe always plans the same ids and a re-run skips what is on disk.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass

from prefbuild.envs import EnvTask, make_env
from prefbuild.errors import PrefbuildError
from prefbuild.recipe import EnvConfig, Recipe


@dataclass(frozen=True)
class Episode:
    """One planned episode: a task, which sample of it, and its stable id."""

    id: str
    task: EnvTask
    sample_index: int
    task_position: int
    env: EnvConfig


@dataclass(frozen=True)
class Shard:
    """``k/n``: this process runs tasks whose position modulo ``n`` equals ``k`` (0-based k)."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        try:
            index_text, count_text = text.split("/")
            index, count = int(index_text), int(count_text)
        except ValueError:
            raise PrefbuildError(f"--shard {text!r}: expected K/N, e.g. 0/4") from None
        if count < 1 or not 0 <= index < count:
            raise PrefbuildError(f"--shard {text!r}: need N >= 1 and 0 <= K < N")
        return cls(index, count)

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    @property
    def file_name(self) -> str:
        return f"shard-{self.index:03d}-of-{self.count:03d}.jsonl"


def episode_id(generation_hash: str, task_id: str, sample_index: int) -> str:
    """Stable id of one episode; the same recipe always plans the same ids."""
    payload = f"{generation_hash}\x1f{task_id}\x1f{sample_index}".encode()
    return hashlib.sha256(payload).hexdigest()[:20]


def env_for(env_config: EnvConfig):
    """A fresh env for one episode of an env section (its dialect and options applied)."""
    return make_env(env_config.name, dialect=env_config.dialect, options=env_config.options)


def plan_episodes(
    recipe: Recipe, shard: Shard | None = None, limit: int | None = None, *, skipped_items: list[str] | None = None
) -> Iterator[Episode]:
    """Every episode the recipe asks for (optionally one shard's slice), in a fixed order, lazily.

    A recipe with several env sections plans them one after the other; task positions run on
    across sections, so ``--shard`` slices the whole run evenly.

    Args:
        recipe: the validated recipe.
        shard: the slice to plan, or None for all.
        limit: stop after this many episodes.
        skipped_items: receives one line per data-file item an env could not take as written
            (an env's ``invalid_items``, e.g. malformed DBBench items), for the manifest.

    Returns:
        An iterator of ``Episode``; tasks are built only as it is consumed.

    Example:
        >>> from prefbuild.recipe import load_recipe
        >>> episodes = plan_episodes(load_recipe("simulate").recipe, limit=2)
        >>> len(list(episodes))
        2
    """
    generation = recipe.generation_hash()
    planned = 0
    position = 0
    for env_config in recipe.envs:
        env = env_for(env_config)
        try:
            tasks = env.tasks(env_config.split, env_config.num_tasks, recipe.seed, env_config.task_types)
            for task in tasks:
                if shard is None or position % shard.count == shard.index:
                    for sample in range(env_config.samples_per_task):
                        if limit is not None and planned >= limit:
                            return
                        identity = episode_id(generation, task.info.id, sample)
                        yield Episode(identity, task, sample, position, env_config)
                        planned += 1
                position += 1
        except (ValueError, KeyError) as error:
            raise PrefbuildError(f"env {env_config.name!r}: cannot make tasks: {error}") from None
        if skipped_items is not None:
            skipped_items.extend(str(item) for item in getattr(env, "invalid_items", ()))


def planned_count(recipe: Recipe, shard: Shard | None = None, limit: int | None = None) -> int:
    """How many episodes ``plan_episodes`` plans at most (for progress displays), without building tasks."""
    total = 0
    position = 0
    for env_config in recipe.envs:
        for _ in range(env_config.num_tasks):
            if shard is None or position % shard.count == shard.index:
                total += env_config.samples_per_task
            position += 1
    return min(total, limit) if limit is not None else total
