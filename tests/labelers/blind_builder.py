"""Build a blind labeler set (``tests/labelers/blind_dev``, ``blind_test`` ... ``blind_test5``) from its sources.

Each folder holds ``alfworld.yaml``, ``dbbench.yaml`` and ``react.yaml`` (hand-written turns and
expected labels) and gets ``alfworld_runs.jsonl``, ``dbbench_runs.jsonl``, ``react_messages.jsonl``
and ``labels.jsonl`` in the shapes of ``tests/labelers/heldout`` (see its README). Household
replies and admissible lists are computed by ``blind_household.Game`` from the spec; the agent's
written command is executed the way the benchmark does it (AgentBench: text after the first
``ACTION:``, first line, stripped, lower-cased, snapped to an admissible command, the snap
written by the source as ``x``; ReAct: the first line without the ``> `` marker, exactly).
Strict: unknown keys, bad modes, steps past the end, a snap to a command that is not admissible,
an episode going on after a win or past the benchmark's turn limit fail with ``file:line``.

Example:
    python tests/labelers/blind_builder.py tests/labelers/blind_dev          # write the built files
    python tests/labelers/blind_builder.py tests/labelers/blind_dev --check  # exit 1 if they differ
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from prefbuild.envs.sql.items import TASK_TYPES  # noqa: E402
from tests.labelers.blind_household import Game, GameError, intro  # noqa: E402
from tests.labelers.heldout.build import (  # noqa: E402
    AB_EXAMPLE,
    AB_INSTRUCTION,
    REACT_PREFIX,
    SCORED_MODES,
    TIME,
    SqlTurn,
)
from tests.labelers.strict_yaml import FixtureError, StrictModel, line_of, load_yaml, validate  # noqa: E402

DB_INSTRUCTION = (
    "\nI will ask you a question, then you should help me operate a MySQL database with SQL to answer the question.\n"
    "You have to explain the problem and your solution to me and write down your thoughts.\n"
    "After thinking and explaining thoroughly, every round you can choose to operate or to answer.\n"
    "your operation should be like this:\nAction: Operation\n```sql\nSELECT * FROM table WHERE condition;\n```\n"
    "You MUST put SQL in markdown format without any other comments. Your SQL should be in one line.\n"
    "Every time you can only execute one SQL statement. I will only execute the statement in the first SQL code "
    "block. Every time you write a SQL, I will execute it for you and give you the output.\n"
    "If you are done operating, and you want to commit your final answer, then write down:\n"
    'Action: Answer\nFinal Answer: ["ANSWER1", "ANSWER2", ...]\n'
    "DO NOT write this pattern unless you are sure about your answer. I expect an accurate and correct answer.\n"
    "Your answer should be accurate. Your answer must be exactly the same as the correct answer.\n"
    "If the question is about modifying the database, then after done operation, your answer field can be "
    "anything.\nIf your response cannot match any pattern I mentioned earlier, you will be judged as FAIL "
    "immediately.\nYour input will be raw MySQL response, you have to deal with it by yourself.\n"
)
AB_TURN_LIMIT = 35
REACT_TURN_LIMIT = 49
DB_OPERATION_LIMIT = 15
MYSQL_ERROR = re.compile(r"\d{4} \([0-9A-Z]{5}\): \S.*")
MYSQL_ROWS = re.compile(r"\[.*\]", re.DOTALL)


class HouseTurn(StrictModel):
    """A household turn: ``t`` thought, ``a`` written command, or ``raw`` the whole message; ``x`` AgentBench's snap."""

    t: str | None = None
    a: str | None = None
    raw: str | None = None
    x: str | None = None


class _Episode(StrictModel):
    id: str = Field(min_length=1)
    note: str = ""
    expect: dict[str, list[int] | int] = Field(default_factory=dict)


class HouseEpisode(_Episode):
    room: list[str]
    contents: dict[str, list[str]] = Field(default_factory=dict)
    goal: str
    status: Literal["agent context limit"] | None = None
    dialect: Literal["classic", "modern"] = "classic"
    steps: list[HouseTurn] = Field(min_length=1)


class SqlEpisode(_Episode):
    type: str
    question: str
    table: str
    steps: list[SqlTurn] = Field(min_length=1)

    @field_validator("type")
    @classmethod
    def _known_type(cls, value: str) -> str:
        if value not in TASK_TYPES:
            raise ValueError(f"unknown DBBench type {value!r}; known: {', '.join(TASK_TYPES)}")
        return value


def _ab_output(turn: HouseTurn) -> str:
    if turn.raw is not None:
        return turn.raw
    return f"THOUGHT: {turn.t}\n ACTION: {turn.a}\n" if turn.t else f"ACTION: {turn.a}\n"


def _ab_written(output: str, where: str) -> str:
    found = re.search("ACTION:(.*)", output)
    if found is None:
        raise FixtureError(f"{where}: no 'ACTION:' (AgentBench would end the episode without a log entry)")
    return found.group(1).strip().lower()


def _ab_executed(turn: HouseTurn, written: str, admissible: list[str], where: str) -> str:
    if written in admissible:
        if turn.x is not None and turn.x != written:
            raise FixtureError(f"{where}.x: {written!r} is admissible, AgentBench runs it as written")
        return written
    if turn.x is None:
        raise FixtureError(f"{where}: {written!r} is not admissible; write AgentBench's snap as x")
    if turn.x not in admissible and turn.x != written:
        raise FixtureError(f"{where}.x: {turn.x!r} is not admissible here")
    return turn.x


def _game(episode: HouseEpisode, where: str) -> Game:
    try:
        return Game(episode.room, episode.contents, episode.goal, episode.dialect)
    except GameError as error:
        raise FixtureError(f"{where}: {error}") from None


def _runs_line(index: int, status: str, result: dict[str, Any], history: list[dict[str, str]]) -> dict[str, Any]:
    output = {"index": index, "status": status, "result": result, "history": history}
    return {"index": index, "error": None, "info": None, "output": output, "time": TIME}


def _finished(game: Game, position: int, episode: HouseEpisode, where: str) -> bool:
    won = game.won()
    if won and position != len(episode.steps) - 1:
        raise FixtureError(f"{where}.steps.{position}: the goal holds here, the benchmark stops the episode")
    return won


def alfworld_record(index: int, episode: HouseEpisode, where: str) -> dict[str, Any]:
    """One AgentBench v0.2 household ``runs.jsonl`` line (history, result.log, init_prompt, result).

    Args:
        index: the sample index.
        episode: the validated source episode.
        where: ``file:line episodes.N`` for errors.

    Returns:
        The record as AgentBench's ``alfworld_run`` writes it.
    """
    if len(episode.steps) > AB_TURN_LIMIT:
        raise FixtureError(f"{where}.steps: {len(episode.steps)} turns, AgentBench stops at {AB_TURN_LIMIT}")
    game = _game(episode, where)
    listing = " AVAILABLE ACTIONS: " + "\n".join(game.admissible()) + "\n"
    init_prompt = "Here is your task. " + intro(episode.room, episode.goal) + listing
    history: list[dict[str, str]] = [
        {"role": "user", "content": AB_INSTRUCTION},
        {"role": "agent", "content": "OK. I'll follow your instructions and try my best to solve the task."},
    ]
    for position, text in enumerate(AB_EXAMPLE):
        history.append({"role": "user" if position % 2 == 0 else "agent", "content": text})
    history.append({"role": "user", "content": init_prompt})
    log: list[dict[str, Any]] = []
    status = ""
    won = False
    for position, turn in enumerate(episode.steps):
        at = f"{where}.steps.{position}"
        if turn.raw is None and turn.a is None:
            raise FixtureError(f"{at}: an AgentBench turn needs 'a' or 'raw'")
        admissible = game.admissible()
        output = _ab_output(turn)
        executed = _ab_executed(turn, _ab_written(output, at), admissible, at)
        observation = game.step(executed)
        history[-1]["content"] = history[-1]["content"].split("AVAILABLE ACTIONS")[0]
        history.append({"role": "agent", "content": output})
        history.append(
            {"role": "user", "content": observation + " AVAILABLE ACTIONS: " + "\n".join(game.admissible()) + "\n"}
        )
        won = _finished(game, position, episode, where)
        log.append(
            {
                "round": position + 1,
                "output": output,
                "action": executed,
                "admissible_commands": admissible,
                "observation": observation,
                "done": won,
            }
        )
        if len(log) > 3 and len({entry["output"] for entry in log[-3:]}) == 1:
            if position != len(episode.steps) - 1:
                raise FixtureError(f"{at}: three identical outputs end an AgentBench episode here")
            status = "agent invalid action"
    if not status:
        status = "completed" if won else "task limit reached" if len(log) == AB_TURN_LIMIT else episode.status or ""
    if not status:
        raise FixtureError(f"{where}: a lost episode of {len(log)} turns needs status 'agent context limit'")
    if episode.status and status != episode.status:
        raise FixtureError(f"{where}.status: the run ends with {status!r}")
    return _runs_line(index, status, {"log": log, "init_prompt": init_prompt, "result": 1 if won else 0}, history)


def react_record(episode: HouseEpisode, where: str) -> dict[str, Any]:
    """One chat log of a ReAct run: the prompt with two examples, then one assistant turn per agent line.

    Args:
        episode: the validated source episode.
        where: ``file:line episodes.N`` for errors.

    Returns:
        ``{id, messages, success}``.
    """
    if len(episode.steps) > REACT_TURN_LIMIT:
        raise FixtureError(f"{where}.steps: {len(episode.steps)} turns, ReAct stops at {REACT_TURN_LIMIT}")
    game = _game(episode, where)
    messages = [{"role": "user", "content": REACT_PREFIX + intro(episode.room, episode.goal)}]
    won = False
    for position, turn in enumerate(episode.steps):
        at = f"{where}.steps.{position}"
        if turn.x is not None or turn.t is not None or (turn.raw is None) == (turn.a is None):
            raise FixtureError(f"{at}: a ReAct turn has exactly one of 'a' and 'raw' (no 't', no 'x')")
        text = turn.raw if turn.raw is not None else str(turn.a)
        line = text.strip().split("\n", 1)[0].strip()
        line = line[1:].strip() if line.startswith(">") else line
        if line.startswith("think:"):
            game.step(line)
            observation = "OK."
        else:
            observation = game.step(line)
        messages += [{"role": "assistant", "content": text}, {"role": "user", "content": observation}]
        won = _finished(game, position, episode, where)
    if episode.status:
        raise FixtureError(f"{where}.status: ReAct runs record no status")
    return {"id": episode.id, "messages": messages, "success": won}


def _sql_action(raw: str) -> str | None:
    found = re.search(r"Action: (.*)\n", raw)
    return found.group(1) if found else None


def dbbench_record(index: int, episode: SqlEpisode, where: str) -> dict[str, Any]:
    """One AgentBench v0.2 DBBench ``runs.jsonl`` line (the result does not say if the answer was right).

    Args:
        index: the sample index.
        episode: the validated source episode.
        where: ``file:line episodes.N`` for errors.

    Returns:
        The record; its status follows the benchmark's parsing rules (spec section 4).
    """
    history = [
        {"role": "user", "content": DB_INSTRUCTION},
        {"role": "agent", "content": "Ok."},
        {"role": "user", "content": f"{episode.question}\n{episode.table}"},
    ]
    operations = 0
    status = ""
    answer = None
    for position, turn in enumerate(episode.steps):
        at = f"{where}.steps.{position}"
        last = position == len(episode.steps) - 1
        history.append({"role": "agent", "content": turn.raw})
        if _sql_action(turn.raw) == "Operation" and operations < DB_OPERATION_LIMIT:
            block = re.search(r"```sql\n(.*?)\n```", turn.raw, re.DOTALL)
            if block is None:
                if not last or turn.o is not None:
                    raise FixtureError(f"{at}: an Operation without a sql block ends the episode, no reply")
                status = "agent validation failed"
                break
            if turn.o is None or last:
                raise FixtureError(f"{at}: an executed Operation gets a reply and is followed by a turn")
            statement = block.group(1).strip().replace("\n", " ")
            _check_reply(statement, turn.o, f"{at}.o")
            operations += 1
            history.append({"role": "user", "content": turn.o})
            continue
        if not last or turn.o is not None:
            raise FixtureError(f"{at}: this turn is final (no executed Operation): no reply, nothing after it")
        found = re.search(r"\nFinal Answer:(.*)", turn.raw)
        if found:
            answer = found.group(1)
            status = "completed"
        else:
            status = "task limit reached" if operations >= DB_OPERATION_LIMIT else "agent validation failed"
    if not status:
        raise FixtureError(f"{where}.steps: the last turn is an executed Operation; the run needs a final turn")
    return _runs_line(index, status, {"answer": answer, "type": [episode.type]}, history)


def _check_reply(statement: str, reply: str, where: str) -> None:
    if MYSQL_ERROR.fullmatch(reply):
        return
    if not MYSQL_ROWS.fullmatch(reply) and not reply.endswith("[TRUNCATED]"):
        raise FixtureError(f"{where}: {reply!r} is neither a MySQL result nor a MySQL error")
    if len(reply) > 800 and not reply.endswith("[TRUNCATED]"):
        raise FixtureError(f"{where}: replies over 800 characters are cut and end with [TRUNCATED]")
    if statement.split(" ", 1)[0].upper() in ("INSERT", "UPDATE", "DELETE") and reply != "[]":
        raise FixtureError(f"{where}: a successful {statement.split(' ', 1)[0].upper()} replies []")


SHAPES: dict[str, tuple[str, str, type[_Episode]]] = {
    "alfworld.yaml": ("agentbench-household", "alfworld_runs.jsonl", HouseEpisode),
    "dbbench.yaml": ("agentbench-dbbench", "dbbench_runs.jsonl", SqlEpisode),
    "react.yaml": ("react-household", "react_messages.jsonl", HouseEpisode),
}


def _labels(episode: _Episode, where: str) -> list[dict[str, Any]]:
    labels = []
    for mode, spec in episode.expect.items():
        if mode not in SCORED_MODES:
            raise FixtureError(f"{where}.expect.{mode}: unknown mode")
        steps = [spec] if isinstance(spec, int) else spec
        if len(set(steps)) != len(steps):
            raise FixtureError(f"{where}.expect.{mode}: a step is listed twice")
        for step in steps:
            if not 0 <= step < len(episode.steps):  # type: ignore[attr-defined]
                raise FixtureError(f"{where}.expect.{mode}: no step {step}")
            labels.append({"step": step, "mode": mode})
    return sorted(labels, key=lambda item: (item["step"], item["mode"]))


def build(here: Path) -> tuple[dict[str, list[dict[str, Any]]], list[dict[str, Any]]]:
    """Log records per output file and the sidecar lines of the set in ``here``.

    Args:
        here: the set's folder (holding the three YAML sources).

    Returns:
        ``(logs, sidecar)``: records per log file name, one sidecar entry per episode.

    Raises:
        FixtureError: ``file:line field: message`` on bad input.

    Example:
        >>> logs, sidecar = build(Path("tests/labelers/blind_dev"))  # doctest: +SKIP
    """
    logs: dict[str, list[dict[str, Any]]] = {}
    sidecar: list[dict[str, Any]] = []
    ids: set[str] = set()
    for source_name, (shape, log_name, model) in SHAPES.items():
        source = here / source_name
        document = load_yaml(source)
        if not isinstance(document, dict) or set(document) != {"episodes"}:
            raise FixtureError(f"{source}:1 document: expected exactly one key 'episodes'")
        records = logs.setdefault(log_name, [])
        for position, raw in enumerate(document["episodes"]):
            episode = validate(model, raw, source, ("episodes", position))
            where = f"{source}:{line_of(raw, ())} episodes.{position}"
            if episode.id in ids:
                raise FixtureError(f"{where}.id: duplicate id {episode.id!r}")
            ids.add(episode.id)
            labels = _labels(episode, where)
            if isinstance(episode, SqlEpisode):
                records.append(dbbench_record(len(records), episode, where))
            elif shape == "react-household":
                records.append(react_record(episode, where))  # type: ignore[arg-type]
            else:
                records.append(alfworld_record(len(records), episode, where))  # type: ignore[arg-type]
            sidecar.append(
                {
                    "log": log_name,
                    "record": len(records),
                    "id": episode.id,
                    "shape": shape,
                    "labels": labels,
                    "note": episode.note,
                }
            )
    return logs, sidecar


def render(here: Path) -> dict[str, str]:
    """The text of every built file of the set in ``here``, by file name.

    Args:
        here: the set's folder.

    Returns:
        ``{file name: JSON lines text}`` for the three logs and ``labels.jsonl``.
    """
    logs, sidecar = build(here)
    texts = {name: "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records) for name, records in logs.items()}
    texts["labels.jsonl"] = "".join(json.dumps(entry, ensure_ascii=False) + "\n" for entry in sidecar)
    return texts


def main(here: Path, argv: list[str] | None = None) -> None:
    """Write the built files of the set in ``here``, or with ``--check`` only compare them.

    Args:
        here: the set's folder.
        argv: command-line arguments (``sys.argv[1:]`` when None); ``--check`` exits 1 if a built file is stale.

    Bad input prints ``error: file:line field: message`` and exits 1.
    """
    arguments = sys.argv[1:] if argv is None else argv
    try:
        texts = render(here)
    except FixtureError as error:
        print(f"error: {error}", file=sys.stderr)
        raise SystemExit(1) from None
    if "--check" in arguments:
        stale = [name for name, text in texts.items() if _read(here / name) != text]
        if stale:
            print(f"error: {here}: stale built files {', '.join(stale)}; run blind_builder.py {here}", file=sys.stderr)
            raise SystemExit(1)
    else:
        for name, text in texts.items():
            (here / name).write_text(text, encoding="utf-8")
    sidecar = [json.loads(line) for line in texts["labels.jsonl"].splitlines()]
    print(f"{here.name}: {len(sidecar)} episodes, {sum(len(e['labels']) for e in sidecar)} step labels")


def _read(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.is_file() else None


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        print("usage: python tests/labelers/blind_builder.py SET_FOLDER [--check]", file=sys.stderr)
        raise SystemExit(2)
    main(Path(sys.argv[1]).resolve(), sys.argv[2:])
