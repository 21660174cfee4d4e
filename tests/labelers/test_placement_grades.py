"""The graded placement prior on the examples the label definitions name (issue 13, fact 8)."""

from __future__ import annotations

import pytest

from prefbuild.labelers.placement import placement


@pytest.mark.parametrize(
    ("obj", "receptacle"),
    [
        ("soapbottle", "towelholder"),
        ("egg", "toilet"),
        ("spraybottle", "bathtubbasin"),
        ("saltshaker", "garbagecan"),
        ("knife", "fridge"),
        ("spatula", "garbagecan"),
        ("soapbar", "toiletpaperhanger"),
        ("pencil", "laundryhamper"),
        ("pillow", "safe"),
        ("apple", "safe"),
    ],
)
def test_clearly_odd_places(obj: str, receptacle: str) -> None:
    assert placement(obj, receptacle) == "odd"


@pytest.mark.parametrize(
    ("obj", "receptacle"),
    [
        ("apple", "cabinet"),
        ("tomato", "shelf"),
        ("bowl", "drawer"),
        ("mug", "drawer"),
        ("saltshaker", "stoveburner"),
        ("cloth", "towelholder"),
        ("pillow", "sidetable"),
        ("cd", "safe"),
    ],
)
def test_conceivable_or_plausible_places_are_not_odd(obj: str, receptacle: str) -> None:
    assert placement(obj, receptacle) != "odd"
