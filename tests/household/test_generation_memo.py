"""Task generation and engine set-up after their speed-ups: the same tasks, texts and answers.

Pair building regenerates every labelled episode's task and resets an env on it, so these
paths were made cheaper (floor-plan tables and checks shared by every scene on a plan, one
weighted draw written out, objects numbered in listing order, the oracle's initial plan
counted on demand). Each test compares with an independent reference: the digest of tasks
generated before the change, the standard library's ``random.choices``, a non-memoised
build, and an eagerly counted plan.
"""

from __future__ import annotations

import hashlib
import random

import pytest

from prefbuild.envs.base import EnvTask
from prefbuild.envs.household.engine import CompiledScene, Engine
from prefbuild.envs.household.env import HouseholdEnv, task_info
from prefbuild.envs.household.expert import ORACLE, plan_length
from prefbuild.envs.household.scene import Receptacle, Scene, SceneObject, _pick, layout, listing_key
from prefbuild.envs.household.tasks import generate_task

# sha256 of the 600 tasks below as generated before generation was sped up (prefbuild 5b920f3).
TASKS_DIGEST = "8a641fcd570b82cfd1abae0e86aaedabedbcbd50b617908ad0881cdd7733caa4"


def test_generated_tasks_are_the_ones_generated_before() -> None:
    digest = hashlib.sha256()
    for split in ("train", "valid_seen", "valid_unseen"):
        for index in range(0, 400, 2):
            task = generate_task(split, 5, index)
            scene, goal = task.scene, task.goal
            digest.update(
                repr((
                    scene.room, scene.scene_number,
                    [(r.type, r.number, r.openable, r.location) for r in scene.receptacles],
                    [(o.type, o.number, o.receptacle) for o in scene.objects],
                    goal.task_type, goal.object_type, goal.receptacle_type, goal.toggle_type, goal.template,
                )).encode()
            )  # fmt: skip
    assert digest.hexdigest() == TASKS_DIGEST


def test_generated_objects_are_in_listing_order() -> None:
    for index in range(60):
        objects = generate_task("train", 2, index).scene.objects
        assert list(objects) == sorted(objects, key=lambda o: listing_key(o.type, o.number))


@pytest.mark.parametrize("seed", range(40))
def test_weighted_pick_draws_as_random_choices(seed: int) -> None:
    slots = list(layout("kitchen", 3 + seed % 20))
    picker = random.Random(seed)
    load = {r.name: picker.randrange(5) for r in slots if picker.random() < 0.5}
    ours, reference = random.Random(f"pick/{seed}"), random.Random(f"pick/{seed}")
    for _ in range(25):
        weights = [1.0 / (1 + load.get(r.name, 0)) ** 2 for r in slots]
        assert _pick(slots, load, ours) is reference.choices(slots, weights=weights, k=1)[0]
    assert ours.random() == reference.random()  # both consumed the same draws


def test_scene_checks_shared_by_a_floor_plan_still_judge_each_scene() -> None:
    plan = layout("kitchen", 4)
    counter = next(r for r in plan if r.type == "countertop")
    Scene("kitchen", 4, plan, (SceneObject("apple", 1, counter.name),))  # valid
    with pytest.raises(ValueError, match="apple instances must be numbered"):
        Scene("kitchen", 4, plan, (SceneObject("apple", 2, counter.name),))
    with pytest.raises(ValueError, match="lies in unknown receptacle"):
        Scene("kitchen", 4, plan, (SceneObject("apple", 1, "nowhere 9"),))
    with pytest.raises(ValueError, match="duplicate receptacle names"):
        Scene("kitchen", 1, (Receptacle("cabinet", 1, True, 1), Receptacle("cabinet", 1, True, 2)))


def test_compiled_scene_on_a_shared_plan_equals_a_fresh_compilation() -> None:
    task = generate_task("train", 0, 11)
    scene = task.scene
    shared = CompiledScene(scene)
    # A new tuple of the same receptacles misses the memo (keyed on the tuple object): built from scratch.
    fresh = CompiledScene(Scene(scene.room, scene.scene_number, tuple(list(scene.receptacles)), scene.objects))
    assert fresh.r_name is not shared.r_name
    for attribute, value in vars(shared).items():
        if attribute != "scene":
            assert vars(fresh)[attribute] == value, attribute
    again = CompiledScene(Scene(scene.room, scene.scene_number, scene.receptacles, scene.objects[:0]))
    assert again.r_name is shared.r_name and again.goto_at is shared.goto_at
    assert again.o_name == [] and shared.o_name == [o.name for o in scene.objects]


def test_progress_counts_the_initial_plan_from_the_start_state() -> None:
    task = generate_task("train", 1, 7)
    env = HouseholdEnv()
    env.reset(EnvTask(info=task_info(task), payload=task))
    initial = plan_length(Engine(task.scene, task.goal), ORACLE)
    assert initial is not None and initial > 1
    env.step(str(env.expert_action()))
    twin = env.clone()  # cloned before the initial plan was ever counted
    remaining = env.expert_steps_remaining()
    assert env.progress() == pytest.approx(1 - remaining / initial)
    assert twin.progress() == env.progress()
