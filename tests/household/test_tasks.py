"""Task generation: deterministic, unique ids, valid rooms, solvable setup, never already won,
held-out floor plans for valid_unseen."""

from __future__ import annotations

import pytest

from prefbuild.envs.household import catalog
from prefbuild.envs.household.engine import Engine
from prefbuild.envs.household.scene import layout, scene_numbers
from prefbuild.envs.household.tasks import generate_task, initially_won, iter_tasks


def test_deterministic_and_independent_of_n_and_filter() -> None:
    first = list(iter_tasks("train", 30, 3))
    again = list(iter_tasks("train", 60, 3))[:30]
    assert first == again
    heat_only = list(iter_tasks("train", 5, 3, ["heat"]))
    assert [t.goal.task_type for t in heat_only] == ["pick_heat_then_place_in_recep"] * 5
    assert heat_only[0] == generate_task("train", 3, heat_only[0].index) == first[3]
    assert list(iter_tasks("train", 10, 4)) != list(iter_tasks("train", 10, 3))


def test_ids_unique_and_stable() -> None:
    tasks = list(iter_tasks("valid_seen", 200, 3))
    ids = [t.id for t in tasks]
    assert len(set(ids)) == 200
    assert ids[17] == "household/valid_seen/s3/000017"


def test_valid_unseen_layouts_disjoint_from_train() -> None:
    for room in catalog.ROOM_KINDS:
        seen, unseen = set(scene_numbers(room, False)), set(scene_numbers(room, True))
        assert seen and unseen and not seen & unseen
        assert {layout(room, n) for n in seen}.isdisjoint({layout(room, n) for n in unseen})
    train = {(t.scene.room, t.scene.scene_number) for t in iter_tasks("train", 600, 0)}
    unseen_tasks = {(t.scene.room, t.scene.scene_number) for t in iter_tasks("valid_unseen", 300, 0)}
    assert train.isdisjoint(unseen_tasks)
    assert len(unseen_tasks) > 10


def test_generated_tasks_follow_the_spec() -> None:
    for task in iter_tasks("train", 600, 21):
        goal, scene = task.goal, task.scene
        spec = catalog.TASK_TYPE_BY_NAME[goal.task_type]
        assert scene.room in spec.rooms
        assert goal.sentence in (
            t.format(obj=goal.object_type, recep=goal.receptacle_type, toggle=goal.toggle_type) for t in spec.templates
        )
        types = [o.type for o in scene.objects]
        receptacle_types = {r.type for r in scene.receptacles}
        assert goal.object_type in catalog.PICKUPABLE
        assert types.count(goal.object_type) >= (2 if goal.task_type == "pick_two_obj_and_place" else 1)
        if goal.state:
            objects, tool, _ = catalog.STATE_RULES[goal.state]
            assert goal.object_type in objects and tool in receptacle_types
        if goal.task_type == "look_at_obj_in_light":
            assert goal.toggle_type in types
        else:
            assert goal.receptacle_type in receptacle_types
            assert goal.object_type in catalog.CAN_CONTAIN[goal.receptacle_type]
        assert 5 <= len(scene.receptacles) <= 60
        assert not initially_won(scene, goal)
        assert not Engine(scene, goal).won
        openable = {r.type for r in scene.receptacles if r.openable}
        assert openable <= catalog.OPENABLE_TYPES


def test_bad_arguments_name_the_problem() -> None:
    with pytest.raises(ValueError, match="unknown household split 'test'"):
        list(iter_tasks("test", 1, 0))
    with pytest.raises(ValueError, match="unknown household task type 'fly'"):
        list(iter_tasks("train", 1, 0, ["fly"]))
    assert catalog.task_type_spec("2").name == "look_at_obj_in_light"
    assert catalog.task_type_spec("pick_two_obj").name == "pick_two_obj_and_place"
