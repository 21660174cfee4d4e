"""Shared test support for the household env: the spec's worked-example scene, transcripts, and an
independent, naive implementation of the admissible-command rules of spec section 6."""

from __future__ import annotations

from prefbuild.envs.household import catalog
from prefbuild.envs.household.engine import Engine
from prefbuild.envs.household.expert import expert_action
from prefbuild.envs.household.scene import Receptacle, Scene, SceneObject
from prefbuild.envs.household.tasks import Goal, HouseholdTask


def worked_example_scene() -> Scene:
    """The kitchen of spec section 5.1 (cabinet 2 and cabinet 3 share loc 10)."""
    r, o = Receptacle, SceneObject
    return Scene(
        "kitchen",
        999,
        (
            r("cabinet", 1, True, 9), r("cabinet", 2, True, 10), r("cabinet", 3, True, 10),
            r("countertop", 1, False, 8), r("diningtable", 1, False, 4), r("drawer", 1, True, 2),
            r("fridge", 1, True, 3), r("microwave", 1, True, 6), r("sidetable", 1, False, 5),
            r("sinkbasin", 1, False, 7),
        ),
        (
            o("apple", 1, "countertop 1"), o("mug", 1, "countertop 1"), o("sink", 1, "countertop 1"),
            o("houseplant", 1, "diningtable 1"), o("knife", 1, "diningtable 1"), o("mug", 2, "cabinet 3"),
        ),
    )  # fmt: skip


WORKED_EXAMPLE_GOAL = Goal("pick_heat_then_place_in_recep", "apple", "diningtable", None, template=1)


def worked_example_task() -> HouseholdTask:
    return HouseholdTask(scene=worked_example_scene(), goal=WORKED_EXAMPLE_GOAL, split="custom", seed=0, index=0)


def transcript(task: HouseholdTask, dialect: str, kind: str = "searching", limit: int = 200) -> str:
    """A golden-transcript text: intro, a few probing commands, then the expert until the win,
    with the sorted admissible list after every step."""
    engine = Engine(task.scene, task.goal, dialect)
    lines = [f"# {task.id} {task.goal.task_type} dialect={dialect} expert={kind}", engine.intro(raw=True)]
    lines.append("admissible: " + " | ".join(engine.admissible()))
    probes = ["look", "inventory", "Look", "take nothing 1 from nowhere 1"]
    if dialect == "modern":
        probes.append("help")
    commands: list[str] = list(probes)
    steps = 0
    while steps < limit:
        command = commands.pop(0) if commands else expert_action(engine, kind)
        if command is None:
            break
        observation, valid = engine.step(command)
        lines.append(f"> {command}")
        lines.append(observation)
        lines.append(f"valid={valid} won={engine.won}")
        lines.append("admissible: " + " | ".join(engine.admissible()))
        steps += 1
        if engine.won:
            break
    return "\n".join(lines) + "\n"


def naive_admissible(engine: Engine) -> list[str]:
    """Spec section 6, written out directly from the engine's public views and the catalog."""
    scene = engine.c.scene
    receptacles = {r.name: r for r in scene.receptacles}
    types = {o.name: o.type for o in scene.objects}
    here = set(engine.here())
    held = engine.holding()
    commands: set[str] = set()
    for name, recep in receptacles.items():
        if name not in here:
            commands.add(f"go to {name}")
            continue
        commands.add(f"examine {name}")
        if recep.openable:
            commands.add(f"close {name}" if engine.is_open(name) else f"open {name}")
        visible = not recep.openable or engine.is_open(name)
        for obj in engine.contents_of(name):
            if held is None and visible and types[obj] in catalog.PICKUPABLE:
                commands.add(f"take {obj} from {name}")
            if types[obj] in catalog.TOGGLEABLE:
                commands.add(f"use {obj}")
        if held is not None:
            held_type = types[held]
            if visible and held_type in catalog.CAN_CONTAIN[recep.type]:
                commands.add(f"move {held} to {name}" if engine.modern else f"put {held} in/on {name}")
            if recep.type == "microwave" and held_type in catalog.HEATABLE:
                commands.add(f"heat {held} with {name}")
            if recep.type == "fridge" and held_type in catalog.COOLABLE:
                commands.add(f"cool {held} with {name}")
            if recep.type == "sinkbasin" and held_type in catalog.CLEANABLE:
                commands.add(f"clean {held} with {name}")
            if held_type in ("knife", "butterknife"):
                for obj in engine.contents_of(name):
                    if types[obj] in catalog.SLICEABLE:
                        commands.add(f"slice {obj} with {held}")
    if held is not None:
        commands.add(f"examine {held}")
    commands.update({"inventory", "look"})
    if engine.modern:
        commands.add("help")
    return sorted(commands)


def candidate_commands(engine: Engine) -> list[str]:
    """Every well-formed command over the scene's names (admissible or not), for rejection checks."""
    scene = engine.c.scene
    receps = [r.name for r in scene.receptacles]
    objs = [o.name for o in scene.objects]
    out = ["inventory", "look", "help", "look around", "inventory now"]
    for r in receps:
        out += [f"go to {r}", f"open {r}", f"close {r}", f"examine {r}"]
        for o in objs:
            out += [f"take {o} from {r}", f"put {o} in/on {r}", f"move {o} to {r}"]
            out += [f"heat {o} with {r}", f"cool {o} with {r}", f"clean {o} with {r}"]
    for o in objs:
        out += [f"examine {o}", f"use {o}"]
        out += [f"slice {o} with {k}" for k in objs if k.startswith(("knife", "butterknife"))]
    return out


def check_invariants(engine: Engine) -> None:
    """At most one held object; every object in exactly one place; ``where`` matches ``contents``."""
    places: dict[int, list[str]] = {}
    for r, contents in enumerate(engine.contents):
        for o in contents:
            places.setdefault(o, []).append(f"r{r}")
    if engine.held >= 0:
        places.setdefault(engine.held, []).append("hand")
    assert sorted(places) == list(range(len(engine.c.o_name))), "an object is nowhere"
    for o, where in places.items():
        assert len(where) == 1, f"{engine.c.o_name[o]} is in several places: {where}"
        expected = "hand" if engine.where[o] == -1 else f"r{engine.where[o]}"
        assert where[0] == expected
    assert sum(1 for w in engine.where if w == -1) == (1 if engine.held >= 0 else 0)
