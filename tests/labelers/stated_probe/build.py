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

from prefbuild.recipe import load_recipe  # noqa: E402
from prefbuild.rollout.generate import generate  # noqa: E402
from tests.labelers.tool_episodes import TEACHER, ScriptedTurns, narrow_tau2  # noqa: E402

RUNS = HERE / "tau2_runs.jsonl"
MARKS = HERE / "marks.jsonl"
DOMAINS = ("airline", "retail", "telecom")


def play() -> None:
    os.chdir(ROOT)
    tasks = [e["task"] for e in EPISODES]
    assert len(set(tasks)) == len(tasks), "one episode per task"
    assert len({e["id"] for e in EPISODES}) == len(EPISODES)
    narrow_tau2(EPISODES)
    counts = {d: sum(1 for e in EPISODES if e["task"].startswith(d + "/")) for d in DOMAINS}
    overrides = []
    for index, domain in enumerate(DOMAINS):
        overrides += [f"env.{index}.split=train", f"env.{index}.options.user=scripted",
                      f"env.{index}.num_tasks={max(1, counts[domain])}", f"env.{index}.samples_per_task=1",
                      f"env.{index}.max_steps=24"]
    work = Path(tempfile.mkdtemp(prefix="stated_probe_"))
    loaded = load_recipe("tau2-grpo-data", [*overrides, *TEACHER])
    result = generate(loaded, out=work / "run", quiet=True, teacher=ScriptedTurns(EPISODES), new=True)
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
