"""Rebuild blind_tools1: play the real `code` env (recipe code-interpreter) with the scripted turns.

    PYTHONPATH=. .venv/bin/python tests/labelers/blind_tools1/build.py

Writes problems.jsonl (the env's data_file), plays every episode through
``prefbuild.rollout.generate.generate`` with a teacher that returns the turns of
``episodes.py`` in order (keyed by the problem), so every tool result is the sandbox's own,
then writes code_runs.jsonl (one trajectory per line, in EPISODES order) and labels.jsonl.
"""

from __future__ import annotations

import json
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

from prefbuild.recipe import load_recipe  # noqa: E402
from prefbuild.rollout.generate import generate  # noqa: E402
from prefbuild.teachers.base import Completion, Teacher, TeacherRequest  # noqa: E402


def goal_of(row: dict) -> str:
    return row.get("problem") or row["question"]


class ScriptedTurns(Teacher):
    """Returns the next scripted turn of the episode whose problem is the first user message."""

    backend = "programmed"

    def __init__(self) -> None:
        self.model = "qwen3-4b-scripted"
        self.by_goal = {goal_of(e["row"]): e for e in EPISODES}

    async def complete(self, request: TeacherRequest) -> list[Completion]:
        messages = list(request.messages)
        user = next(m.content for m in messages if m.role == "user")
        episode = next(e for goal, e in self.by_goal.items() if goal in (user or ""))
        turn = sum(1 for m in messages if m.role == "assistant")
        text = episode["turns"][min(turn, len(episode["turns"]) - 1)]
        prompt_tokens = sum(len(m.content or "") for m in messages) // 4
        return [Completion(text=text, finish_reason="stop", prompt_tokens=prompt_tokens,
                           completion_tokens=max(1, round(len(text) / 3.8)), latency_s=0.5)]


def main() -> None:
    ids = [e["id"] for e in EPISODES]
    assert len(set(ids)) == len(ids)
    problems = HERE / "problems.jsonl"
    problems.write_text("".join(json.dumps({"id": e["id"], **e["row"]}) + "\n" for e in EPISODES), encoding="utf-8")
    work = Path(tempfile.mkdtemp(prefix="blind_tools1_"))
    loaded = load_recipe("code-interpreter", [
        f"env.num_tasks={len(EPISODES)}", "env.samples_per_task=1", "env.task_types=null",
        f"env.options.data_file={problems}", "teacher.backend=openai", "teacher.base_urls=[http://127.0.0.1:9/v1]",
        "teacher.model=qwen3-4b-scripted", "teacher.sampling.max_tokens=16384", "teacher.concurrency=4",
    ])
    result = generate(loaded, out=work / "run", quiet=True, teacher=ScriptedTurns(), new=True)
    print(result.stats)
    by_task = {}
    for line in (work / "run" / "trajectories" / "episodes.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        by_task[record["task"]["id"]] = record
    log = "code_runs.jsonl"
    with open(HERE / log, "w", encoding="utf-8") as out, open(HERE / "labels.jsonl", "w", encoding="utf-8") as labels:
        for number, episode in enumerate(EPISODES, start=1):
            record = by_task[episode["id"]]
            assert len(record["steps"]) == len(episode["turns"]), (episode["id"], len(record["steps"]))
            out.write(json.dumps(record) + "\n")
            labels.write(json.dumps({
                "log": log, "record": number, "id": episode["id"], "shape": "code-env",
                "labels": [{"step": step, "mode": mode} for step, mode in episode["labels"]],
                "note": episode["note"],
            }) + "\n")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
