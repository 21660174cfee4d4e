"""The household state machine: ALFWorld's commands, their exact feedback, admissible commands, wins.

Speed matters (random walks and expert roll-outs run millions of steps), so a scene is compiled
once into index arrays with every fixed string pre-rendered (``CompiledScene``, shared and
immutable), and an ``Engine`` holds only small mutable lists. Commands are parsed with string
partitions and dictionary look-ups; the admissible list is rebuilt only after the state changed.
``snapshot``/``restore`` copy those lists, never the compiled scene.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from prefbuild.envs.household import catalog
from prefbuild.envs.household.scene import Receptacle, Scene, SceneObject, listing_key
from prefbuild.envs.household.tasks import Goal

DIALECTS: tuple[str, ...] = ("classic", "modern")
NOTHING_HAPPENS = "Nothing happens."
BANNER = "-= Welcome to TextWorld, ALFRED! =-"
START_LOOK = "You are in the middle of a room. Looking quickly around you, you see nothing."
HELP_TEXT = (
    "Available commands:\n"
    "  look:                             look around your current location\n"
    "  inventory:                        check your current inventory\n"
    "  go to (receptacle):               move to a receptacle\n"
    "  open (receptacle):                open a receptacle\n"
    "  close (receptacle):               close a receptacle\n"
    "  take (object) from (receptacle):  take an object from a receptacle\n"
    "  move (object) to (receptacle):  place an object in or on a receptacle\n"
    "  examine (something):              examine a receptacle or an object\n"
    "  use (object):                     use an object\n"
    "  heat (object) with (receptacle):  heat an object using a receptacle\n"
    "  clean (object) with (receptacle): clean an object using a receptacle\n"
    "  cool (object) with (receptacle):  cool an object using a receptacle\n"
    "  slice (object) with (object):     slice an object using a sharp object\n"
)


def join_list(items: list[str]) -> str:
    """Spec 1.2 joining: ``a, b, and c``; ``a, and b`` for two; ``nothing`` for none."""
    if not items:
        return "nothing"
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + ", and " + items[-1]


def strip_arrival_prefix(observation: str) -> str:
    """The benchmarks' post-processing: drop a classic ``You arrive at loc N. `` prefix."""
    if observation.startswith("You arrive at loc "):
        return observation.partition(". ")[2]
    return observation


class CompiledScene:
    """Index arrays and pre-rendered strings of one scene. Receptacles and objects are indexed in
    listing order (type, number descending), so sorting indices sorts names the way the game lists.

    The receptacle half depends only on the floor plan, so scenes on the same plan (every task
    drawn on one of a room's few hundred layouts) share it: see ``receptacle_tables``."""

    def __init__(self, scene: Scene) -> None:
        self.scene = scene
        self.__dict__.update(receptacle_tables(scene.receptacles))
        objs = sorted(scene.objects, key=_object_listing_key)
        self.o_name = [o.name for o in objs]
        self.o_type = [o.type for o in objs]
        self.o_index = {name: i for i, name in enumerate(self.o_name)}
        self.o_article = [f"a {n}" for n in self.o_name]
        # One row of type flags per object, turned into one list per flag (as many as objects).
        columns = zip(*map(_type_flags, self.o_type), strict=True) if objs else iter([()] * len(_FLAG_SETS))
        (
            self.o_pickupable, self.o_heatable, self.o_coolable, self.o_cleanable, self.o_toggleable,
            self.o_sliceable, self.o_container, self.o_knife,
        ) = map(list, columns)  # fmt: skip
        self.o_start = [self.r_index[o.receptacle] for o in objs]
        self.search_orders: dict[str, tuple[int, ...]] = {}  # filled by the searching expert

    def receptacles_of_type(self, type_name: str | None) -> list[int]:
        return list(self.r_by_type.get(type_name or "", ()))

    def objects_of_type(self, type_name: str | None) -> list[int]:
        return [i for i, t in enumerate(self.o_type) if t == type_name]


def _object_listing_key(obj: SceneObject) -> tuple[str, int]:
    """``listing_key(obj.type, obj.number)``."""
    return (obj.type, -obj.number)


# The type sets behind CompiledScene's o_pickupable ... o_knife flag lists, in that order.
_FLAG_SETS: tuple[frozenset[str], ...] = (
    catalog.PICKUPABLE, catalog.HEATABLE, catalog.COOLABLE, catalog.CLEANABLE, catalog.TOGGLEABLE,
    catalog.SLICEABLE, catalog.CONTAINER_OBJECTS, catalog.KNIFE_TYPES,
)  # fmt: skip
_TYPE_FLAGS: dict[str, tuple[bool, ...]] = {}


def _type_flags(type_name: str) -> tuple[bool, ...]:
    """Whether ``type_name`` is in each of ``_FLAG_SETS``; memoised (bounded)."""
    flags = _TYPE_FLAGS.get(type_name)
    if flags is None:
        if len(_TYPE_FLAGS) > 4096:
            _TYPE_FLAGS.clear()
        flags = _TYPE_FLAGS[type_name] = tuple(type_name in types for types in _FLAG_SETS)
    return flags


def _receptacle_tables_of(receptacles: tuple[Receptacle, ...]) -> dict[str, Any]:
    receps = sorted(receptacles, key=lambda r: listing_key(r.type, r.number))
    r_name = [r.name for r in receps]
    r_type = [r.type for r in receps]
    r_loc = [r.location for r in receps]
    cmd_goto = [f"go to {n}" for n in r_name]
    locations = sorted(set(r_loc))
    loc_receps: dict[int, tuple[int, ...]] = {loc: () for loc in [0, *locations]}
    for i, loc in enumerate(r_loc):
        loc_receps[loc] = (*loc_receps[loc], i)
    facing_prefix = {
        loc: f"You are facing the {join_list([r_name[i] for i in idx])}. Next to it, you see "
        for loc, idx in loc_receps.items()
        if idx
    }
    r_by_type: dict[str, list[int]] = {}
    for i, t in enumerate(r_type):
        r_by_type.setdefault(t, []).append(i)
    return {
        "r_name": r_name,
        "r_type": r_type,
        "r_openable": [r.openable for r in receps],
        "r_loc": r_loc,
        "r_index": {name: i for i, name in enumerate(r_name)},
        "r_can_contain": [catalog.CAN_CONTAIN[t] for t in r_type],
        "r_on": [f"On the {n}, you see " for n in r_name],
        "r_open_in": [f"The {n} is open. In it, you see " for n in r_name],
        "r_closed": [f"The {n} is closed." for n in r_name],
        "cmd_goto": cmd_goto,
        "cmd_open": [f"open {n}" for n in r_name],
        "cmd_close": [f"close {n}" for n in r_name],
        "cmd_examine_r": [f"examine {n}" for n in r_name],
        "locations": locations,
        "loc_receps": loc_receps,
        "goto_at": {
            loc: sorted(cmd_goto[i] for i in range(len(receps)) if r_loc[i] != loc) for loc in loc_receps
        },
        "facing_prefix": facing_prefix,
        "facing": {loc: prefix + "nothing." for loc, prefix in facing_prefix.items()},
        "r_by_type": r_by_type,
        "intro_look": "You are in the middle of a room. Looking quickly around you, you see "
        + (join_list([f"a {n}" for n in r_name]) + "."),
    }


_TABLES: dict[int, tuple[tuple[Receptacle, ...], dict[str, Any]]] = {}


def receptacle_tables(receptacles: tuple[Receptacle, ...]) -> dict[str, Any]:
    """The receptacle attributes of ``CompiledScene`` (names, commands, locations, fixed texts).

    Memoised on the very tuple object (``layout`` hands out one tuple per floor plan), so
    every scene on a plan shares one set of read-only tables; a bounded memo.

    Args:
        receptacles: a scene's receptacles.

    Returns:
        Attribute name -> value, for ``CompiledScene`` (never mutate the values).

    Example:
        >>> receptacle_tables(layout("kitchen", 1))["r_name"][:1]  # doctest: +SKIP
        ['cabinet 9']
    """
    hit = _TABLES.get(id(receptacles))
    if hit is not None and hit[0] is receptacles:
        return hit[1]
    tables = _receptacle_tables_of(receptacles)
    if isinstance(receptacles, tuple):  # a list may change: only tuples are memoised
        if len(_TABLES) > 1024:
            _TABLES.clear()
        _TABLES[id(receptacles)] = (receptacles, tables)
    return tables


_COMPILED: dict[int, tuple[Scene, CompiledScene]] = {}


def compile_scene(scene: Scene) -> CompiledScene:
    """Compile ``scene``, reusing the last compilation of the very same scene object."""
    hit = _COMPILED.get(id(scene))
    if hit is not None and hit[0] is scene:
        return hit[1]
    compiled = CompiledScene(scene)
    if len(_COMPILED) > 256:
        _COMPILED.clear()
    _COMPILED[id(scene)] = (scene, compiled)
    return compiled


@dataclass(frozen=True)
class Snapshot:
    """A copy of an engine's mutable state; restore it any number of times."""

    values: tuple[Any, ...]


class Engine:
    """One episode's mutable state over a compiled scene, with the exact ALFWorld text.

    Location 0 is the middle of the room (no receptacle); other locations are ``loc N`` numbers.
    ``where[o]`` is the receptacle index holding object ``o``, or -1 while it is held.
    ``seen[r]`` records that the agent has seen inside receptacle ``r`` (the searching expert's memory).
    """

    def __init__(self, scene: Scene, goal: Goal, dialect: str = "classic") -> None:
        if dialect not in DIALECTS:
            raise ValueError(f"unknown household dialect {dialect!r}; known: {', '.join(DIALECTS)}")
        self.c = c = compile_scene(scene)
        self.goal = goal
        self.dialect = dialect
        self.modern = dialect == "modern"
        self.target_objects = c.objects_of_type(goal.object_type)
        self.dest_receptacles = c.receptacles_of_type(goal.receptacle_type)
        self.lamps = c.objects_of_type(goal.toggle_type)
        self._won_check = self._make_won_check()
        self.reset()

    # --- state -------------------------------------------------------------------------------

    def reset(self) -> None:
        c = self.c
        n_obj, n_rec = len(c.o_name), len(c.r_name)
        self.loc = 0
        self.held = -1
        self.where = list(c.o_start)
        self.contents: list[list[int]] = [[] for _ in range(n_rec)]
        for o, r in enumerate(self.where):
            self.contents[r].append(o)
        self.opened = [False] * n_rec
        self.seen = [False] * n_rec
        self.hot = [False] * n_obj
        self.cool = [False] * n_obj
        self.clean = [False] * n_obj
        self.toggled = [False] * n_obj
        self.sliced = [False] * n_obj
        self.won = False
        self.version = 0
        # The engine's "not in receptacle R" facts: (object, receptacle) after `take O from R`,
        # cleared only by putting O into that same R; `look` lists them (spec section 5, look).
        self.taken_from: frozenset[tuple[int, int]] = frozenset()
        self._admissible: list[str] | None = None

    def snapshot(self) -> Snapshot:
        return Snapshot(
            (
                self.loc, self.held, self.where[:], [list(x) for x in self.contents], self.opened[:], self.seen[:],
                self.hot[:], self.cool[:], self.clean[:], self.toggled[:], self.sliced[:], self.won, self.version,
                self.taken_from,
            )
        )  # fmt: skip

    def restore(self, snapshot: Snapshot) -> None:
        (loc, held, where, contents, opened, seen, hot, cool, clean, toggled, sliced, won, version,
         taken_from) = snapshot.values
        self.loc, self.held, self.won, self.version, self.taken_from = loc, held, won, version, taken_from
        self.where, self.contents = where[:], [list(x) for x in contents]
        self.opened, self.seen = opened[:], seen[:]
        self.hot, self.cool, self.clean, self.toggled, self.sliced = hot[:], cool[:], clean[:], toggled[:], sliced[:]
        self._admissible = None

    def clone(self) -> Engine:
        twin = Engine.__new__(Engine)
        twin.c, twin.goal, twin.dialect, twin.modern = self.c, self.goal, self.dialect, self.modern
        twin.target_objects, twin.dest_receptacles, twin.lamps = self.target_objects, self.dest_receptacles, self.lamps
        twin._won_check = twin._make_won_check()
        twin.restore(self.snapshot())
        return twin

    def _changed(self) -> None:
        self.version += 1
        self._admissible = None
        # TextWorld ends the game at the first win; the flag stays set like the engine's ``won``.
        if not self.won:
            self.won = self._won_check()

    # --- read-only views (names, for tests, labelers and protocols) ----------------------------

    def here(self) -> list[str]:
        """Receptacles at the agent's location, in listing order."""
        return [self.c.r_name[r] for r in self.c.loc_receps[self.loc]]

    def holding(self) -> str | None:
        return None if self.held < 0 else self.c.o_name[self.held]

    def receptacle_of(self, object_name: str) -> str | None:
        """Where an object lies; None while it is held."""
        r = self.where[self.c.o_index[object_name]]
        return None if r < 0 else self.c.r_name[r]

    def contents_of(self, receptacle_name: str) -> list[str]:
        return [self.c.o_name[o] for o in sorted(self.contents[self.c.r_index[receptacle_name]])]

    def is_open(self, receptacle_name: str) -> bool:
        return self.opened[self.c.r_index[receptacle_name]]

    def object_flags(self, object_name: str) -> dict[str, bool]:
        o = self.c.o_index[object_name]
        return {
            "isHot": self.hot[o], "isCool": self.cool[o], "isClean": self.clean[o],
            "isToggled": self.toggled[o], "isSliced": self.sliced[o],
        }  # fmt: skip

    def visible(self, r: int) -> bool:
        return not self.c.r_openable[r] or self.opened[r]

    # --- text --------------------------------------------------------------------------------

    def intro(self, raw: bool = False) -> str:
        """The first observation: ``raw`` is the engine text, else the benchmarks' banner-less form."""
        task = f"Your task is to: {self.goal.sentence}."
        if raw:
            return f"{BANNER}\n\n{self.c.intro_look}\n\n{task}"
        return f"{self.c.intro_look}\n{task}"

    def describe(self, r: int) -> str:
        """``examine`` text of a receptacle (also the arrival and open text without their prefixes)."""
        c = self.c
        if c.r_openable[r]:
            if not self.opened[r]:
                return c.r_closed[r]
            head = c.r_open_in[r]
        else:
            head = c.r_on[r]
        article = c.o_article
        return head + join_list([article[o] for o in sorted(self.contents[r])]) + "."

    def examine_object(self, o: int) -> str:
        name = self.c.o_name[o]
        clean, hot, cool, sliced = self.clean[o], self.hot[o], self.cool[o], self.sliced[o]
        if self.c.o_container[o]:
            return f"This is a normal {name}. In it, you see nothing."
        for condition, text in (
            (clean and hot and sliced, "This is a hot and clean sliced {}."),
            (clean and cool and sliced, "This is a cool and clean sliced {}."),
            (clean and sliced, "This is a clean sliced {}."),
            (hot and sliced, "This is a hot sliced {}."),
            (cool and sliced, "This is a cool sliced {}."),
            (clean and hot, "This is a hot and clean {}."),
            (clean and cool, "This is a cool and clean {}."),
            (hot, "This is a hot {}."),
            (clean, "This is a clean {}."),
            (cool, "This is a cold {}."),
        ):
            if condition:
                return text.format(name)
        if self.c.o_toggleable[o]:
            return f"This {name} is {'on' if self.toggled[o] else 'off'}."
        if sliced:
            return f"This is a sliced {name}."
        return f"There's nothing special about {name}."

    def look(self) -> str:
        """``look``: the receptacles faced and, after the engine's quirk, objects taken from one of them
        that now lie at this location in another one (once per receptacle they were taken from)."""
        c = self.c
        if self.loc not in c.facing:
            return START_LOOK
        here = c.loc_receps[self.loc]
        if len(here) < 2 or not self.taken_from:
            return c.facing[self.loc]
        listed = [
            c.o_article[o]
            for o in range(len(c.o_name))
            for r in here
            if (o, r) in self.taken_from and self.where[o] >= 0 and c.r_loc[self.where[o]] == self.loc
        ]
        if not listed:
            return c.facing[self.loc]
        return f"{c.facing_prefix[self.loc]}{join_list(listed)}."

    # --- admissible commands -----------------------------------------------------------------

    def admissible(self) -> list[str]:
        """Every command accepted now, sorted as plain strings (spec section 6). A fresh list."""
        if self._admissible is None:
            self._admissible = self._build_admissible()
        return list(self._admissible)

    def _build_admissible(self) -> list[str]:
        c = self.c
        here = c.loc_receps[self.loc]
        out: list[str] = []
        held = self.held
        for r in here:
            out.append(c.cmd_examine_r[r])
            if c.r_openable[r]:
                out.append(c.cmd_close[r] if self.opened[r] else c.cmd_open[r])
            visible = not c.r_openable[r] or self.opened[r]
            for o in self.contents[r]:
                if held < 0 and visible and c.o_pickupable[o]:
                    out.append(f"take {c.o_name[o]} from {c.r_name[r]}")
                if c.o_toggleable[o]:
                    out.append(f"use {c.o_name[o]}")
        if held >= 0:
            h_name, h_type = c.o_name[held], c.o_type[held]
            out.append(f"examine {h_name}")
            verb, sep = ("move", " to ") if self.modern else ("put", " in/on ")
            for r in here:
                r_type = c.r_type[r]
                if (not c.r_openable[r] or self.opened[r]) and h_type in c.r_can_contain[r]:
                    out.append(f"{verb} {h_name}{sep}{c.r_name[r]}")
                if r_type == catalog.HEAT_TOOL and c.o_heatable[held]:
                    out.append(f"heat {h_name} with {c.r_name[r]}")
                if r_type == catalog.COOL_TOOL and c.o_coolable[held]:
                    out.append(f"cool {h_name} with {c.r_name[r]}")
                if r_type == catalog.CLEAN_TOOL and c.o_cleanable[held]:
                    out.append(f"clean {h_name} with {c.r_name[r]}")
                if c.o_knife[held]:
                    out.extend(f"slice {c.o_name[o]} with {h_name}" for o in self.contents[r] if c.o_sliceable[o])
        out.append("inventory")
        out.append("look")
        if self.modern:
            out.append("help")
        out.sort()
        out += c.goto_at[self.loc]
        out.sort()
        return out

    # --- stepping ----------------------------------------------------------------------------

    def step(self, command: str) -> tuple[str, bool]:
        """Apply one command; returns ``(observation, valid)``. Never raises on any string."""
        if not isinstance(command, str):
            return NOTHING_HAPPENS, False
        cmd = command.strip()
        verb, _, rest = cmd.partition(" ")
        handler = _HANDLERS.get(verb)
        if handler is None:
            return NOTHING_HAPPENS, False
        result = handler(self, rest)
        if result is None:
            return NOTHING_HAPPENS, False
        return result, True

    def _recep_here(self, name: str) -> int:
        r = self.c.r_index.get(name, -1)
        if r >= 0 and self.c.r_loc[r] != self.loc:
            return -1
        return r

    def _go(self, rest: str) -> str | None:
        if not rest.startswith("to "):
            return None
        name = rest[3:]
        r = self.c.r_index.get(name, -1)
        if r < 0 or self.c.r_loc[r] == self.loc:
            return None
        self.loc = self.c.r_loc[r]
        if self.visible(r):
            self.seen[r] = True
        self._changed()
        prefix = f"You arrive at {name}. " if self.modern else f"You arrive at loc {self.loc}. "
        return prefix + self.describe(r)

    def _open(self, rest: str) -> str | None:
        r = self._recep_here(rest)
        if r < 0 or not self.c.r_openable[r] or self.opened[r]:
            return None
        self.opened[r] = True
        self.seen[r] = True
        self._changed()
        return f"You open the {rest}. " + self.describe(r)

    def _close(self, rest: str) -> str | None:
        r = self._recep_here(rest)
        if r < 0 or not self.c.r_openable[r] or not self.opened[r]:
            return None
        self.opened[r] = False
        self._changed()
        return f"You close the {rest}."

    def _take(self, rest: str) -> str | None:
        o_name, sep, r_name = rest.partition(" from ")
        if not sep or self.held >= 0:
            return None
        r = self._recep_here(r_name)
        o = self.c.o_index.get(o_name, -1)
        if r < 0 or o < 0 or self.where[o] != r or not self.c.o_pickupable[o] or not self.visible(r):
            return None
        self.contents[r].remove(o)
        self.where[o] = -1
        self.held = o
        self.taken_from = self.taken_from | {(o, r)}
        self._changed()
        return f"You pick up the {o_name} from the {r_name}."

    def _place(self, o_name: str, r_name: str) -> bool:
        o = self.held
        if o < 0 or self.c.o_name[o] != o_name:
            return False
        r = self._recep_here(r_name)
        if r < 0 or not self.visible(r) or self.c.o_type[o] not in self.c.r_can_contain[r]:
            return False
        self.contents[r].append(o)
        self.where[o] = r
        self.held = -1
        self.taken_from = self.taken_from - {(o, r)}
        self._changed()
        return True

    def _put(self, rest: str) -> str | None:
        if self.modern:
            return None
        o_name, sep, r_name = rest.partition(" in/on ")
        if not sep or not self._place(o_name, r_name):
            return None
        return f"You put the {o_name} in/on the {r_name}."

    def _move(self, rest: str) -> str | None:
        if not self.modern:
            return None
        o_name, sep, r_name = rest.partition(" to ")
        if not sep or not self._place(o_name, r_name):
            return None
        return f"You move the {o_name} to the {r_name}."

    def _apply(self, rest: str, tool: str, able: list[bool]) -> tuple[int, str, str] | None:
        o_name, sep, r_name = rest.partition(" with ")
        o = self.held
        if not sep or o < 0 or self.c.o_name[o] != o_name or not able[o]:
            return None
        r = self._recep_here(r_name)
        if r < 0 or self.c.r_type[r] != tool:
            return None
        return o, o_name, r_name

    def _heat(self, rest: str) -> str | None:
        hit = self._apply(rest, catalog.HEAT_TOOL, self.c.o_heatable)
        if hit is None:
            return None
        o, o_name, r_name = hit
        self.hot[o], self.cool[o] = True, False
        self._changed()
        return f"You heat the {o_name} using the {r_name}."

    def _cool(self, rest: str) -> str | None:
        hit = self._apply(rest, catalog.COOL_TOOL, self.c.o_coolable)
        if hit is None:
            return None
        o, o_name, r_name = hit
        self.cool[o], self.hot[o] = True, False
        self._changed()
        return f"You cool the {o_name} using the {r_name}."

    def _clean(self, rest: str) -> str | None:
        hit = self._apply(rest, catalog.CLEAN_TOOL, self.c.o_cleanable)
        if hit is None:
            return None
        o, o_name, r_name = hit
        self.clean[o] = True
        self._changed()
        return f"You clean the {o_name} using the {r_name}."

    def _object_here(self, name: str) -> int:
        o = self.c.o_index.get(name, -1)
        if o < 0:
            return -1
        r = self.where[o]
        if r < 0 or self.c.r_loc[r] != self.loc:
            return -1
        return o

    def _use(self, rest: str) -> str | None:
        o = self._object_here(rest)
        if o < 0 or not self.c.o_toggleable[o]:
            return None
        self.toggled[o] = True
        self._changed()
        return f"You turn on the {rest}."

    def _slice(self, rest: str) -> str | None:
        o_name, sep, k_name = rest.partition(" with ")
        k = self.held
        if not sep or k < 0 or self.c.o_name[k] != k_name or not self.c.o_knife[k]:
            return None
        o = self._object_here(o_name)
        if o < 0 or not self.c.o_sliceable[o]:
            return None
        self.sliced[o] = True
        self._changed()
        return f"You sliced the {o_name} with the {k_name}."

    def _examine(self, rest: str) -> str | None:
        r = self._recep_here(rest)
        if r >= 0:
            if self.visible(r) and not self.seen[r]:
                self.seen[r] = True
                self.version += 1  # the searching expert's memory changed; the admissible list did not
            return self.describe(r)
        if self.held >= 0 and self.c.o_name[self.held] == rest:
            return self.examine_object(self.held)
        return None

    def _inventory(self, rest: str) -> str | None:
        if rest:
            return None
        if self.held < 0:
            return "You are not carrying anything."
        return f"You are carrying: {self.c.o_article[self.held]}."

    def _look(self, rest: str) -> str | None:
        return None if rest else self.look()

    def _help(self, rest: str) -> str | None:
        return HELP_TEXT if self.modern and not rest else None

    # --- goal --------------------------------------------------------------------------------

    def _make_won_check(self) -> Callable[[], bool]:
        goal = self.goal
        targets, dests, lamps = self.target_objects, frozenset(self.dest_receptacles), self.lamps
        if goal.task_type == "look_at_obj_in_light":
            c = self.c
            target_set = frozenset(targets)

            def look_won() -> bool:
                if self.held not in target_set:
                    return False
                return any(self.toggled[lamp] and c.r_loc[self.where[lamp]] == self.loc for lamp in lamps)

            return look_won
        if goal.task_type == "pick_two_obj_and_place":
            target_set = frozenset(targets)

            def two_won() -> bool:
                return any(sum(1 for o in self.contents[r] if o in target_set) >= 2 for r in dests)

            return two_won
        flag = {"clean": "clean", "hot": "hot", "cool": "cool"}.get(goal.state or "")

        def place_won() -> bool:
            where = self.where
            states = getattr(self, flag) if flag else None
            return any(where[o] in dests and (states is None or states[o]) for o in targets)

        return place_won


_HANDLERS: dict[str, Callable[[Engine, str], str | None]] = {
    "go": Engine._go,
    "open": Engine._open,
    "close": Engine._close,
    "take": Engine._take,
    "put": Engine._put,
    "move": Engine._move,
    "heat": Engine._heat,
    "cool": Engine._cool,
    "clean": Engine._clean,
    "use": Engine._use,
    "slice": Engine._slice,
    "examine": Engine._examine,
    "inventory": Engine._inventory,
    "look": Engine._look,
    "help": Engine._help,
}
