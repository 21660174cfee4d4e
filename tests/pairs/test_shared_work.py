"""Work the pair stage now shares or skips gives exactly what the plain computation gives.

Each shortcut is checked against the computation it replaces: shared prompt history against
``prompt_messages`` per step, the written-out message JSON against ``canonical_json``, pairs
spooled as JSON against the pairs offered (and the pickled fallback where JSON would not
read back equal), and,
for the household task generation that every replay repeats, the one-pass scene check against
``scene_problems``, the weighted draw over names against ``_pick``, and objects built with
their names set against the ordinary constructor.
"""

from __future__ import annotations

import dataclasses
import random

import pytest

from prefbuild.envs.household.catalog import CAN_CONTAIN
from prefbuild.envs.household.scene import (
    Receptacle,
    Scene,
    SceneObject,
    _pick,
    _pick_name,
    _plainly_valid,
    _weight,
    layout,
    scene_problems,
)
from prefbuild.envs.household.tasks import generate_task
from prefbuild.io.jsonl import JsonlWriter
from prefbuild.pairs.common import TrajectoryPrompts, _plain_message_json, canonical_json, turns_json
from prefbuild.pairs.postprocess import BottomK, _spooled
from prefbuild.records import Message, Pair, Role, Trajectory, prompt_messages
from tests.pairs.household import cached


@pytest.fixture(scope="module")
def episodes() -> tuple[Trajectory, ...]:
    return cached(tasks=6, samples=1, seed=7)


def _dumped(messages):
    return [message.model_dump() for message in messages]


def test_shared_prompts_equal_prompt_messages_in_any_order(episodes):
    for trajectory in episodes:
        steps = range(len(trajectory.steps))
        for order in (list(steps), list(reversed(steps)), [i for i in steps if i % 2] + list(steps)):
            prompts = TrajectoryPrompts(trajectory)
            for index in order:
                expected = prompt_messages(trajectory, index)
                assert _dumped(prompts.at(index)) == _dumped(expected)
                messages, joined = prompts.with_json(index)
                assert _dumped(messages) == _dumped(expected) and joined == turns_json(expected)


def test_shared_prompts_follow_a_truncated_history_window(episodes):
    trajectory = max(episodes, key=lambda t: len(t.steps))
    steps = [
        step.model_copy(update={"facts": step.facts.model_copy(update={"history_start": min(step.index, 2) + (i % 2)})})
        for i, step in enumerate(trajectory.steps)
    ]
    windowed = trajectory.model_copy(update={"steps": steps})
    prompts = TrajectoryPrompts(windowed)
    for index in range(len(steps)):
        expected = prompt_messages(windowed, index)
        messages, joined = prompts.with_json(index)
        assert _dumped(messages) == _dumped(expected) and joined == turns_json(expected)
    with pytest.raises(IndexError):
        prompts.at(len(steps))


@pytest.mark.parametrize("content", ["", "plain", 'q"uote\\ \n\t\x00\x1f \u2028 é 中文 🙂'])
def test_plain_message_json_is_canonical_json(content):
    for role in Role:
        for name in (None, "alice", 'n"1'):
            for tool_call_id in (None, "call_1"):
                payload = {"role": str(role), "content": content, "name": name, "tool_call_id": tool_call_id}
                expected = canonical_json({key: value for key, value in payload.items() if value is not None})
                assert _plain_message_json(role, content, name, tool_call_id) == expected


def test_objects_built_with_their_name_equal_constructed_ones():
    built, plain = SceneObject._built("apple", 2, "countertop 1"), SceneObject("apple", 2, "countertop 1")
    assert built == plain and hash(built) == hash(plain) and repr(built) == repr(plain)
    assert built.name == plain.name == "apple 2"
    assert dataclasses.replace(built, number=3).name == "apple 3"


@pytest.mark.parametrize("seed", range(20))
def test_weighted_draw_over_names_draws_as_pick(seed: int) -> None:
    slots = list(layout("kitchen", 3 + seed))
    picker = random.Random(seed)
    load = {r.name: picker.randrange(5) for r in slots if picker.random() < 0.5}
    weights = {name: _weight(count) for name, count in load.items() if count}
    names = [r.name for r in slots]
    ours, reference = random.Random(f"pick/{seed}"), random.Random(f"pick/{seed}")
    for _ in range(25):
        assert _pick_name(names, weights, ours) == _pick(slots, load, reference).name
    assert ours.random() == reference.random()


def _unchecked(room: str, number: int, receptacles: tuple, objects: tuple) -> Scene:
    """A scene object that skipped ``Scene.__post_init__`` (so it may break the rules)."""
    scene = object.__new__(Scene)
    scene.__dict__.update(room=room, scene_number=number, receptacles=receptacles, objects=objects)
    return scene


def _variants(scene: Scene) -> list[Scene]:
    """``scene`` and scenes one rule away from it, each breaking (or keeping) one rule."""
    objects, receptacles = list(scene.objects), scene.receptacles
    first, last = objects[0], objects[-1]
    wrong_holder = next((r.name for r in receptacles if first.type not in CAN_CONTAIN[r.type]), first.receptacle)
    changed = [
        objects,
        [*objects, first],  # duplicate name
        [dataclasses.replace(first, number=first.number + 40), *objects[1:]],  # numbering gap
        [dataclasses.replace(first, receptacle="nowhere 9"), *objects[1:]],  # unknown receptacle
        [dataclasses.replace(first, type="unicorn"), *objects[1:]],  # unknown type
        [dataclasses.replace(first, receptacle=wrong_holder), *objects[1:]],  # cannot hold it
        objects[1:],  # possibly a gap in the first type's numbers
        objects[:-1],
        [dataclasses.replace(last, type=receptacles[0].type, number=1), *objects[:-1]],  # clashes with a receptacle
        [dataclasses.replace(last, type=receptacles[0].type, number=99), *objects[:-1]],
    ]
    scenes = [_unchecked(scene.room, scene.scene_number, receptacles, tuple(o)) for o in changed]
    renumbered = tuple(dataclasses.replace(r, number=r.number + 1) if i == 0 else r for i, r in enumerate(receptacles))
    moved = tuple(dataclasses.replace(r, location=0) if i == 0 else r for i, r in enumerate(receptacles))
    scenes += [_unchecked(scene.room, scene.scene_number, plan, scene.objects) for plan in (renumbered, moved)]
    return scenes


def test_one_pass_scene_check_agrees_with_scene_problems():
    verdicts = []
    for index in range(60):
        for scene in _variants(generate_task("train", 3, index).scene):
            valid = not scene_problems(scene)
            assert _plainly_valid(scene) is valid, scene_problems(scene)
            verdicts.append(valid)
    assert any(verdicts) and not all(verdicts)
    plan = layout("kitchen", 4)
    counter = next(r for r in plan if r.type == "countertop")
    with pytest.raises(ValueError, match="apple instances must be numbered"):
        Scene("kitchen", 4, plan, (SceneObject("apple", 2, counter.name),))
    with pytest.raises(ValueError, match="duplicate receptacle names"):
        Scene("kitchen", 1, (Receptacle("cabinet", 1, True, 1), Receptacle("cabinet", 1, True, 2)))


def _spool_pair(number: int, **fields) -> Pair:
    defaults = {"reason": "loop", "evidence": "repeated", "scores": {"confidence": number / 7, "zero": -0.0}}
    return Pair(
        id=f"pair-{number}", strategy="stepwise",
        prompt=[Message(role=Role.system, content="Be brief."), Message(role=Role.user, content="Task é 中 🙂\x00")],
        chosen=[Message(role=Role.assistant, content=f"ACTION: go to desk {number}")],
        rejected=[Message(role=Role.assistant, content="ACTION: look", name="model")],
        source={"trajectory_id": f"t{number}", "step": 3, "task_id": "task", "env": "household",
                "teacher_model": "scripted-expert"},
        **{**defaults, **fields},
    )  # fmt: skip


@pytest.mark.parametrize(
    ("fields", "as_json"),
    [
        ({}, True),
        ({"scores": None}, True),
        ({"tools": [{"type": "function", "function": {"name": "f", "parameters": {"x": (1, 2.5)}}}]}, False),
        ({"evidence": "half a pair \ud800"}, False),
    ],
)
def test_spooled_pairs_read_back_equal(fields, as_json):
    pair = _spool_pair(5, **fields)
    _, form = _spooled(pair)
    assert form == ("json" if as_json else "pickle")
    balancer = BottomK(1, seed=0)
    assert not balancer.offer("loop", pair, 1)
    ((arrival, back),) = list(balancer.drain())
    assert arrival == 1 and back == pair
    if as_json:
        assert JsonlWriter.encode(back) == JsonlWriter.encode(pair)
