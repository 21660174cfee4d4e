"""The experts win every generated game, from the start and from states an agent wandered into."""

from __future__ import annotations

import random
from collections import Counter

from prefbuild.envs.household.catalog import ROOM_KINDS, TASK_TYPE_NAMES
from prefbuild.envs.household.engine import Engine
from prefbuild.envs.household.expert import expert_action, plan_length
from prefbuild.envs.household.tasks import iter_tasks
from tests.household.support import WORKED_EXAMPLE_GOAL, worked_example_scene


def run_expert(engine: Engine, kind: str, limit: int = 300) -> int:
    for steps in range(limit):
        if engine.won:
            return steps
        command = expert_action(engine, kind)
        assert command is not None
        _, valid = engine.step(command)
        assert valid, f"expert {kind} played an invalid command {command!r}"
    assert engine.won, f"expert {kind} did not win within {limit} steps"
    return limit


def test_oracle_solves_2400_tasks_across_types_and_rooms() -> None:
    kinds: Counter[tuple[str, str]] = Counter()
    lengths = []
    for split, seed in (("train", 1), ("valid_seen", 2), ("valid_unseen", 3)):
        for task in iter_tasks(split, 800, seed):
            engine = Engine(task.scene, task.goal, "modern" if task.index % 2 else "classic")
            assert expert_action(engine, "oracle") is not None
            lengths.append(run_expert(engine, "oracle"))
            assert expert_action(engine, "oracle") is None
            kinds[(task.goal.task_type, task.scene.room)] += 1
    assert sum(kinds.values()) == 2400
    assert {t for t, _ in kinds} == set(TASK_TYPE_NAMES)
    assert {r for _, r in kinds} == set(ROOM_KINDS)
    # every valid (type, room) combination of spec section 2 occurs
    assert len(kinds) == 4 + 2 + 2 + 1 + 1 + 4
    assert min(lengths) >= 2 and max(lengths) <= 20


def test_searching_expert_solves_tasks() -> None:
    for task in iter_tasks("valid_unseen", 300, 5):
        engine = Engine(task.scene, task.goal)
        run_expert(engine, "searching", limit=250)


def test_experts_win_from_600_random_walk_states() -> None:
    rng = random.Random(1234)
    tasks = list(iter_tasks("train", 300, 9))
    checked = 0
    for task in tasks:
        for kind in ("oracle", "searching"):
            engine = Engine(task.scene, task.goal)
            for _ in range(rng.randint(1, 60)):
                engine.step(rng.choice(engine.admissible()))
            if engine.won:
                continue
            before = engine.snapshot().values
            remaining = plan_length(engine, "oracle")
            assert engine.snapshot().values == before, "plan_length must not change the state"
            assert remaining is not None and remaining >= 1
            steps = run_expert(engine, kind)
            if kind == "oracle":
                assert steps == remaining
            checked += 1
    assert checked >= 500


def test_oracle_recovers_from_wrong_object_and_lost_state() -> None:
    # The agent heated the apple, cooled it again, left it on the sidetable and took a mug instead.
    engine = Engine(worked_example_scene(), WORKED_EXAMPLE_GOAL)
    for command in (
        "go to countertop 1", "take apple 1 from countertop 1", "go to microwave 1", "heat apple 1 with microwave 1",
        "go to fridge 1", "cool apple 1 with fridge 1", "go to sidetable 1", "put apple 1 in/on sidetable 1",
        "go to cabinet 3", "open cabinet 3", "take mug 2 from cabinet 3",
    ):  # fmt: skip
        assert engine.step(command)[1], command
    plan = []
    while not engine.won:
        command = expert_action(engine)
        assert command is not None
        assert engine.step(command)[1]
        plan.append(command)
    assert plan == [
        "put mug 2 in/on cabinet 3", "go to sidetable 1", "take apple 1 from sidetable 1", "go to microwave 1",
        "heat apple 1 with microwave 1", "go to diningtable 1", "put apple 1 in/on diningtable 1",
    ]  # fmt: skip
