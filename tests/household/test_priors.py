"""Plausibility priors agree with the compatibility table (spec 8.3) and cover every object type."""

from __future__ import annotations

import pytest

from prefbuild.envs.household import catalog
from prefbuild.envs.household.priors import PLAUSIBLE_RECEPTACLES, is_plausible, plausible_receptacles


def test_priors_never_contradict_the_compatibility_table() -> None:
    for receptacle, objects in catalog.CAN_CONTAIN.items():
        for obj in objects:
            assert is_plausible(obj, receptacle), (obj, receptacle)
    for obj in catalog.PICKUPABLE:
        assert plausible_receptacles(obj) == {r for r, objs in catalog.CAN_CONTAIN.items() if obj in objs}
        for receptacle in catalog.RECEPTACLE_TYPES:
            assert is_plausible(obj, receptacle) == (obj in catalog.CAN_CONTAIN[receptacle])


def test_every_object_type_has_a_prior() -> None:
    assert set(PLAUSIBLE_RECEPTACLES) == set(catalog.OBJECT_TYPES)
    assert all(PLAUSIBLE_RECEPTACLES[o] for o in catalog.OBJECT_TYPES)
    assert is_plausible("desklamp", "desk") and not is_plausible("desklamp", "fridge")


def test_examples_and_unknowns() -> None:
    assert not is_plausible("apple", "toilet")
    assert not is_plausible("pillow", "fridge")
    assert is_plausible("apple", "fridge")
    assert is_plausible("teddybear", "toilet")  # unknown object type: no prior, no accusation
    assert is_plausible("apple", "spaceship")
    with pytest.raises(KeyError, match="teddybear"):
        plausible_receptacles("teddybear")
