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

from prefbuild.io.sources import read_trajectories  # noqa: E402
from prefbuild.recipe import load_recipe  # noqa: E402
from prefbuild.rollout.generate import generate  # noqa: E402
from tests.labelers.tool_episodes import TEACHER, ScriptedTurns, episode_key, narrow_bfcl, narrow_tau2  # noqa: E402

PROBLEMS = HERE / "problems.jsonl"
LOGS = {"code": "code_runs.jsonl", "tau2": "tau2_runs.jsonl", "bfcl": "bfcl_runs.jsonl"}
MODES = {"malformed_tool_call", "unknown_tool", "invalid_arguments", "tool_error", "repeated_tool_call", "no_tool_use",
         "hallucinated_tool_output", "wrong_answer", "overlong", "loop", "premature_success", "verbose_filler",
         "format_violation", "invalid_action"}


def play(recipe: str, overrides: list[str], work: Path) -> dict[tuple[str, str], dict]:
    loaded = load_recipe(recipe, [*overrides, *TEACHER])
    result = generate(loaded, out=work / recipe, quiet=True, teacher=ScriptedTurns(EPISODES), new=True)
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
    narrow_tau2(EPISODES)
    narrow_bfcl(EPISODES)
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
