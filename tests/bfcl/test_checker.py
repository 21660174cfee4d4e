"""The env's per-turn verdicts agree with BFCL's own checker on trajectories with mistakes."""

from __future__ import annotations

import pytest

from prefbuild.envs.bfcl.backend import BfclBackend
from prefbuild.envs.bfcl.checker import TurnChecker
from prefbuild.envs.bfcl.data import CATEGORIES, load_entries, load_ground_truth
from prefbuild.envs.bfcl.env import BfclEnv
from prefbuild.simulation.bfcl_mistakes import MODES
from tests.bfcl.helpers import bfcl_verdict, mistake_policy, play

SLICE = 6


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("category", CATEGORIES)
def test_verdict_agrees_with_bfcl_checker(category: str, mode: str) -> None:
    verdicts = []
    for index, entry in enumerate(load_entries(category)[:SLICE]):
        episode = play(BfclEnv(hints="actionable"), entry, mistake_policy(mode, at=index % 3, seed=index))
        reference = bfcl_verdict(entry, episode)
        assert episode.last.won == reference["valid"], (entry.id, reference.get("error_type"))
        verdicts.append(reference["valid"])
        if not episode.last.won:
            assert episode.last.facts.progress < 1.0
    if mode == "skipped_call":
        # A skipped ground-truth call always leaves its turn unfinished.
        assert verdicts.count(False) == SLICE, verdicts


def test_guessing_instead_of_asking_costs_progress_not_bfcl_success() -> None:
    entry = load_entries("miss_param")[0]
    episode = play(BfclEnv(), entry, mistake_policy("guessed_parameter", at=0))
    verdicts = [result.info["verdict"] for result in episode.results if "verdict" in result.info]
    irrelevance = "multi_turn:irrelevance_error:decoder_success"
    guessed = [verdict for verdict in verdicts if verdict["error_type"] == irrelevance]
    assert len(guessed) == 1 and not guessed[0]["scored"]
    assert episode.last.facts.progress == pytest.approx(1 - 1 / len(entry.question))
    assert episode.last.won == bfcl_verdict(entry, episode)["valid"]


def test_a_state_failure_an_earlier_turn_left_is_inherited_not_the_turns_own() -> None:
    # multi_turn_base_0 as Qwen3-4B-Instruct-2507 played it: 'temp' made at the root, not in 'document'.
    entry = load_entries("base")[0]
    checker = TurnChecker(entry, load_ground_truth("base")[entry.id].ground_truth)
    model = BfclBackend(entry)
    made = model.run_text("mkdir(dir_name='temp')").result
    first = checker.check(0, model, [made])
    assert not first.valid and first.error_type == "multi_turn:instance_state_mismatch" and not first.inherited
    # Turn 1 changes nothing, as the ground truth's cd and grep would not from the same state: carried.
    searched = model.run_text("grep(file_name='report.txt',pattern='budget analysis')").result
    second = checker.check(1, model, [searched])
    assert not second.valid and second.error_type == "multi_turn:instance_state_mismatch" and second.inherited
