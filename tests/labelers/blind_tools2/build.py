"""Rebuild blind_tools2: play the real tau2 (recipe tau2-grpo-data) and BFCL (recipe bfcl-envtuning)
envs with the scripted turns of ``episodes.py``.

    PYTHONPATH=. .venv/bin/python tests/labelers/blind_tools2/build.py

Each env plays only the tasks the episodes name (the env's ``tasks`` is narrowed to them, in
EPISODES order), through ``prefbuild.rollout.generate.generate`` with a teacher that returns the
episode's turns in order (keyed by the live task, read from the episode's ``EnvView``), so every
tool result, customer reply, hint and grade is the real env's own. tau2 runs with the scripted
customer (``user: scripted``), the recipe's hints (off); BFCL with the recipe's options
(hints actionable). Writes tau2_runs.jsonl and bfcl_runs.jsonl (one trajectory per line, in
EPISODES order) and labels.jsonl (shapes ``tau2-env`` and ``bfcl-env``).
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
from tests.labelers.tool_episodes import TEACHER, ScriptedTurns, episode_key, narrow_bfcl, narrow_tau2  # noqa: E402


def play(recipe: str, overrides: list[str], work: Path) -> dict[tuple[str, str], dict]:
    loaded = load_recipe(recipe, [*overrides, *TEACHER])
    result = generate(loaded, out=work / recipe, quiet=True, teacher=ScriptedTurns(EPISODES), new=True)
    print(recipe, result.stats)
    records = {}
    for line in (work / recipe / "trajectories" / "episodes.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["env"]["name"] == "tau2":
            key = ("tau2", f"{record['task']['type']}/{record['task']['meta']['tau2_task_id']}")
        else:
            key = ("bfcl", record["task"]["id"])
        records[key] = record
    return records


def main() -> None:
    keys = [episode_key(e) for e in EPISODES]
    assert len(set(keys)) == len(keys), "one episode per task"
    assert len({e["id"] for e in EPISODES}) == len(EPISODES)
    narrow_tau2(EPISODES)
    narrow_bfcl(EPISODES)
    work = Path(tempfile.mkdtemp(prefix="blind_tools2_"))
    counts = {d: sum(1 for e in EPISODES if e["env"] == "tau2" and e["task"].startswith(d + "/"))
              for d in ("airline", "retail", "telecom")}
    tau2_overrides = ["env.0.split=train", "env.1.split=train", "env.2.split=train"]
    for index, domain in enumerate(("airline", "retail", "telecom")):
        tau2_overrides += [f"env.{index}.options.user=scripted", f"env.{index}.num_tasks={max(1, counts[domain])}",
                           f"env.{index}.samples_per_task=1", f"env.{index}.max_steps=12"]
    records = play("tau2-grpo-data", tau2_overrides, work)
    n_bfcl = sum(1 for e in EPISODES if e["env"] == "bfcl")
    records.update(play("bfcl-envtuning", [f"env.num_tasks={n_bfcl}", "env.samples_per_task=1",
                                           "env.task_types=[base,miss_func,miss_param]", "env.max_steps=12"], work))
    logs = {"tau2": "tau2_runs.jsonl", "bfcl": "bfcl_runs.jsonl"}
    numbers = {"tau2": 0, "bfcl": 0}
    lines: dict[str, list[str]] = {"tau2": [], "bfcl": []}
    with open(HERE / "labels.jsonl", "w", encoding="utf-8") as labels:
        for episode in EPISODES:
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
        (HERE / log).write_text("".join(lines[env]), encoding="utf-8")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
