"""Golden transcripts: one game per task type and dialect, played by the searching expert after a
few probing commands, compared byte for byte with ``tests/household/golden/``.

Regenerate after an intended change with ``PREFBUILD_UPDATE_GOLDEN=1 pytest tests/household/test_golden.py``
and review the diff: the files are the reference for the exact game text.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from prefbuild.envs.household.catalog import TASK_TYPE_NAMES
from prefbuild.envs.household.tasks import generate_task
from tests.household.support import transcript, worked_example_task

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("PREFBUILD_UPDATE_GOLDEN") == "1"


def _check(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.write_text(text)
    assert path.exists(), f"missing golden file {path}; run with PREFBUILD_UPDATE_GOLDEN=1 to create it"
    assert text == path.read_text(), f"transcript differs from {path}"


@pytest.mark.parametrize("dialect", ["classic", "modern"])
@pytest.mark.parametrize("position", range(len(TASK_TYPE_NAMES)))
def test_golden_transcript(position: int, dialect: str) -> None:
    # Global index ``position`` has task type TASK_TYPE_NAMES[position]; seed 11 gives varied rooms.
    task = generate_task("train", 11, position)
    assert task.goal.task_type == TASK_TYPE_NAMES[position]
    text = transcript(task, dialect)
    assert "won=True" in text.splitlines()[-2]
    _check(f"{TASK_TYPE_NAMES[position]}.{dialect}.txt", text)


@pytest.mark.parametrize("dialect", ["classic", "modern"])
def test_golden_worked_example_oracle(dialect: str) -> None:
    text = transcript(worked_example_task(), dialect, kind="oracle")
    _check(f"worked_example.{dialect}.txt", text)
