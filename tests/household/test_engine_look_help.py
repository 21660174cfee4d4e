"""Golden text from the spec (/work/shared/spec/alfworld.md, section 5) for two engine quirks:
``look`` lists an object moved between receptacles that share a location, and the modern
``help`` text starts with ``Available commands:`` (no blank line before it)."""

from __future__ import annotations

from prefbuild.envs.household.engine import Engine
from prefbuild.envs.household.scene import Receptacle, Scene, SceneObject
from prefbuild.envs.household.tasks import Goal

GOAL = Goal("pick_and_place_simple", "watch", "sidetable")


def bedroom() -> Scene:
    r, o = Receptacle, SceneObject
    return Scene(
        "bedroom", 998,
        (r("drawer", 1, True, 2), r("drawer", 2, True, 2), r("drawer", 3, True, 2), r("sidetable", 1, False, 3),
         r("dresser", 1, False, 4)),
        (o("watch", 1, "dresser 1"), o("watch", 2, "drawer 1"), o("cellphone", 1, "dresser 1"),
         o("cellphone", 2, "dresser 1"), o("cellphone", 3, "drawer 1")),
    )  # fmt: skip


def play(engine: Engine, commands: list[str]) -> list[str]:
    observations = []
    for command in commands:
        observation, accepted = engine.step(command)
        assert accepted, (command, observation)
        observations.append(observation)
    return observations


def test_look_lists_an_object_moved_between_receptacles_of_one_location() -> None:
    """The spec's own example: take watch 2 from drawer 1, put it in drawer 2, look."""
    engine = Engine(bedroom(), GOAL)
    play(engine, ["go to drawer 1", "open drawer 1", "take watch 2 from drawer 1", "open drawer 2"])
    assert engine.step("look")[0] == "You are facing the drawer 3, drawer 2, and drawer 1. Next to it, you see nothing."
    play(engine, ["put watch 2 in/on drawer 2"])
    assert engine.step("look")[0] == (
        "You are facing the drawer 3, drawer 2, and drawer 1. Next to it, you see a watch 2."
    )
    # Put back into the receptacle it was taken from: the fact is cleared.
    play(engine, ["take watch 2 from drawer 2", "put watch 2 in/on drawer 1"])
    assert engine.step("look")[0] == (
        "You are facing the drawer 3, drawer 2, and drawer 1. Next to it, you see a watch 2."
    )  # still "not in drawer 2": taken from it, not put back into it
    play(engine, ["take watch 2 from drawer 1", "put watch 2 in/on drawer 2"])
    assert engine.step("look")[0].endswith("Next to it, you see a watch 2.")  # not in drawer 1 again


def test_look_lists_duplicates_once_per_receptacle_taken_from() -> None:
    engine = Engine(bedroom(), GOAL)
    play(engine, ["go to drawer 1", "open drawer 1", "open drawer 2", "open drawer 3",
                  "take cellphone 3 from drawer 1", "put cellphone 3 in/on drawer 2",
                  "take cellphone 3 from drawer 2", "put cellphone 3 in/on drawer 3"])
    assert engine.step("look")[0] == (
        "You are facing the drawer 3, drawer 2, and drawer 1. Next to it, you see a cellphone 3, and a cellphone 3."
    )


def test_look_lists_nothing_for_a_held_object_or_a_single_receptacle_location() -> None:
    engine = Engine(bedroom(), GOAL)
    play(engine, ["go to drawer 1", "open drawer 1", "take watch 2 from drawer 1"])
    assert engine.step("look")[0].endswith("Next to it, you see nothing.")  # held, not lying here
    play(engine, ["go to sidetable 1", "put watch 2 in/on sidetable 1"])
    assert engine.step("look")[0] == "You are facing the sidetable 1. Next to it, you see nothing."


def test_look_after_a_snapshot_restore_forgets_later_moves() -> None:
    engine = Engine(bedroom(), GOAL)
    play(engine, ["go to drawer 1", "open drawer 1", "open drawer 2"])
    saved = engine.snapshot()
    play(engine, ["take watch 2 from drawer 1", "put watch 2 in/on drawer 2"])
    engine.restore(saved)
    assert engine.step("look")[0].endswith("Next to it, you see nothing.")


def test_modern_help_starts_with_available_commands_and_ends_with_a_newline() -> None:
    engine = Engine(bedroom(), GOAL, dialect="modern")
    text, accepted = engine.step("help")
    assert accepted
    assert text.startswith("Available commands:\n  look:")
    assert text.endswith("\n") and not text.startswith("\n")
