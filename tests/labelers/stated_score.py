"""Score ``hallucinated_tool_output``'s stated rule on a probe set: per message to the person, whether it
was marked invented and whether the deployed labeler says "the message states ...".

    PYTHONPATH=. .venv/bin/python -m tests.labelers.stated_score tests/labelers/stated_probe

A probe folder holds ``marks.jsonl`` (one line per message: ``log``, ``record`` (1-based line of the log)
and ``step``, or ``id`` and ``step`` with the episodes of ``episodes.py`` in ``tau2_runs.jsonl``'s order;
``invented``: the invented figures, empty or false for a clean message) and the played logs. Marks are checked
strictly: each must point at a played step that is a message (no tool call).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prefbuild.io.sources import read_trajectories
from prefbuild.labelers import build_labelers, label_trajectory
from prefbuild.labelers.evaluation import ModeScore
from prefbuild.labelers.service_success import is_message
from prefbuild.records import Trajectory

STATED = "the message states"


@dataclass
class StatedScore(ModeScore):
    """Message-level counts (``ModeScore``'s precision and recall), and how many messages were read."""

    messages: int = 0


def _marked(folder: Path) -> list[tuple[Trajectory, int, dict[str, Any]]]:
    """(trajectory, step, mark) for every line of the folder's marks, validated."""
    marks = [json.loads(line) for line in (folder / "marks.jsonl").read_text(encoding="utf-8").splitlines()]
    logs: dict[str, list[Trajectory]] = {}

    def log(name: str) -> list[Trajectory]:
        if name not in logs:
            logs[name] = list(read_trajectories(folder / name))
        return logs[name]

    by_id: dict[str, Trajectory] = {}
    if any("id" in mark for mark in marks):
        sys.path.insert(0, str(folder))
        try:
            from episodes import EPISODES  # the folder's own episodes, in the order its log was played
        finally:
            sys.path.remove(str(folder))
            sys.modules.pop("episodes", None)
        played = log("tau2_runs.jsonl")
        if len(played) != len(EPISODES):
            raise ValueError(f"{folder}: {len(EPISODES)} episodes but {len(played)} played trajectories")
        by_id = {episode["id"]: trajectory for episode, trajectory in zip(EPISODES, played, strict=True)}
    found = []
    for number, mark in enumerate(marks, 1):
        where = f"{folder / 'marks.jsonl'}:{number}"
        if not isinstance(mark.get("invented"), list | bool):
            raise ValueError(f"{where}: 'invented' must be a list of figures or a bool")
        trajectory = by_id[mark["id"]] if "id" in mark else log(mark["log"])[mark["record"] - 1]
        step = mark["step"]
        if not 0 <= step < len(trajectory.steps) or not is_message(trajectory.steps[step]):
            raise ValueError(f"{where}: step {step} of {trajectory.id} is not a message to the person")
        found.append((trajectory, step, mark))
    return found


def score(folder: Path) -> StatedScore:
    """The stated rule, as deployed (default params), scored on the probe ``folder``."""
    result = StatedScore()
    labelled: dict[int, Trajectory] = {}
    for trajectory, index, mark in _marked(folder):
        key = id(trajectory)
        if key not in labelled:
            labelers = build_labelers([{"name": "hallucinated_tool_output"}], env=trajectory.env.name)
            labelled[key] = label_trajectory(trajectory, labelers)
        said = [label.evidence for label in labelled[key].steps[index].labels if label.evidence.startswith(STATED)]
        invented = bool(mark["invented"])
        result.messages += 1
        where = f"{mark.get('id') or trajectory.id} step {index}"
        if said and invented:
            result.tp += 1
        elif said:
            result.fp += 1
            result.misses.append(f"FP {where}: {said[0]}")
        elif invented:
            result.fn += 1
            result.misses.append(f"FN {where}: marked {mark['invented']}")
    return result


def main() -> None:
    for name in sys.argv[1:]:
        result = score(Path(name))
        print(f"{name}: {result.messages} messages, TP {result.tp} FP {result.fp} FN {result.fn}, "
              f"P {result.precision} R {result.recall}")
        for miss in result.misses:
            print("  " + miss)


if __name__ == "__main__":
    main()
