"""The real-ALFWorld adapter: dialect detection and translation (pure), the env itself when installed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from prefbuild.envs.alfworld.env import (
    AlfworldEnv,
    data_root,
    detect_dialect,
    game_files,
    goal_of,
    task_type_from_gamefile,
    translate_admissible,
    translate_command,
    translate_feedback,
)
from prefbuild.envs.household.protocols import PROTOCOLS
from prefbuild.errors import PrefbuildError


@pytest.mark.parametrize(
    ("admissible", "observation", "dialect"),
    [
        (["go to fridge 1", "help", "inventory", "look"], None, "modern"),
        (["move apple 1 to countertop 1", "look"], None, "modern"),
        (["put apple 1 in/on countertop 1", "look"], None, "classic"),
        (["go to fridge 1", "inventory", "look"], "You arrive at loc 8. The fridge 1 is closed.", "classic"),
        (["go to fridge 1", "inventory", "look"], "You arrive at fridge 1. The fridge 1 is closed.", "modern"),
        (None, "You put the apple 1 in/on the countertop 1.", "classic"),
        (None, "You move the apple 1 to the countertop 1.", "modern"),
        (["go to fridge 1", "inventory", "look"], "You open the fridge 1.", None),
        (None, None, None),
    ],
)
def test_detect_dialect(admissible: list[str] | None, observation: str | None, dialect: str | None) -> None:
    assert detect_dialect(admissible, observation) == dialect


@pytest.mark.parametrize(
    ("classic", "modern"),
    [
        ("put apple 1 in/on countertop 1", "move apple 1 to countertop 1"),
        ("put soapbar 2 in/on bathtubbasin 1", "move soapbar 2 to bathtubbasin 1"),
        ("go to fridge 1", "go to fridge 1"),
        ("take apple 1 from countertop 1", "take apple 1 from countertop 1"),
        ("heat apple 1 with microwave 1", "heat apple 1 with microwave 1"),
    ],
)
def test_translate_command_both_ways(classic: str, modern: str) -> None:
    assert translate_command(classic, "classic", "modern") == modern
    assert translate_command(modern, "modern", "classic") == classic
    assert translate_command(classic, "classic", "classic") == classic


def test_translate_command_rejects_unknown_dialects() -> None:
    with pytest.raises(ValueError, match="unknown household dialect 'ancient'"):
        translate_command("look", "ancient", "classic")


def test_translate_admissible_sorts_and_drops_help() -> None:
    modern = ["examine countertop 1", "go to fridge 1", "help", "inventory", "look", "move apple 1 to countertop 1"]
    classic = translate_admissible(modern, "modern", "classic")
    assert classic == [
        "examine countertop 1",
        "go to fridge 1",
        "inventory",
        "look",
        "put apple 1 in/on countertop 1",
    ]
    assert translate_admissible(classic, "classic", "modern") == sorted(set(modern) - {"help"})


def test_translate_feedback() -> None:
    assert translate_feedback("You move the apple 1 to the countertop 1.", "modern", "classic") == (
        "You put the apple 1 in/on the countertop 1."
    )
    assert translate_feedback("You put the apple 1 in/on the countertop 1.", "classic", "modern") == (
        "You move the apple 1 to the countertop 1."
    )
    # modern -> classic: the location number is unknown, so the prefix goes (every harness strips it anyway).
    assert translate_feedback("You arrive at fridge 1. The fridge 1 is closed.", "modern", "classic") == (
        "The fridge 1 is closed."
    )
    assert translate_feedback(
        "You arrive at loc 4. The fridge 1 is closed.", "classic", "modern", command="go to fridge 1"
    ) == ("You arrive at fridge 1. The fridge 1 is closed.")
    assert translate_feedback("Nothing happens.", "modern", "classic") == "Nothing happens."


@pytest.mark.parametrize(
    ("path", "task_type"),
    [
        (
            "json_2.1.1/valid_unseen/pick_and_place_simple-SoapBottle-None-Toilet-424/trial_T1/game.tw-pddl",
            "pick_and_place_simple",
        ),
        ("look_at_obj_in_light-Mug-None-DeskLamp-308/trial_T2", "look_at_obj_in_light"),
        ("train/pick_two_obj_and_place-Pencil-None-Desk-310/trial_3/game.tw-pddl", "pick_two_obj_and_place"),
    ],
)
def test_task_type_from_gamefile(path: str, task_type: str) -> None:
    assert task_type_from_gamefile(path) == task_type


def _fake_data(tmp_path: Path) -> Path:
    """An ALFWORLD_DATA layout with two game files (contents are never played here)."""
    root = tmp_path / "json_2.1.1"
    for folder, goal in (
        ("pick_heat_then_place_in_recep-Apple-None-Fridge-1/trial_A", "put a hot apple in fridge"),
        ("pick_and_place_simple-Mug-None-Desk-2/trial_B", "put some mug on desk"),
    ):
        game = root / "valid_unseen" / folder
        game.mkdir(parents=True)
        grammar = f'{{"intro": ["Your task is to: {goal}."]}}'
        (game / "game.tw-pddl").write_text(f'{{"grammar": {grammar!r}, "solvable": true}}'.replace("'", '"'))
    return tmp_path


def test_tasks_come_from_the_data_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALFWORLD_DATA", str(_fake_data(tmp_path)))
    env = AlfworldEnv()
    tasks = list(env.tasks("valid_unseen", 5, 0))
    assert sorted(t.info.type for t in tasks) == ["pick_and_place_simple", "pick_heat_then_place_in_recep"]
    assert list(env.tasks("valid_unseen", 5, 0)) == tasks  # deterministic
    heat = [t for t in env.tasks("test", 5, 0, task_types=["heat"])]
    assert [t.info.id for t in heat] == ["pick_heat_then_place_in_recep-Apple-None-Fridge-1/trial_A"]
    assert goal_of(Path(heat[0].payload)) == "put a hot apple in fridge"
    assert AlfworldEnv.protocols is PROTOCOLS
    assert env.admissible_actions() is None and env.expert_action() is None
    assert not env.step("look").valid  # no game loaded: an invalid step, never an exception


def test_missing_data_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(PrefbuildError, match="no ALFWorld games"):
        data_root(tmp_path)
    (tmp_path / "json_2.1.1").mkdir()
    with pytest.raises(PrefbuildError, match="known splits"):
        game_files(tmp_path / "json_2.1.1", "nonsense")
    with pytest.raises(PrefbuildError, match=r"no game\.tw-pddl"):
        game_files(tmp_path / "json_2.1.1", "train")


def test_real_alfworld_game_plays_in_the_classic_dialect() -> None:
    pytest.importorskip("alfworld")
    pytest.importorskip("textworld")
    if not os.environ.get("ALFWORLD_DATA"):
        pytest.skip("ALFWORLD_DATA is not set")
    env = AlfworldEnv(dialect="classic")
    task = next(env.tasks("valid_unseen", 1, 0, task_types=["put"]))
    observation, _ = env.reset(task)
    assert "Your task is to: " in observation
    admissible = env.admissible_actions()
    assert admissible and "look" in admissible and "help" not in admissible
    for _ in range(60):
        action = env.expert_action()
        if action is None:
            pytest.skip("this alfworld version exposes no expert plan")
        result = env.step(action)
        assert not result.observation.startswith("You move the")
        if result.won:
            break
    assert result.won
    env.close()
