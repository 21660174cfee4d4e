"""Task generation: ``(seed, split, index)`` -> one solvable, not-yet-won household task.

Global index ``i`` always has task type ``TASK_TYPES[i % 6]`` and its own random stream, so a
task never depends on ``n`` or on the task-type filter: ``household/train/s3/000017`` is the
same game in every run. ``valid_unseen`` draws its floor plans from a held-out set
(``scene.scene_numbers(room, unseen=True)``) that ``train`` and ``valid_seen`` never use.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from prefbuild.envs.household import catalog
from prefbuild.envs.household.scene import (
    Receptacle,
    Scene,
    SceneObject,
    TargetRule,
    layout,
    place_objects,
    receptacles_plainly_valid,
    scene_numbers,
)

SPLITS: tuple[str, ...] = ("train", "valid_seen", "valid_unseen")
_MAX_ATTEMPTS = 200


@dataclass(frozen=True)
class Goal:
    """What the agent must achieve; ``receptacle_type`` is None for look tasks, ``toggle_type`` otherwise."""

    task_type: str
    object_type: str
    receptacle_type: str | None = None
    toggle_type: str | None = None
    template: int = 0

    @property
    def spec(self) -> catalog.TaskTypeSpec:
        return catalog.TASK_TYPE_BY_NAME[self.task_type]

    @property
    def state(self) -> str | None:
        """``clean`` / ``hot`` / ``cool`` for the state tasks, else None."""
        return self.spec.state

    @property
    def sentence(self) -> str:
        """The goal as the game prints it after ``Your task is to: `` (without the final period)."""
        return self.spec.templates[self.template].format(
            obj=self.object_type, recep=self.receptacle_type or "", toggle=self.toggle_type or ""
        )


@dataclass(frozen=True)
class HouseholdTask:
    """A scene plus a goal: the payload of the household env's ``EnvTask``."""

    scene: Scene
    goal: Goal
    split: str = "custom"
    seed: int | None = None
    index: int = 0

    @property
    def id(self) -> str:
        return f"household/{self.split}/s{self.seed}/{self.index:06d}"

    @property
    def folder(self) -> str:
        """ALFWorld-style folder name with lower-case types: ``pick_and_place_simple-soapbottle-None-toilet-424``."""
        parent = self.goal.receptacle_type or self.goal.toggle_type
        return f"{self.goal.task_type}-{self.goal.object_type}-None-{parent}-{self.scene.scene_number}"


def resolve_task_types(task_types: Sequence[str] | None) -> tuple[str, ...]:
    """Internal names for ``task_types`` (any alias ``task_type_spec`` accepts); all six when None/empty."""
    if not task_types:
        return catalog.TASK_TYPE_NAMES
    names = {catalog.task_type_spec(t).name for t in task_types}
    return tuple(n for n in catalog.TASK_TYPE_NAMES if n in names)


def check_split(split: str) -> str:
    if split not in SPLITS:
        raise ValueError(f"unknown household split {split!r}; known: {', '.join(SPLITS)}")
    return split


def iter_tasks(split: str, n: int, seed: int, task_types: Sequence[str] | None = None) -> Iterator[HouseholdTask]:
    """The first ``n`` tasks of ``split`` under ``seed`` whose type is in ``task_types``."""
    check_split(split)
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    wanted = set(resolve_task_types(task_types))
    produced = 0
    index = 0
    while produced < n:
        if catalog.TASK_TYPE_NAMES[index % len(catalog.TASK_TYPE_NAMES)] in wanted:
            yield generate_task(split, seed, index)
            produced += 1
        index += 1


def generate_task(split: str, seed: int, index: int) -> HouseholdTask:
    """Task ``index`` of ``split`` under ``seed``: pure, deterministic across processes."""
    check_split(split)
    spec = catalog.TASK_TYPES[index % len(catalog.TASK_TYPES)]
    rng = random.Random(f"household-task/{seed}/{split}/{index}")
    for _ in range(_MAX_ATTEMPTS):
        room = rng.choice(spec.rooms)
        number = rng.choice(scene_numbers(room, unseen=split == "valid_unseen"))
        built = _try_build(spec, room, number, layout(room, number), rng, _present_types(room, number))
        if built is not None:
            scene, goal = built
            return HouseholdTask(scene=scene, goal=goal, split=split, seed=seed, index=index)
    raise RuntimeError(f"could not generate household task {split}/{seed}/{index} ({spec.name})")


@lru_cache(maxsize=512)
def _present_types(room: str, number: int) -> tuple[str, ...]:
    """The receptacle types of floor plan ``number`` of ``room``, sorted (pure and cached, like ``layout``)."""
    return tuple(sorted({r.type for r in layout(room, number)}))


@lru_cache(maxsize=16)
def _room_object_types(room: str) -> tuple[str, ...]:
    """The object types a room may hold, sorted."""
    return tuple(sorted(catalog.ROOM_OBJECTS[room]))


def _try_build(
    spec: catalog.TaskTypeSpec,
    room: str,
    number: int,
    receptacles: tuple[Receptacle, ...],
    rng: random.Random,
    present: Sequence[str],
) -> tuple[Scene, Goal] | None:
    """A scene and goal of ``spec`` on ``receptacles`` (whose sorted types are ``present``), or None."""
    state_types: frozenset[str] = catalog.PICKUPABLE
    tool: str | None = None
    if spec.state is not None:
        state_types, tool, _ = catalog.STATE_RULES[spec.state]
        if tool not in present:
            return None
    present_set = set(present)
    candidates = [
        obj
        for obj in _room_object_types(room)
        if obj in state_types and not catalog.receptacles_for(obj).isdisjoint(present_set)
    ]
    if not candidates:
        return None
    obj = rng.choice(candidates)
    template = rng.randrange(2)

    if spec.name == "look_at_obj_in_light":
        lamps = [lamp for lamp in catalog.LAMP_TYPES if _has_slot(receptacles, lamp, scenery=True)]
        if not lamps:
            return None
        toggle = rng.choice(lamps)
        goal = Goal(spec.name, obj, None, toggle, template)
        rule = TargetRule(obj, rng.choice((1, 1, 2, 2, 3, 4)))
        try:
            objects = place_objects(receptacles, room, rng, rule, required_scenery={toggle: 1})
        except ValueError:  # handled: this scene cannot hold the task's objects; the caller draws another scene
            return None
        return _placed_scene(room, number, receptacles, objects), goal

    holders = catalog.receptacles_for(obj)
    dests = [t for t in present if t in holders and t != tool]
    if not dests:
        return None
    dest = rng.choice(dests)
    goal = Goal(spec.name, obj, dest, None, template)
    if spec.name == "pick_two_obj_and_place":
        rule = TargetRule(obj, rng.choice((2, 2, 3, 3, 4)), one_per_instance_types=frozenset({dest}))
    elif spec.name == "pick_and_place_simple":
        rule = TargetRule(obj, rng.choice((1, 1, 2, 2, 3, 4)), banned_receptacle_types=frozenset({dest}))
    else:
        rule = TargetRule(obj, rng.choice((1, 1, 2, 2, 3, 4)))
    try:
        objects = place_objects(receptacles, room, rng, rule)
    except ValueError:  # handled: this scene cannot hold the task's objects; the caller draws another scene
        return None
    scene = _placed_scene(room, number, receptacles, objects)
    if initially_won(scene, goal):
        return None
    return scene, goal


def _placed_scene(room: str, number: int, receptacles: tuple[Receptacle, ...], objects: list[SceneObject]) -> Scene:
    """``Scene(room, number, receptacles, tuple(objects))`` for ``objects`` from ``place_objects``.

    Its validity check is skipped only where it is proven to pass: the receptacles pass theirs,
    and every object type ``place_objects`` can put in ``room`` passes the object rules on its
    own (``_room_placements_valid``); ``place_objects`` puts each object in a receptacle of these
    that ``receptacles_for`` allows and numbers each type's objects 1..n (``_numbered``).
    """
    if _room_placements_valid(room) and receptacles_plainly_valid(receptacles):
        return Scene._checked_by_construction(room, number, receptacles, tuple(objects))
    return Scene(room, number, receptacles, tuple(objects))


@lru_cache(maxsize=16)
def _room_placements_valid(room: str) -> bool:
    """Whether each type ``place_objects`` may place in ``room`` (its objects, its scenery, a
    lamp) passes ``scene_problems``'s object rules wherever it goes: the type is known, has no
    space (names ``type n`` stay unique), is no receptacle type (numbering is per type across
    receptacles and objects), and, if pickupable, every receptacle type ``receptacles_for`` gives
    may contain it."""
    types = {*catalog.ROOM_OBJECTS[room], *catalog.ROOM_SCENERY[room], *catalog.LAMP_TYPES}
    return all(
        type_name in catalog.OBJECT_TYPES
        and " " not in type_name
        and type_name not in catalog.CAN_CONTAIN
        and (
            type_name not in catalog.PICKUPABLE
            or all(type_name in catalog.CAN_CONTAIN.get(r, ()) for r in catalog.receptacles_for(type_name))
        )
        for type_name in types
    )


def _has_slot(receptacles: Sequence[Receptacle], object_type: str, scenery: bool) -> bool:
    allowed = catalog.receptacles_for(object_type)
    return any(r.type in allowed and not (scenery and r.openable) for r in receptacles)


def initially_won(scene: Scene, goal: Goal) -> bool:
    """Whether the goal holds in the start state (objects start neither hot, cool nor clean)."""
    if goal.task_type == "look_at_obj_in_light" or goal.state is not None:
        return False  # the agent starts empty-handed; no object starts with a state
    by_name = scene.receptacle_by_name
    per_receptacle: dict[str, int] = {}
    for obj in scene.objects:
        if obj.type == goal.object_type and by_name[obj.receptacle].type == goal.receptacle_type:
            per_receptacle[obj.receptacle] = per_receptacle.get(obj.receptacle, 0) + 1
    needed = 2 if goal.task_type == "pick_two_obj_and_place" else 1
    return any(count >= needed for count in per_receptacle.values())
