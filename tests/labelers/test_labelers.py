"""Behaviour of single labelers beyond the fixture set: goal templates and configurable thresholds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from prefbuild.labelers.format_violation import FormatViolationLabeler
from prefbuild.labelers.household_text import Goal, parse_goal
from prefbuild.labelers.implausible_location import ImplausibleLocationLabeler
from prefbuild.labelers.invalid_action import InvalidActionLabeler
from prefbuild.labelers.loop import LoopLabeler
from prefbuild.labelers.premature_success import PrematureSuccessLabeler
from prefbuild.labelers.verbose_filler import VerboseFillerLabeler
from prefbuild.records import EnvInfo, Outcome, Step, StepFacts, StopReason, TaskInfo, TeacherInfo, Trajectory


def _trajectory(turns: list[dict[str, Any]], goal: str = "put some knife on drawer.", **env: str) -> Trajectory:
    steps = [
        Step(
            index=i,
            observation=turn.get("observation", ""),
            raw_output=turn.get("raw", f"ACTION: {turn.get('action')}"),
            thought=turn.get("thought"),
            action=turn.get("action"),
            feedback=turn.get("feedback", ""),
            format_ok=turn.get("format_ok", True),
            normalized=turn.get("normalized", []),
            valid=turn.get("valid"),
            facts=StepFacts(**turn.get("facts", {})),
        )
        for i, turn in enumerate(turns)
    ]
    return Trajectory(
        id="unit",
        task=TaskInfo(id="unit", type="", goal=goal, split="test"),
        env=EnvInfo(name=env.get("name", "household"), protocol=env.get("protocol", "agentbench")),
        teacher=TeacherInfo(backend="scripted", model="m"),
        steps=steps,
        outcome=Outcome(success=False, stop_reason=StopReason.max_steps),
    )


@pytest.mark.parametrize(
    ("text", "goal"),
    [
        ("put a soapbottle in toilet.", Goal("put", "soapbottle", "toilet")),
        ("put some spraybottle on toilet.", Goal("put", "spraybottle", "toilet")),
        ("look at bowl under the desklamp.", Goal("examine", "bowl", "desklamp")),
        ("examine the pen with the floorlamp.", Goal("examine", "pen", "floorlamp")),
        ("put a clean lettuce in diningtable.", Goal("clean", "lettuce", "diningtable")),
        ("clean some soapbar and put it in toilet.", Goal("clean", "soapbar", "toilet")),
        ("put a hot apple in fridge.", Goal("heat", "apple", "fridge")),
        ("heat some egg and put it in diningtable.", Goal("heat", "egg", "diningtable")),
        ("put a cool mug in cabinet.", Goal("cool", "mug", "cabinet")),
        ("cool some pan and put it in stoveburner.", Goal("cool", "pan", "stoveburner")),
        ("put two saltshaker in drawer.", Goal("puttwo", "saltshaker", "drawer")),
        ("find two pillow and put them in sofa.", Goal("puttwo", "pillow", "sofa")),
        ("Your task is to: Put A Clean Knife In/On Drawer", Goal("clean", "knife", "drawer")),
    ],
)
def test_every_goal_template_parses(text: str, goal: Goal) -> None:
    assert parse_goal(text) == goal


def test_unknown_goal_text_gives_no_goal_and_no_implausible_labels() -> None:
    assert parse_goal("solve the puzzle") is None
    trajectory = _trajectory([{"action": "go to toilet 1"}], goal="solve the puzzle")
    assert ImplausibleLocationLabeler().label(trajectory) == []


def _script(times: int, length: int) -> list[dict[str, Any]]:
    block = [{"action": f"go to drawer {i + 1}", "feedback": f"The drawer {i + 1} is closed."} for i in range(length)]
    return block * times


def test_loop_repeats_are_configurable() -> None:
    four_cycle = _trajectory(_script(times=2, length=4))
    assert [label.step for label in LoopLabeler().label(four_cycle)] == [4, 5, 6, 7]
    assert LoopLabeler(k=3).label(four_cycle) == []
    three_laps = _trajectory(_script(times=3, length=4))
    assert [label.step for label in LoopLabeler(k=3).label(three_laps)] == list(range(4, 12))


def test_loop_laps_with_one_slot_varying_need_max_cycle() -> None:
    turns = [{"action": "take mug 1 from countertop 1", "feedback": "You pick up the mug 1 from the countertop 1."}]
    for cabinet in (1, 2, 3):
        turns += [
            {"action": f"go to cabinet {cabinet}", "feedback": f"The cabinet {cabinet} is closed."},
            {"action": f"examine cabinet {cabinet}", "feedback": f"The cabinet {cabinet} is closed."},
        ]
    observation = "You are in the middle of a room. You see a cabinet 1, a cabinet 2, a cabinet 3, a countertop 1."
    turns[0]["observation"] = observation
    found = LoopLabeler().label(_trajectory(turns))
    assert [label.step for label in found] == [3, 4, 5, 6]
    assert "'cabinet 1' changed to 'cabinet 2'" in found[0].evidence


def test_loop_k_counts_identical_actions_in_a_row() -> None:
    three = _trajectory([{"action": "look", "feedback": "You are facing the desk 1."}] * 3)
    assert [label.step for label in LoopLabeler().label(three)] == [1, 2]
    assert LoopLabeler(k=4).label(three) == []


def test_loop_is_not_labelled_when_the_replay_shows_something_new() -> None:
    turns = [
        {"action": "go to cabinet 1", "feedback": "The cabinet 1 is closed."},
        {"action": "go to cabinet 2", "feedback": "The cabinet 2 is closed."},
        {"action": "go to cabinet 1", "feedback": "The cabinet 1 is open. In it, you see a mug 1."},
        {"action": "go to cabinet 2", "feedback": "The cabinet 2 is open. In it, you see a cup 3."},
    ]
    assert LoopLabeler().label(_trajectory(turns)) == []


def test_verbose_thresholds_and_phrase_lists_are_configurable(tmp_path: Path) -> None:
    polite = _trajectory([{"thought": "Okay, going on.", "raw": "THOUGHT: Okay, going on.\n ACTION: look"}])
    assert VerboseFillerLabeler().label(polite) == []
    assert len(VerboseFillerLabeler(min_weak_hits=1).label(polite)) == 1
    long_thought = " ".join(f"word{i}" for i in range(40))
    wordy = _trajectory([{"thought": long_thought, "raw": f"THOUGHT: {long_thought}\n ACTION: look"}])
    assert VerboseFillerLabeler().label(wordy) == []
    assert "thought of 40 tokens" in VerboseFillerLabeler(max_thought_tokens=30).label(wordy)[0].evidence
    custom = tmp_path / "filler_de.txt"
    custom.write_text("# German filler\nsehr gerne\n", encoding="utf-8")
    german = _trajectory([{"raw": "THOUGHT: Sehr gerne! Ich gehe.\n ACTION: look"}])
    assert VerboseFillerLabeler().label(german) == []
    assert "Sehr gerne" in VerboseFillerLabeler(phrase_files=[str(custom)]).label(german)[0].evidence
    assert len(VerboseFillerLabeler(phrases=["ich gehe"]).label(german)) == 1


def test_verbose_rejects_a_missing_phrase_file() -> None:
    with pytest.raises(FileNotFoundError, match=r"nope\.txt"):
        VerboseFillerLabeler(phrase_files=["nope.txt"])


def test_premature_thought_claims_can_be_switched_off() -> None:
    turns = [
        {"action": "put knife 1 in/on drawer 1", "feedback": "Nothing happens."},
        {"thought": "The task is complete.", "action": "look", "feedback": "You are facing the drawer 1."},
    ]
    assert [label.step for label in PrematureSuccessLabeler().label(_trajectory(turns))] == [1]
    assert PrematureSuccessLabeler(thought_claims=False).label(_trajectory(turns)) == []


def test_invalid_action_uses_recorded_admissible_commands() -> None:
    turns = [
        {
            "observation": "On the drawer 1, you see a knife 1.",
            "action": "take knife 1 from the drawer 1",
            "feedback": "",
            "facts": {"admissible": ["take knife 1 from drawer 1", "look"]},
        }
    ]
    (label,) = InvalidActionLabeler().label(_trajectory(turns))
    assert "not among the admissible commands" in label.evidence


def test_format_violation_reports_parser_problems_and_can_reparse() -> None:
    flagged = _trajectory(
        [
            {
                "raw": "ACTION: > go to desk 1",
                "action": "go to desk 1",
                "format_ok": False,
                "normalized": ["leading '> '"],
            }
        ]
    )
    (label,) = FormatViolationLabeler().label(flagged)
    assert "leading '> '" in label.evidence and label.confidence == 1.0
    lenient = _trajectory([{"raw": "Sure!\nACTION: go to desk 1", "action": "go to desk 1", "format_ok": True}])
    assert FormatViolationLabeler().label(lenient) == []
    # the benchmark's parser reads the command after "ACTION:" whatever stands before it
    assert FormatViolationLabeler(reparse=True).label(lenient) == []
    (label,) = FormatViolationLabeler(reparse=True, accepted_problems=[]).label(lenient)
    assert "text before the action" in label.evidence


def test_implausible_location_exempt_types_are_configurable() -> None:
    turns = [{"action": "go to toilet 1", "feedback": "On the toilet 1, you see a soapbar 1."}]
    assert len(ImplausibleLocationLabeler().label(_trajectory(turns))) == 1
    assert ImplausibleLocationLabeler(exempt=["toilet"]).label(_trajectory(turns)) == []
