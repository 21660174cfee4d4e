"""Scenes: receptacle layouts (fixed per floor plan) and object placements (per task).

A *layout* is the furniture of one floor plan: receptacle types, instance numbers, which
cabinets/drawers open, and which receptacles share a location. It depends only on
``(room, scene_number)``, like ALFRED's fixed floor plans, so a split that must not reuse a
layout (``valid_unseen``) can be kept disjoint by scene number alone. A *scene* adds the objects.
"""

from __future__ import annotations

import math
import random
from bisect import bisect
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from itertools import accumulate, repeat

from prefbuild.envs.household import catalog


@dataclass(frozen=True)
class Receptacle:
    """A piece of furniture or an appliance. ``location`` is the ``loc N`` number (1-based)."""

    type: str
    number: int
    openable: bool
    location: int

    @cached_property
    def name(self) -> str:  # read on every placement and compile: rendered once
        return f"{self.type} {self.number}"


@dataclass(frozen=True)
class SceneObject:
    """An object lying in receptacle ``receptacle`` (a receptacle name) at the start."""

    type: str
    number: int
    receptacle: str

    @cached_property
    def name(self) -> str:
        return f"{self.type} {self.number}"

    @classmethod
    def _built(cls, type_name: str, number: int, receptacle: str) -> SceneObject:
        """The object ``SceneObject(type_name, number, receptacle)`` with its ``name`` already set.

        Task generation makes every object of every scene here: filling the instance dict
        directly skips the frozen dataclass's per-field ``object.__setattr__`` and the later
        ``cached_property`` look-up (which takes a lock on Python 3.11); the fields, equality,
        hash and repr are those of the ordinary constructor.
        """
        obj = object.__new__(cls)
        fields = obj.__dict__
        fields["type"] = type_name
        fields["number"] = number
        fields["receptacle"] = receptacle
        fields["name"] = f"{type_name} {number}"
        return obj


@dataclass(frozen=True)
class Scene:
    """A room with its receptacles and objects; immutable, shared by every episode on it."""

    room: str
    scene_number: int
    receptacles: tuple[Receptacle, ...]
    objects: tuple[SceneObject, ...] = field(default=())

    def __post_init__(self) -> None:
        if _plainly_valid(self):  # exact: True only when ``scene_problems`` finds nothing
            return
        problems = scene_problems(self)
        if problems:
            raise ValueError(f"invalid scene {self.room}-{self.scene_number}: " + "; ".join(problems))

    @classmethod
    def _checked_by_construction(
        cls, room: str, scene_number: int, receptacles: tuple[Receptacle, ...], objects: tuple[SceneObject, ...]
    ) -> Scene:
        """``Scene(room, scene_number, receptacles, objects)`` without ``__post_init__``'s check.

        Only for a scene whose validity is proven by how it was made (``tasks._placed_scene``):
        the fields, equality, hash and repr are those of the ordinary constructor.
        """
        scene = object.__new__(cls)
        fields = scene.__dict__
        fields["room"] = room
        fields["scene_number"] = scene_number
        fields["receptacles"] = receptacles
        fields["objects"] = objects
        return scene

    @cached_property
    def receptacle_by_name(self) -> dict[str, Receptacle]:
        return {r.name: r for r in self.receptacles}

    def with_objects(self, objects: Iterable[SceneObject]) -> Scene:
        return Scene(self.room, self.scene_number, self.receptacles, tuple(objects))


def listing_key(type_name: str, number: int) -> tuple[str, int]:
    """Spec 1.2 listing order: type name ascending, then instance number descending."""
    return (type_name, -number)


def scene_problems(scene: Scene) -> list[str]:
    """Every rule a scene breaks (empty when valid): unique names, global per-type numbering from 1,
    objects inside existing receptacles that may hold them, receptacle/object type names known."""
    duplicates, receptacle_rules, receptacle_names, receptacle_numbers, _ = _receptacle_checks(scene.receptacles)
    problems: list[str] = list(duplicates)
    object_names = [o.name for o in scene.objects]
    if len(set(object_names)) != len(object_names):
        problems.append("duplicate object names")
    problems.extend(receptacle_rules)
    numbers = {type_name: list(used) for type_name, used in receptacle_numbers.items()}
    object_types, pickupable, can_contain = catalog.OBJECT_TYPES, catalog.PICKUPABLE, catalog.CAN_CONTAIN
    for obj in scene.objects:
        if obj.type not in object_types:
            problems.append(f"unknown object type {obj.type!r}")
        holder = receptacle_names.get(obj.receptacle)
        if holder is None:
            problems.append(f"{obj.name} lies in unknown receptacle {obj.receptacle!r}")
        elif obj.type in pickupable and obj.type not in can_contain.get(holder.type, ()):
            problems.append(f"{obj.name} cannot be in {holder.name}")
        numbers.setdefault(obj.type, []).append(obj.number)
    for type_name, used in numbers.items():
        if sorted(used) != list(range(1, len(used) + 1)):
            problems.append(f"{type_name} instances must be numbered 1..{len(used)}, got {sorted(used)}")
    return problems


def _plainly_valid(scene: Scene) -> bool:
    """Whether ``scene_problems(scene)`` is empty, decided without writing any problem down.

    Each test is one of ``scene_problems``'s rules: the receptacle half is memoised per floor
    plan, object names are unique, every object type is known, every object lies in a
    receptacle of the scene that may hold it (pickupables), and each type's instances,
    receptacles and objects together, are numbered 1..n.
    """
    duplicates, receptacle_rules, receptacle_names, receptacle_numbers, misnumbered = _receptacle_checks(
        scene.receptacles
    )
    if duplicates or receptacle_rules:
        return False
    objects = scene.objects
    if len({o.name for o in objects}) != len(objects):
        return False
    object_types, pickupable, can_contain = catalog.OBJECT_TYPES, catalog.PICKUPABLE, catalog.CAN_CONTAIN
    numbers: dict[str, list[int]] = {}
    for obj in objects:
        type_name = obj.type
        holder = receptacle_names.get(obj.receptacle)
        if (
            holder is None
            or type_name not in object_types
            or (type_name in pickupable and type_name not in can_contain.get(holder.type, ()))
        ):
            return False
        used = numbers.get(type_name)
        if used is None:
            numbers[type_name] = [obj.number]
        else:
            used.append(obj.number)
    for type_name, used in numbers.items():
        shared = receptacle_numbers.get(type_name)
        if shared is not None:
            used = [*shared, *used]
        if sorted(used) != list(range(1, len(used) + 1)):
            return False
    # Receptacle types no object uses: their numbering alone (judged once per plan).
    return all(type_name in numbers for type_name in misnumbered)


_ReceptacleChecks = tuple[
    tuple[str, ...], tuple[str, ...], dict[str, "Receptacle"], dict[str, tuple[int, ...]], frozenset[str]
]
_RECEPTACLE_CHECKS: dict[int, tuple[tuple[Receptacle, ...], _ReceptacleChecks]] = {}


def receptacles_plainly_valid(receptacles: tuple[Receptacle, ...]) -> bool:
    """Whether ``scene_problems``'s receptacle rules find nothing in ``receptacles`` on their own
    (names unique, types known, openable only where allowed, each type numbered 1..n); memoised."""
    duplicates, receptacle_rules, _, _, misnumbered = _receptacle_checks(receptacles)
    return not duplicates and not receptacle_rules and not misnumbered


def _receptacle_checks(receptacles: tuple[Receptacle, ...]) -> _ReceptacleChecks:
    """``scene_problems``'s receptacle half: (duplicate-name problem, other receptacle problems,
    receptacles by name, instance numbers by type, the types whose receptacles alone are not
    numbered 1..n). Every task drawn on one floor plan shares
    the plan's tuple (``layout``), so it is checked once: memoised on that very tuple (bounded)."""
    hit = _RECEPTACLE_CHECKS.get(id(receptacles))
    if hit is not None and hit[0] is receptacles:
        return hit[1]
    by_name = {r.name: r for r in receptacles}
    duplicates = ("duplicate receptacle names",) if len(by_name) != len(receptacles) else ()
    rules: list[str] = []
    if any(r.location < 1 for r in receptacles):
        rules.append("receptacle locations are numbered from 1 (0 is the middle of the room)")
    numbers: dict[str, list[int]] = {}
    for recep in receptacles:
        if recep.type not in catalog.CAN_CONTAIN:
            rules.append(f"unknown receptacle type {recep.type!r}")
        if recep.openable and recep.type not in catalog.OPENABLE_TYPES:
            rules.append(f"{recep.name} cannot be openable")
        numbers.setdefault(recep.type, []).append(recep.number)
    misnumbered = frozenset(t for t, used in numbers.items() if sorted(used) != list(range(1, len(used) + 1)))
    checks = (duplicates, tuple(rules), by_name, {t: tuple(used) for t, used in numbers.items()}, misnumbered)
    if isinstance(receptacles, tuple):  # a list may change: only tuples are memoised
        if len(_RECEPTACLE_CHECKS) > 1024:
            _RECEPTACLE_CHECKS.clear()
        _RECEPTACLE_CHECKS[id(receptacles)] = (receptacles, checks)
    return checks


# --- layouts --------------------------------------------------------------------------------------

LAYOUTS_PER_ROOM = 60


@lru_cache(maxsize=64)
def scene_numbers(room: str, unseen: bool) -> tuple[int, ...]:
    """Floor plans of ``room`` for seen (train, valid_seen) or unseen (valid_unseen) splits.

    Every tenth plan is held out, so the two sets are disjoint by construction."""
    base = catalog.ROOM_SCENE_BASE[room]
    return tuple(base + k for k in range(1, LAYOUTS_PER_ROOM + 1) if (k % 10 == 0) == unseen)


def _instance_count(spec: catalog.ReceptacleSpec, rng: random.Random) -> int:
    if spec.low == spec.high:
        return spec.low
    # Log-normal around the median: most rooms near it, a few large kitchens.
    value = round(spec.median * math.exp(rng.gauss(0.0, 0.45)))
    return max(spec.low, min(spec.high, value))


_GROUPED = {"cabinet": (1, 1, 2, 2, 3), "drawer": (1, 1, 2, 3), "shelf": (1, 2, 3), "stoveburner": (2,)}


@lru_cache(maxsize=512)
def layout(room: str, scene_number: int) -> tuple[Receptacle, ...]:
    """The fixed receptacles of floor plan ``scene_number`` of ``room``; pure and cached."""
    if room not in catalog.ROOM_RECEPTACLES:
        raise ValueError(f"unknown room kind {room!r}; known: {', '.join(catalog.ROOM_KINDS)}")
    rng = random.Random(f"household-layout/{room}/{scene_number}")
    groups: list[list[tuple[str, int, bool]]] = []
    for spec in catalog.ROOM_RECEPTACLES[room]:
        if spec.share < 1.0 and rng.random() >= spec.share:
            continue
        count = _instance_count(spec, rng)
        instances = []
        for number in range(1, count + 1):
            if spec.type in catalog.ALWAYS_OPENABLE_TYPES:
                openable = True
            elif spec.type in catalog.OPENABLE_TYPES:
                openable = rng.random() < catalog.OPENABLE_SHARE
            else:
                openable = False
            instances.append((spec.type, number, openable))
        sizes = _GROUPED.get(spec.type, (1,))
        position = 0
        while position < len(instances):
            size = rng.choice(sizes)
            groups.append(instances[position : position + size])
            position += size
    loc_numbers = list(range(1, len(groups) + 1))
    rng.shuffle(loc_numbers)
    receptacles = [
        Receptacle(type_name, number, openable, loc)
        for group, loc in zip(groups, loc_numbers, strict=True)
        for type_name, number, openable in group
    ]
    return tuple(sorted(receptacles, key=lambda r: listing_key(r.type, r.number)))


# --- object placement -----------------------------------------------------------------------------


@dataclass(frozen=True)
class TargetRule:
    """How to place the task's object type: how many, where not, at most one per instance where."""

    object_type: str
    count: int
    banned_receptacle_types: frozenset[str] = frozenset()
    one_per_instance_types: frozenset[str] = frozenset()


def _slots(receptacles: Sequence[Receptacle], object_type: str, scenery: bool) -> list[Receptacle]:
    """Receptacles that may hold ``object_type`` (a fresh list); memoised per floor-plan tuple."""
    return list(_slot_table(receptacles, object_type, scenery)[0])


def _slot_names(receptacles: Sequence[Receptacle], object_type: str, scenery: bool) -> tuple[str, ...]:
    """The names of ``_slots(receptacles, object_type, scenery)``, in the same order."""
    return _slot_table(receptacles, object_type, scenery)[1]


def _slot_table(
    receptacles: Sequence[Receptacle], object_type: str, scenery: bool
) -> tuple[tuple[Receptacle, ...], tuple[str, ...]]:
    key = (id(receptacles), object_type, scenery)
    hit = _SLOTS.get(key)
    if hit is not None and hit[0] is receptacles:
        return hit[1]
    allowed = catalog.receptacles_for(object_type)
    slots = tuple(r for r in receptacles if r.type in allowed and not (scenery and r.openable))
    table = (slots, tuple(r.name for r in slots))
    if isinstance(receptacles, tuple):
        if len(_SLOTS) > 65536:
            _SLOTS.clear()
        _SLOTS[key] = (receptacles, table)
    return table


_SLOTS: dict[
    tuple[int, str, bool], tuple[Sequence[Receptacle], tuple[tuple[Receptacle, ...], tuple[str, ...]]]
] = {}


def _weight(load: int) -> float:
    """How strongly a receptacle already holding ``load`` objects attracts the next one."""
    return 1.0 / (1 + load) ** 2


def _pick(slots: Sequence[Receptacle], load: Mapping[str, int], rng: random.Random) -> Receptacle:
    # Prefer emptier receptacles so contents stay in ALFRED's 0-6 range. This is
    # ``rng.choices(slots, weights, k=1)[0]`` written out (same draws, same float sums).
    cumulative = list(accumulate([_weight(load.get(r.name, 0)) for r in slots]))
    return slots[bisect(cumulative, rng.random() * (cumulative[-1] + 0.0), 0, len(cumulative) - 1)]


def _pick_name(names: Sequence[str], weights: Mapping[str, float], rng: random.Random) -> str:
    """``_pick`` over receptacle names, with each loaded name's ``_weight`` kept in ``weights``
    (an unloaded name weighs ``_weight(0) == 1.0``): the same draw, as task generation makes
    one for every object of every scene."""
    cumulative = list(accumulate(map(weights.get, names, repeat(1.0))))
    return names[bisect(cumulative, rng.random() * (cumulative[-1] + 0.0), 0, len(cumulative) - 1)]


def place_objects(
    receptacles: Sequence[Receptacle],
    room: str,
    rng: random.Random,
    target: TargetRule | None = None,
    required_scenery: Mapping[str, int] | None = None,
) -> list[SceneObject]:
    """Objects for one scene: the target type by ``target``, other room objects by their shares.

    Objects go only into receptacles that may hold them (table 8.3); scenery only onto surfaces
    that are not openable. Raises ``ValueError`` when the target or required scenery cannot be
    placed in these receptacles (the caller then tries another layout).
    """
    load: dict[str, int] = {}
    weights: dict[str, float] = {}  # receptacle name -> _weight(load), for the loaded ones
    placed: dict[str, list[str]] = {}  # type -> the receptacle name of each of its objects, in placing order

    def put(type_name: str, name: str) -> None:
        receptacle_names = placed.get(type_name)
        if receptacle_names is None:
            placed[type_name] = [name]
        else:
            receptacle_names.append(name)
        count = load[name] = load.get(name, 0) + 1
        weights[name] = 1.0 / (1 + count) ** 2  # _weight(count)

    if target is not None:
        slots = [
            r for r in _slots(receptacles, target.object_type, False) if r.type not in target.banned_receptacle_types
        ]
        used: set[str] = set()
        for _ in range(target.count):
            free = [r.name for r in slots if not (r.type in target.one_per_instance_types and r.name in used)]
            if not free:
                raise ValueError(f"no receptacle can hold another {target.object_type}")
            name = _pick_name(free, weights, rng)
            used.add(name)
            put(target.object_type, name)

    scenery = dict(required_scenery or {})
    for type_name, share in catalog.ROOM_SCENERY[room].items():
        if type_name not in scenery and rng.random() < share:
            scenery[type_name] = 1
    for type_name in sorted(scenery):
        names = _slot_names(receptacles, type_name, True)
        if not names:
            if required_scenery and type_name in required_scenery:
                raise ValueError(f"no receptacle can hold a {type_name}")
            continue
        for _ in range(scenery[type_name]):
            put(type_name, _pick_name(names, weights, rng))

    for type_name, share, names in _room_object_slots(receptacles, room):
        if target is not None and type_name == target.object_type:
            continue
        if share < 1.0 and rng.random() >= share:
            continue
        if not names:
            continue
        for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
            put(type_name, _pick_name(names, weights, rng))

    return _numbered(placed, rng)


def _room_object_slots(
    receptacles: Sequence[Receptacle], room: str
) -> tuple[tuple[str, float, tuple[str, ...]], ...]:
    """``(type, share, _slot_names(receptacles, type, False))`` for each of ``room``'s object types,
    in ``catalog.ROOM_OBJECTS`` order; memoised per floor-plan tuple like ``_slot_table``."""
    key = (id(receptacles), room)
    hit = _ROOM_SLOTS.get(key)
    if hit is not None and hit[0] is receptacles:
        return hit[1]
    table = tuple(
        (type_name, share, _slot_names(receptacles, type_name, False))
        for type_name, share in catalog.ROOM_OBJECTS[room].items()
    )
    if isinstance(receptacles, tuple):
        if len(_ROOM_SLOTS) > 4096:
            _ROOM_SLOTS.clear()
        _ROOM_SLOTS[key] = (receptacles, table)
    return table


_ROOM_SLOTS: dict[tuple[int, str], tuple[Sequence[Receptacle], tuple[tuple[str, float, tuple[str, ...]], ...]]] = {}


def _numbered(by_type: Mapping[str, list[str]], rng: random.Random) -> list[SceneObject]:
    """Number instances per type 1..n in a random order (real games number by internal id).

    ``by_type``: each type's receptacle names, one per object, in placing order. Returned in
    listing order (type ascending, number descending): types are visited in order and each
    type's instances are sorted by number, so no global sort is needed.
    """
    objects: list[SceneObject] = []
    for type_name in sorted(by_type):
        receps = by_type[type_name]
        if len(receps) == 1:  # shuffling one number draws nothing
            objects.append(SceneObject._built(type_name, 1, receps[0]))
            continue
        numbers = list(range(1, len(receps) + 1))
        rng.shuffle(numbers)
        numbered = sorted(zip(numbers, receps, strict=True), reverse=True)  # numbers are unique
        objects.extend(SceneObject._built(type_name, n, recep) for n, recep in numbered)
    return objects
