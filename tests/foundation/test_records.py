"""Every records validator, accepting and rejecting, plus JSONL round trips (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from prefbuild.records import Message, Outcome, Pair, Role, Step, StopReason, Trajectory, prompt_messages
from tests.foundation.factories import make_label, make_pair, make_step, make_trajectory


def test_valid_records_are_accepted() -> None:
    assert make_trajectory().steps[2].index == 2
    assert make_trajectory(success=True).outcome.success
    assert make_pair().reason == "implausible_location"


def test_unknown_fields_are_rejected() -> None:
    data = make_pair().model_dump()
    data["colour"] = "blue"
    with pytest.raises(ValidationError, match="colour"):
        Pair.model_validate(data)
    step = make_step(0).model_dump()
    step["thoughts"] = "typo of thought"
    with pytest.raises(ValidationError, match="thoughts"):
        Step.model_validate(step)


def test_pair_chosen_and_rejected_must_differ() -> None:
    same = [Message(role="assistant", content="ACTION: look")]
    with pytest.raises(ValidationError, match="identical"):
        make_pair(chosen=same, rejected=same)


@pytest.mark.parametrize("last_role", ["user", "tool"])
def test_prompt_may_end_with_user_or_tool(last_role: str) -> None:
    pair = make_pair(prompt=[Message(role="system", content="s"), Message(role=last_role, content="obs")])
    assert pair.prompt[-1].role == last_role


@pytest.mark.parametrize("last_role", ["assistant", "system"])
def test_prompt_must_not_end_with_assistant_or_system(last_role: str) -> None:
    with pytest.raises(ValidationError, match="must end with a user or tool turn"):
        make_pair(prompt=[Message(role="user", content="obs"), Message(role=last_role, content="x")])


@pytest.mark.parametrize("field", ["chosen", "rejected"])
def test_chosen_and_rejected_are_assistant_turns(field: str) -> None:
    with pytest.raises(ValidationError, match=f"{field} must start and end with an assistant turn"):
        make_pair(**{field: [Message(role="user", content="ACTION: look")]})


def test_multi_turn_continuations_are_allowed_but_not_system_turns() -> None:
    turns = [
        Message(role="assistant", content="ACTION: go to fridge 1"),
        Message(role="user", content="The fridge 1 is closed."),
        Message(role="assistant", content="ACTION: open fridge 1"),
    ]
    assert len(make_pair(chosen=turns).chosen) == 3
    bad = [*turns[:1], Message(role="system", content="x"), turns[2]]
    with pytest.raises(ValidationError, match="system"):
        make_pair(chosen=bad)


def test_empty_prompt_or_turns_rejected() -> None:
    with pytest.raises(ValidationError):
        make_pair(prompt=[])
    with pytest.raises(ValidationError):
        make_pair(chosen=[])


def test_step_indices_must_be_contiguous_from_zero() -> None:
    with pytest.raises(ValidationError, match="contiguous"):
        make_trajectory(steps=[make_step(0), make_step(2)])
    with pytest.raises(ValidationError, match="contiguous"):
        make_trajectory(steps=[make_step(1)])


def test_labels_must_point_at_their_step() -> None:
    assert make_step(3, labels=[make_label(3)]).labels[0].step == 3
    with pytest.raises(ValidationError, match="points at step 5"):
        make_step(3, labels=[make_label(5)])


def test_trajectory_labels_collects_step_labels() -> None:
    trajectory = make_trajectory(steps=[make_step(0), make_step(1, labels=[make_label(1)])])
    assert [label.step for label in trajectory.labels] == [1]


def test_successful_outcome_needs_done_final_step() -> None:
    with pytest.raises(ValidationError, match="final step with done"):
        make_trajectory(steps=[make_step(0)], outcome=Outcome(success=True, stop_reason=StopReason.success))
    with pytest.raises(ValidationError, match="final step with done"):
        make_trajectory(steps=[], outcome=Outcome(success=True, stop_reason=StopReason.success))


def test_outcome_consistency() -> None:
    with pytest.raises(ValidationError, match="stop_reason 'success'"):
        Outcome(success=True, stop_reason=StopReason.max_steps)
    with pytest.raises(ValidationError, match="requires success"):
        Outcome(success=False, stop_reason=StopReason.success)
    with pytest.raises(ValidationError, match="error text"):
        Outcome(success=False, stop_reason=StopReason.error)
    assert Outcome(success=False, stop_reason=StopReason.error, error="connection refused").error


def test_label_confidence_bounds_and_evidence() -> None:
    with pytest.raises(ValidationError):
        make_label(0).model_copy(update={}).model_validate({**make_label(0).model_dump(), "confidence": 1.5})
    with pytest.raises(ValidationError):
        make_label(0).model_validate({**make_label(0).model_dump(), "evidence": ""})


def test_tool_calls_only_on_assistant() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "take_action", "arguments": "{}"}}
    assert Message(role="assistant", content="", tool_calls=[call]).tool_calls
    with pytest.raises(ValidationError, match="only allowed on assistant"):
        Message(role="user", content="", tool_calls=[call])


def test_records_carry_schema_version() -> None:
    assert make_trajectory().model_dump()["schema_version"] == "1.0"
    assert make_pair().model_dump()["schema_version"] == "1.0"
    with pytest.raises(ValidationError):
        Pair.model_validate({**make_pair().model_dump(), "schema_version": "0.1"})


def test_prompt_messages_rebuilds_what_the_model_saw() -> None:
    steps = [
        make_step(0, observation="first obs AVAILABLE ACTIONS: a", observation_in_history="first obs",
                  raw_output="ACTION: a"),
        make_step(1, observation="second obs", raw_output="ACTION: b"),
        make_step(2, observation="third obs", raw_output="ACTION: c"),
    ]
    trajectory = make_trajectory(steps=steps)
    prompt = prompt_messages(trajectory, 2)
    assert [m.role for m in prompt] == [Role.user, Role.user, Role.assistant, Role.user, Role.assistant, Role.user]
    assert [m.content for m in prompt[1:]] == ["first obs", "ACTION: a", "second obs", "ACTION: b", "third obs"]
    assert prompt_messages(trajectory, 0)[-1].content == "first obs AVAILABLE ACTIONS: a"
    with pytest.raises(IndexError):
        prompt_messages(trajectory, 3)


# ---- property tests: any valid record round-trips through JSONL unchanged

text = st.text(max_size=40)
messages = st.builds(Message, role=st.sampled_from(list(Role)), content=text)
labels_for = lambda index: st.lists(  # noqa: E731
    st.builds(make_label, st.just(index), st.sampled_from(["loop", "invalid_action", "verbose_filler"])), max_size=2
)


@st.composite
def trajectories(draw: st.DrawFn) -> Trajectory:
    n = draw(st.integers(min_value=0, max_value=5))
    steps = [
        make_step(
            i,
            observation=draw(text),
            raw_output=draw(text),
            thought=draw(st.none() | text),
            action=draw(st.none() | text),
            valid=draw(st.none() | st.booleans()),
            reward=draw(st.floats(allow_nan=False, allow_infinity=False, width=32)),
            labels=draw(labels_for(i)),
            info=draw(st.dictionaries(st.text(max_size=5), st.integers() | text, max_size=2)),
        )
        for i in range(n)
    ]
    success = bool(steps) and draw(st.booleans())
    if success:
        steps[-1] = steps[-1].model_copy(update={"done": True})
    outcome = Outcome(success=success, stop_reason=StopReason.success if success else StopReason.max_steps)
    return make_trajectory(steps=steps, outcome=outcome, messages=draw(st.lists(messages, max_size=3)))


@settings(deadline=None, max_examples=60)
@given(trajectories())
def test_trajectory_round_trips_through_jsonl(tmp_path_factory, trajectory: Trajectory) -> None:
    from prefbuild.io.jsonl import JsonlWriter, read_records

    path = tmp_path_factory.mktemp("rt") / "t.jsonl"
    with JsonlWriter(path) as writer:
        writer.write(trajectory)
    (back,) = list(read_records(path, Trajectory))
    assert back == trajectory
    assert back.model_dump_json() == trajectory.model_dump_json()


@settings(deadline=None, max_examples=60)
@given(prompt_text=text, chosen=text, rejected=text, reason=st.sampled_from([None, "loop", "premature_success"]))
def test_pair_round_trips_through_jsonl(tmp_path_factory, prompt_text, chosen, rejected, reason) -> None:
    from prefbuild.io.jsonl import JsonlWriter, read_records

    if chosen == rejected:
        rejected += "x"
    pair = make_pair(
        prompt=[Message(role="user", content=prompt_text)],
        chosen=[Message(role="assistant", content=chosen)],
        rejected=[Message(role="assistant", content=rejected)],
        reason=reason,
    )
    path = tmp_path_factory.mktemp("rt") / "p.jsonl"
    with JsonlWriter(path) as writer:
        writer.write(pair)
        writer.write(pair)
    assert list(read_records(path, Pair)) == [pair, pair]
