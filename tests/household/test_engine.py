"""Engine text and rules against the spec: the worked example (5.1) character for character,
the quirks of section 4, the examine rules of section 5, and the modern dialect."""

from __future__ import annotations

from pathlib import Path

import pytest

from prefbuild.envs.household.engine import Engine, join_list, strip_arrival_prefix
from prefbuild.envs.household.scene import Receptacle, Scene, SceneObject
from prefbuild.envs.household.tasks import Goal
from tests.household.support import WORKED_EXAMPLE_GOAL, naive_admissible, worked_example_scene

GOLDEN = Path(__file__).parent / "golden"


def play(engine: Engine, commands: list[str]) -> list[str]:
    return [engine.step(c)[0] for c in commands]


def parse_worked_example() -> list[tuple[str, str, str]]:
    """(command, observation, admissible line or "") from the hand-written spec transcript."""
    steps: list[tuple[str, str, str]] = []
    lines = (GOLDEN / "spec_5_1.txt").read_text().splitlines()
    for i, line in enumerate(lines):
        if line.startswith("> "):
            after = lines[i + 2] if i + 2 < len(lines) and lines[i + 2].startswith("admissible") else ""
            steps.append((line[2:], lines[i + 1], after))
    return steps


def test_worked_example_matches_spec_exactly() -> None:
    engine = Engine(worked_example_scene(), WORKED_EXAMPLE_GOAL)
    steps = parse_worked_example()
    assert len(steps) == 6
    checked = 0
    for command, observation, admissible in steps:
        assert not engine.won
        assert engine.step(command) == (observation, True), command
        shown = engine.admissible()
        if admissible.startswith("admissible: "):
            assert " | ".join(shown) == admissible.removeprefix("admissible: "), command
            checked += 1
        elif admissible.startswith("admissible-non-goto: "):
            rest = [c for c in shown if not c.startswith("go to ")]
            assert " | ".join(rest) == admissible.removeprefix("admissible-non-goto: "), command
            assert len(shown) - len(rest) == 9  # every other receptacle of the ten
            checked += 1
    assert checked == 3
    assert engine.won


def test_worked_example_shared_location() -> None:
    engine = Engine(worked_example_scene(), WORKED_EXAMPLE_GOAL)
    assert engine.step("go to cabinet 2") == ("You arrive at loc 10. The cabinet 2 is closed.", True)
    admissible = engine.admissible()
    assert {"examine cabinet 2", "examine cabinet 3", "open cabinet 2", "open cabinet 3"} <= set(admissible)
    assert "go to cabinet 3" not in admissible and "go to cabinet 2" not in admissible
    assert engine.step("open cabinet 3") == (
        "You open the cabinet 3. The cabinet 3 is open. In it, you see a mug 2.",
        True,
    )
    admissible = engine.admissible()
    assert {"close cabinet 3", "open cabinet 2", "take mug 2 from cabinet 3"} <= set(admissible)
    assert engine.step("look")[0] == "You are facing the cabinet 3, and cabinet 2. Next to it, you see nothing."


def test_intro_forms() -> None:
    engine = Engine(worked_example_scene(), WORKED_EXAMPLE_GOAL)
    look = (
        "You are in the middle of a room. Looking quickly around you, you see a cabinet 3, a cabinet 2, a cabinet 1, "
        "a countertop 1, a diningtable 1, a drawer 1, a fridge 1, a microwave 1, a sidetable 1, and a sinkbasin 1."
    )
    task = "Your task is to: heat some apple and put it in diningtable."
    assert engine.intro(raw=True) == f"-= Welcome to TextWorld, ALFRED! =-\n\n{look}\n\n{task}"
    assert engine.intro() == f"{look}\n{task}"
    assert engine.intro() == "\n".join(engine.intro(raw=True).split("\n\n")[1:])  # ReAct's post-processing
    assert engine.admissible() == [*sorted(f"go to {n}" for n in engine.c.r_name), "inventory", "look"]
    assert engine.step("look")[0] == "You are in the middle of a room. Looking quickly around you, you see nothing."


def test_invalid_commands_change_nothing() -> None:
    engine = Engine(worked_example_scene(), WORKED_EXAMPLE_GOAL)
    engine.step("go to countertop 1")
    before = engine.snapshot().values
    for command in (
        "Go to fridge 1", "go to countertop 1", "take apple 1 from fridge 1", "examine apple 1",
        "take sink 1 from countertop 1", "put apple 1 in/on countertop 1", "move apple 1 to countertop 1", "help",
        "go to  fridge 1", "go to fridge 10",
        "take apple 1 from countertop 1 please", "", "   ", "open countertop 1", "heat apple 1 with microwave 1",
    ):  # fmt: skip
        assert engine.step(command) == ("Nothing happens.", False), command
    assert engine.snapshot().values == before
    assert engine.step("  take apple 1 from countertop 1 ") == ("You pick up the apple 1 from the countertop 1.", True)


def test_take_needs_empty_hand_and_put_needs_visible_receptacle() -> None:
    engine = Engine(worked_example_scene(), WORKED_EXAMPLE_GOAL)
    play(engine, ["go to countertop 1", "take apple 1 from countertop 1"])
    assert not any(c.startswith("take ") for c in engine.admissible())
    assert engine.step("take mug 1 from countertop 1") == ("Nothing happens.", False)
    play(engine, ["go to fridge 1"])
    assert "put apple 1 in/on fridge 1" not in engine.admissible()
    assert engine.step("put apple 1 in/on fridge 1")[1] is False
    assert engine.step("cool apple 1 with fridge 1") == ("You cool the apple 1 using the fridge 1.", True)
    assert engine.step("open fridge 1") == (
        "You open the fridge 1. The fridge 1 is open. In it, you see nothing.",
        True,
    )
    assert engine.step("put apple 1 in/on fridge 1") == ("You put the apple 1 in/on the fridge 1.", True)
    assert engine.step("inventory")[0] == "You are not carrying anything."
    assert engine.step("close fridge 1") == ("You close the fridge 1.", True)
    assert engine.step("examine fridge 1") == ("The fridge 1 is closed.", True)


def test_heat_cool_clean_states_and_examine_texts() -> None:
    engine = Engine(worked_example_scene(), WORKED_EXAMPLE_GOAL)
    play(engine, ["go to countertop 1", "take apple 1 from countertop 1"])
    assert engine.step("examine apple 1")[0] == "There's nothing special about apple 1."
    assert engine.step("inventory")[0] == "You are carrying: a apple 1."
    play(engine, ["go to microwave 1", "heat apple 1 with microwave 1"])
    assert engine.step("examine apple 1")[0] == "This is a hot apple 1."
    assert engine.step("heat apple 1 with microwave 1")[1] is True  # repeatable, appliance stays closed
    play(engine, ["go to fridge 1", "cool apple 1 with fridge 1"])
    assert engine.object_flags("apple 1")["isHot"] is False
    assert engine.step("examine apple 1")[0] == "This is a cold apple 1."
    play(engine, ["go to sinkbasin 1", "clean apple 1 with sinkbasin 1"])
    assert engine.step("examine apple 1")[0] == "This is a cool and clean apple 1."
    play(engine, ["go to microwave 1", "heat apple 1 with microwave 1"])
    assert engine.step("examine apple 1")[0] == "This is a hot and clean apple 1."


def test_examine_container_wins_and_slicing() -> None:
    engine = Engine(worked_example_scene(), WORKED_EXAMPLE_GOAL)
    play(
        engine,
        ["go to countertop 1", "take mug 1 from countertop 1", "go to microwave 1", "heat mug 1 with microwave 1"],
    )
    assert engine.step("examine mug 1")[0] == "This is a normal mug 1. In it, you see nothing."
    play(
        engine,
        [
            "go to countertop 1",
            "put mug 1 in/on countertop 1",
            "go to diningtable 1",
            "take knife 1 from diningtable 1",
        ],
    )
    play(engine, ["go to countertop 1"])
    assert "slice apple 1 with knife 1" in engine.admissible()
    assert engine.step("slice apple 1 with knife 1") == ("You sliced the apple 1 with the knife 1.", True)
    play(engine, ["put knife 1 in/on countertop 1", "take apple 1 from countertop 1"])
    assert engine.step("examine apple 1")[0] == "This is a sliced apple 1."


def test_clean_needs_sinkbasin_not_bathtub_and_lamp_use() -> None:
    r, o = Receptacle, SceneObject
    scene = Scene(
        "bathroom",
        998,
        (
            r("bathtubbasin", 1, False, 1),
            r("sidetable", 1, False, 2),
            r("sinkbasin", 1, False, 3),
            r("drawer", 1, True, 4),
        ),
        (o("cloth", 1, "bathtubbasin 1"), o("floorlamp", 1, "sidetable 1"), o("desklamp", 1, "drawer 1")),
    )
    engine = Engine(scene, Goal("look_at_obj_in_light", "cloth", None, "floorlamp"))
    play(engine, ["go to bathtubbasin 1", "take cloth 1 from bathtubbasin 1"])
    assert not any(c.startswith("clean ") for c in engine.admissible())
    play(engine, ["go to drawer 1"])
    assert "use desklamp 1" in engine.admissible()  # open/closed state is not checked
    play(engine, ["go to sidetable 1"])
    assert not engine.won
    assert engine.step("use floorlamp 1") == ("You turn on the floorlamp 1.", True)
    assert engine.won
    assert engine.step("use floorlamp 1") == ("You turn on the floorlamp 1.", True)


def test_modern_dialect() -> None:
    engine = Engine(worked_example_scene(), WORKED_EXAMPLE_GOAL, dialect="modern")
    assert "help" in engine.admissible()
    assert engine.step("help")[0].startswith("Available commands:\n  look:")  # spec 5: no blank line first
    assert engine.step("go to countertop 1")[0] == (
        "You arrive at countertop 1. On the countertop 1, you see a apple 1, a mug 1, and a sink 1."
    )
    engine.step("take apple 1 from countertop 1")
    assert "move apple 1 to countertop 1" in engine.admissible()
    assert engine.step("put apple 1 in/on countertop 1") == ("Nothing happens.", False)
    assert engine.step("move apple 1 to countertop 1") == ("You move the apple 1 to the countertop 1.", True)
    assert engine.admissible() == naive_admissible(engine)


def test_list_joining() -> None:
    assert join_list([]) == "nothing"
    assert join_list(["a x 1"]) == "a x 1"
    assert join_list(["a soapbar 4", "a soapbar 3"]) == "a soapbar 4, and a soapbar 3"
    assert join_list(["a", "b", "c"]) == "a, b, and c"
    assert strip_arrival_prefix("You arrive at loc 8. On the countertop 1, you see nothing.") == (
        "On the countertop 1, you see nothing."
    )
    assert strip_arrival_prefix("You arrive at countertop 1. X.") == "You arrive at countertop 1. X."


def test_listing_order_type_then_number_descending() -> None:
    r, o = Receptacle, SceneObject
    scene = Scene(
        "kitchen",
        997,
        (r("countertop", 1, False, 1),),
        (
            o("potato", 2, "countertop 1"), o("cup", 3, "countertop 1"), o("egg", 2, "countertop 1"),
            o("potato", 3, "countertop 1"), o("cup", 1, "countertop 1"), o("cup", 2, "countertop 1"),
            o("egg", 1, "countertop 1"), o("potato", 1, "countertop 1"),
        ),
    )  # fmt: skip
    engine = Engine(scene, Goal("pick_and_place_simple", "cup", "countertop"))
    assert engine.step("go to countertop 1")[0] == (
        "You arrive at loc 1. On the countertop 1, you see a cup 3, a cup 2, a cup 1, a egg 2, a egg 1, "
        "a potato 3, a potato 2, and a potato 1."
    )


def test_invalid_scene_is_rejected() -> None:
    with pytest.raises(ValueError, match="cannot be in"):
        Scene("kitchen", 1, (Receptacle("toaster", 1, False, 1),), (SceneObject("apple", 1, "toaster 1"),))
    with pytest.raises(ValueError, match="numbered"):
        Scene("kitchen", 1, (Receptacle("cabinet", 2, True, 1),))
