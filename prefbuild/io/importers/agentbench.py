"""AgentBench v0.2 ``runs.jsonl`` files (household and DBBench tasks) as Trajectory records.

One line per sample, as the AgentBench assigner writes it::

    {"index": 3, "error": null, "info": null,
     "output": {"index": 3, "status": "task limit reached",
                "result": {...task specific...},
                "history": [{"role": "user", "content": ...}, {"role": "agent", "content": ...}, ...]},
     "time": {...}}

Household results also carry ``result.log`` (per round: the model ``output``, the executed
``action`` after BLEU snapping, the ``admissible_commands``, the ``observation``) and
``result.init_prompt``; when present they give the exact observation turns and the
executed commands. Without them the steps are rebuilt from the chat history. DBBench
results do not say whether the answer was right (AgentBench scores that afterwards), so
those trajectories are marked ``task.meta['outcome_known'] = False``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prefbuild.io.importers.convert import (
    ExternalLogError,
    bare_observation,
    finish,
    household_step,
    messages_of,
)
from prefbuild.io.importers.parsing import parse_turn, step_fields
from prefbuild.labelers.household_text import parse_goal
from prefbuild.records import (
    EXTERNAL_SPLIT,
    EnvInfo,
    Message,
    Outcome,
    Role,
    SqlFacts,
    Step,
    StepFacts,
    StopReason,
    TaskInfo,
    TeacherInfo,
    Trajectory,
)

KIND_TO_TYPE = {
    "put": "pick_and_place_simple",
    "examine": "look_at_obj_in_light",
    "clean": "pick_clean_then_place_in_recep",
    "heat": "pick_heat_then_place_in_recep",
    "cool": "pick_cool_then_place_in_recep",
    "puttwo": "pick_two_obj_and_place",
}
_STATUS = {
    "completed": StopReason.agent_finished,
    "task limit reached": StopReason.max_steps,
    "agent invalid action": StopReason.protocol_stop,
    "agent validation failed": StopReason.protocol_stop,
    "agent context limit": StopReason.context_limit,
    "task error": StopReason.error,
    "unknown": StopReason.error,
}


def is_agentbench_record(record: Any) -> bool:
    output = record.get("output") if isinstance(record, dict) else None
    return isinstance(output, dict) and "history" in output


def source_name(path: Path) -> str:
    """The prefix of the ids of a log's trajectories: ``outputs/<time>/<agent>/<task>/runs.jsonl``
    -> ``<agent>/<task>``; any other file name -> ``<folder>/<file stem>``, so two logs side by side
    in one folder give distinct ids.

    Example:
        >>> source_name(Path("outputs/2024-01-01/gpt-4o/dbbench-std/runs.jsonl"))
        'gpt-4o/dbbench-std'
        >>> source_name(Path("logs/dbbench_gpt-4o.jsonl"))
        'logs/dbbench_gpt-4o'
    """
    parts = path.resolve().parts
    if path.name != "runs.jsonl":
        return "/".join((*parts[-2:-1], path.stem))
    return "/".join(parts[-3:-1]) if len(parts) >= 3 else path.stem


def _outcome(status: str, success: bool | None) -> Outcome:
    if success:
        return Outcome(success=True, reward=1.0, stop_reason=StopReason.success)
    reason = _STATUS.get(status, StopReason.agent_finished)
    error = status if reason is StopReason.error else None
    return Outcome(success=False, stop_reason=reason, error=error)


def agentbench_trajectory(record: dict[str, Any], *, source: str, model: str, where: str) -> Trajectory:
    """One ``runs.jsonl`` line as a Trajectory; raises ``ExternalLogError`` naming ``where`` on bad input."""
    output = record.get("output")
    if not isinstance(output, dict):
        raise ExternalLogError(f"{where}: 'output' must be an object with 'history' and 'result'")
    history = messages_of(output.get("history"), f"{where}: output.history")
    if not history:
        raise ExternalLogError(f"{where}: output.history is empty")
    index = record.get("index", output.get("index"))
    trajectory_id = f"{source}#{index}"
    result = output.get("result")
    status = str(output.get("status") or "completed")
    history = _without_harness_turn(history, status)
    opening = history[0].content.lstrip()
    if opening.startswith("Interact with a household"):
        return _household(history, result, status, trajectory_id, model, where)
    if is_dbbench_opening(opening):
        return dbbench_trajectory(history, result, status, trajectory_id, model, where)
    raise ExternalLogError(f"{where}: output.history[0] is neither the household nor the DBBench instruction")


def is_dbbench_opening(text: str) -> bool:
    """Is ``text`` (a log's first turn) the DBBench instruction?"""
    head = text.lstrip()[:400]
    return "MySQL" in head or "SQL" in head


# What AgentBench harnesses write in the agent's place when the model could not answer.
_HARNESS_TEXTS = {"agent context limit"}


def _without_harness_turn(history: list[Message], status: str) -> list[Message]:
    """The history without a last agent turn the harness wrote in the model's place: the
    status text (``agent context limit``), or nothing when the context was exceeded. The model
    never wrote it, so it is not a turn to label."""
    last = history[-1] if len(history) > 1 else None
    if last is None or last.role is not Role.assistant:
        return history
    text = last.content.strip().lower()
    if text in _HARNESS_TEXTS or (not text and status == "agent context limit"):
        return history[:-1]
    return history


def _teacher(model: str) -> TeacherInfo:
    return TeacherInfo(backend="external", model=model)


def _household(
    history: list[Message], result: Any, status: str, trajectory_id: str, model: str, where: str
) -> Trajectory:
    start = next(
        (i for i, m in enumerate(history) if m.role is Role.user and m.content.startswith("Here is your task.")),
        None,
    )
    if start is None:
        raise ExternalLogError(f"{where}: output.history has no user turn starting with 'Here is your task.'")
    result = result if isinstance(result, dict) else {}
    log = result.get("log") if isinstance(result.get("log"), list) else None
    first = str(result.get("init_prompt") or history[start].content)
    if log:
        steps = _household_steps_from_log(log, first, where)
        # A last turn without an ACTION ends the episode before AgentBench logs a round for it.
        extra = _household_steps_from_history(history, start)[len(steps) :]
        steps += [step.model_copy(update={"index": len(steps) + offset}) for offset, step in enumerate(extra)]
    else:
        steps = _household_steps_from_history(history, start)
    success = bool(result.get("result")) if "result" in result else None
    outcome = _outcome(status, success)
    goal_text = first.rsplit("Your task is to:", 1)[1] if "Your task is to:" in first else ""
    goal_text = bare_observation(goal_text).strip()
    goal = parse_goal(goal_text)
    task = TaskInfo(
        id=trajectory_id,
        type=KIND_TO_TYPE.get(goal.kind, "unknown") if goal else "unknown",
        goal=goal_text,
        split=EXTERNAL_SPLIT,
        meta={"source": "agentbench", "status": status, "outcome_known": success is not None},
    )
    return Trajectory(
        id=trajectory_id,
        task=task,
        env=EnvInfo(name="household", dialect=_dialect(first, steps), protocol="agentbench"),
        teacher=_teacher(model),
        messages=history[:start],
        steps=finish(steps, outcome),
        outcome=outcome,
    )


def _dialect(first: str, steps: list[Step]) -> str:
    """``modern`` when the game offered ``move X to Y`` commands (or, without recorded
    admissible lists, replied in that dialect), else ``classic``."""
    for step in steps:
        for command in step.facts.admissible or ():
            if command.startswith("move ") and " to " in command:
                return "modern"
            if command.startswith("put ") and " in/on " in command:
                return "classic"
    text = first + "".join(step.feedback for step in steps)
    return "modern" if "You move the " in text and "in/on" not in text else "classic"


def _household_steps_from_log(log: list[Any], first: str, where: str) -> list[Step]:
    steps: list[Step] = []
    observation = first
    for position, entry in enumerate(log):
        if not isinstance(entry, dict) or "output" not in entry:
            raise ExternalLogError(f"{where}: output.result.log[{position}] needs 'output', 'action', 'observation'")
        admissible = entry.get("admissible_commands")
        admissible = [str(a) for a in admissible] if isinstance(admissible, list) else None
        raw = str(entry.get("output") or "")
        feedback = str(entry.get("observation") or "")
        steps.append(
            household_step(
                position,
                observation,
                raw,
                step_fields(parse_turn("household", "agentbench", raw)),
                feedback,
                observation_in_history=observation.split("AVAILABLE ACTIONS", 1)[0],
                executed=str(entry["action"]) if entry.get("action") is not None else None,
                admissible=admissible,
                done=bool(entry.get("done")),
            )
        )
        following = log[position + 1] if position + 1 < len(log) else None
        listed = following.get("admissible_commands") if isinstance(following, dict) else None
        observation = feedback + (" AVAILABLE ACTIONS: " + "\n".join(map(str, listed)) + "\n" if listed else "")
    return steps


def _walk_history(history: list[Message], start: int, make_step: Callable[[int, str, str, str], Step]) -> list[Step]:
    """One step per assistant turn after ``history[start]``: (index, the turn it answered, its
    text, the user turn that followed it or "")."""
    steps: list[Step] = []
    observation = history[start].content
    position = start + 1
    while position < len(history):
        turn = history[position]
        if turn.role is not Role.assistant:
            observation = turn.content
            position += 1
            continue
        following = history[position + 1] if position + 1 < len(history) else None
        feedback = following.content if following is not None and following.role is Role.user else ""
        steps.append(make_step(len(steps), observation, turn.content, feedback))
        observation = feedback
        position += 2
    return steps


def _household_steps_from_history(history: list[Message], start: int) -> list[Step]:
    return _walk_history(
        history,
        start,
        lambda index, observation, text, feedback: household_step(
            index,
            observation,
            text,
            step_fields(parse_turn("household", "agentbench", text)),
            bare_observation(feedback),
        ),
    )


def dbbench_trajectory(
    history: list[Message], result: Any, status: str, trajectory_id: str, model: str, where: str
) -> Trajectory:
    """A DBBench chat history (the instruction first) as a sql Trajectory; ``result`` as AgentBench writes it."""
    start = next((i for i, m in enumerate(history) if i >= 1 and m.role is Role.user), None)
    if start is None:
        raise ExternalLogError(f"{where}: output.history has no question turn")
    result = result if isinstance(result, dict) else {}
    steps = _walk_history(history, start, dbbench_step)
    question = history[start].content
    task_type = result.get("type")
    task = TaskInfo(
        id=trajectory_id,
        type=str(task_type[0] if isinstance(task_type, list) and task_type else task_type or "unknown"),
        goal=question.split("\n", 1)[0],
        split=EXTERNAL_SPLIT,
        meta={
            "source": "agentbench",
            "status": status,
            "answer": result.get("answer"),
            "outcome_known": False,
        },
    )
    return Trajectory(
        id=trajectory_id,
        task=task,
        env=EnvInfo(name="sql", dialect="mysql", protocol="dbbench"),
        teacher=_teacher(model),
        messages=history[:start],
        steps=steps,
        outcome=_outcome(status, None),
    )


_MYSQL_ERROR = re.compile(r"^\d{4} \([0-9A-Z]{5}\): ")
_MUTATION = re.compile(r"^\s*(?:insert|update|delete|replace)\b", re.IGNORECASE)


def dbbench_step(index: int, observation: str, raw: str, feedback: str) -> Step:
    """A DBBench turn as the sql env records it: ``Operation: <sql>`` / ``Answer:<text>`` / ``Invalid: ...``."""
    fields = step_fields(parse_turn("sql", "dbbench", raw))
    facts: StepFacts = fields.pop("facts")
    action = fields["action"] or ""
    valid: bool | None = None
    if action.startswith("Operation: "):
        sql = action[len("Operation: ") :]
        error = feedback if _MYSQL_ERROR.match(feedback) else None
        # The log records no table state: a data-changing statement the server ran without an
        # error changed the table (AgentBench prints no reply for it, or the affected rows).
        changing = _MUTATION.match(sql) is not None
        sql_facts = SqlFacts(
            turn="operation",
            statement="mutation" if changing else "query",
            executed=sql,
            error=error,
            mutated=changing and error is None,
        )
        valid = error is None if feedback else None
    elif action.startswith("Answer:"):
        sql_facts = SqlFacts(turn="answer", answer=action[len("Answer:") :])
        facts = facts.model_copy(update={"final": True})
    else:
        sql_facts = SqlFacts(turn="invalid")
        facts = facts.model_copy(update={"final": True})
    return Step(
        index=index,
        observation=observation,
        raw_output=raw,
        feedback=feedback,
        valid=valid,
        facts=facts.model_copy(update={"sql": sql_facts}),
        **fields,
    )
