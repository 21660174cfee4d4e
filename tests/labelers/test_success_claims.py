"""Success claims in the agent's own words, judged against the goal the env confirmed (issue 13).

Sentences are written from the definition: a claim asserts the task, the goal state or the
goal's final step done; a plan, a condition, a question or a negation is not one. A claim is
premature when the env never confirmed the goal: no confirmed put of a goal object into a goal
receptacle (fewer than two in one receptacle for ``put two``), or, for heat / cool / clean
tasks, the object was not heated / cooled / cleaned when it was put.
"""

from __future__ import annotations

from typing import Any

import pytest

from prefbuild.labelers.household_state import HouseState
from prefbuild.labelers.household_text import parse_goal
from prefbuild.labelers.premature_success import PrematureSuccessLabeler, goal_progress
from prefbuild.labelers.success_claims import GOAL, LAMP, LAMP_ON, TASK, find_claim
from prefbuild.records import EnvInfo, Outcome, Step, StopReason, TaskInfo, TeacherInfo, Trajectory

FRIDGE = parse_goal("put an apple in fridge.")
HEAT_EGG = parse_goal("heat some egg and put it in diningtable.")
TWO_SOAP = parse_goal("put two soapbar in garbagecan.")
LAMP_CD = parse_goal("look at cd under the desklamp.")


@pytest.mark.parametrize(
    ("text", "goal", "kind", "count"),
    [
        ("I have completed the task.", FRIDGE, TASK, 1),
        ("The task is complete.", FRIDGE, TASK, 1),
        ("Task succeeded.", FRIDGE, TASK, 1),
        ("Done!", FRIDGE, TASK, 1),
        ("All done.", None, TASK, 1),
        ("The goal has been achieved, nothing left to do.", FRIDGE, TASK, 1),
        ("I'm done.", FRIDGE, TASK, 1),
        ("Done, the apple is now in the fridge.", FRIDGE, GOAL, 1),
        ("The apple has been placed in the fridge 1.", FRIDGE, GOAL, 1),
        ("It is in the fridge now.", FRIDGE, GOAL, 1),
        ("Now I put the apple in fridge 1.", FRIDGE, GOAL, 1),
        ("I took the apple and put it in the fridge.", FRIDGE, GOAL, 1),
        ("Placed the apple in the fridge.", FRIDGE, GOAL, 1),
        ("I've heated the egg and placed it on the diningtable.", HEAT_EGG, GOAL, 1),
        ("The hot egg is now on the dining table.", HEAT_EGG, GOAL, 1),
        ("After heating the egg, I placed it on the table.", HEAT_EGG, GOAL, 1),
        ("I have put two soapbars in the garbagecan.", TWO_SOAP, GOAL, 2),
        ("Both soapbars are now in the garbagecan 1.", TWO_SOAP, GOAL, 2),
        ("I have put the first soapbar in the garbagecan.", TWO_SOAP, GOAL, 1),
        ("I have turned on the desklamp while holding the cd.", LAMP_CD, LAMP, 1),
        ("I have turned on the desklamp.", LAMP_CD, LAMP_ON, 1),
        ("OK. The task is now complete.", FRIDGE, TASK, 1),
        ("I completed the task.", FRIDGE, TASK, 1),
        ("Now I have a clean knife in drawer 1.", parse_goal("put a clean knife in drawer."), GOAL, 1),
        ("Now I heat the egg and put it in the diningtable.", HEAT_EGG, GOAL, 1),
        ("I have put the soapbar 2 in the garbagecan 1.", TWO_SOAP, GOAL, 1),
        ("I have put 2 soapbars in the garbagecan 1.", TWO_SOAP, GOAL, 2),
        ("I am now examining the cd under the desklamp.", LAMP_CD, LAMP, 1),
        ("Now I take the cd and look at it under the desklamp.", LAMP_CD, LAMP, 1),
        ("I have finished putting the apple in the fridge.", FRIDGE, GOAL, 1),
        ("Apple cooled and placed in fridge 1.", FRIDGE, GOAL, 1),
        ("Now the egg is hot and on the diningtable.", HEAT_EGG, GOAL, 1),
        ("It seems the apple is already in the fridge.", FRIDGE, GOAL, 1),
        ("Everything is done.", FRIDGE, TASK, 1),
        ("I have completed all the steps.", FRIDGE, TASK, 1),
        ("The hot egg is on the diningtable 1.", HEAT_EGG, GOAL, 1),
        ("Both soapbars are in the garbagecan 1.", TWO_SOAP, GOAL, 2),
    ],
)
def test_claims_in_the_agents_own_words_are_found(text: str, goal: Any, kind: str, count: int) -> None:
    claim = find_claim(text, goal)
    assert claim is not None, text
    assert (claim.kind, claim.count) == (kind, count)


@pytest.mark.parametrize(
    ("text", "goal"),
    [
        ("Next, I need to put it in the fridge.", FRIDGE),
        ("Next I will put the apple in the fridge.", FRIDGE),
        ("Once the apple is in the fridge, the task is complete.", FRIDGE),
        ("The task is not complete yet.", FRIDGE),
        ("Did I put the apple in the fridge?", FRIDGE),
        ("I have not put the apple in the fridge.", FRIDGE),
        ("The apple is in the fridge 1, so I take it.", FRIDGE),
        ("Then I put it in the fridge.", FRIDGE),
        ("To solve the task, I need to find and take an apple, then put it in the fridge.", FRIDGE),
        ("Let me put the apple in the fridge.", FRIDGE),
        ("I put the mug in the fridge.", FRIDGE),
        ("I have heated the egg.", HEAT_EGG),
        ("Done with the first one, now I need to find the second soapbar.", TWO_SOAP),
        ("I put the apple in the cabinet.", FRIDGE),
        ("If I put the apple in the fridge, the task will be done.", FRIDGE),
        ("The task is to put an apple in the fridge.", FRIDGE),
        ("First I need to find a cd, then turn on the desklamp.", LAMP_CD),
        ("I put the apple in the fridge, but nothing happened.", FRIDGE),
        ("I have the apple in my hand.", FRIDGE),
        ("The apple was in the fridge 1 when I found it.", FRIDGE),
        ("Maybe I put it in the wrong fridge.", FRIDGE),
        ("The apple should be placed in the fridge.", FRIDGE),
        ("I need the apple placed in fridge 1.", FRIDGE),
        ("Apple found in fridge 1.", FRIDGE),
        ("The egg is on the diningtable 1.", HEAT_EGG),
        ("The soapbar is in the garbagecan 1.", TWO_SOAP),
        ("I need to look at the cd under the desklamp.", LAMP_CD),
    ],
)
def test_plans_conditions_questions_and_other_objects_are_not_claims(text: str, goal: Any) -> None:
    assert find_claim(text, goal) is None


def _state(*replies: str) -> HouseState:
    state = HouseState()
    for reply in replies:
        state.apply(reply)
    return state


PICK_EGG = "You pick up the egg 1 from the fridge 1."
HEAT = "You heat the egg 1 using the microwave 1."
COOL = "You cool the egg 1 using the fridge 1."
PUT_EGG = "You put the egg 1 in/on the diningtable 1."


def test_processing_is_tracked_along_the_episode_and_checked_with_the_put() -> None:
    assert not goal_progress(_state(PICK_EGG, PUT_EGG), HEAT_EGG).done
    assert "never confirmed it heated" in goal_progress(_state(PICK_EGG, PUT_EGG), HEAT_EGG).summary
    assert goal_progress(_state(PICK_EGG, HEAT, PUT_EGG), HEAT_EGG).done
    # Cooling after heating undoes the heat (ALFWorld: cool sets isCool and clears isHot).
    assert not goal_progress(_state(PICK_EGG, HEAT, COOL, PUT_EGG), HEAT_EGG).done
    # A cleaned object stays clean through later moves.
    clean = parse_goal("put a clean egg in diningtable.")
    state = _state(
        PICK_EGG,
        "You clean the egg 1 using the sinkbasin 1.",
        "You put the egg 1 in/on the countertop 1.",
        "You pick up the egg 1 from the countertop 1.",
        PUT_EGG,
    )
    assert goal_progress(state, clean).done
    # Taken out again, the goal is no longer met.
    state.apply("You pick up the egg 1 from the diningtable 1.")
    assert not goal_progress(state, clean).done


def test_an_object_put_back_where_it_was_found_counts_as_placed() -> None:
    hot_apple = parse_goal("put a hot apple in fridge.")
    state = _state(
        "You pick up the apple 1 from the fridge 1.",
        "You heat the apple 1 using the microwave 1.",
        "You put the apple 1 in/on the fridge 1.",
    )
    assert goal_progress(state, hot_apple).done


def test_put_two_needs_two_different_objects_in_the_same_receptacle() -> None:
    one_each = _state(
        "You pick up the soapbar 1 from the toilet 1.",
        "You put the soapbar 1 in/on the garbagecan 1.",
        "You pick up the soapbar 2 from the toilet 1.",
        "You put the soapbar 2 in/on the garbagecan 2.",
    )
    assert not goal_progress(one_each, TWO_SOAP).done
    one_each.apply("You pick up the soapbar 2 from the garbagecan 2.")
    one_each.apply("You put the soapbar 2 in/on the garbagecan 1.")
    assert goal_progress(one_each, TWO_SOAP).done


def _household(turns: list[dict[str, Any]], goal: str, *, success: bool = False, react: bool = False) -> Trajectory:
    steps = [
        Step(
            index=i,
            observation="",
            raw_output=turn.get("a", ""),
            thought=turn.get("t"),
            action=turn.get("a"),
            feedback=turn.get("o", ""),
            done=success and i == len(turns) - 1,
        )
        for i, turn in enumerate(turns)
    ]
    return Trajectory(
        id="claims",
        task=TaskInfo(id="claims", type="", goal=goal, split="test"),
        env=EnvInfo(name="household", protocol="react" if react else "agentbench"),
        teacher=TeacherInfo(backend="scripted", model="m"),
        steps=steps,
        outcome=Outcome(success=success, stop_reason=StopReason.success if success else StopReason.max_steps),
    )


def _labelled(trajectory: Trajectory) -> list[int]:
    return [label.step for label in PrematureSuccessLabeler().label(trajectory)]


HEAT_ERRAND = [
    {"a": "go to fridge 1", "o": "The fridge 1 is open. In it, you see a egg 1."},
    {"a": "take egg 1 from fridge 1", "o": PICK_EGG},
    {"a": "go to diningtable 1", "o": "On the diningtable 1, you see a cup 1."},
    {"a": "put egg 1 in/on diningtable 1", "o": PUT_EGG},
]


def test_a_claim_after_putting_an_unheated_object_is_premature() -> None:
    turns = [*HEAT_ERRAND, {"t": "I've heated the egg and placed it on the diningtable.", "a": "look", "o": "..."}]
    trajectory = _household(turns, "heat some egg and put it in diningtable.")
    assert _labelled(trajectory) == [4]
    (label,) = PrematureSuccessLabeler().label(trajectory)
    assert "never confirmed it heated" in label.evidence


def test_the_same_claim_after_the_env_confirmed_the_heat_is_not_premature() -> None:
    heated = [
        *HEAT_ERRAND[:2],
        {"a": "heat egg 1 with microwave 1", "o": HEAT},
        *HEAT_ERRAND[2:],
        {"t": "I've heated the egg and placed it on the diningtable.", "a": "look", "o": "..."},
    ]
    # A log that goes on after the win (the harness did not stop): the claim states what the env confirmed.
    assert _labelled(_household(heated, "heat some egg and put it in diningtable.")) == []


@pytest.mark.parametrize(
    "claim",
    ["Done, the apple is now in the fridge.", "I have completed the task.", "The task is complete.", "Task succeeded."],
)
def test_react_thoughts_claiming_success_after_a_failed_put_are_premature(claim: str) -> None:
    turns = [
        {"a": "take apple 1 from countertop 1", "o": "You pick up the apple 1 from the countertop 1."},
        {"a": "go to fridge 1", "o": "The fridge 1 is closed."},
        {"a": "put apple 1 in fridge 1", "o": "Nothing happens."},
        {"a": f"think: {claim}", "o": "OK."},
        {"a": "look", "o": "You are facing the fridge 1."},
    ]
    assert _labelled(_household(turns, "put an apple in fridge.", react=True)) == [3]


def test_a_free_text_action_claiming_the_goal_is_premature() -> None:
    turns = [
        {"a": "take apple 1 from countertop 1", "o": "You pick up the apple 1 from the countertop 1."},
        {"a": "Done, the apple is now in the fridge.", "o": "Nothing happens."},
    ]
    assert _labelled(_household(turns, "put an apple in fridge.")) == [1]


def test_a_plan_naming_the_final_step_is_not_a_claim() -> None:
    turns = [
        {"a": "take apple 1 from countertop 1", "o": "You pick up the apple 1 from the countertop 1."},
        {"t": "Next I will put it in the fridge.", "a": "go to fridge 1", "o": "The fridge 1 is closed."},
        {"t": "Now I put the apple in the fridge.", "a": "go to fridge 1", "o": "Nothing happens."},
    ]
    assert _labelled(_household(turns, "put an apple in fridge.")) == []


def test_a_claim_in_the_winning_turn_is_not_premature() -> None:
    turns = [
        {"a": "take apple 1 from countertop 1", "o": "You pick up the apple 1 from the countertop 1."},
        {"a": "open fridge 1", "o": "You open the fridge 1. The fridge 1 is open. In it, you see nothing."},
        {
            "t": "The apple has been placed in the fridge, the task is complete.",
            "a": "put apple 1 in/on fridge 1",
            "o": "You put the apple 1 in/on the fridge 1.",
        },
    ]
    assert _labelled(_household(turns, "put an apple in fridge.", success=True)) == []


def test_claiming_two_after_one_confirmed_is_premature_and_one_after_one_is_not() -> None:
    base = [
        {"a": "take soapbar 1 from toilet 1", "o": "You pick up the soapbar 1 from the toilet 1."},
        {"a": "put soapbar 1 in/on garbagecan 1", "o": "You put the soapbar 1 in/on the garbagecan 1."},
    ]
    two = [*base, {"t": "Both soapbars are now in the garbagecan.", "a": "look", "o": "..."}]
    one = [*base, {"t": "I have put the first soapbar in the garbagecan.", "a": "look", "o": "..."}]
    assert _labelled(_household(two, "put two soapbar in garbagecan.")) == [2]
    assert _labelled(_household(one, "put two soapbar in garbagecan.")) == []


def test_a_lamp_claim_is_judged_by_what_it_says() -> None:
    goal = "look at cd under the desklamp."
    lamp_on = [
        {"a": "go to desk 1", "o": "On the desk 1, you see a desklamp 1."},
        {"a": "use desklamp 1", "o": "You turn on the desklamp 1."},
    ]
    # True: the lamp is on (the cd was never taken, but this sentence does not say it was looked at).
    on = [*lamp_on, {"t": "I have turned on the desklamp.", "a": "look", "o": "..."}]
    assert _labelled(_household(on, goal)) == []
    # False: the env never turned a lamp on.
    never = [lamp_on[0], {"t": "I have turned on the desklamp.", "a": "look", "o": "..."}]
    assert _labelled(_household(never, goal)) == [1]
    # The final step claimed without the cd in hand.
    looked = [*lamp_on, {"t": "I have looked at the cd under the desklamp.", "a": "look", "o": "..."}]
    assert _labelled(_household(looked, goal)) == [2]
