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
from tests.labelers.tool_episodes import episode_key, narrow_bfcl, narrow_tau2, play_episodes, write_labelled_set  # noqa: E402

PROBLEMS = HERE / "problems.jsonl"
LOGS = {"code": "code_runs.jsonl", "tau2": "tau2_runs.jsonl", "bfcl": "bfcl_runs.jsonl"}
MODES = {"malformed_tool_call", "unknown_tool", "invalid_arguments", "tool_error", "repeated_tool_call", "no_tool_use",
         "hallucinated_tool_output", "wrong_answer", "overlong", "loop", "premature_success", "verbose_filler",
         "format_violation", "invalid_action"}


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
    records = play_episodes("code-interpreter", [
        f"env.num_tasks={len(code)}", "env.samples_per_task=1", "env.task_types=null",
        f"env.options.data_file={PROBLEMS.relative_to(ROOT)}", "teacher.sampling.max_tokens=16384"], work, EPISODES)
    counts = {d: sum(1 for e in EPISODES if e["env"] == "tau2" and e["task"].startswith(d + "/"))
              for d in ("airline", "retail", "telecom")}
    tau2_overrides = []
    for index, domain in enumerate(("airline", "retail", "telecom")):
        tau2_overrides += [f"env.{index}.split=train", f"env.{index}.options.user=scripted",
                           f"env.{index}.num_tasks={max(1, counts[domain])}", f"env.{index}.samples_per_task=1",
                           f"env.{index}.max_steps=16"]
    records.update(play_episodes("tau2-grpo-data", tau2_overrides, work, EPISODES))
    n_bfcl = sum(1 for e in EPISODES if e["env"] == "bfcl")
    bfcl_overrides = [f"env.num_tasks={n_bfcl}", "env.samples_per_task=1",
                      "env.task_types=[base,miss_func,miss_param]", "env.max_steps=16"]
    records.update(play_episodes("bfcl-envtuning", bfcl_overrides, work, EPISODES))
    write_labelled_set(HERE, EPISODES, records, LOGS)
    shutil.rmtree(work, ignore_errors=True)
    check(HERE / "labels.jsonl")


if __name__ == "__main__":
    main()
