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

from tests.labelers.tool_episodes import episode_key, narrow_bfcl, narrow_tau2, play_episodes, write_labelled_set  # noqa: E402


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
    records = play_episodes("tau2-grpo-data", tau2_overrides, work, EPISODES)
    n_bfcl = sum(1 for e in EPISODES if e["env"] == "bfcl")
    bfcl_overrides = [f"env.num_tasks={n_bfcl}", "env.samples_per_task=1",
                      "env.task_types=[base,miss_func,miss_param]", "env.max_steps=12"]
    records.update(play_episodes("bfcl-envtuning", bfcl_overrides, work, EPISODES))
    write_labelled_set(HERE, EPISODES, records, {"tau2": "tau2_runs.jsonl", "bfcl": "bfcl_runs.jsonl"})
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
