"""Labelers that fall back on what a record holds say so: an env protocol that cannot be
loaded here, tool definitions whose schemas are broken."""

from __future__ import annotations

import logging

import pytest

from prefbuild.labelers import format_violation
from prefbuild.labelers.format_violation import FormatViolationLabeler
from prefbuild.labelers.tools.facts import toolbox
from prefbuild.records import EnvInfo, FailureMode, Outcome, Step, StopReason, TaskInfo, TeacherInfo, Trajectory


def _trajectory(env: str, protocol: str, *, tools: list | None = None, format_ok: bool = True) -> Trajectory:
    steps = [
        Step(index=i, observation="", raw_output="go somewhere", action=None, feedback="", format_ok=format_ok)
        for i in range(2)
    ]
    return Trajectory(
        id=f"{env}-t1",
        task=TaskInfo(id="t1", type="x", goal="g", split="train"),
        env=EnvInfo(name=env, protocol=protocol),
        teacher=TeacherInfo(backend="scripted", model="m"),
        steps=steps,
        tools=tools,
        outcome=Outcome(success=False, stop_reason=StopReason.max_steps),
    )


def test_a_protocol_that_cannot_be_loaded_is_said_once_and_the_recorded_verdict_judges(
    caplog: pytest.LogCaptureFixture,
) -> None:
    format_violation._protocol.cache_clear()
    labeler = FormatViolationLabeler()
    with caplog.at_level(logging.WARNING, logger="prefbuild.labelers.format_violation"):
        labels = labeler.label(_trajectory("no_such_env", "no_such_protocol", format_ok=False))
        labeler.label(_trajectory("no_such_env", "no_such_protocol", format_ok=False))
    assert [label.mode for label in labels] == [FailureMode.format_violation] * 2
    (message,) = [record.getMessage() for record in caplog.records]
    assert "protocol 'no_such_protocol' of env 'no_such_env' cannot be loaded here" in message
    assert "judged by the recorded verdict" in message


def test_a_known_protocol_is_loaded_without_a_word(caplog: pytest.LogCaptureFixture) -> None:
    format_violation._protocol.cache_clear()
    with caplog.at_level(logging.WARNING, logger="prefbuild.labelers.format_violation"):
        FormatViolationLabeler().label(_trajectory("household", "agentbench", format_ok=False))
    assert caplog.records == []


@pytest.mark.parametrize(
    ("tools", "why"),
    [
        ([{"type": "function", "function": {"name": "f", "parameters": {"type": "nope"}}}], "SchemaError"),
        ([{"type": "function", "function": {"parameters": {"type": "object"}}}], "KeyError"),
        ([{"type": "function", "function": None}], "AttributeError"),
    ],
)
def test_broken_tool_definitions_are_reported_not_silently_unchecked(
    tools: list, why: str, caplog: pytest.LogCaptureFixture
) -> None:
    trajectory = _trajectory("bfcl", "hermes", tools=tools).model_copy(update={"id": f"broken-{why}"})
    with caplog.at_level(logging.WARNING, logger="prefbuild.labelers.tools.facts"):
        assert toolbox(trajectory) is None
        assert toolbox(trajectory) is None  # asked by several labelers: said once
    (message,) = [record.getMessage() for record in caplog.records]
    assert f"trajectory 'broken-{why}': its tool definitions are unusable ({why}" in message


def test_valid_tool_definitions_give_a_toolbox() -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    box = toolbox(_trajectory("bfcl", "hermes", tools=tools))
    assert box is not None and box.names == ["f"]
