"""Rebuild stated_probe2: play the real tau2 (recipe tau2-grpo-data) and BFCL (recipe bfcl-envtuning) envs with the
scripted agent turns of ``episodes.py``, and write the mark of every message the agent sent to its customer / user.

    PYTHONPATH=. .venv/bin/python tests/labelers/stated_probe2/build.py

Plays every episode through ``prefbuild.rollout.generate.generate`` with a teacher that returns the episode's
turns in order, keyed by the live task read from the episode's ``EnvView`` (the tau2 domain and task id, the
BFCL entry id), so every tool result, customer reply, device output, user turn and grade is the real env's own.
tau2 plays the ``test`` split with the scripted customer (``user: scripted``) and the recipe's hints (off); BFCL
plays ``multi_turn_base`` entries of the ``heldout`` split with the recipe's options (hints actionable).

Writes tau2_runs.jsonl and bfcl_runs.jsonl (one trajectory per line, in EPISODES order) and marks.jsonl (one
line per agent message: log, record (1-based line of the log), step, invented, figure, why, note, episode,
calc). Then checks, on the played records and on the logs read back with prefbuild's importer, that every
marked step exists and is a message (no tool call) whose text is the scripted one, that every message step
of every episode is marked, that each invented figure occurs in its message, that every ``calc`` expression
holds, and that every conversation ended at its last scripted turn.
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
from tests.labelers.tool_episodes import narrow_bfcl, narrow_tau2, play_episodes, turn_text  # noqa: E402

LOGS = {"tau2": "tau2_runs.jsonl", "bfcl": "bfcl_runs.jsonl"}
TAU2_SPLIT, BFCL_SPLIT = "test", "heldout"
DOMAINS = ("airline", "retail", "telecom")
# the names a ``calc`` expression may use
SAFE = {"round": round, "min": min, "max": max, "len": len, "sum": sum, "__import__": __import__}


def message_steps(episode: dict) -> list[int]:
    return [index for index, turn in enumerate(episode["turns"]) if isinstance(turn, dict)]


def check_record(episode: dict, record: dict) -> None:
    """The played record matches the script: same steps, messages where the script says, ended at the last turn."""
    steps = record["steps"]
    turns = episode["turns"]
    assert len(steps) == len(turns), (episode["id"], len(steps), len(turns))
    for index, (step, turn) in enumerate(zip(steps, turns, strict=True)):
        assert step["index"] == index, (episode["id"], index)
        assert step["raw_output"] == turn_text(turn)[0], (episode["id"], index)
        action = json.loads(step["action"]) if step["action"] else {}
        if isinstance(turn, dict):
            is_message = not step["tool_calls"] and "tool_calls" not in action and bool(action.get("message"))
            assert is_message, (episode["id"], index)
        else:
            assert step["tool_calls"] and action.get("tool_calls"), (episode["id"], index)
    assert steps[-1]["done"] and not any(step["done"] for step in steps[:-1]), episode["id"]


def check_marks(episode: dict) -> None:
    """Every invented figure occurs in its message; every computation the messages rely on holds."""
    for index in message_steps(episode):
        turn = episode["turns"][index]
        mark = turn["mark"]
        assert mark["note"], (episode["id"], index)
        if mark["invented"]:
            assert mark["figure"] and mark["figure"] in turn["text"] and mark["why"], (episode["id"], index)
        for expression in turn["calc"]:
            assert eval(expression, {"__builtins__": SAFE}) is True, (episode["id"], expression)


def check_logs(marks_path: Path) -> None:
    """Read back with prefbuild's importer: every mark names an existing step that is a message."""
    read = {log: list(read_trajectories(HERE / log)) for log in LOGS.values()}
    seen: set[tuple[str, int, int]] = set()
    for line in marks_path.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        steps = read[entry["log"]][entry["record"] - 1].steps
        assert 0 <= entry["step"] < len(steps), entry
        step = steps[entry["step"]]
        assert not step.tool_calls and step.action and "message" in json.loads(step.action), entry
        seen.add((entry["log"], entry["record"], entry["step"]))
    for log, trajectories in read.items():
        for number, trajectory in enumerate(trajectories, start=1):
            for step in trajectory.steps:
                if not step.tool_calls:
                    assert (log, number, step.index) in seen, (log, number, step.index)


def main() -> None:
    os.chdir(ROOT)
    keys = [(e["env"], e["task"]) for e in EPISODES]
    assert len(set(keys)) == len(keys), "one episode per task"
    assert len({e["id"] for e in EPISODES}) == len(EPISODES)
    for episode in EPISODES:
        check_marks(episode)
    narrow_tau2(EPISODES)
    narrow_bfcl(EPISODES)
    work = Path(tempfile.mkdtemp(prefix="stated_probe2_"))
    counts = {d: sum(1 for e in EPISODES if e["env"] == "tau2" and e["task"].startswith(d + "/")) for d in DOMAINS}
    tau2_overrides = []
    for index, domain in enumerate(DOMAINS):
        tau2_overrides += [f"env.{index}.split={TAU2_SPLIT}", f"env.{index}.options.user=scripted",
                           f"env.{index}.num_tasks={max(1, counts[domain])}", f"env.{index}.samples_per_task=1",
                           f"env.{index}.max_steps=40"]
    records = play_episodes("tau2-grpo-data", tau2_overrides, work, EPISODES)
    n_bfcl = sum(1 for e in EPISODES if e["env"] == "bfcl")
    bfcl_overrides = [f"env.split={BFCL_SPLIT}", f"env.num_tasks={n_bfcl}", "env.samples_per_task=1",
                      "env.task_types=[base]", "env.max_steps=40"]
    records.update(play_episodes("bfcl-envtuning", bfcl_overrides, work, EPISODES))
    numbers = dict.fromkeys(LOGS, 0)
    lines: dict[str, list[str]] = {env: [] for env in LOGS}
    with open(HERE / "marks.jsonl", "w", encoding="utf-8") as marks:
        for episode in EPISODES:
            env = episode["env"]
            record = records[(env, episode["task"])]
            check_record(episode, record)
            lines[env].append(json.dumps(record) + "\n")
            numbers[env] += 1
            for index in message_steps(episode):
                turn = episode["turns"][index]
                mark = turn["mark"]
                marks.write(json.dumps({
                    "log": LOGS[env], "record": numbers[env], "step": index, "invented": mark["invented"],
                    "figure": mark["figure"], "why": mark["why"], "note": mark["note"], "episode": episode["id"],
                    "calc": turn["calc"],
                }, ensure_ascii=False) + "\n")
    for env, log in LOGS.items():
        (HERE / log).write_text("".join(lines[env]), encoding="utf-8")
    shutil.rmtree(work, ignore_errors=True)
    check_logs(HERE / "marks.jsonl")
    total = sum(len(message_steps(e)) for e in EPISODES)
    invented = sum(e["turns"][i]["mark"]["invented"] for e in EPISODES for i in message_steps(e))
    print(f"{len(EPISODES)} episodes, {total} messages, {invented} invented")


if __name__ == "__main__":
    main()
