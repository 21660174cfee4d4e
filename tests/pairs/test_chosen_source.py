"""Stepwise chosen actions on household come from the searching expert unless the oracle is asked for."""

from __future__ import annotations

import re

import pytest

from prefbuild.envs import cached_protocol as protocol_for
from prefbuild.pairs import build_strategy
from prefbuild.pairs.replay import replay
from prefbuild.records import Trajectory
from tests.pairs.factory import S, trajectory
from tests.pairs.household import cached

TAKE = re.compile(r"^take (?P<object>.+?) from (?P<receptacle>.+)$")


@pytest.fixture(scope="module")
def episodes() -> tuple[Trajectory, ...]:
    return cached(tasks=10, samples=2, seed=5)


def chosen_actions(strategy, trajectories):
    protocol = protocol_for("household", "agentbench")
    return {
        (pair.source.trajectory_id, pair.source.step): (protocol.parse(pair.chosen[0].content).action, pair)
        for pair in strategy.pairs(trajectories)
    }


def test_searcher_is_the_default_and_differs_from_the_oracle(episodes):
    searcher = build_strategy("stepwise", {})
    oracle = build_strategy("stepwise", {"expert": "oracle"})
    by_searcher, by_oracle = chosen_actions(searcher, episodes), chosen_actions(oracle, episodes)
    assert searcher.experts_used.keys() == {"searcher"} and oracle.experts_used.keys() == {"oracle"}
    shared = by_searcher.keys() & by_oracle.keys()
    assert len(shared) >= 10
    differing = [key for key in shared if by_searcher[key][0] != by_oracle[key][0]]
    assert differing, "the searching expert never disagreed with the oracle"
    steps = {(t.id, s.index): s for t in episodes for s in t.steps}
    assert all(by_oracle[key][0] == steps[key].expert_action for key in by_oracle)


def test_searcher_never_takes_an_object_the_episode_has_not_shown(episodes):
    """No hidden knowledge: an object the chosen turn takes was named in what the model had seen."""
    takes = 0
    for action, pair in chosen_actions(build_strategy("stepwise", {"expert": "searcher"}), episodes).values():
        match = TAKE.match(action or "")
        if match is None:
            continue
        takes += 1
        seen = "\n".join(message.content for message in pair.prompt[2:])  # after the few-shot example
        assert match["object"] in seen, action
    assert takes


def test_unreplayable_household_episodes_keep_the_recorded_action():
    handmade = trajectory([S("ACTION: go to shelf 9", "go to shelf 9", expert="go to desk 1", valid=False,
                             labels=[("invalid_action", 1.0)])])
    strategy = build_strategy("stepwise", {})
    pairs = list(strategy.pairs([handmade]))
    assert len(pairs) == 1 and "go to desk 1" in pairs[0].chosen[0].content
    assert strategy.experts_used == {"oracle": 1}


def test_unknown_expert_is_refused():
    with pytest.raises(ValueError, match="expert must be one of searcher, oracle"):
        build_strategy("stepwise", {"expert": "psychic"})


def test_recorded_searcher_actions_are_what_a_replay_computes(episodes):
    """``generate`` records the searching expert's action on every household step; the env
    replayed to that step and asked afresh gives the same action (``replay`` is independent of
    the recording: it rebuilds the task from its seed and re-sends the executed commands)."""
    steps = 0
    for episode in episodes:
        for step in episode.steps:
            env = replay(episode, step.index)
            env.expert = "searching"  # type: ignore[attr-defined]
            assert step.searcher_action is not None
            assert step.searcher_action == env.expert_action(), (episode.id, step.index)
            steps += 1
    assert steps >= 50


def test_pairs_do_not_depend_on_whether_the_searcher_was_recorded(episodes):
    """Recorded searcher actions only save the replay: the pairs are the same without them."""
    unrecorded = [
        episode.model_copy(update={"steps": [s.model_copy(update={"searcher_action": None}) for s in episode.steps]})
        for episode in episodes
    ]
    recorded_strategy, replayed_strategy = build_strategy("stepwise", {}), build_strategy("stepwise", {})
    recorded = [pair.model_dump_json() for pair in recorded_strategy.pairs(episodes)]
    replayed = [pair.model_dump_json() for pair in replayed_strategy.pairs(unrecorded)]
    assert len(recorded) >= 10 and recorded == replayed
    assert recorded_strategy.experts_used == replayed_strategy.experts_used == {"searcher": len(recorded)}


def test_a_recorded_searcher_action_is_used_without_replaying():
    """A step that carries ``searcher_action`` needs no replayable task; the oracle source ignores it."""
    handmade = trajectory([S("ACTION: go to shelf 9", "go to shelf 9", expert="go to desk 1", valid=False,
                             labels=[("invalid_action", 1.0)])])
    handmade.steps[0].searcher_action = "go to drawer 2"
    searcher = build_strategy("stepwise", {})
    pairs = list(searcher.pairs([handmade]))
    assert len(pairs) == 1 and "go to drawer 2" in pairs[0].chosen[0].content
    assert searcher.experts_used == {"searcher": 1}
    oracle = build_strategy("stepwise", {"expert": "oracle"})
    assert "go to desk 1" in next(iter(oracle.pairs([handmade]))).chosen[0].content


@pytest.mark.parametrize(
    "overrides",
    [
        ["env.dialect=modern"],
        ["env.options.close_after_search=false"],
        ["env.protocol=react", "env.split=valid_unseen"],
    ],
    ids=["modern-dialect", "searcher-leaves-open", "react-unseen"],
)
def test_recorded_searcher_matches_replay_under_other_env_settings(tmp_path, overrides):
    """The recorded action is the replayed one also where the dialect, the searcher's options,
    the protocol or the split differ from the defaults (replay rebuilds the env from the record)."""
    from prefbuild import api
    from prefbuild.io.rundir import trajectory_files
    from prefbuild.io.sources import read_trajectories

    api.generate("simulate", overrides=["env.num_tasks=12", *overrides], out=tmp_path / "run", quiet=True)
    checked = 0
    for path in trajectory_files(tmp_path / "run"):
        for episode in read_trajectories(path):
            for step in episode.steps:
                env = replay(episode, step.index)
                env.expert = "searching"  # type: ignore[attr-defined]
                assert step.searcher_action == env.expert_action(), (episode.id, step.index)
                checked += 1
    assert checked >= 40
