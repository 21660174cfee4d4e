"""Shared builders for the sql env tests: tasks from hand-made tables and scripted episodes."""

from __future__ import annotations

from collections.abc import Sequence

from prefbuild.envs.base import EnvTask
from prefbuild.envs.sql.env import SqlEnv, task_info
from prefbuild.envs.sql.items import SqlItem
from prefbuild.envs.sql.protocol import DBBenchProtocol
from prefbuild.records import EnvInfo, Outcome, Step, StepFacts, StopReason, TeacherInfo, Trajectory

TABLE = "Table of Year, Title, and Role"
COLUMNS = ("Year", "Title", "Role", "Notes/Extra")
ROWS = (
    ("2019", "Aoharu Ride", "Kou Mabuchi", "Lead"),
    ("2007", "Montréal", "Johnson", "4,567"),
    ("999", "Blue River", "Amos Oz", None),
    ("2012", "Night Road", "Lena Moreau", "Cameo"),
)


def make_item(kind: str = "other", **changes: object) -> SqlItem:
    """A small hand-made item; ``changes`` override any field."""
    base: dict[str, object] = {
        "description": "What is the Title when the Role is johnson?",
        "table_name": TABLE,
        "columns": COLUMNS,
        "rows": ROWS,
        "type": kind,
        "label": ("Montréal",),
        "reference_sql": f"SELECT `Title` FROM `{TABLE}` WHERE `Role` = 'johnson'",
    }
    base.update(changes)
    return SqlItem(**base)  # type: ignore[arg-type]


def make_task(item: SqlItem, identifier: str = "sql-test-0001") -> EnvTask:
    return EnvTask(info=task_info(identifier, item, "test", 0, "hand-made"), payload=item)


def play(task: EnvTask, turns: Sequence[str], **env_options: object) -> Trajectory:
    """Run raw model turns through the real protocol and env, as the rollout engine does."""
    env = SqlEnv(**env_options)  # type: ignore[arg-type]
    protocol = DBBenchProtocol()
    observation, _ = env.reset(task)
    steps: list[Step] = []
    success = False
    for index, text in enumerate(turns):
        parsed = protocol.parse(text)
        assert parsed.action is not None
        expert = env.expert_action()
        result = env.step(parsed.action)
        steps.append(
            Step(
                index=index,
                observation=observation,
                raw_output=text,
                thought=parsed.thought,
                action=parsed.action,
                format_ok=parsed.format_ok,
                valid=bool(result.valid),
                expert_action=expert,
                feedback=result.observation,
                reward=result.reward,
                done=result.done,
                facts=result.facts or StepFacts(),
                info=dict(result.info),
            )
        )
        observation = result.observation
        if result.done:
            success = result.won
            break
    stop = (
        StopReason.success
        if success
        else (StopReason.agent_finished if steps and steps[-1].done else StopReason.max_steps)
    )
    return Trajectory(
        id=f"traj-{task.info.id}-{len(turns)}",
        task=task.info,
        env=EnvInfo(name="sql", dialect=None, protocol="dbbench"),
        teacher=TeacherInfo(backend="scripted", model="scripted"),
        messages=DBBenchProtocol().prefix_messages(task),
        steps=steps,
        outcome=Outcome(success=success, reward=1.0 if success else 0.0, stop_reason=stop),
    )


def operation(sql: str, thought: str = "Let me look at the table.") -> str:
    return f"{thought}\nAction: Operation\n```sql\n{sql}\n```"


def answer(raw: str, thought: str = "I have the answer.") -> str:
    return f"{thought}\nAction: Answer\nFinal Answer:{raw}"
