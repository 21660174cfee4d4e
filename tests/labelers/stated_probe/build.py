"""Rebuild the stated-figures probe: tau2 messages to the customer, played on the real env, with the
invented figures marked, for ``hallucinated_tool_output``'s stated rule (``labelers.tools.stated``).

    PYTHONPATH=. .venv/bin/python tests/labelers/stated_probe/build.py          # play
    PYTHONPATH=. .venv/bin/python -m tests.labelers.stated_score tests/labelers/stated_probe   # score

Playing: every episode of ``episodes.py`` runs through ``prefbuild.rollout.generate.generate`` (recipe
tau2-grpo-data, the scripted customer ``user: scripted``, hints off) with a teacher that returns the
episode's turns in order, keyed by the live tau2 task, so every tool result and customer reply is the
real env's own. Writes tau2_runs.jsonl (one trajectory per line, in EPISODES order) and marks.jsonl
(per message to the customer: the episode, its step and the figures marked invented).
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

from prefbuild.envs.tau2.env import Tau2Env  # noqa: E402
from prefbuild.recipe import load_recipe  # noqa: E402
from prefbuild.rollout.generate import generate  # noqa: E402
from prefbuild.teachers.base import Completion, Teacher, TeacherRequest  # noqa: E402

TEACHER = ["teacher.backend=openai", "teacher.base_urls=[http://127.0.0.1:9/v1]", "teacher.model=qwen3-4b-scripted",
           "teacher.concurrency=1"]
RUNS = HERE / "tau2_runs.jsonl"
MARKS = HERE / "marks.jsonl"
DOMAINS = ("airline", "retail", "telecom")


def turn_text(turn: str | dict) -> str:
    return turn["text"] if isinstance(turn, dict) else turn


class ScriptedTurns(Teacher):
    """Returns the next scripted turn of the episode the live env is playing."""

    backend = "programmed"
    reads_env_state = True

    def __init__(self) -> None:
        self.model = "qwen3-4b-scripted"
        self.by_task = {e["task"]: e for e in EPISODES}

    async def complete(self, request: TeacherRequest) -> list[Completion]:
        view = request.env_view
        turns = self.by_task[f"{view.env.domain}/{view.env._task.id}"]["turns"]
        text = turn_text(turns[min(view.step_index, len(turns) - 1)])
        prompt_tokens = sum(len(m.content or "") for m in request.messages) // 4
        return [Completion(text=text, finish_reason="stop", prompt_tokens=prompt_tokens,
                           completion_tokens=max(1, round(len(text) / 3.8)), latency_s=0.5)]


def narrow_tau2() -> None:
    """Tau2Env.tasks yields only the episodes' tasks of its domain, in EPISODES order."""
    original = Tau2Env.tasks

    def tasks(self, split, n, seed, task_types=None):
        wanted = [e["task"].split("/", 1)[1] for e in EPISODES if e["task"].split("/", 1)[0] == self.domain]
        by_id = {task.payload.task.id: task for task in original(self, split, 10_000, seed, task_types)}
        for task_id in wanted:
            yield by_id[task_id]

    Tau2Env.tasks = tasks


def play() -> None:
    os.chdir(ROOT)
    tasks = [e["task"] for e in EPISODES]
    assert len(set(tasks)) == len(tasks), "one episode per task"
    assert len({e["id"] for e in EPISODES}) == len(EPISODES)
    narrow_tau2()
    counts = {d: sum(1 for e in EPISODES if e["task"].startswith(d + "/")) for d in DOMAINS}
    overrides = []
    for index, domain in enumerate(DOMAINS):
        overrides += [f"env.{index}.split=train", f"env.{index}.options.user=scripted",
                      f"env.{index}.num_tasks={max(1, counts[domain])}", f"env.{index}.samples_per_task=1",
                      f"env.{index}.max_steps=24"]
    work = Path(tempfile.mkdtemp(prefix="stated_probe_"))
    loaded = load_recipe("tau2-grpo-data", [*overrides, *TEACHER])
    result = generate(loaded, out=work / "run", quiet=True, teacher=ScriptedTurns(), new=True)
    print("played", result.stats)
    records = {}
    for line in (work / "run" / "trajectories" / "episodes.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        records[f"{record['task']['type']}/{record['task']['meta']['tau2_task_id']}"] = record
    with open(RUNS, "w", encoding="utf-8") as runs, open(MARKS, "w", encoding="utf-8") as marks:
        for episode in EPISODES:
            record = records[episode["task"]]
            assert len(record["steps"]) == len(episode["turns"]), (episode["id"], len(record["steps"]))
            assert record["steps"][-1]["done"], episode["id"]
            runs.write(json.dumps(record) + "\n")
            for step, turn in enumerate(episode["turns"]):
                if isinstance(turn, dict):
                    marks.write(json.dumps({"id": episode["id"], "step": step, "invented": turn["invented"]}) + "\n")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    play()
