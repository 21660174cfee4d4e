"""Play scripted tool episodes (code, tau2, BFCL) through the real envs, for the labelled sets built
from them (blind_tools2, blind_tools3, stated_probe, stated_probe2).

An episode is a dict with ``env`` (``code``, ``tau2`` or ``bfcl``; ``tau2`` where absent), ``task``
(``<domain>/<tau2 task id>``, a BFCL entry id; a code episode is keyed by its ``id``) and ``turns``:
the model's turns in order, each a text or a dict with ``text`` (and ``finish``, the finish reason,
``stop`` by default). ``ScriptedTurns`` answers every request with the next turn of the episode the
live env is playing, so every tool result, customer reply and grade is the env's own; ``narrow_tau2``
and ``narrow_bfcl`` make those envs play exactly the episodes' tasks, in their order.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prefbuild.envs.bfcl import env as bfcl_env
from prefbuild.envs.bfcl.data import load_entries
from prefbuild.envs.code.env import CodeEnv
from prefbuild.envs.tau2.env import Tau2Env
from prefbuild.recipe import load_recipe
from prefbuild.rollout.generate import generate
from prefbuild.teachers.base import Completion, Teacher, TeacherRequest

# The recipe settings the sets play with: a teacher that is never reached (ScriptedTurns answers).
TEACHER = ["teacher.backend=openai", "teacher.base_urls=[http://127.0.0.1:9/v1]", "teacher.model=qwen3-4b-scripted",
           "teacher.concurrency=1"]

Episode = dict[str, Any]


def live_key(env: Any) -> tuple[str, str]:
    """(env, task) of the episode a live env is playing."""
    if isinstance(env, CodeEnv):
        return "code", env.problem.id
    if isinstance(env, Tau2Env):
        return "tau2", f"{env.domain}/{env._task.id}"
    return "bfcl", env.entry.id


def episode_key(episode: Episode) -> tuple[str, str]:
    """(env, task) of a scripted episode, as ``live_key`` names the live one."""
    env = episode.get("env", "tau2")
    return env, episode["id"] if env == "code" else episode["task"]


def record_key(record: dict[str, Any]) -> tuple[str, str]:
    """(env, task) of a played trajectory record, as ``episode_key`` names its episode."""
    name = record["env"]["name"]
    if name == "tau2":
        return "tau2", f"{record['task']['type']}/{record['task']['meta']['tau2_task_id']}"
    return name, record["task"]["id"]


def play_episodes(
    recipe: str, overrides: list[str], work: Path, episodes: Sequence[Episode]
) -> dict[tuple[str, str], dict[str, Any]]:
    """Play ``recipe`` (narrowed by ``overrides``) with ``episodes``' scripted turns into ``work``; the
    trajectory records by ``record_key``."""
    loaded = load_recipe(recipe, [*overrides, *TEACHER])
    result = generate(loaded, out=work / recipe, quiet=True, teacher=ScriptedTurns(episodes), new=True)
    print(recipe, result.stats)
    lines = (work / recipe / "trajectories" / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    return {record_key(record): record for record in map(json.loads, lines)}


def write_labelled_set(
    here: Path, episodes: Sequence[Episode], records: dict[tuple[str, str], dict[str, Any]], logs: dict[str, str]
) -> None:
    """Write each env's trajectories (``logs``: env -> file name, in episode order) and ``labels.jsonl`` (the
    episodes' labels, shape ``<env>-env``) into ``here``."""
    numbers = dict.fromkeys(logs, 0)
    lines: dict[str, list[str]] = {env: [] for env in logs}
    with open(here / "labels.jsonl", "w", encoding="utf-8") as labels:
        for episode in episodes:
            env = episode["env"]
            record = records[episode_key(episode)]
            assert len(record["steps"]) == len(episode["turns"]), (episode["id"], len(record["steps"]))
            lines[env].append(json.dumps(record) + "\n")
            numbers[env] += 1
            labels.write(json.dumps({
                "log": logs[env], "record": numbers[env], "id": episode["id"], "shape": f"{env}-env",
                "labels": [{"step": step, "mode": mode} for step, mode in episode["labels"]],
                "note": episode["note"],
            }) + "\n")
    for env, log in logs.items():
        (here / log).write_text("".join(lines[env]), encoding="utf-8")


def turn_text(turn: str | dict[str, Any]) -> tuple[str, str]:
    """(text, finish reason) of a scripted turn."""
    if isinstance(turn, dict):
        return turn["text"], turn.get("finish", "stop")
    return turn, "stop"


class ScriptedTurns(Teacher):
    """Returns the next scripted turn of the episode the live env is playing."""

    backend = "programmed"
    reads_env_state = True

    def __init__(self, episodes: Sequence[Episode]) -> None:
        self.model = "qwen3-4b-scripted"
        self.by_key = {episode_key(episode): episode for episode in episodes}

    async def complete(self, request: TeacherRequest) -> list[Completion]:
        view = request.env_view
        turns = self.by_key[live_key(view.env)]["turns"]
        text, finish = turn_text(turns[min(view.step_index, len(turns) - 1)])
        prompt_tokens = sum(len(m.content or "") for m in request.messages) // 4
        return [Completion(text=text, finish_reason=finish, prompt_tokens=prompt_tokens,
                           completion_tokens=max(1, round(len(text) / 3.8)), latency_s=0.5)]


def narrow_tau2(episodes: Sequence[Episode]) -> None:
    """Tau2Env.tasks yields only the episodes' tasks of its domain, in their order."""
    original = Tau2Env.tasks

    def tasks(self, split, n, seed, task_types=None):
        wanted = [e["task"].split("/", 1)[1] for e in episodes
                  if e.get("env", "tau2") == "tau2" and e["task"].split("/", 1)[0] == self.domain]
        by_id = {task.payload.task.id: task for task in original(self, split, 10_000, seed, task_types)}
        for task_id in wanted:
            yield by_id[task_id]

    Tau2Env.tasks = tasks


def narrow_bfcl(episodes: Sequence[Episode]) -> None:
    """BfclEnv.tasks yields only the episodes' tasks (each from the recipe's split), in their order."""

    def tasks(self, split, n, seed, task_types=None):
        options = {"hints": self.hints, "max_steps_per_turn": self.max_steps_per_turn}
        for episode in episodes:
            if episode.get("env") != "bfcl":
                continue
            category = episode["task"].rsplit("_", 1)[0].removeprefix("multi_turn_")
            entries = {entry.id: entry for entry in bfcl_env.split_entries(load_entries(category), split)}
            yield bfcl_env.task_of(entries[episode["task"]], seed, options, split)

    bfcl_env.BfclEnv.tasks = tasks
