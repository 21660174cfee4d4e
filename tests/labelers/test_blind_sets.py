"""The blind labeler sets (tests/labelers/blind_*) are well-formed; no labeler is run here.

Checks: each set builds; the committed logs and sidecar are exactly what its builder writes from
the sources; every sidecar record names an existing line and every label an existing step of the
trajectory the real importer reads; the builder rejects bad sources with ``file:line``; the
household game reproduces the spec's worked example.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from prefbuild.io.sources import read_trajectories
from tests.labelers.blind_builder import render
from tests.labelers.blind_household import Game
from tests.labelers.strict_yaml import FixtureError

HERE = Path(__file__).parent
BUILDER = HERE / "blind_builder.py"
SETS = [
    HERE / "blind_dev",
    HERE / "blind_test",
    HERE / "blind_test2",
    HERE / "blind_test3",
    HERE / "blind_test4",
    HERE / "blind_test5",
    HERE / "blind_test6",
]
SHAPE_FORMAT = {
    "agentbench-household": "alfworld_runs.jsonl",
    "agentbench-dbbench": "dbbench_runs.jsonl",
    "react-household": "react_messages.jsonl",
}


@pytest.mark.parametrize("folder", SETS, ids=lambda folder: folder.name)
def test_built_files_are_what_the_builder_writes(folder: Path) -> None:
    for name, text in render(folder).items():
        assert (folder / name).read_text(encoding="utf-8") == text, f"{folder.name}/{name} is stale: rebuild it"


@pytest.mark.parametrize("folder", SETS, ids=lambda folder: folder.name)
def test_builder_check_passes(folder: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(BUILDER), str(folder), "--check"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"{folder.name}: ")


@pytest.mark.parametrize("folder", SETS, ids=lambda folder: folder.name)
def test_labels_point_at_existing_steps(folder: Path) -> None:
    sidecar = [json.loads(line) for line in (folder / "labels.jsonl").read_text(encoding="utf-8").splitlines()]
    trajectories = {name: list(read_trajectories(folder / name)) for name in SHAPE_FORMAT.values()}
    counts = {name: 0 for name in SHAPE_FORMAT.values()}
    for entry in sidecar:
        assert entry["log"] == SHAPE_FORMAT[entry["shape"]]
        counts[entry["log"]] += 1
        assert entry["record"] == counts[entry["log"]], f"{entry['id']}: records are numbered in file order"
        steps = trajectories[entry["log"]][entry["record"] - 1].steps
        assert len(steps) == _agent_turns(folder / entry["log"], entry["record"]), f"{entry['id']}: step count"
        for label in entry["labels"]:
            assert 0 <= label["step"] < len(steps), f"{entry['id']}: no step {label['step']}"
    assert counts == {name: len(records) for name, records in trajectories.items()}


def _agent_turns(log: Path, record: int) -> int:
    """The number of agent turns of a built record: the steps the sidecar indexes (heldout README)."""
    line = json.loads(log.read_text(encoding="utf-8").splitlines()[record - 1])
    if "messages" in line:
        return sum(1 for message in line["messages"] if message["role"] == "assistant")
    if "log" in line["output"]["result"]:
        return len(line["output"]["result"]["log"])
    return sum(1 for turn in line["output"]["history"][3:] if turn["role"] == "agent")


def test_sets_are_disjoint_and_split_about_forty_sixty() -> None:
    ids = [
        [json.loads(line)["id"] for line in (folder / "labels.jsonl").read_text(encoding="utf-8").splitlines()]
        for folder in SETS
    ]
    for position, first in enumerate(ids):
        for second in ids[position + 1 :]:
            assert not set(first) & set(second)
    assert 0.3 <= len(ids[0]) / (len(ids[0]) + len(ids[1])) <= 0.5


EPISODE = """episodes:
- id: tiny
  room: [countertop 1, fridge 1]
  contents:
    countertop 1: [apple 1]
  goal: put some apple on fridge
  status: agent context limit
  expect: {EXPECT}
  steps:
  - a: go to countertop 1
  - a: {ACTION}
"""


def _write_set(
    folder: Path, expect: str = "{}", action: str = "take apple 1 from countertop 1", extra: str = ""
) -> Path:
    folder.mkdir()
    text = EPISODE.replace("{EXPECT}", expect).replace("{ACTION}", action) + extra
    (folder / "alfworld.yaml").write_text(text, encoding="utf-8")
    (folder / "dbbench.yaml").write_text("episodes: []\n", encoding="utf-8")
    (folder / "react.yaml").write_text("episodes: []\n", encoding="utf-8")
    return folder


def test_builder_accepts_a_tiny_valid_set(tmp_path: Path) -> None:
    texts = render(_write_set(tmp_path / "ok", expect="{loop: [1]}"))
    record = json.loads(texts["alfworld_runs.jsonl"])
    assert [step["observation"] for step in record["output"]["result"]["log"]] == [
        "On the countertop 1, you see a apple 1.",
        "You pick up the apple 1 from the countertop 1.",
    ]
    assert json.loads(texts["labels.jsonl"])["labels"] == [{"step": 1, "mode": "loop"}]


@pytest.mark.parametrize(
    ("expect", "action", "extra", "message"),
    [
        ("{not_a_mode: [0]}", "take apple 1 from countertop 1", "", "expect.not_a_mode: unknown mode"),
        ("{loop: [2]}", "take apple 1 from countertop 1", "", "expect.loop: no step 2"),
        ("{}", "take pear 1 from countertop 1", "", "is not admissible; write AgentBench's snap as x"),
        ("{}", "take apple 1 from countertop 1", "  colour: red\n", "colour"),
    ],
    ids=["bad-mode", "step-past-end", "inadmissible-without-snap", "unknown-key"],
)
def test_builder_rejects_bad_sources_with_file_and_line(
    tmp_path: Path, expect: str, action: str, extra: str, message: str
) -> None:
    folder = _write_set(tmp_path / "bad", expect=expect, action=action, extra=extra)
    with pytest.raises(FixtureError) as caught:
        render(folder)
    assert f"{folder / 'alfworld.yaml'}:" in str(caught.value)
    assert message in str(caught.value)


def _run_main(folder: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    code = (
        f"import sys; sys.path.insert(0, {str(HERE.parents[1])!r}); from pathlib import Path; "
        f"from tests.labelers.blind_builder import main; main(Path({str(folder)!r}), {list(arguments)!r})"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)


def test_build_reports_a_bad_source_in_one_line(tmp_path: Path) -> None:
    folder = _write_set(tmp_path / "bad", expect="{loop: [5]}")
    result = _run_main(folder)
    assert result.returncode == 1
    assert result.stderr.startswith(f"error: {folder / 'alfworld.yaml'}:")
    assert "Traceback" not in result.stderr
    assert not (folder / "labels.jsonl").exists()


def test_build_check_fails_on_stale_files(tmp_path: Path) -> None:
    folder = _write_set(tmp_path / "stale")
    assert _run_main(folder).returncode == 0
    assert _run_main(folder, "--check").returncode == 0
    (folder / "labels.jsonl").write_text("{}\n", encoding="utf-8")
    result = _run_main(folder, "--check")
    assert result.returncode == 1
    assert "labels.jsonl" in result.stderr


def test_game_reproduces_the_spec_worked_example() -> None:
    room = [
        "cabinet 1",
        "cabinet 2",
        "cabinet 3",
        "countertop 1",
        "diningtable 1",
        "drawer 1",
        "fridge 1",
        "microwave 1",
        "sidetable 1",
        "sinkbasin 1",
    ]
    contents = {"countertop 1": ["apple 1", "mug 1", "sink 1"], "diningtable 1": ["houseplant 1", "knife 1"]}
    game = Game(room, contents, "heat some apple and put it in diningtable")
    assert game.step("go to countertop 1") == "On the countertop 1, you see a apple 1, a mug 1, and a sink 1."
    assert game.admissible() == sorted(
        ["examine countertop 1", "inventory", "look", "take apple 1 from countertop 1", "take mug 1 from countertop 1"]
        + [f"go to {place}" for place in room if place != "countertop 1"]
    )
    assert game.step("take apple 1 from countertop 1") == "You pick up the apple 1 from the countertop 1."
    assert game.step("go to microwave 1") == "The microwave 1 is closed."
    assert "heat apple 1 with microwave 1" in game.admissible()
    assert game.step("heat apple 1 with microwave 1") == "You heat the apple 1 using the microwave 1."
    assert game.step("Go to diningtable 1") == "Nothing happens."
    assert game.step("go to diningtable 1") == "On the diningtable 1, you see a houseplant 1, and a knife 1."
    assert not game.won()
    assert game.step("put apple 1 in/on diningtable 1") == "You put the apple 1 in/on the diningtable 1."
    assert game.won()
