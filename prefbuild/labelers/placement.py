"""A graded placement prior: where looking for an object is *clearly odd*, and where it is only
*conceivable* although ALFRED's placement table forbids it.

ALFRED's table is strict: it never puts food in cabinets or bowls in drawers, yet a person
looking for an apple in a cabinet is searching sensibly. Only places that hold almost
nothing of the kind are clearly odd: bathroom fixtures and the garbage can for anything the
table does not allow there (but a cloth on a towel holder), kitchen appliances for things that
are not food or kitchenware (a coffee machine for anything but a mug, a cup or a kettle), beds
and seats for food and kitchenware, the laundry hamper for anything but cloth, a safe for
pillows, food, kitchenware and bathroom supplies. Everything else the table forbids is
conceivable.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from prefbuild.envs.household.priors import is_plausible

Placement = Literal["plausible", "conceivable", "odd"]

KITCHEN_OBJECTS = frozenset(
    {
        "apple", "bread", "butterknife", "bowl", "cup", "dishsponge", "egg", "fork", "glassbottle", "kettle",
        "knife", "ladle", "lettuce", "mug", "pan", "peppershaker", "plate", "pot", "potato", "saltshaker",
        "spatula", "spoon", "tomato", "winebottle",
    }
)
FOOD_AND_VESSELS = frozenset(
    {
        "apple", "bread", "egg", "lettuce", "potato", "tomato", "winebottle", "glassbottle", "bowl", "cup", "mug",
        "plate", "pot", "pan", "kettle",
    }
)
BATHROOM_FIXTURES = frozenset(
    {"toilet", "towelholder", "handtowelholder", "toiletpaperhanger", "bathtubbasin", "garbagecan"}
)
FOOD_APPLIANCES = frozenset({"fridge", "microwave", "toaster", "coffeemachine"})
DRINKING_VESSELS = frozenset({"mug", "cup", "kettle"})
SEATS = frozenset({"bed", "sofa", "armchair", "ottoman"})
TOWEL_HOLDERS = frozenset({"towelholder", "handtowelholder"})
TOWEL_LIKE = frozenset({"cloth", "towel", "handtowel"})
BATHROOM_SUPPLIES = frozenset({"soapbar", "soapbottle", "toiletpaper", "spraybottle", "plunger", "scrubbrush"})
NOT_IN_A_SAFE = frozenset({"pillow"}) | KITCHEN_OBJECTS | BATHROOM_SUPPLIES


@lru_cache(maxsize=4096)  # a pure function of two type names, asked for every exploring move
def placement(object_type: str, receptacle_type: str) -> Placement:
    """How sensible it is to look for ``object_type`` in ``receptacle_type``.

    Args:
        object_type: a household object type (``apple``).
        receptacle_type: a receptacle type (``cabinet``).

    Returns:
        ``plausible`` (ALFRED allows it, or no prior), ``conceivable`` (forbidden by the table
        but a place a person might look) or ``odd`` (clearly not a place for it).

    Example:
        >>> placement("apple", "cabinet"), placement("egg", "toilet")
        ('conceivable', 'odd')
    """
    if is_plausible(object_type, receptacle_type):
        return "plausible"
    if receptacle_type in TOWEL_HOLDERS and object_type in TOWEL_LIKE:
        return "conceivable"
    if receptacle_type == "safe" and object_type in NOT_IN_A_SAFE:
        return "odd"
    if receptacle_type in BATHROOM_FIXTURES or receptacle_type == "laundryhamper":
        return "odd"
    if receptacle_type in FOOD_APPLIANCES and object_type not in FOOD_AND_VESSELS:
        return "odd"
    if receptacle_type == "coffeemachine" and object_type not in DRINKING_VESSELS:
        return "odd"  # a coffee machine holds a mug, a cup or a kettle beside it, not a tomato
    if receptacle_type == "stoveburner" and object_type not in KITCHEN_OBJECTS:
        return "odd"
    if receptacle_type in SEATS and object_type in KITCHEN_OBJECTS:
        return "odd"
    return "conceivable"
