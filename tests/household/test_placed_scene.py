"""Generated scenes skip ``Scene``'s check only where it is proven to pass: check the proof holds."""

from __future__ import annotations

from prefbuild.envs.household import catalog, tasks
from prefbuild.envs.household.scene import Scene, scene_problems


def test_every_room_placement_is_proven_valid() -> None:
    assert all(tasks._room_placements_valid(room) for room in catalog.ROOM_OBJECTS)


def test_generated_scenes_equal_checked_scenes() -> None:
    for split in tasks.SPLITS:
        for index in range(120):
            scene = tasks.generate_task(split, 3, index).scene
            assert scene_problems(scene) == []
            checked = Scene(scene.room, scene.scene_number, scene.receptacles, scene.objects)
            assert checked == scene and hash(checked) == hash(scene) and repr(checked) == repr(scene)
