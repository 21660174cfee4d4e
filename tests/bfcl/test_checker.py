"""The env's per-turn verdicts agree with BFCL's own checker on trajectories with mistakes."""

from __future__ import annotations

import pytest

from prefbuild.envs.bfcl.data import CATEGORIES, load_entries
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
