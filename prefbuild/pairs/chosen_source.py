"""Where a stepwise pair's chosen action comes from: an expert a policy could imitate, or the oracle.

The action recorded on a step (``Step.expert_action``) is the env's oracle: in household it
walks straight to where the object is hidden, which a policy cannot know from what it has
seen, so a model trained on it learns to guess. ``searcher`` instead asks household's
searching expert at the same state: it uses only the receptacles the episode has seen and
otherwise searches where the object type is plausibly found (``envs.household.priors``).

Sources:

- ``searcher``: household's searching expert. ``generate`` records its action on every step
  (``Step.searcher_action``); for a step without one (imported logs, recordings older than the
  field) it is recomputed by replaying the episode to the step. Other envs have no such expert,
  and episodes that cannot be replayed (hand-made, imported logs without the task's seed) keep
  the recorded oracle action.
- ``oracle``: the recorded action (household's oracle, or the env's only expert).
"""

from __future__ import annotations

from prefbuild.pairs.replay import ReplayCursor, ReplayError, replay
from prefbuild.records import Trajectory

SEARCHER = "searcher"
ORACLE = "oracle"
SOURCES: tuple[str, ...] = (SEARCHER, ORACLE)
SEARCHING_EXPERTS: dict[str, str] = {"household": "searching"}
"""Env name -> the name of its expert that acts without hidden knowledge."""


def default_source(env_name: str) -> str:
    """``searcher`` where the env has a searching expert, else ``oracle``."""
    return SEARCHER if env_name in SEARCHING_EXPERTS else ORACLE


def chosen_action(
    trajectory: Trajectory, step_index: int, source: str, cursor: ReplayCursor | None = None
) -> tuple[str | None, str]:
    """The chosen action for the state before ``step_index`` under ``source``, and the source used.

    Args:
        trajectory: a recorded episode.
        step_index: the step whose context the pair uses.
        source: ``searcher`` or ``oracle``.
        cursor: replays the episode forward across calls for its steps in order (one
            replay per episode instead of one per step); None replays from reset. Steps that
            carry ``searcher_action`` are not replayed.

    Returns:
        ``(action, source)``: the action (None when there is none, e.g. the task is won) and
        ``searcher`` or ``oracle``, whichever gave it.

    Example:
        >>> chosen_action(trajectory, 3, "oracle")[0] == trajectory.steps[3].expert_action  # doctest: +SKIP
        True
    """
    step = trajectory.steps[step_index]
    recorded = step.expert_action
    expert = SEARCHING_EXPERTS.get(trajectory.env.name)
    if source == ORACLE or expert is None:
        return recorded, ORACLE
    if step.searcher_action is not None:
        return step.searcher_action, SEARCHER
    try:
        env = replay(trajectory, step_index) if cursor is None else cursor.at(trajectory, step_index)
    except ReplayError:
        # handled: a state that cannot be replayed gets the recorded oracle action, and the source says oracle
        return recorded, ORACLE
    env.expert = expert  # type: ignore[attr-defined]
    return env.expert_action(), SEARCHER
