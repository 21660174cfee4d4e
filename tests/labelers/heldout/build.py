"""Build the held-out logs (real AgentBench / ReAct chat formats) and their label sidecar from the sources.

Sources (hand-written, see README.md): ``alfworld.yaml``, ``dbbench.yaml``, ``react.yaml``.
Outputs: ``alfworld_runs.jsonl`` and ``dbbench_runs.jsonl`` (AgentBench v0.2 ``runs.jsonl``
lines), ``react_messages.jsonl`` (chat message lists) and ``labels.jsonl`` (the sidecar).

    .venv/bin/python tests/labelers/heldout/build.py
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

HERE = Path(__file__).parent
ROOT = HERE.parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from prefbuild.labelers.evaluation import SCORED_MODES  # noqa: E402
from tests.labelers.fixtures.build import DB_INSTRUCTION, INSTRUCTION, intro, parse_indices  # noqa: E402
from tests.labelers.strict_yaml import FixtureError, StrictModel, line_of, load_yaml, validate  # noqa: E402

AB_INSTRUCTION = (
    INSTRUCTION + " At the beginning of your interactions, you will be given the detailed description of the current "
    "environment and your goal to accomplish. For each of your turn, you will be given a list of actions which you can "
    'choose one to perform in this turn. You should choose from two actions: "THOUGHT" or "ACTION". If you choose '
    '"THOUGHT", you should first think about the current condition and plan for your future actions, and then output '
    'your action in this turn. Your output must strictly follow this format:"THOUGHT: your thoughts.\n ACTION: your '
    'next action\n"; If you choose "ACTION", you should directly output the action in this turn. Your output must '
    'strictly follow this format:"ACTION: your next action\n". After your each turn, the environment will give you '
    'immediate feedback based on which you plan your next few steps. if the environment output "Nothing happened", '
    "that means the previous action is invalid and you should try more options.\n Reminder: \n1. the action must be "
    "chosen from the given available actions. Any actions except provided available actions will be regarded as "
    "illegal. \n2. Think when necessary, try to act directly more in the process.\n\n"
)
AB_EXAMPLE = [
    "Here is one example.\nYou are in the middle of a room. Looking quickly around you, you see a cabinet 2, a "
    "cabinet 1, a countertop 1, a garbagecan 1, a sinkbasin 1, and a toilet 1.\nYour task is to: put some "
    "spraybottle on toilet.",
    "THOUGHT: The task is to put some spraybottle on toilet, so first i need to search the room for some "
    "spraybottle. After finding the spraybottle, i need to take it to the toilet. I wil start my search on cabinets."
    "\n ACTION: go to cabinet 1",
    "On the cabinet 1, you see a cloth 1, a soapbar 1, and a soapbottle 1.",
    "ACTION: go to cabinet 2",
    "The cabinet 2 is closed.",
    "ACTION: open cabinet 2",
    "You open the cabinet 2. The cabinet 2 is open. In it, you see a candle 1, and a spraybottle 2.",
    "ACTION: take spraybottle 2 from cabinet 2",
    "You pick up the spraybottle 2 from the cabinet 2.",
    "ACTION: go to toilet 1",
    "On the toilet 1, you see a soapbottle 2.",
    "ACTION: put spraybottle 2 in/on toilet 1",
    "You put the spraybottle 2 in/on the toilet 1.",
    "ACTION: Task succeeded.",
]
REACT_PREFIX = (
    "Interact with a household to solve a task. Here are two examples.\n"
    "You are in the middle of a room. Looking quickly around you, you see a cabinet 2, a cabinet 1, a countertop 1, "
    "a sinkbasin 1, and a toilet 1.\nYour task is to: put some spraybottle on toilet.\n"
    "> think: To solve the task, I need to find and take a sparybottle, then put it on toilet.\nOK.\n"
    "> go to cabinet 1\nOn the cabinet 1, you see a cloth 1, and a spraybottle 2.\n"
    "> take spraybottle 2 from cabinet 1\nYou pick up the spraybottle 2 from the cabinet 1.\n"
    "> go to toilet 1\nOn the toilet 1, you see a soapbottle 2.\n"
    "> put spraybottle 2 in/on toilet 1\nYou put the spraybottle 2 in/on the toilet 1.\n"
    "You are in the middle of a room. Looking quickly around you, you see a countertop 1, a fridge 1, a microwave 1, "
    "and a sinkbasin 1.\nYour task is to: heat some egg and put it in countertop.\n"
    "> think: To solve the task, I need to find and take an egg, then heat it with microwave, then put it in "
    "countertop.\nOK.\n> go to fridge 1\nThe fridge 1 is closed.\n> open fridge 1\nYou open the fridge 1. The fridge 1 "
    "is open. In it, you see a egg 1.\n> take egg 1 from fridge 1\nYou pick up the egg 1 from the fridge 1.\n"
    "> go to microwave 1\nThe microwave 1 is closed.\n> heat egg 1 with microwave 1\nYou heat the egg 1 using the "
    "microwave 1.\n> go to countertop 1\nOn the countertop 1, you see nothing.\n> put egg 1 in/on countertop 1\nYou "
    "put the egg 1 in/on the countertop 1.\n\nHere is the task.\n"
)
OPENABLE = ("cabinet", "drawer", "fridge", "microwave", "safe", "box")
SEEN = re.compile(r"you see (.*)\.$")
TIME = {"timestamp": 1700000000000, "str": "2023-11-14 22:13:20"}


class HouseTurn(StrictModel):
    """A household turn: ``t`` thought, ``a`` written action or ``raw`` output, ``o`` reply, ``x`` executed."""

    t: str | None = None
    a: str | None = None
    raw: str | None = None
    o: str
    x: str | None = None


class SqlTurn(StrictModel):
    """A DBBench turn: the exact agent message and the MySQL reply (none after the final answer)."""

    raw: str
    o: str | None = None


class _Episode(StrictModel):
    id: str = Field(min_length=1)
    note: str = ""
    expect: dict[str, list[int | str] | int | str] = Field(default_factory=dict)


class HouseEpisode(_Episode):
    room: list[str]
    goal: str
    won: bool = False
    status: str | None = None
    dialect: Literal["classic", "modern"] = "classic"
    steps: list[HouseTurn]


class SqlEpisode(_Episode):
    type: Literal["SELECT", "INSERT", "UPDATE", "DELETE", "counting", "ranking", "aggregation-SUM", "aggregation-MAX"]
    question: str
    table: str
    status: str = "completed"
    steps: list[SqlTurn]


def _items(listing: str) -> list[str]:
    if listing == "nothing":
        return []
    parts = re.split(r", and |, | and ", listing)
    return [part[2:] if part.startswith("a ") else part[3:] if part.startswith("an ") else part for part in parts]


class Household:
    """Just enough ALFWorld state to write the admissible command lists a game would show."""

    def __init__(self, room: list[str], dialect: str) -> None:
        self.room = room
        self.dialect = dialect
        self.here: str | None = None
        self.visible: list[str] = []
        self.held: str | None = None
        self.closed: set[str] = set()

    def admissible(self) -> list[str]:
        commands = [f"go to {place}" for place in self.room if place != self.here]
        if self.here:
            kind = self.here.rsplit(" ", 1)[0]
            commands.append(f"examine {self.here}")
            if kind in OPENABLE:
                commands += [f"open {self.here}", f"close {self.here}"]
            if self.held is None:
                commands += [f"take {item} from {self.here}" for item in self.visible]
            elif self.here not in self.closed:
                verb = (
                    f"move {self.held} to {self.here}"
                    if self.dialect == "modern"
                    else f"put {self.held} in/on {self.here}"
                )
                commands.append(verb)
            if self.held is not None:
                if kind == "microwave":
                    commands.append(f"heat {self.held} with {self.here}")
                if kind == "fridge":
                    commands.append(f"cool {self.held} with {self.here}")
                if kind in ("sinkbasin", "bathtubbasin"):
                    commands.append(f"clean {self.held} with {self.here}")
            commands += [f"use {item}" for item in self.visible if item.startswith(("desklamp", "floorlamp"))]
        if self.held:
            commands.append(f"examine {self.held}")
        return sorted([*commands, "inventory", "look"])

    def update(self, executed: str, reply: str) -> None:
        if executed.startswith("go to ") and not reply.startswith("Nothing happens"):
            self.here = executed[len("go to ") :]
            self.visible = []
        if reply.startswith(f"The {self.here} is closed"):
            self.closed.add(str(self.here))
        if reply.startswith("You open the "):
            self.closed.discard(str(self.here))
        found = SEEN.search(reply)
        if found:
            self.visible = _items(found.group(1))
        picked = re.match(r"You pick up the (.+?) from", reply)
        if picked:
            self.held = picked.group(1)
            self.visible = [item for item in self.visible if item != self.held]
        if reply.startswith(("You put the", "You move the")) and self.held is not None:
            self.visible.append(self.held)
            self.held = None


def _raw(turn: HouseTurn) -> str:
    if turn.raw is not None:
        return turn.raw
    return f"THOUGHT: {turn.t}\n ACTION: {turn.a}" if turn.t else f"ACTION: {turn.a}"


def _executed(turn: HouseTurn) -> str:
    if turn.x is not None:
        return turn.x
    text = turn.a if turn.a is not None else (turn.raw or "").split("ACTION:", 1)[-1]
    return text.split("\n", 1)[0].strip().lower()


def alfworld_record(index: int, episode: HouseEpisode, where: str = "") -> dict[str, Any]:
    """One AgentBench v0.2 household ``runs.jsonl`` line (history, result.log, init_prompt, result)."""
    game = Household(episode.room, episode.dialect)
    ob = intro(episode.room, episode.goal)
    listing = " AVAILABLE ACTIONS: " + "\n".join(game.admissible()) + "\n"
    init_prompt = "Here is your task. " + ob + listing
    history: list[dict[str, str]] = [
        {"role": "user", "content": AB_INSTRUCTION},
        {"role": "agent", "content": "OK. I'll follow your instructions and try my best to solve the task."},
    ]
    for position, text in enumerate(AB_EXAMPLE):
        history.append({"role": "user" if position % 2 == 0 else "agent", "content": text})
    history.append({"role": "user", "content": init_prompt})
    log = []
    for round_number, turn in enumerate(episode.steps, start=1):
        admissible = game.admissible()
        raw = _raw(turn)
        executed = _executed(turn)
        if executed not in admissible and not turn.o.startswith("Nothing happens"):
            raise FixtureError(f"{where} steps.{round_number - 1}: executed {executed!r} is not admissible here")
        history[-1]["content"] = history[-1]["content"].split("AVAILABLE ACTIONS")[0]
        history.append({"role": "agent", "content": raw})
        game.update(executed, turn.o)
        done = episode.won and round_number == len(episode.steps)
        history.append(
            {"role": "user", "content": turn.o + " AVAILABLE ACTIONS: " + "\n".join(game.admissible()) + "\n"}
        )
        log.append(
            {
                "round": round_number,
                "output": raw,
                "action": executed,
                "admissible_commands": admissible,
                "observation": turn.o,
                "done": done,
            }
        )
    status = episode.status or ("completed" if episode.won else "task limit reached")
    result = {"log": log, "init_prompt": init_prompt, "result": 1 if episode.won else 0}
    return {
        "index": index,
        "error": None,
        "info": None,
        "output": {"index": index, "status": status, "result": result, "history": history},
        "time": TIME,
    }


def dbbench_record(index: int, episode: SqlEpisode) -> dict[str, Any]:
    """One AgentBench v0.2 DBBench ``runs.jsonl`` line (the result does not say if the answer was right)."""
    history = [
        {"role": "user", "content": DB_INSTRUCTION},
        {"role": "agent", "content": "Ok."},
        {"role": "user", "content": f"{episode.question}\n{episode.table}"},
    ]
    answer = None
    for turn in episode.steps:
        history.append({"role": "agent", "content": turn.raw})
        if turn.o is not None:
            history.append({"role": "user", "content": turn.o})
        found = re.search(r"\nFinal Answer:(.*)", turn.raw)
        if found:
            answer = found.group(1)
    result = {"answer": answer, "type": [episode.type]}
    return {
        "index": index,
        "error": None,
        "info": None,
        "output": {"index": index, "status": episode.status, "result": result, "history": history},
        "time": TIME,
    }


def react_record(episode: HouseEpisode) -> dict[str, Any]:
    """One chat log of a ReAct run: the prompt with two examples, then one assistant turn per agent line."""
    messages = [{"role": "user", "content": REACT_PREFIX + intro(episode.room, episode.goal)}]
    for turn in episode.steps:
        messages.append({"role": "assistant", "content": turn.raw if turn.raw is not None else str(turn.a)})
        messages.append({"role": "user", "content": turn.o})
    return {"id": episode.id, "messages": messages, "success": episode.won}


SHAPES = {
    "alfworld.yaml": ("agentbench-household", "alfworld_runs.jsonl", HouseEpisode),
    "dbbench.yaml": ("agentbench-dbbench", "dbbench_runs.jsonl", SqlEpisode),
    "react.yaml": ("react-household", "react_messages.jsonl", HouseEpisode),
}


def build(here: Path = HERE) -> tuple[dict[str, list[dict[str, Any]]], list[dict[str, Any]]]:
    """Log records per output file and the sidecar lines; ``FixtureError`` names ``file:line`` on bad input."""
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
            where = ("episodes", position)
            episode = validate(model, raw, source, where)
            line = line_of(raw, ())
            if episode.id in ids:
                raise FixtureError(f"{source}:{line} episodes.{position}.id: duplicate id {episode.id!r}")
            ids.add(episode.id)
            labels = []
            for mode, spec in episode.expect.items():
                if mode not in SCORED_MODES:
                    raise FixtureError(f"{source}:{line} episodes.{position}.expect.{mode}: unknown mode")
                for step in parse_indices(spec):
                    if step >= len(episode.steps):
                        raise FixtureError(f"{source}:{line} episodes.{position}.expect.{mode}: no step {step}")
                    labels.append({"step": step, "mode": mode})
            if isinstance(episode, SqlEpisode):
                records.append(dbbench_record(len(records), episode))
            elif shape == "react-household":
                records.append(react_record(episode))
            else:
                records.append(alfworld_record(len(records), episode, f"{source}:{line} episodes.{position}"))
            sidecar.append(
                {
                    "log": log_name,
                    "record": len(records),
                    "id": episode.id,
                    "shape": shape,
                    "labels": sorted(labels, key=lambda item: (item["step"], item["mode"])),
                    "note": episode.note,
                }
            )
    return logs, sidecar


def main() -> None:
    try:
        logs, sidecar = build()
    except FixtureError as error:
        print(f"error: {error}", file=sys.stderr)
        raise SystemExit(1) from None
    for name, records in logs.items():
        (HERE / name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    (HERE / "labels.jsonl").write_text(
        "".join(json.dumps(entry, ensure_ascii=False) + "\n" for entry in sidecar), encoding="utf-8"
    )
    print(f"{len(sidecar)} episodes, {sum(len(e['labels']) for e in sidecar)} step labels")


if __name__ == "__main__":
    main()
