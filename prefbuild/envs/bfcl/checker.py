"""Per-turn verdicts with BFCL's own multi-turn checks.

BFCL's ``multi_turn_checker`` replays the model's calls through its ``eval`` executor; this
module keeps the same turn loop but feeds it the episode's own backend instances and results,
and calls BFCL's ``state_checker`` and ``response_checker`` (imported from the package) for
the comparison. The ground-truth calls run on a second, fresh set of instances through the same
safe dispatcher. Turn rules as in BFCL: a turn with ground truth needs at least one model call,
then the instance states must match and every ground-truth result must appear among the model's
results so far (all turns); a turn without ground truth (a missing function or parameter) is not
scored by BFCL, and counts as reached here when the model made no call in it (asked instead).
A turn that fails the state check although its ground truth, run from the state the model began the
turn in, leaves the very state the model's calls left is marked ``inherited``: the mistake is an
earlier turn's, carried (BFCL fails every later turn of an entry on it).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from prefbuild.envs.bfcl.backend import BfclBackend
from prefbuild.envs.bfcl.data import BfclEntry


@dataclass(frozen=True)
class TurnVerdict:
    """BFCL's verdict on one user turn."""

    turn: int
    valid: bool
    scored: bool
    error_type: str | None = None
    message: str | None = None
    # a state failure the turn's own calls did not cause: from the state the model started the turn in,
    # the ground truth's calls leave the same state the model's did (an earlier turn's mistake, carried)
    inherited: bool = False


class TurnChecker:
    """Ground-truth replay and BFCL's per-turn checks for one episode.

    Args:
        entry: the task.
        ground_truth: the ground-truth call strings per turn.

    Example:
        >>> from prefbuild.envs.bfcl.data import load_entries, load_ground_truth
        >>> entry = load_entries("base")[0]
        >>> checker = TurnChecker(entry, load_ground_truth("base")[entry.id].ground_truth)
        >>> checker.check(0, BfclBackend(entry), []).error_type
        'multi_turn:empty_turn_model_response'
    """

    def __init__(self, entry: BfclEntry, ground_truth: list[list[str]]) -> None:
        self.ground_truth = ground_truth
        self.entry = entry
        self.reference = BfclBackend(entry)
        self._start: dict[str, Any] = BfclBackend(entry).instances  # the model's instances as the turn began
        self.model_results: list[str] = []
        self.reference_failures: list[str] = []

    def check(self, turn: int, model: BfclBackend, turn_results: list[str]) -> TurnVerdict:
        """Run the turn's ground truth and compare with the model's backend after the turn.

        Args:
            turn: the user turn index.
            model: the episode's backend (its instances after the model's calls of this turn).
            turn_results: BFCL result texts of the model's calls in this turn, in order.

        Returns:
            The verdict (``scored`` False for a turn without ground truth).
        """
        from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import response_checker, state_checker

        expected = self.ground_truth[turn]
        outcomes = [self.reference.run_text(text) for text in expected]
        self.reference_failures.extend(
            f"turn {turn}: {text}" for text, o in zip(expected, outcomes, strict=True) if not o.executed
        )
        reference_results = [outcome.result for outcome in outcomes]
        self.model_results.extend(turn_results)
        start, self._start = self._start, copy.deepcopy(model.instances)
        if not expected:
            if turn_results:
                return TurnVerdict(
                    turn,
                    False,
                    False,
                    "multi_turn:irrelevance_error:decoder_success",
                    "calls made in a turn that should be answered without them",
                )
            return TurnVerdict(turn, True, False)
        if not turn_results:
            return TurnVerdict(
                turn,
                False,
                True,
                "multi_turn:empty_turn_model_response",
                f"Model response list is empty for turn {turn}",
            )
        state: dict[str, Any] = state_checker(model.instances, self.reference.instances)
        if not state["valid"]:
            inherited = self._same_as_ground_truth(start, expected, model)
            return TurnVerdict(turn, False, True, state["error_type"], _short(state), inherited)
        response: dict[str, Any] = response_checker(self.model_results, reference_results, turn)
        if not response["valid"]:
            return TurnVerdict(turn, False, True, response["error_type"], _short(response))
        return TurnVerdict(turn, True, True)

    def _same_as_ground_truth(self, start: dict[str, Any], expected: list[str], model: BfclBackend) -> bool:
        """Whether the ground truth's calls, run from ``start`` (the model's state when the turn began),
        leave the state the model's own calls left."""
        from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import state_checker

        counterfactual = BfclBackend(self.entry)
        counterfactual.instances = copy.deepcopy(start)
        for text in expected:
            counterfactual.run_text(text)
        return bool(state_checker(model.instances, counterfactual.instances)["valid"])


def _short(result: dict[str, Any]) -> str:
    message = str(result.get("error_message", ""))
    details = result.get("details", {})
    if "differences" in details:
        message += f" Differences: {sorted(details['differences'])}"
    if "missing_items" in details:
        message += f" Missing: {str(details['missing_items'])[:300]}"
    return message
