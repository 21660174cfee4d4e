"""``HouseholdEnv``: the ALFWorld-compatible household world behind prefbuild's env contract.

One instance plays one episode at a time. ``snapshot``/``restore`` and ``clone`` let pair
strategies try several actions from one state; ``expert_steps_remaining`` ranks those tries.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from prefbuild.envs.base import Env, EnvTask, Protocol, StepResult
from prefbuild.envs.household.engine import DIALECTS, Engine, Snapshot
from prefbuild.envs.household.expert import DEFAULT_LIMIT, EXPERTS, ORACLE, SEARCHING, expert_action, plan_length
from prefbuild.envs.household.protocols import PROTOCOLS
from prefbuild.envs.household.tasks import (
    HouseholdTask,
    check_split,
    generate_task,
    iter_tasks,
    resolve_task_types,
)
from prefbuild.records import StepFacts, TaskInfo

INTROS: tuple[str, ...] = ("benchmark", "raw")
_OPTIONS = ("close_after_search",)


def task_info(task: HouseholdTask) -> TaskInfo:
    """The ``TaskInfo`` record of a generated task (``meta`` carries the game parameters)."""
    goal, scene = task.goal, task.scene
    return TaskInfo(
        id=task.id,
        type=goal.task_type,
        goal=goal.sentence,
        split=task.split,
        seed=task.seed,
        meta={
            "room": scene.room,
            "index": task.index,
            "scene": scene.scene_number,
            "short": goal.spec.short,
            "object": goal.object_type,
            "receptacle": goal.receptacle_type,
            "toggle": goal.toggle_type,
            "template": goal.template,
            "folder": task.folder,
            "receptacles": len(scene.receptacles),
            "objects": len(scene.objects),
        },
    )


class HouseholdEnv(Env):
    """ALFWorld (TextWorld) household tasks, generated procedurally, in the classic or modern dialect.

    ``intro``: ``benchmark`` (banner dropped, blocks joined by one newline, as ReAct/AgentBench/ETO
    show it) or ``raw`` (the engine text). ``expert``: ``oracle`` (full knowledge) or
    ``searching`` (ALFWorld's handcoded search order). Option ``close_after_search`` (searching
    expert closes what it opened while searching; default True).
    """

    name: ClassVar[str] = "household"
    dialects: ClassVar[tuple[str, ...]] = DIALECTS
    protocols: ClassVar[dict[str, type[Protocol]]] = PROTOCOLS
    fast_step: ClassVar[bool] = True  # an in-memory engine: microseconds per step

    def __init__(self, dialect: str = "classic", intro: str = "benchmark", expert: str = ORACLE, **options: Any):
        if dialect not in DIALECTS:
            raise ValueError(f"household: unknown dialect {dialect!r}; known: {', '.join(DIALECTS)}")
        if intro not in INTROS:
            raise ValueError(f"household: unknown intro {intro!r}; known: {', '.join(INTROS)}")
        if expert not in EXPERTS:
            raise ValueError(f"household: unknown expert {expert!r}; known: {', '.join(EXPERTS)}")
        unknown = sorted(set(options) - set(_OPTIONS))
        if unknown:
            raise ValueError(f"household: unknown option(s) {', '.join(unknown)}; known: {', '.join(_OPTIONS)}")
        self.dialect = dialect
        self.intro = intro
        self.expert = expert
        self.close_after_search = bool(options.get("close_after_search", True))
        self._engine: Engine | None = None
        self._task: EnvTask | None = None
        self._initial_plan: int | None = 0
        self._initial_state: Snapshot | None = None
        self._epoch = 0
        self._plan_cache: tuple[tuple[int, int], int] | None = None

    # --- tasks -------------------------------------------------------------------------------

    def tasks(self, split: str, n: int, seed: int, task_types: Sequence[str] | None = None) -> Iterator[EnvTask]:
        check_split(split)
        resolve_task_types(task_types)  # unknown names fail here, not at the first next()
        if n < 0:
            raise ValueError(f"household: n must be >= 0, got {n}")
        return (EnvTask(info=task_info(t), payload=t) for t in iter_tasks(split, n, seed, task_types))

    def task_at(self, split: str, index: int, seed: int) -> EnvTask:
        """Task ``index`` of ``split`` directly (tasks are pure functions of split, seed and index),
        so ``envs play --index 99999999`` builds one task, not a hundred million.

        Example:
            >>> HouseholdEnv().task_at("train", 5, 0).info.id == list(HouseholdEnv().tasks("train", 6, 0))[5].info.id
            True
        """
        check_split(split)
        task = generate_task(split, seed, index)
        return EnvTask(info=task_info(task), payload=task)

    # --- episode -----------------------------------------------------------------------------

    @property
    def engine(self) -> Engine:
        """The live engine (read its views: ``here()``, ``holding()``, ``contents_of()``...)."""
        if self._engine is None:
            raise RuntimeError("household: call reset(task) before using the env")
        return self._engine

    @property
    def task(self) -> EnvTask:
        if self._task is None:
            raise RuntimeError("household: call reset(task) before using the env")
        return self._task

    def reset(self, task: EnvTask) -> tuple[str, dict[str, Any]]:
        payload = task.payload
        if not isinstance(payload, HouseholdTask):
            raise TypeError(f"household: task {task.info.id!r} has no household payload (got {type(payload).__name__})")
        self._task = task
        self._engine = Engine(payload.scene, payload.goal, self.dialect)
        self._epoch += 1
        self._plan_cache = None
        # The oracle's plan from the start is counted when progress() first needs it: replays
        # (pair building) reset an env per episode and never ask.
        self._initial_plan, self._initial_state = None, self._engine.snapshot()
        observation = self._engine.intro(raw=self.intro == "raw")
        return observation, {"won": False, "task_id": task.info.id, "task_type": payload.goal.task_type}

    def step(self, action: str) -> StepResult:
        engine = self.engine
        observation, valid = engine.step(action)
        won = engine.won
        command = action.strip() if isinstance(action, str) else ""
        return StepResult(
            observation=observation,
            reward=1.0 if won else 0.0,
            done=won,
            info={"command": command},
            facts=StepFacts(won=won),
            valid=valid,
        )

    def admissible_actions(self) -> list[str]:
        return self.engine.admissible()

    def expert_action(self) -> str | None:
        return expert_action(self.engine, self.expert, self.close_after_search)

    def searcher_action(self) -> str | None:
        return expert_action(self.engine, SEARCHING, self.close_after_search)

    def expert_steps_remaining(self) -> int:
        """Steps the oracle still needs to win from here (0 once won)."""
        engine = self.engine
        key = (self._epoch, engine.version)
        if self._plan_cache is not None and self._plan_cache[0] == key:
            return self._plan_cache[1]
        steps = plan_length(engine, ORACLE)
        remaining = DEFAULT_LIMIT if steps is None else steps
        self._plan_cache = (key, remaining)
        return remaining

    def progress(self) -> float:
        """``1 - remaining / initial`` oracle steps, clamped to [0, 1]; 1.0 once won."""
        if self.engine.won:
            return 1.0
        initial = self._initial_steps()
        if initial <= 0:
            return 0.0
        return min(1.0, max(0.0, 1.0 - self.expert_steps_remaining() / initial))

    def _initial_steps(self) -> int:
        """Steps the oracle needed from the episode's start (counted once, on a copy of the engine)."""
        if self._initial_plan is None:
            assert self._initial_state is not None
            start = self.engine.clone()
            start.restore(self._initial_state)
            steps = plan_length(start, ORACLE)
            self._initial_plan = DEFAULT_LIMIT if steps is None else steps
        return self._initial_plan

    # --- branching ---------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """The current episode state; pass it to ``restore`` any number of times."""
        return self.engine.snapshot()

    def restore(self, snapshot: Snapshot) -> None:
        self.engine.restore(snapshot)
        self._epoch += 1

    def clone(self) -> HouseholdEnv:
        """An independent env at the same state of the same episode (cheap: shares the scene)."""
        twin = HouseholdEnv(self.dialect, self.intro, self.expert, close_after_search=self.close_after_search)
        if self._engine is not None:
            twin._engine = self._engine.clone()
            twin._task = self._task
            twin._initial_plan, twin._initial_state = self._initial_plan, self._initial_state
        return twin

    def __deepcopy__(self, memo: dict[int, Any]) -> HouseholdEnv:
        return self.clone()

