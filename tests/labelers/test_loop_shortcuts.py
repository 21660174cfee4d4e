"""The loop labeler's per-episode shortcuts agree with the per-step computations they replace."""

from __future__ import annotations

import random
from itertools import pairwise

from prefbuild.labelers.household_state import reports_effect
from prefbuild.labelers.loop import _may_repeat, _reporting
from prefbuild.records import Step

_REPLIES = [
    "You pick up the pen 3 from the desk 1.",
    "You put the pen 3 in/on the garbagecan 1.",
    "You arrive at loc 4. On the desk 1, you see a pen 3.",
    "Nothing happens.",
    "YOU HEAT THE EGG 1 USING THE MICROWAVE 1.",
    "you turn on the desklamp 1.",
    "You pick up the\0pen 3 from the desk 1.",
    "You move the mug 2 to the shelf 1. You pick up the cup 1 from the shelf 1.",
    "",
    "\0",
    "You clean the apple 1 using the sinkbasin 1.\nYou slice the bread 2 with the knife 1.",
]


def _step(index: int, feedback: str) -> Step:
    return Step(index=index, observation="", raw_output="", feedback=feedback)


def test_reporting_finds_the_replies_that_report_effects() -> None:
    generator = random.Random(11)
    for _ in range(3000):
        steps = [_step(index, generator.choice(_REPLIES)) for index in range(generator.randint(1, 8))]
        replies = "\0".join(step.feedback for step in steps).lower()
        expected = [index for index, step in enumerate(steps) if reports_effect(step.feedback.lower())]
        assert _reporting(steps, replies) == expected


def _may_repeat_in_full(keys: list[str | None], masked: list[str | None]) -> bool:
    present = [key for key in keys if key is not None]
    pairs = [(a, b) for a, b in pairwise(masked) if a is not None and b is not None]
    return len(set(present)) < len(present) or len(set(pairs)) < len(pairs)


def test_may_repeat_without_none_keys() -> None:
    generator = random.Random(5)
    words = ["go to #", "take # from #", "go to desk 1", "go to desk 2", "open #", None]
    for _ in range(5000):
        keys = [generator.choice(words) for _ in range(generator.randint(0, 6))]
        masked = [key if key is None else key.replace("desk 1", "#").replace("desk 2", "#") for key in keys]
        assert _may_repeat(keys, masked) == _may_repeat_in_full(keys, masked)


def test_shown_holds_exactly_the_keys_of_the_text() -> None:
    from prefbuild.labelers.loop import _Shown, info_keys

    generator = random.Random(3)
    pieces = [
        "You are in the middle of a room. ", "you see a desk 1, a shelf 2", "On the desk 1, you see ", "a pen 2",
        "nothing", ". ", ", ", "The drawer 1 is open. In it, you see ", "Nothing happens.", "OK.", "DESK 1",
        "xdesk 1", "desk 12", "\n", " ", "step 3",
    ]
    texts = ["".join(generator.choice(pieces) for _ in range(generator.randint(0, 6))) for _ in range(400)]
    replies = [info_keys(text) for text in texts]
    for text in texts:
        shown, keys = _Shown(text), info_keys(text)
        for reply in generator.sample(replies, 40):
            for part in (reply, frozenset(list(reply)[:1])):
                assert shown.holds(part) == (part <= keys), (text, part)


def test_parsed_reply_items_by_position_agree_with_entities_of_each_list() -> None:
    from prefbuild.labelers.loop import _parsed_reply
    from tests.labelers.test_fast_paths import _parsed_reply_in_full

    generator = random.Random(13)
    pieces = [
        "On the desk 1, you see ", "The drawer 2 is open. In it, you see ", "a pen 2", ", ", ", and ", ".", " ",
        "2 apples", "a apple 12", "step 3", "\u00e9", "\u0663", "nothing", "x", "_", "1", "loc 4", "You arrive at ",
        "you see ", "A CD 3", "\n",
    ]
    for _ in range(20000):
        feedback = "".join(generator.choice(pieces) for _ in range(generator.randint(1, 9)))
        assert _parsed_reply.__wrapped__(feedback) == _parsed_reply_in_full(feedback), feedback
