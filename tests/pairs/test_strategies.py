"""Strategies on hand-built household trajectories (AgentBench protocol): exact layouts and counts."""

from __future__ import annotations

import json

import pytest

from prefbuild.pairs import available_strategies, build_strategy
from prefbuild.pairs.strategies.stepwise import template_thought
from prefbuild.pairs.strategies.style import concise_thought, filler_pattern
from prefbuild.pairs.strategies.trajectory import continuation
from prefbuild.records import FailureMode, Role, prompt_messages
from tests.pairs.factory import S, act, trajectory


def dumps(messages) -> str:
    return json.dumps([m.model_dump(mode="json") for m in messages], sort_keys=True)


def loop_trajectory(**kwargs):
    return trajectory(
        [
            S(act("go to shelf 1"), "go to shelf 1", expert="go to cabinet 1"),
            S(act("go to shelf 2"), "go to shelf 2", expert="go to cabinet 1"),
            S(act("go to shelf 1"), "go to shelf 1", expert="go to cabinet 1", labels=[("loop", 0.9)]),
            S(act("Task succeeded."), "Task succeeded.", expert="go to cabinet 1", labels=[("premature_success", 1.0)]),
        ],
        **kwargs,
    )


def test_registry_lists_builtins_and_rejects_unknown_names_and_params():
    assert {"stepwise", "trajectory", "style", "best_of_n"} <= set(available_strategies())
    with pytest.raises(KeyError, match="unknown pair strategy 'nope'"):
        build_strategy("nope", {})
    with pytest.raises(ValueError, match="unknown parameter"):
        build_strategy("stepwise", {"chosen_style": "action"})
    with pytest.raises(ValueError, match="needs a teacher"):
        build_strategy("stepwise", {"chosen": "teacher"})


def test_stepwise_prompt_is_exactly_what_the_model_saw_and_chosen_is_the_expert_action():
    traj = loop_trajectory()
    pairs = list(build_strategy("stepwise", {}).pairs([traj]))
    assert [p.source.step for p in pairs] == [2, 3]
    loop = pairs[0]
    assert dumps(loop.prompt) == dumps(prompt_messages(traj, 2))
    # prefix, then (observation, output) for steps 0 and 1, then the observation of step 2
    assert [m.role for m in loop.prompt] == [
        Role.user,
        Role.assistant,
        Role.user,
        Role.assistant,
        Role.user,
        Role.assistant,
        Role.user,
    ]
    assert loop.prompt[-1].content == "Observation 2."
    assert loop.prompt[3].content == act("go to shelf 1")
    assert loop.rejected[0].content == act("go to shelf 1")
    assert loop.chosen[0].content == "ACTION: go to cabinet 1"
    assert loop.reason == FailureMode.loop and loop.evidence == "loop here"
    assert pairs[1].reason == FailureMode.premature_success


def test_stepwise_counts_steps_it_cannot_use():
    traj = trajectory(
        [
            S(act("go to shelf 1"), "go to shelf 1", expert=None, labels=[("loop", 1.0)]),
            S(act("go to shelf 1"), "go to shelf 1", expert="go to shelf 1", labels=[("loop", 1.0)]),
            S(
                act("go to shelf 2", "Certainly! I will go."),
                "go to shelf 2",
                expert="go to shelf 2",
                labels=[("verbose_filler", 1.0)],
            ),
        ]
    )
    strategy = build_strategy("stepwise", {})
    assert list(strategy.pairs([traj])) == []
    assert strategy.stats.skipped == {"no_expert_action": 1, "rejected_is_expert_action": 1}


def test_stepwise_picks_the_most_confident_label_and_filters_by_confidence():
    traj = trajectory(
        [
            S(
                act("go to bed 1"),
                "go to bed 1",
                expert="go to shelf 1",
                labels=[("loop", 0.4), ("implausible_location", 0.8)],
            )
        ]
    )
    (pair,) = build_strategy("stepwise", {}).pairs([traj])
    assert pair.reason == FailureMode.implausible_location
    assert list(build_strategy("stepwise", {"min_confidence": 0.9}).pairs([traj])) == []
    (only_loop,) = build_strategy("stepwise", {"modes": ["loop"]}).pairs([traj])
    assert only_loop.reason == FailureMode.loop


def test_stepwise_template_writes_a_thought_that_parses_to_the_expert_action():
    from prefbuild.envs import cached_protocol as protocol_for

    traj = loop_trajectory()
    pair = next(iter(build_strategy("stepwise", {"chosen": "template"}).pairs([traj])))
    assert pair.chosen[0].content == "THOUGHT: I should go to cabinet 1 next.\n ACTION: go to cabinet 1"
    parsed = protocol_for("household", "agentbench").parse(pair.chosen[0].content)
    assert parsed.action == "go to cabinet 1" and parsed.format_ok
    assert template_thought("take mug 1 from shelf 2") == "I should take mug 1 now."
    assert template_thought("look") == "I should look around."
    assert template_thought("frobnicate 3", "Now: {action}.") == "Now: frobnicate 3."


def test_pair_ids_are_stable_and_depend_on_content_and_source():
    first = [p.id for p in build_strategy("stepwise", {}).pairs([loop_trajectory()])]
    again = [p.id for p in build_strategy("stepwise", {}).pairs([loop_trajectory()])]
    other = [p.id for p in build_strategy("stepwise", {}).pairs([loop_trajectory(traj_id="traj-2")])]
    assert first == again and len(set(first)) == 2
    assert not set(first) & set(other)


def success_trajectory(task_id: str = "task-1", traj_id: str = "ok-1"):
    return trajectory(
        [
            S(act("go to cabinet 1"), "go to cabinet 1"),
            S(act("take mug 1 from cabinet 1"), "take mug 1 from cabinet 1"),
            S(act("go to shelf 1"), "go to shelf 1"),
            S(act("put mug 1 in/on shelf 1"), "put mug 1 in/on shelf 1"),
        ],
        traj_id=traj_id,
        task_id=task_id,
        success=True,
    )


def failed_trajectory(turns: int, task_id: str = "task-1", traj_id: str = "bad-1"):
    steps = [S(act("go to cabinet 1"), "go to cabinet 1")]
    steps += [S(act(f"go to drawer {i}"), f"go to drawer {i}", labels=[("loop", 1.0)]) for i in range(1, turns)]
    return trajectory(steps, traj_id=traj_id, task_id=task_id)


def test_trajectory_pairs_success_against_failure_truncated_to_chosen_length_plus_five():
    ok, bad = success_trajectory(), failed_trajectory(20)
    (pair,) = build_strategy("trajectory", {}).pairs([bad, ok])
    assert dumps(pair.prompt) == dumps(prompt_messages(ok, 0))
    assert dumps(pair.chosen) == dumps(continuation(ok, 4))
    assert sum(m.role is Role.assistant for m in pair.chosen) == 4
    assert sum(m.role is Role.assistant for m in pair.rejected) == 9
    assert pair.rejected[-1].content == act("go to drawer 8")
    assert pair.reason == FailureMode.task_failure
    assert pair.source.trajectory_id == "bad-1" and pair.source.chosen_trajectory_id == "ok-1"


def test_trajectory_without_a_success_is_counted_and_groups_close_after_the_window():
    # No oracle fallback: these hand-made records cannot be replayed (that is counted as replay_failed).
    strategy = build_strategy("trajectory", {"window": 2, "expert_fallback": False})
    stream = [
        failed_trajectory(3, "task-a", "a1"),
        failed_trajectory(3, "task-b", "b1"),
        success_trajectory("task-b", "b-ok"),
        failed_trajectory(3, "task-c", "c1"),
        success_trajectory("task-a", "a-ok"),
    ]
    pairs = list(strategy.pairs(stream))
    # task-a's group was closed (window 2) before its success arrived: its late success forms a new group.
    assert [(p.source.trajectory_id, p.source.chosen_trajectory_id) for p in pairs] == [("b1", "b-ok")]
    assert strategy.stats.skipped["no_success_for_task"] == 2


def test_trajectory_first_divergence_is_a_single_turn_pair_with_the_shared_history():
    ok, bad = success_trajectory(), failed_trajectory(6)
    (pair,) = build_strategy("trajectory", {"continuation": "first_divergence"}).pairs([ok, bad])
    assert pair.source.step == 1
    assert dumps(pair.prompt) == dumps(prompt_messages(bad, 1))
    assert pair.chosen[0].content == act("take mug 1 from cabinet 1")
    assert pair.rejected[0].content == act("go to drawer 1")
    assert pair.reason == FailureMode.loop


def test_concise_thought_removes_filler_and_keeps_whole_sentences():
    filler = filler_pattern()
    text = "Certainly! I can help with that. The mug is probably in the cabinet. Then I will go there. Have a nice day!"
    assert concise_thought(text, max_words=20, filler=filler) == "The mug is probably in the cabinet."
    # a sentence is never cut mid-way: the first whole one that fits, else none
    assert concise_thought(text, max_words=5, filler=filler) == "Then I will go there."
    assert concise_thought(text, max_words=4, filler=filler) is None
    assert concise_thought("Sure! Happy to help.", max_words=5, filler=filler) is None
    japanese = "かしこまりました。お役に立てれば幸いです。 Next I should go to desk 1."
    assert concise_thought(japanese, max_words=20, filler=filler) == "Next I should go to desk 1."
    # the sentence that names the action wins over another informative one
    two = "The room is large. The mug may be in cabinet 2."
    assert concise_thought(two, max_words=20, filler=filler, action="go to cabinet 2") == "The mug may be in cabinet 2."
    assert concise_thought(two, max_words=20, filler=filler) == "The room is large."


def test_style_pairs_keep_the_identical_valid_action():
    from prefbuild.envs import cached_protocol as protocol_for

    verbose = act(
        "go to cabinet 1", "Certainly! I'd be happy to help. The mug is probably in the cabinet. Let me think."
    )
    traj = trajectory(
        [
            S(
                verbose,
                "go to cabinet 1",
                thought="Certainly! I'd be happy to help. The mug is probably in the cabinet. Let me think.",
                labels=[("verbose_filler", 0.9)],
            ),
            S(
                act("go to bed 1", "Sure! A long thought."),
                "go to bed 1",
                thought="Sure! A long thought.",
                labels=[("verbose_filler", 0.9), ("implausible_location", 0.9)],
            ),
            S(
                act("open fridge 1", "Okay! Opening."),
                "open fridge 1",
                valid=False,
                thought="Okay! Opening.",
                labels=[("verbose_filler", 0.9)],
            ),
        ]
    )
    strategy = build_strategy("style", {})
    (pair,) = strategy.pairs([traj])
    protocol = protocol_for("household", "agentbench")
    assert pair.chosen[0].content == "THOUGHT: The mug is probably in the cabinet.\n ACTION: go to cabinet 1"
    assert pair.rejected[0].content == verbose
    assert protocol.parse(pair.chosen[0].content).action == protocol.parse(pair.rejected[0].content).action
    assert pair.reason == FailureMode.verbose_filler
    assert strategy.stats.skipped == {"action_labelled_bad": 1, "action_not_good": 1}


def test_style_never_cuts_a_sentence_and_skips_a_chosen_turn_that_breaks_the_protocol():
    from prefbuild.envs import cached_protocol as protocol_for

    long_thought = (
        "Based on what I have seen so far in this room, the mug is most likely inside the first cabinet next to "
        "the sink, so I will go and check there."
    )
    eto = protocol_for("household", "eto")
    steps = [
        S(eto.render("go to cabinet 1", "Great! " + long_thought), "go to cabinet 1", thought="Great! " + long_thought,
          labels=[("verbose_filler", 0.9)]),
        S(eto.render("go to sinkbasin 1", "Great! Thanks! I hope this helps."), "go to sinkbasin 1",
          thought="Great! Thanks! I hope this helps.", labels=[("verbose_filler", 0.9)]),
    ]
    strategy = build_strategy("style", {})
    # ETO asks for a thought: neither step has a whole informative sentence of 20 words or fewer
    assert list(strategy.pairs([trajectory(steps, protocol="eto")])) == []
    assert strategy.stats.skipped == {"chosen_format_violation": 2}
    # AgentBench takes a bare ACTION: the chosen turn is the action alone, no cut sentence
    agentbench = [
        S(act("go to cabinet 1", "Great! " + long_thought), "go to cabinet 1", thought="Great! " + long_thought,
          labels=[("verbose_filler", 0.9)])
    ]
    (pair,) = build_strategy("style", {}).pairs([trajectory(agentbench)])
    assert pair.chosen[0].content == "ACTION: go to cabinet 1"
