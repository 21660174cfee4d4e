"""Rebuild blind_tools3: play the real code (recipe code-interpreter), tau2 (recipe tau2-grpo-data) and
BFCL (recipe bfcl-envtuning) envs with the scripted turns of ``episodes.py``.

    PYTHONPATH=. .venv/bin/python tests/labelers/blind_tools3/build.py

Writes problems.jsonl (the code env's data_file, a path relative to the repository root, where the
build runs), then plays every episode through ``prefbuild.rollout.generate.generate`` with a teacher
that returns the episode's turns in order, keyed by the live task read from the episode's
``EnvView`` (the code problem's id, the tau2 domain and task id, the BFCL entry id), so every tool
result, customer reply, hint and grade is the real env's own. The code env runs with the recipe's
options (max_tokens raised to 16,384 so the long turns fit); tau2 with the scripted customer
(``user: scripted``) and the recipe's hints (off); BFCL with the recipe's options (hints actionable).
A turn may be ``{"text": ..., "finish": "length"}``: a turn cut at the token limit.

Writes code_runs.jsonl, tau2_runs.jsonl and bfcl_runs.jsonl (one trajectory per line, in EPISODES
order) and labels.jsonl (shapes ``code-env``, ``tau2-env``, ``bfcl-env``), then reads the logs back
with prefbuild's importer and checks every label points at an existing step.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
for path in (str(ROOT), str(HERE)):
    if path not in sys.path:
        sys.path.insert(0, path)

from episodes import EPISODES  # noqa: E402

from prefbuild.envs.bfcl import env as bfcl_env  # noqa: E402
from prefbuild.envs.bfcl.data import load_entries  # noqa: E402
from prefbuild.envs.code.env import CodeEnv  # noqa: E402
from prefbuild.envs.tau2.env import Tau2Env  # noqa: E402
from prefbuild.io.sources import read_trajectories  # noqa: E402
from prefbuild.recipe import load_recipe  # noqa: E402
from prefbuild.rollout.generate import generate  # noqa: E402
from prefbuild.teachers.base import Completion, Teacher, TeacherRequest  # noqa: E402

TEACHER = ["teacher.backend=openai", "teacher.base_urls=[http://127.0.0.1:9/v1]", "teacher.model=qwen3-4b-scripted",
           "teacher.concurrency=1"]
PROBLEMS = HERE / "problems.jsonl"
LOGS = {"code": "code_runs.jsonl", "tau2": "tau2_runs.jsonl", "bfcl": "bfcl_runs.jsonl"}
MODES = {"malformed_tool_call", "unknown_tool", "invalid_arguments", "tool_error", "repeated_tool_call", "no_tool_use",
         "hallucinated_tool_output", "wrong_answer", "overlong", "loop", "premature_success", "verbose_filler",
         "format_violation", "invalid_action"}


def live_key(env) -> tuple[str, str]:
    """(env, task) of the episode an env is playing."""
    if isinstance(env, CodeEnv):
        return "code", env.problem.id
    if isinstance(env, Tau2Env):
        return "tau2", f"{env.domain}/{env._task.id}"
    return "bfcl", env.entry.id


def episode_key(episode: dict) -> tuple[str, str]:
    return episode["env"], episode["id"] if episode["env"] == "code" else episode["task"]


def turn_text(turn: str | dict) -> tuple[str, str]:
    """(text, finish reason) of a scripted turn."""
    if isinstance(turn, dict):
        return turn["text"], turn.get("finish", "stop")
    return turn, "stop"


class ScriptedTurns(Teacher):
    """Returns the next scripted turn of the episode the live env is playing."""

    backend = "programmed"
    reads_env_state = True

    def __init__(self) -> None:
        self.model = "qwen3-4b-scripted"
        self.by_key = {episode_key(e): e for e in EPISODES}

    async def complete(self, request: TeacherRequest) -> list[Completion]:
        view = request.env_view
        turns = self.by_key[live_key(view.env)]["turns"]
        text, finish = turn_text(turns[min(view.step_index, len(turns) - 1)])
        prompt_tokens = sum(len(m.content or "") for m in request.messages) // 4
        return [Completion(text=text, finish_reason=finish, prompt_tokens=prompt_tokens,
                           completion_tokens=max(1, round(len(text) / 3.8)), latency_s=0.5)]


def narrow_tau2() -> None:
    """Tau2Env.tasks yields only the episodes' tasks of its domain, in EPISODES order."""
    original = Tau2Env.tasks

    def tasks(self, split, n, seed, task_types=None):
        wanted = [e["task"].split("/", 1)[1] for e in EPISODES
                  if e["env"] == "tau2" and e["task"].split("/", 1)[0] == self.domain]
        by_id = {task.payload.task.id: task for task in original(self, split, 10_000, seed, task_types)}
        for task_id in wanted:
            yield by_id[task_id]

    Tau2Env.tasks = tasks


def narrow_bfcl() -> None:
    """BfclEnv.tasks yields only the episodes' tasks (each from the recipe's split), in EPISODES order."""

    def tasks(self, split, n, seed, task_types=None):
        options = {"hints": self.hints, "max_steps_per_turn": self.max_steps_per_turn}
        for episode in EPISODES:
            if episode["env"] != "bfcl":
                continue
            category = episode["task"].rsplit("_", 1)[0].removeprefix("multi_turn_")
            entries = {entry.id: entry for entry in bfcl_env.split_entries(load_entries(category), split)}
            yield bfcl_env.task_of(entries[episode["task"]], seed, options, split)

    bfcl_env.BfclEnv.tasks = tasks


def play(recipe: str, overrides: list[str], work: Path) -> dict[tuple[str, str], dict]:
    loaded = load_recipe(recipe, [*overrides, *TEACHER])
    result = generate(loaded, out=work / recipe, quiet=True, teacher=ScriptedTurns(), new=True)
    print(recipe, result.stats)
    records = {}
    for line in (work / recipe / "trajectories" / "episodes.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        name = record["env"]["name"]
        if name == "code":
            key = ("code", record["task"]["id"])
        elif name == "tau2":
            key = ("tau2", f"{record['task']['type']}/{record['task']['meta']['tau2_task_id']}")
        else:
            key = ("bfcl", record["task"]["id"])
        records[key] = record
    return records


def check(labels_path: Path) -> None:
    """Every sidecar entry names an existing record, every label an existing step, as prefbuild reads the logs."""
    read = {log: list(read_trajectories(HERE / log)) for log in LOGS.values()}
    seen = {log: 0 for log in LOGS.values()}
    for line in labels_path.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        seen[entry["log"]] += 1
        assert entry["record"] == seen[entry["log"]], entry["id"]
        steps = read[entry["log"]][entry["record"] - 1].steps
        for label in entry["labels"]:
            assert label["mode"] in MODES, (entry["id"], label)
            assert 0 <= label["step"] < len(steps), (entry["id"], label)
    assert seen == {log: len(records) for log, records in read.items()}, seen


def main() -> None:
    os.chdir(ROOT)
    keys = [episode_key(e) for e in EPISODES]
    assert len(set(keys)) == len(keys), "one episode per task"
    assert len({e["id"] for e in EPISODES}) == len(EPISODES)
    code = [e for e in EPISODES if e["env"] == "code"]
    PROBLEMS.write_text("".join(json.dumps({"id": e["id"], **e["row"]}) + "\n" for e in code), encoding="utf-8")
    narrow_tau2()
    narrow_bfcl()
    work = Path(tempfile.mkdtemp(prefix="blind_tools3_"))
    records = play("code-interpreter", [
        f"env.num_tasks={len(code)}", "env.samples_per_task=1", "env.task_types=null",
        f"env.options.data_file={PROBLEMS.relative_to(ROOT)}", "teacher.sampling.max_tokens=16384"], work)
    counts = {d: sum(1 for e in EPISODES if e["env"] == "tau2" and e["task"].startswith(d + "/"))
              for d in ("airline", "retail", "telecom")}
    tau2_overrides = []
    for index, domain in enumerate(("airline", "retail", "telecom")):
        tau2_overrides += [f"env.{index}.split=train", f"env.{index}.options.user=scripted",
                           f"env.{index}.num_tasks={max(1, counts[domain])}", f"env.{index}.samples_per_task=1",
                           f"env.{index}.max_steps=16"]
    records.update(play("tau2-grpo-data", tau2_overrides, work))
    n_bfcl = sum(1 for e in EPISODES if e["env"] == "bfcl")
    records.update(play("bfcl-envtuning", [f"env.num_tasks={n_bfcl}", "env.samples_per_task=1",
                                           "env.task_types=[base,miss_func,miss_param]", "env.max_steps=16"], work))
    numbers = dict.fromkeys(LOGS, 0)
    lines: dict[str, list[str]] = {env: [] for env in LOGS}
    with open(HERE / "labels.jsonl", "w", encoding="utf-8") as labels:
        for episode in EPISODES:
            env = episode["env"]
            record = records[episode_key(episode)]
            assert len(record["steps"]) == len(episode["turns"]), (episode["id"], len(record["steps"]))
            lines[env].append(json.dumps(record) + "\n")
            numbers[env] += 1
            labels.write(json.dumps({
                "log": LOGS[env], "record": numbers[env], "id": episode["id"], "shape": f"{env}-env",
                "labels": [{"step": step, "mode": mode} for step, mode in episode["labels"]],
                "note": episode["note"],
            }) + "\n")
    for env, log in LOGS.items():
        (HERE / log).write_text("".join(lines[env]), encoding="utf-8")
    shutil.rmtree(work, ignore_errors=True)
    check(HERE / "labels.jsonl")


if __name__ == "__main__":
    main()
