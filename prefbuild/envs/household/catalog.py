"""Household world data: types, object properties, what goes where, room inventories, task types.

Everything here is plain data taken from the ALFWorld/ALFRED rules (spec sections 2 and 8), so
that the generator, the engine, the experts and the plausibility priors agree on one source.
Type names are the lower-case, space-free names the game prints (``sinkbasin``, ``butterknife``).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

# --- 8.1 receptacle types -------------------------------------------------------------------------

RECEPTACLE_TYPES: Final[tuple[str, ...]] = (
    "armchair", "bathtubbasin", "bed", "cabinet", "cart", "coffeemachine", "coffeetable", "countertop",
    "desk", "diningtable", "drawer", "dresser", "fridge", "garbagecan", "handtowelholder", "laundryhamper",
    "microwave", "ottoman", "safe", "shelf", "sidetable", "sinkbasin", "sofa", "stoveburner", "toaster",
    "toilet", "toiletpaperhanger", "towelholder", "tvstand",
)  # fmt: skip

OPENABLE_TYPES: Final[frozenset[str]] = frozenset({"fridge", "microwave", "cabinet", "drawer", "safe"})
# Per-instance openability: these are always openable; cabinets and drawers only usually
# (some are open shelving: "On the cabinet 4, you see nothing.").
ALWAYS_OPENABLE_TYPES: Final[frozenset[str]] = frozenset({"fridge", "microwave", "safe"})
OPENABLE_SHARE: Final[float] = 0.88

# Tools: the receptacle type each property-changing verb needs.
HEAT_TOOL: Final[str] = "microwave"
COOL_TOOL: Final[str] = "fridge"
CLEAN_TOOL: Final[str] = "sinkbasin"
KNIFE_TYPES: Final[frozenset[str]] = frozenset({"knife", "butterknife"})
LAMP_TYPES: Final[tuple[str, ...]] = ("desklamp", "floorlamp")

# --- 8.2 object properties ------------------------------------------------------------------------

HEATABLE: Final[frozenset[str]] = frozenset({"apple", "bread", "cup", "egg", "mug", "plate", "potato", "tomato"})
COOLABLE: Final[frozenset[str]] = frozenset(
    {"apple", "bowl", "bread", "cup", "egg", "lettuce", "mug", "pan", "plate", "pot", "potato", "tomato", "winebottle"}
)
CLEANABLE: Final[frozenset[str]] = frozenset(
    {
        "apple", "bowl", "butterknife", "cloth", "cup", "dishsponge", "egg", "fork", "kettle", "knife", "ladle",
        "lettuce", "mug", "pan", "plate", "pot", "potato", "soapbar", "spatula", "spoon", "tomato",
    }
)  # fmt: skip
TOGGLEABLE: Final[frozenset[str]] = frozenset(LAMP_TYPES)
SLICEABLE: Final[frozenset[str]] = frozenset({"apple", "bread", "egg", "lettuce", "potato", "tomato"})
CONTAINER_OBJECTS: Final[frozenset[str]] = frozenset({"bowl", "box", "cup", "mug", "pan", "plate", "pot"})
PICKUPABLE: Final[frozenset[str]] = frozenset(
    {
        "alarmclock", "apple", "baseballbat", "basketball", "book", "bowl", "box", "bread", "butterknife", "candle",
        "cd", "cellphone", "cloth", "creditcard", "cup", "dishsponge", "egg", "fork", "glassbottle", "handtowel",
        "kettle", "keychain", "knife", "ladle", "laptop", "lettuce", "mug", "newspaper", "pan", "papertowel", "pen",
        "pencil", "peppershaker", "pillow", "plate", "plunger", "pot", "potato", "remotecontrol", "saltshaker",
        "soapbar", "soapbottle", "spatula", "spoon", "spraybottle", "statue", "tennisracket", "tissuebox",
        "toiletpaper", "toiletpaperroll", "tomato", "towel", "vase", "watch", "wateringcan", "winebottle",
    }
)  # fmt: skip
# Listed in receptacle contents but never takeable.
SCENERY: Final[frozenset[str]] = frozenset(
    {"houseplant", "television", "desklamp", "floorlamp", "mirror", "sink", "papertowelroll", "scrubbrush"}
)
OBJECT_TYPES: Final[frozenset[str]] = PICKUPABLE | SCENERY

# --- 8.3 which object types each receptacle type can contain ----------------------------------------

_TABLE = (
    "alarmclock apple baseballbat basketball book bowl box bread butterknife candle cd cellphone cloth creditcard "
    "cup dishsponge egg fork glassbottle handtowel kettle keychain knife ladle laptop lettuce mug newspaper pan "
    "papertowel pen pencil peppershaker plate pot potato remotecontrol saltshaker soapbar soapbottle spatula spoon "
    "spraybottle statue tennisracket tissuebox toiletpaper toiletpaperroll tomato vase watch wateringcan winebottle"
)
_DESK = (
    "alarmclock basketball book bowl box candle cd cellphone cloth creditcard cup glassbottle keychain laptop mug "
    "newspaper pen pencil plate remotecontrol soapbottle spraybottle statue tennisracket tissuebox toiletpaper "
    "toiletpaperroll vase watch wateringcan winebottle"
)
_SOFA = "basketball book box cellphone cloth creditcard keychain laptop newspaper pillow remotecontrol"

_CAN_CONTAIN_TEXT: dict[str, str] = {
    "countertop": _TABLE,
    "diningtable": _TABLE,
    "coffeetable": _TABLE,
    "sidetable": _TABLE,
    "desk": _DESK,
    "dresser": _DESK.replace(" soapbottle", ""),
    "shelf": (
        "alarmclock book bowl box candle cd cellphone cloth creditcard cup dishsponge glassbottle handtowel kettle "
        "keychain mug newspaper papertowel pen pencil peppershaker plate pot remotecontrol saltshaker soapbar "
        "soapbottle spraybottle statue tissuebox toiletpaper toiletpaperroll vase watch wateringcan winebottle"
    ),
    "cabinet": (
        "book bowl box candle cd cloth cup dishsponge glassbottle handtowel kettle ladle mug newspaper pan "
        "peppershaker plate plunger pot saltshaker soapbar soapbottle spraybottle tissuebox toiletpaper "
        "toiletpaperroll vase wateringcan winebottle"
    ),
    "drawer": (
        "book butterknife candle cd cellphone cloth creditcard dishsponge fork handtowel keychain knife ladle "
        "newspaper pen pencil peppershaker remotecontrol saltshaker soapbar soapbottle spatula spoon spraybottle "
        "tissuebox toiletpaper toiletpaperroll watch wateringcan"
    ),
    "fridge": "apple bowl bread cup egg glassbottle lettuce mug pan plate pot potato tomato winebottle",
    "microwave": "apple bowl bread cup egg glassbottle mug plate potato tomato",
    "sinkbasin": (
        "apple bowl butterknife cloth cup dishsponge egg fork glassbottle handtowel kettle knife ladle lettuce mug "
        "pan plate pot potato soapbar spatula spoon tomato"
    ),
    "bathtubbasin": "cloth dishsponge handtowel soapbar",
    "garbagecan": (
        "apple bread cd cloth dishsponge egg handtowel lettuce newspaper papertowel pen pencil potato soapbar "
        "soapbottle spraybottle tissuebox toiletpaper toiletpaperroll tomato winebottle"
    ),
    "stoveburner": "kettle pan pot",
    "coffeemachine": "mug",
    "toaster": "",
    "toilet": (
        "candle cloth dishsponge handtowel newspaper papertowel soapbar soapbottle spraybottle tissuebox "
        "toiletpaper toiletpaperroll"
    ),
    "toiletpaperhanger": "toiletpaper toiletpaperroll",
    "towelholder": "towel",
    "handtowelholder": "handtowel",
    "cart": (
        "candle cloth dishsponge handtowel mug papertowel plunger soapbar soapbottle spraybottle statue tissuebox "
        "toiletpaper toiletpaperroll vase"
    ),
    "sofa": _SOFA,
    "armchair": _SOFA,
    "ottoman": _SOFA,
    "bed": "baseballbat basketball book cellphone laptop newspaper pillow tennisracket",
    "safe": "cd cellphone creditcard keychain statue vase watch",
    "tvstand": "tissuebox",
    "laundryhamper": "cloth",
}

CAN_CONTAIN: Final[MappingProxyType[str, frozenset[str]]] = MappingProxyType(
    {recep: frozenset(text.split()) for recep, text in _CAN_CONTAIN_TEXT.items()}
)
"""Table 8.3: receptacle type -> object types a ``put`` (and the generator) may place in it."""

# Scenery is placed where a 3-D scene would have it; a floor lamp is attached to a nearby
# receptacle (``On the sinkbasin 1, you see a floorlamp 1, ...``). Openable types are never used.
_SURFACES = ("countertop", "diningtable", "coffeetable", "sidetable", "desk", "dresser", "shelf")
SCENERY_PLACEMENT: Final[MappingProxyType[str, frozenset[str]]] = MappingProxyType(
    {
        "desklamp": frozenset(_SURFACES),
        "floorlamp": frozenset((*_SURFACES, "tvstand", "armchair", "sofa", "garbagecan", "sinkbasin")),
        "houseplant": frozenset((*_SURFACES, "tvstand")),
        "television": frozenset(("tvstand", "dresser", "desk", "sidetable", "coffeetable", "shelf", "countertop")),
        "mirror": frozenset(("countertop", "dresser", "desk", "shelf", "sidetable", "sinkbasin")),
        "sink": frozenset(("countertop", "sinkbasin")),
        "papertowelroll": frozenset(("countertop", "diningtable", "shelf", "sidetable")),
        "scrubbrush": frozenset(("toilet", "garbagecan", "countertop", "sinkbasin", "shelf", "bathtubbasin")),
    }
)


def receptacles_for(object_type: str) -> frozenset[str]:
    """Receptacle types where ``object_type`` may be placed (8.3 for pickupables, placement for scenery)."""
    if object_type in SCENERY_PLACEMENT:
        return SCENERY_PLACEMENT[object_type]
    return _OBJECT_TO_RECEPTACLES.get(object_type, frozenset())


_OBJECT_TO_RECEPTACLES: dict[str, frozenset[str]] = {
    obj: frozenset(r for r, objs in CAN_CONTAIN.items() if obj in objs) for obj in sorted(PICKUPABLE)
}

# --- 8.4 room inventories -------------------------------------------------------------------------

ROOM_KINDS: Final[tuple[str, ...]] = ("kitchen", "livingroom", "bedroom", "bathroom")
# ALFRED numbers its floor plans 1-30, 201-230, 301-330, 401-430; we keep the hundreds.
ROOM_SCENE_BASE: Final[MappingProxyType[str, int]] = MappingProxyType(
    {"kitchen": 0, "livingroom": 200, "bedroom": 300, "bathroom": 400}
)


@dataclass(frozen=True)
class ReceptacleSpec:
    """How often a receptacle type appears in a room kind, and how many instances (low..high, median)."""

    type: str
    share: float
    low: int = 1
    high: int = 1
    median: int = 1


ROOM_RECEPTACLES: Final[MappingProxyType[str, tuple[ReceptacleSpec, ...]]] = MappingProxyType(
    {
        "kitchen": (
            ReceptacleSpec("cabinet", 1.0, 2, 28, 9),
            ReceptacleSpec("coffeemachine", 1.0),
            ReceptacleSpec("countertop", 1.0, 1, 4, 2),
            ReceptacleSpec("drawer", 0.93, 1, 27, 4),
            ReceptacleSpec("fridge", 1.0),
            ReceptacleSpec("garbagecan", 1.0),
            ReceptacleSpec("microwave", 1.0),
            ReceptacleSpec("sinkbasin", 1.0, 1, 2, 1),
            ReceptacleSpec("stoveburner", 1.0, 2, 6, 4),
            ReceptacleSpec("toaster", 1.0),
            ReceptacleSpec("diningtable", 0.53, 1, 3, 1),
            ReceptacleSpec("shelf", 0.17, 2, 3, 3),
            ReceptacleSpec("sidetable", 0.10),
            ReceptacleSpec("safe", 0.03),
        ),
        "livingroom": (
            ReceptacleSpec("sofa", 1.0, 1, 2, 1),
            ReceptacleSpec("garbagecan", 1.0),
            ReceptacleSpec("armchair", 0.90, 1, 3, 1),
            ReceptacleSpec("coffeetable", 0.83, 1, 2, 1),
            ReceptacleSpec("sidetable", 0.80, 1, 5, 2),
            ReceptacleSpec("drawer", 0.77, 1, 19, 4),
            ReceptacleSpec("diningtable", 0.47, 1, 2, 1),
            ReceptacleSpec("shelf", 0.40, 1, 14, 4),
            ReceptacleSpec("tvstand", 0.40, 1, 2, 1),
            ReceptacleSpec("dresser", 0.33, 1, 2, 1),
            ReceptacleSpec("cabinet", 0.13, 4, 8, 5),
            ReceptacleSpec("ottoman", 0.13),
            ReceptacleSpec("safe", 0.07),
            ReceptacleSpec("desk", 0.03),
        ),
        "bedroom": (
            ReceptacleSpec("bed", 1.0, 1, 2, 1),
            ReceptacleSpec("garbagecan", 1.0),
            ReceptacleSpec("drawer", 0.97, 1, 14, 4),
            ReceptacleSpec("shelf", 0.67, 1, 14, 4),
            ReceptacleSpec("desk", 0.63, 1, 2, 1),
            ReceptacleSpec("sidetable", 0.63, 1, 2, 1),
            ReceptacleSpec("dresser", 0.50, 1, 2, 1),
            ReceptacleSpec("laundryhamper", 0.27),
            ReceptacleSpec("armchair", 0.20),
            ReceptacleSpec("cabinet", 0.17, 1, 4, 2),
            ReceptacleSpec("diningtable", 0.17),
            ReceptacleSpec("safe", 0.17),
            ReceptacleSpec("coffeetable", 0.03),
            ReceptacleSpec("countertop", 0.03),
        ),
        "bathroom": (
            ReceptacleSpec("garbagecan", 1.0),
            ReceptacleSpec("handtowelholder", 1.0, 1, 2, 1),
            ReceptacleSpec("sinkbasin", 1.0, 1, 2, 1),
            ReceptacleSpec("toilet", 1.0),
            ReceptacleSpec("toiletpaperhanger", 1.0),
            ReceptacleSpec("towelholder", 1.0, 1, 2, 1),
            ReceptacleSpec("countertop", 0.83, 1, 2, 1),
            ReceptacleSpec("bathtubbasin", 0.70),
            ReceptacleSpec("cabinet", 0.50, 2, 9, 4),
            ReceptacleSpec("drawer", 0.50, 1, 8, 3),
            ReceptacleSpec("shelf", 0.27, 1, 4, 2),
            ReceptacleSpec("cart", 0.07),
            ReceptacleSpec("dresser", 0.07),
            ReceptacleSpec("sidetable", 0.07),
        ),
    }
)


def _shares(always: str, **shares: float) -> MappingProxyType[str, float]:
    table = dict.fromkeys(always.split(), 1.0)
    table.update(shares)
    return MappingProxyType(table)


ROOM_OBJECTS: Final[MappingProxyType[str, MappingProxyType[str, float]]] = MappingProxyType(
    {
        "kitchen": _shares(
            "apple bowl bread butterknife cup dishsponge egg fork knife lettuce mug pan peppershaker plate pot potato "
            "saltshaker soapbottle spatula spoon tomato",
            kettle=0.5, ladle=0.33, winebottle=0.33, glassbottle=0.23, book=0.1, cellphone=0.1, creditcard=0.1,
            pen=0.1, pencil=0.1, spraybottle=0.1, statue=0.1, vase=0.1,
        ),
        "livingroom": _shares(
            "box creditcard keychain laptop pillow remotecontrol statue",
            newspaper=0.6, vase=0.6, watch=0.53, wateringcan=0.43, plate=0.33, tissuebox=0.3, book=0.23,
            cellphone=0.23, pen=0.15, pencil=0.15, bowl=0.13, candle=0.1,
        ),
        "bedroom": _shares(
            "alarmclock book cd cellphone creditcard keychain laptop pen pencil pillow",
            mug=0.53, baseballbat=0.43, bowl=0.43, box=0.4, basketball=0.37, tennisracket=0.33, cloth=0.15,
            remotecontrol=0.15, statue=0.15, tissuebox=0.15, vase=0.15, watch=0.15,
        ),
        "bathroom": _shares(
            "candle cloth handtowel plunger soapbar soapbottle spraybottle toiletpaper towel",
            tissuebox=0.3, dishsponge=0.2,
        ),
    }
)  # fmt: skip
"""Pickupable object types per room kind -> share of scenes that have them."""

ROOM_SCENERY: Final[MappingProxyType[str, MappingProxyType[str, float]]] = MappingProxyType(
    {
        "kitchen": _shares("sink", houseplant=0.33, papertowelroll=0.33, mirror=0.05),
        "livingroom": _shares("floorlamp houseplant television", desklamp=0.23),
        "bedroom": _shares("mirror", desklamp=0.67, television=0.1),
        "bathroom": _shares("mirror scrubbrush sink", floorlamp=0.05),
    }
)

# --- 2. task types --------------------------------------------------------------------------------


@dataclass(frozen=True)
class TaskTypeSpec:
    """One ALFWorld task family: its numeric id, benchmark prefix, goal templates, rooms, needed state."""

    name: str
    numeric_id: int
    prefix: str  # the folder-name prefix ReAct/AgentBench match to pick examples
    short: str  # ReAct/AgentBench short name ("put", "clean", ...)
    templates: tuple[str, str]
    rooms: tuple[str, ...]
    state: str | None = None  # "clean" / "hot" / "cool": the property the object must have


TASK_TYPES: Final[tuple[TaskTypeSpec, ...]] = (
    TaskTypeSpec(
        "pick_and_place_simple", 1, "pick_and_place", "put",
        ("put a {obj} in {recep}", "put some {obj} on {recep}"), ROOM_KINDS,
    ),
    TaskTypeSpec(
        "look_at_obj_in_light", 2, "look_at_obj", "examine",
        ("look at {obj} under the {toggle}", "examine the {obj} with the {toggle}"), ("livingroom", "bedroom"),
    ),
    TaskTypeSpec(
        "pick_clean_then_place_in_recep", 3, "pick_clean_then_place", "clean",
        ("put a clean {obj} in {recep}", "clean some {obj} and put it in {recep}"), ("kitchen", "bathroom"), "clean",
    ),
    TaskTypeSpec(
        "pick_heat_then_place_in_recep", 4, "pick_heat_then_place", "heat",
        ("put a hot {obj} in {recep}", "heat some {obj} and put it in {recep}"), ("kitchen",), "hot",
    ),
    TaskTypeSpec(
        "pick_cool_then_place_in_recep", 5, "pick_cool_then_place", "cool",
        ("put a cool {obj} in {recep}", "cool some {obj} and put it in {recep}"), ("kitchen",), "cool",
    ),
    TaskTypeSpec(
        "pick_two_obj_and_place", 6, "pick_two_obj", "puttwo",
        ("put two {obj} in {recep}", "find two {obj} and put them in {recep}"), ROOM_KINDS,
    ),
)  # fmt: skip

TASK_TYPE_NAMES: Final[tuple[str, ...]] = tuple(spec.name for spec in TASK_TYPES)
TASK_TYPE_BY_NAME: Final[MappingProxyType[str, TaskTypeSpec]] = MappingProxyType({s.name: s for s in TASK_TYPES})

# The property each state task needs -> (object types that can get it, the tool receptacle type, verb).
STATE_RULES: Final[MappingProxyType[str, tuple[frozenset[str], str, str]]] = MappingProxyType(
    {
        "clean": (CLEANABLE, CLEAN_TOOL, "clean"),
        "hot": (HEATABLE, HEAT_TOOL, "heat"),
        "cool": (COOLABLE, COOL_TOOL, "cool"),
    }
)


def task_type_spec(name: str) -> TaskTypeSpec:
    """The task type named ``name``: an internal name, a short name (``put``), a prefix or the numeric id."""
    key = str(name).strip()
    for spec in TASK_TYPES:
        if key in (spec.name, spec.short, spec.prefix, str(spec.numeric_id)):
            return spec
    known = ", ".join(f"{s.name} ({s.short})" for s in TASK_TYPES)
    raise ValueError(f"unknown household task type {name!r}; known: {known}")
