"""The deployed labelers on the blind sets, a regression gate.

The blind sets were written from the specification by annotators who never read the labeler
code nor saw its output (``tests/labelers/blind_sets.md``). Each test set was held out, scored
once in aggregate (the figures that count as evidence, recorded in blind_sets.md and the
README), and only then retired into development data: its misses were read and the labelers
corrected (``blind_test24``'s two are left as readings of the annotator's own). No held-out
set is left; the next one has to be written fresh.

Here every set is held at what the labelers score on it now. Where a set still misses, the
label is one where the annotators of different sets read the definitions differently (a
rounded average, a unit conversion, a keychain or a saltshaker looked for in an odd place
during a sweep, ``use desklamp`` with a phantom object); the
floors below are those figures. Raising a floor is fine; lowering one needs a reason in the
commit.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from prefbuild.labelers.evaluation import ModeScore, evaluate_sidecar

HERE = Path(__file__).parent
Floors = dict[str, tuple[float, float]]
# set -> {mode: (precision floor, recall floor)}; every other mode is held at 1.00 / 1.00.
FLOORS: dict[str, Floors] = {
    "blind_dev": {},
    "blind_test": {},
    "blind_test2": {"implausible_location": (0.95, 1.0)},
    "blind_test3": {"phantom_object": (1.0, 0.95)},
    "blind_test4": {"wrong_answer": (0.94, 1.0)},
    "blind_test5": {"implausible_location": (0.91, 1.0), "wrong_answer": (0.96, 1.0)},
    "blind_test6": {},
    "blind_test7": {},
    "blind_test8": {},
    "blind_test9": {},
    # A pillow looked for in drawers (conceivable in the development set).
    "blind_test10": {"implausible_location": (1.0, 0.63)},
    "blind_test11": {},
    "blind_test12": {},
    # A put of an object a snapped put set down, not phantom to this annotator (phantom to blind_test7's); a
    # one-slot put lap snapped onto other commands.
    "blind_test13": {"loop": (1.0, 0.99), "phantom_object": (0.92, 1.0)},
    "blind_test14": {},
    "blind_test15": {},
    # A candle looked for in the sinkbasin: clearly odd to this annotator, a place a blind_test5 reading leaves alone.
    "blind_test16": {"implausible_location": (1.0, 0.94)},
    "blind_test17": {},
    "blind_test18": {},
    # Three things named on the way to a plan, short of re-listing them at length to the labeler.
    "blind_test19": {"verbose_filler": (1.0, 0.9)},
    "blind_test20": {},
    "blind_test21": {},
    "blind_test22": {},
    "blind_test23": {},
    # Its two misses, read: a 13-word re-listing (restatement starts at 15 words) and an intention read as a claim.
    "blind_test24": {"premature_success": (1.0, 0.93), "verbose_filler": (1.0, 0.91)},
    # Written fresh on 2026-11-29, scored once (verbose_filler P 0.90), then its one false label read:
    # a thought that states its purpose ("... the desklamp 1 to look at it") is a plan, not narration.
    "blind_test25": {},
    # Code-env episodes labelled from the tool modes' definitions only (scored once, 2026-11-29: every tool
    # mode P 1.00 R 1.00). The generic labelers then also labelled 22 of its steps, each beside the tool mode
    # that narrows it (invalid_action beside tool_error, loop beside repeated_tool_call); since 2026-11-30 a
    # step's mistake is named once, by its narrowest mode (Labeler.narrows), so every mode is held at 1.00.
    "blind_tools1": {},
    # tau2 and BFCL episodes from the definitions (scored once, 2026-11-29; first score and readings in its
    # README). Left: a claim of a change no call made, which this annotator reads as wrong_answer (a07, r06,
    # b07) and blind_tools3's annotator as premature_success, as the labelers do (tau2's grader failed the
    # work, not what the agent told; BFCL never grades an answer's text); and b12's tool_error that the
    # replay after the BFCL fix brought.
    "blind_tools2": {"premature_success": (0.0, 0.0), "wrong_answer": (1.0, 0.0), "tool_error": (0.83, 1.0)},
    # code, tau2 and BFCL episodes imitating a Qwen3-4B-class agent's runs, from the definitions (scored once,
    # 2026-11-29; first score and readings in its README). Left: a delay's length and cause stated in words
    # ("about three hours", "a late-arriving aircraft", a03), which the figure checks do not read; and r02's
    # miscomputed refund ($18.99 for 17.99), which the stated-figure rule names and this annotator reads as
    # wrong_answer only (the same step has both).
    "blind_tools3": {"hallucinated_tool_output": (0.83, 0.83)},
}


def _below(overall: dict[str, ModeScore], floors: Floors) -> list[str]:
    below = []
    for mode, counts in overall.items():
        floor_p, floor_r = floors.get(mode, (1.0, 1.0))
        precision, recall = counts.precision, counts.recall  # None: nothing found / nothing expected
        if (precision is not None and precision < floor_p) or (recall is not None and recall < floor_r):
            below.append(f"{mode}: P {precision} R {recall} (floor {floor_p}/{floor_r})")
    return below


@pytest.mark.parametrize("name", sorted(FLOORS))
def test_every_blind_set_holds_its_floors(name: str) -> None:
    overall = evaluate_sidecar(HERE / name / "labels.jsonl")["all"]
    assert not _below(overall, FLOORS[name])


def test_every_blind_set_is_gated() -> None:
    sets = {path.parent.name for path in HERE.glob("blind_*/labels.jsonl")}
    assert sets == set(FLOORS)
