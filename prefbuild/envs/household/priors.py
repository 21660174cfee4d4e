"""Plausibility priors: where each object type can plausibly be found in a household.

A receptacle type is plausible for an object type when ALFRED's compatibility table (spec 8.3)
lets it hold the object, or, for scenery that the table does not cover (lamps, plants,
televisions), when scenes place it there (spec 8.4). Searching anywhere else -- an apple in a
toilet, a pillow in the fridge -- is what the ``implausible_location`` labeler flags.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

from prefbuild.envs.household import catalog

PLAUSIBLE_RECEPTACLES: Final[MappingProxyType[str, frozenset[str]]] = MappingProxyType(
    {obj: catalog.receptacles_for(obj) for obj in sorted(catalog.OBJECT_TYPES)}
)
"""Object type -> receptacle types where it can plausibly be found."""


def plausible_receptacles(object_type: str) -> frozenset[str]:
    """Receptacle types where ``object_type`` can plausibly be found.

    Raises ``KeyError`` naming the type when it is not a household object type.
    """
    try:
        return PLAUSIBLE_RECEPTACLES[object_type]
    except KeyError:
        raise KeyError(f"unknown household object type {object_type!r}") from None


def is_plausible(object_type: str, receptacle_type: str) -> bool:
    """Whether a ``receptacle_type`` is a plausible place to look for an ``object_type``.

    Unknown object or receptacle types are plausible (no prior, so no accusation): the labeler
    also reads games of the real ALFWorld, whose rare types this table may not list.
    """
    holders = PLAUSIBLE_RECEPTACLES.get(object_type)
    if holders is None or receptacle_type not in catalog.CAN_CONTAIN:
        return True
    return receptacle_type in holders
