"""Few-shot examples from our own expert, and every protocol driving the real HouseholdEnv to a win."""

from __future__ import annotations

import itertools

import pytest

from prefbuild.envs import get_env, get_protocol
from prefbuild.envs.base import EnvTask
from prefbuild.envs.household.env import HouseholdEnv
from prefbuild.envs.household.fewshot import (
    agentbench_example,
    eto_example,
    expert_episodes,
    parse_goal,
    react_examples,
)
from prefbuild.envs.household.protocols import PROTOCOLS
from prefbuild.envs.household.protocols.common import KIND_TO_TYPE
from prefbuild.records import Message, Role

TYPES = sorted(KIND_TO_TYPE.values())


@pytest.mark.parametrize(
    ("sentence", "parts"),
    [
        ("put a clean apple in fridge", ("clean", "apple", "fridge", None)),
        ("heat some egg and put it in diningtable", ("heat", "egg", "diningtable", None)),
        ("find two pencil and put them in garbagecan", ("puttwo", "pencil", "garbagecan", None)),
        ("examine the plate with the floorlamp", ("examine", "plate", None, "floorlamp")),
        ("put some spraybottle on toilet", ("put", "spraybottle", "toilet", None)),
        (
            "You are in the middle of a room.\nYour task is to: put a cool mug in cabinet.",
            ("cool", "mug", "cabinet", None),
        ),
    ],
)
def test_parse_goal(sentence: str, parts: tuple[str, str, str | None, str | None]) -> None:
    goal = parse_goal(sentence)
    assert (goal.kind, goal.obj, goal.recep, goal.toggle) == parts


def test_parse_goal_rejects_other_text() -> None:
    with pytest.raises(ValueError, match="not a household goal"):
        parse_goal("juggle three apples")


@pytest.mark.parametrize("task_type", TYPES)
def test_agentbench_example_shape(task_type: str) -> None:
    messages = agentbench_example(task_type)
    roles = [m.role for m in messages]
    assert roles[0] is Role.user and roles[-1] is Role.assistant
    assert all(a is not b for a, b in itertools.pairwise(roles)), "turns must alternate"
    assert messages[0].content.startswith("Here is one example.\nYou are in the middle of a room.")
    assert "\nYour task is to: " in messages[0].content and messages[0].content.endswith(".\n")
    assert messages[1].content.startswith("THOUGHT: The task is to ")
    assert "\n ACTION: " in messages[1].content
    assert all(m.content.startswith("ACTION: ") for m in messages[3::2])
    assert messages[-1].content == "ACTION: Task succeeded.\n"
    assert all(m.content.endswith("\n") for m in messages)
    assert not any("You arrive at loc" in m.content for m in messages)


def test_examples_are_deterministic_and_cached() -> None:
    assert agentbench_example("put") == agentbench_example("pick_and_place_simple")
    assert expert_episodes("heat", 1, "classic") is expert_episodes("heat", 1, "classic")


@pytest.mark.parametrize("task_type", TYPES)
def test_react_examples_are_two_transcripts_of_the_kind(task_type: str) -> None:
    text = react_examples(task_type)
    assert text.count("You are in the middle of a room.") == 2
    assert text.endswith("\n")
    assert "> think: To solve the task, I need to" in text
    lines = text.split("\n")
    thoughts = [i for i, line in enumerate(lines) if line.startswith("> think: ")]
    assert thoughts and all(lines[i + 1] == "OK." for i in thoughts)
    kinds = {parse_goal(line).kind for line in lines if line.startswith("Your task is to: ")}
    assert kinds == {parse_goal(text).kind}


def test_modern_dialect_examples_use_move() -> None:
    classic = react_examples("put", "classic")
    modern = react_examples("put", "modern")
    assert "in/on" in classic and "> move " not in classic
    assert "> move " in modern and " in/on " not in modern
    assert "You arrive at " in modern  # the modern prefix names the receptacle and is kept


def test_eto_example_is_one_put_episode() -> None:
    messages = eto_example()
    assert messages[0].role is Role.user and messages[0].content.startswith("You are in the middle of a room.")
    assert parse_goal(messages[0].content).kind == "put"
    assert messages[-1].role is Role.assistant
    assert all(m.content.startswith("Thought: ") and "\nAction: " in m.content for m in messages[1::2])
    assert all(m.content.startswith("Observation: ") for m in messages[2::2])
    assert messages[-1].content.split("\nAction: ")[1].startswith("put ")


def test_registry_resolves_household_protocols() -> None:
    assert get_env("household").protocols is PROTOCOLS
    assert get_protocol("household", "agentbench", dialect="modern").dialect == "modern"


def _play_with_protocol(name: str, task: EnvTask, dialect: str) -> list[Message]:
    """Drive one episode the way the rollout engine does, with the expert writing the turns."""
    protocol = PROTOCOLS[name](dialect=dialect)
    env = HouseholdEnv(dialect=dialect, intro="raw")
    observation, _ = env.reset(task)
    messages = protocol.prefix_messages(task)
    turn = protocol.observation_turn(observation, first=True, task=task, admissible=env.admissible_actions())
    messages.append(Message(role=Role.user, content=turn))
    for _ in range(40):
        action = env.expert_action()
        assert action is not None
        text = protocol.render(action, "I follow the plan.")
        parsed = protocol.parse(text)
        assert parsed.format_ok and parsed.action == action
        executed = protocol.executed_action(parsed.action, env.admissible_actions())
        assert executed == action
        messages.append(Message(role=Role.assistant, content=text))
        if name == "agentbench":
            messages[-2] = Message(role=messages[-2].role, content=protocol.history_turn(messages[-2].content))
        result = env.step(executed)
        assert result.valid
        turn = protocol.observation_turn(
            result.observation, first=False, task=task, admissible=env.admissible_actions()
        )
        messages.append(Message(role=Role(protocol.observation_role), content=turn))
        if result.won:
            return messages
    raise AssertionError("the expert did not win")


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
@pytest.mark.parametrize("dialect", ["classic", "modern"])
def test_every_protocol_plays_a_task_to_the_win(name: str, dialect: str) -> None:
    task = next(HouseholdEnv().tasks("valid_unseen", 1, 5, task_types=["pick_heat_then_place_in_recep"]))
    messages = _play_with_protocol(name, task, dialect)
    chat = [m for m in messages if m.role is not Role.system]
    assert all(a.role is not b.role for a, b in itertools.pairwise(chat))
    assert not any("You arrive at loc" in m.content for m in messages)
    if name == "agentbench":
        marked = [m for m in messages if "AVAILABLE ACTIONS" in m.content]
        assert marked == [messages[-1]], "only the newest turn carries the action list"
    if dialect == "modern" and name != "toolcall":
        assert any(" move " in m.content or "ACTION: move" in m.content for m in messages)
