"""Agreement of the deployed labelers with the scripted teacher's recorded ground truth.

The ``simulate`` recipe runs the scripted noisy expert through the real rollout
(``prefbuild.rollout.generate.generate``); every step records what the teacher really did in
``StepFacts.simulated`` (``expert`` or the failure mode it played). The labelers never read
that fact, so it is an independent check of what they find.

Definitional differences between the teacher's modes and the labelers' (written down here,
and the only mappings applied):

* ``loop``: the teacher repeats its previous *written* output verbatim. Under AgentBench a
  repeated ``go to X`` while at X is not admissible, so the harness snaps it (BLEU) to another
  command and the agent really moves somewhere else; the loop labeler compares *executed*
  commands (issue 13 fact 2) and sees progress, while invalid_action reports the snap. Such a
  step counts as found when it is labelled ``loop`` or labelled ``invalid_action`` with the
  executed command differing from the written one.
* ``implausible_location``: the teacher picks places the strict ALFRED table forbids; the
  labeler by default labels only clearly odd places (issue 13 fact 8). Its recall is measured
  with ``conceivable: true``, which labels the table's verdict at low confidence.
  The labeler judges *searches* only: the teacher also walks to such places while carrying
  an object (an errand, not a search), which is not counted as missed.
* One step carries one simulated behaviour, but a turn can show two (a filler thought on a
  repeated visit): a label of another mode on a misbehaving step is not counted against
  precision. Precision is measured on the steps where the teacher played the expert.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from prefbuild.io.rundir import iter_trajectories
from prefbuild.labelers import build_labelers, label_trajectory
from prefbuild.labelers.household_state import HouseState
from prefbuild.recipe import load_recipe
from prefbuild.records import Trajectory
from prefbuild.rollout.generate import generate
from prefbuild.simulation.scripted import EXPERT

MODES = ("loop", "premature_success", "implausible_location", "verbose_filler", "format_violation", "invalid_action")


def _simulated(tmp_path: Path) -> list[Trajectory]:
    loaded = load_recipe("simulate", ["env.num_tasks=40"])
    generate(loaded, out=tmp_path / "run", quiet=True)
    trajectories = list(iter_trajectories(tmp_path / "run"))
    assert trajectories and all(t.teacher.backend == "scripted" for t in trajectories)
    return trajectories


def _found(trajectory: Trajectory, conceivable: bool) -> dict[int, set[str]]:
    configs = [{"name": name} for name in ("loop", "premature_success", "verbose_filler", "format_violation")]
    configs += [
        {"name": "invalid_action"},
        {"name": "implausible_location", "params": {"conceivable": conceivable}},
    ]
    labelled = label_trajectory(trajectory, build_labelers(configs, env="household"))
    return {step.index: {label.mode for label in step.labels} for step in labelled.steps}


def test_labelers_agree_with_the_scripted_teachers_ground_truth(tmp_path: Path) -> None:
    trajectories = _simulated(tmp_path)
    played: Counter[str] = Counter()
    caught: Counter[str] = Counter()
    caught_strict: Counter[str] = Counter()
    expert_steps = errands = 0
    false_on_expert: Counter[str] = Counter()
    for trajectory in trajectories:
        deployed = _found(trajectory, conceivable=False)
        table = _found(trajectory, conceivable=True)
        state = HouseState()
        for step in trajectory.steps:
            holding = state.hand
            state.apply(step.feedback)
            mode = step.facts.simulated
            assert mode is not None, "the rollout records what the scripted teacher played"
            if mode == EXPERT:
                expert_steps += 1
                false_on_expert.update(deployed[step.index])
                continue
            if mode == "implausible_location" and holding is not None:
                errands += 1
                continue
            played[mode] += 1
            found = table[step.index] if mode == "implausible_location" else deployed[step.index]
            snapped = step.facts.executed_action is not None and step.facts.executed_action != step.action
            if mode in found or (mode == "loop" and snapped and "invalid_action" in found):
                caught[mode] += 1
            if mode in deployed[step.index]:
                caught_strict[mode] += 1
    lines = [
        f"scripted ground truth: {sum(played.values())} misbehaving steps, {expert_steps} expert steps, "
        f"{errands} implausible_location errands with an object in hand (not searches, not counted)"
    ]
    for mode in MODES:
        lines.append(
            f"{mode:<22} played {played[mode]:>3}  found {caught[mode]:>3} (same mode, as deployed: "
            f"{caught_strict[mode]:>3})  labels on expert steps {false_on_expert[mode]:>3}"
        )
    print("\n".join(lines))
    assert set(played) <= set(MODES) and all(played[mode] for mode in MODES)
    # Recall under the written-down mappings: every misbehaviour the teacher played is found.
    for mode in MODES:
        assert caught[mode] == played[mode], lines
    # Precision where the teacher did nothing wrong: no label on any expert step (measured).
    assert sum(false_on_expert.values()) == 0, lines
