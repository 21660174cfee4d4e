"""The cheap word tests that let success-claim reading skip sentences are exact: they never skip one
that the full patterns would read as a claim, in any case or script."""

from __future__ import annotations

import pytest

from prefbuild.labelers import success_claims
from prefbuild.labelers.household_state import HouseState
from prefbuild.labelers.household_text import parse_goal
from prefbuild.labelers.premature_success import _Replay
from prefbuild.records import Step

FRIDGE = parse_goal("put an apple in fridge.")
LAMP_CD = parse_goal("look at cd under the desklamp.")

TEXTS = [
    "The task is complete.",
    "THE TASK IS COMPLETE.",
    "Mission Accomplished!",
    "タスクは完了しました。",
    "I have put the apple in the fridge 1.",
    "I'VE PLACED THE APPLE IN THE FRIDGE.",
    "The apple is now in the fridge 1.",
    "The apple HAS BEEN   placed in the fridge.",
    "The cold apple sits in the fridge 1.",
    "Apple cooled and placed in fridge 1.",
    "Now I have a cold apple in the fridge 1.",
    "Now I look at the cd under the desklamp.",
    "I have turned on the desklamp 1.",
    "Next I should go to fridge 1.",
    "The next step is to go to fridge 1.",
    "Ok, the apple ıs ın the fridge.",  # dotless i: IGNORECASE reads it, the pre-tests must not skip it
    "The apple İs in the fridge 1.",
    "The apple iſ in the fridge 1.",  # long s: IGNORECASE reads it as s
]


@pytest.mark.parametrize("text", TEXTS)
def test_the_task_word_test_agrees_with_the_pattern(text: str) -> None:
    assert success_claims._has_task_word(text) == (success_claims._TASK_WORDS.search(text) is not None)


@pytest.mark.parametrize("text", TEXTS)
def test_a_sentence_the_state_pattern_reads_passes_the_state_start(text: str) -> None:
    if success_claims._STATE.search(text) is not None and text.isascii():
        assert success_claims._STATE_START.search(text.lower()) is not None


@pytest.mark.parametrize("text", TEXTS)
def test_every_claim_found_passes_the_word_tests(text: str) -> None:
    for goal in (FRIDGE, LAMP_CD):
        assert goal is not None
        if success_claims._find_claims.__wrapped__(text, goal, True):
            assert success_claims.find_claims(text, goal, after_put=True)
            assert success_claims._has_task_word(text) or success_claims._may_claim_goal(text, goal)


def test_the_replayed_state_is_the_state_read_reply_by_reply() -> None:
    replies = [
        "You arrive at loc 3. On the countertop 1, you see a apple 1.",
        "You pick up the apple 1 from the countertop 1.",
        "Nothing happens.",
        "You cool the apple 1 using the fridge 1.",
        "You put the apple 1 in/on the fridge 1.",
    ]
    steps = [Step(index=i, observation="", raw_output="", feedback=reply) for i, reply in enumerate(replies)]
    replay = _Replay(steps, FRIDGE)
    eager = HouseState()
    for index, reply in enumerate(replies):
        eager.apply(reply)
        if index in (1, 4):
            state, shown = replay.through(index)
            assert state.key() == eager.key() and state.placed == eager.placed
            assert shown == [reply for reply in replies[: index + 1] if "apple" in reply]
