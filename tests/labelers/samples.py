"""Small external logs in the layouts prefbuild imports: AgentBench v0.2 runs.jsonl lines and chat logs."""

from __future__ import annotations

from typing import Any

INSTRUCTION = (
    "Interact with a household to solve a task. Imagine you are an intelligent agent in a household environment "
    "and your target is to perform actions to complete the task goal.\n\n"
)
INTRO = (
    "You are in the middle of a room. Looking quickly around you, you see a cabinet 2, a cabinet 1, a countertop 1, "
    "a drawer 2, a drawer 1, a fridge 1, a sinkbasin 1, and a toilet 1.\nYour task is to: put a clean knife in drawer."
)
EXAMPLE_TURN = (
    "Here is one example.\nYou are in the middle of a room. ...\nYour task is to: put some spraybottle on toilet.\n"
)
ROOM = ["cabinet 1", "cabinet 2", "countertop 1", "drawer 1", "drawer 2", "fridge 1", "sinkbasin 1", "toilet 1"]

# (model output, command the harness executed, observation)
HOUSEHOLD_ROUNDS: list[tuple[str, str, str]] = [
    (
        "THOUGHT: The task is to put a clean knife in drawer. A knife may be in the toilet.\n ACTION: go to toilet 1",
        "go to toilet 1",
        "On the toilet 1, you see a soapbar 1.",
    ),
    ("ACTION: go to countertop 1", "go to countertop 1", "On the countertop 1, you see a knife 1, and a spoon 2."),
    (
        "ACTION: take knife 3 from countertop 1",
        "take knife 1 from countertop 1",
        "You pick up the knife 1 from the countertop 1.",
    ),
    ("ACTION: go to drawer 1", "go to drawer 1", "The drawer 1 is closed."),
    ("ACTION: Task succeeded.", "task succeeded.", "Nothing happens."),
]


def _admissible(here: str | None) -> list[str]:
    commands = [f"go to {name}" for name in ROOM if name != here]
    if here:
        commands.append(f"examine {here}")
    return sorted([*commands, "inventory", "look"])


def _listing(commands: list[str]) -> str:
    return " AVAILABLE ACTIONS: " + "\n".join(commands) + "\n"


def household_record(index: int = 0, *, with_log: bool = True, success: bool = False) -> dict[str, Any]:
    """One AgentBench ``runs.jsonl`` line of the household task, as the assigner writes it."""
    history: list[dict[str, str]] = [
        {"role": "user", "content": INSTRUCTION},
        {"role": "agent", "content": "OK. I'll follow your instructions and try my best to solve the task."},
        {
            "role": "user",
            "content": EXAMPLE_TURN,
        },
        {
            "role": "agent",
            "content": "THOUGHT: The task is to put some spraybottle on toilet.\n ACTION: go to cabinet 1\n",
        },
        {"role": "user", "content": "The cabinet 1 is closed.\n"},
        {"role": "agent", "content": "ACTION: Task succeeded.\n"},
    ]
    here: str | None = None
    admissible = _admissible(here)
    init_prompt = "Here is your task. " + INTRO + _listing(admissible)
    history.append({"role": "user", "content": init_prompt})
    log = []
    for round_number, (output, executed, observation) in enumerate(HOUSEHOLD_ROUNDS, start=1):
        history[-1]["content"] = history[-1]["content"].split("AVAILABLE ACTIONS")[0]
        history.append({"role": "agent", "content": output})
        if executed.startswith("go to ") and observation != "Nothing happens.":
            here = executed[len("go to ") :]
        log.append(
            {
                "round": round_number,
                "output": output,
                "action": executed,
                "admissible_commands": admissible,
                "observation": observation,
                "done": False,
            }
        )
        admissible = _admissible(here)
        history.append({"role": "user", "content": observation + _listing(admissible)})
    result: dict[str, Any] = {"result": 1 if success else 0}
    if with_log:
        result.update(log=log, init_prompt=init_prompt)
    status = "completed" if success else "task limit reached"
    return {
        "index": index,
        "error": None,
        "info": None,
        "output": {"index": index, "status": status, "result": result, "history": history},
        "time": {"timestamp": 1700000000000, "str": "2023-11-14 22:13:20"},
    }


DB_INSTRUCTION = (
    "\nI will ask you a question, then you should help me operate a MySQL database with SQL to answer the question.\n"
)


def dbbench_record(index: int = 0) -> dict[str, Any]:
    """A DBBench INSERT sample whose agent answers without ever inserting."""
    history = [
        {"role": "user", "content": DB_INSTRUCTION},
        {"role": "agent", "content": "Ok."},
        {
            "role": "user",
            "content": "Add ('2019', 'Aoharu Ride', 'Kou Mabuchi') to the 'Roles' table through INSERT INTO command.\n"
            "The name of this table is Roles, and the headers of this table are Year,Title,Role.",
        },
        {"role": "agent", "content": "Let me look at the table.\nAction: Operation\n```sql\nSELECT * FROM Roles;\n```"},
        {"role": "user", "content": "[('2016', 'Orange', 'Kakeru Naruse')]"},
        {"role": "agent", "content": 'The row is there now.\nAction: Answer\nFinal Answer: ["done"]'},
    ]
    return {
        "index": index,
        "error": None,
        "info": None,
        "output": {
            "index": index,
            "status": "completed",
            "result": {"answer": ' ["done"]', "type": "INSERT", "error": ""},
            "history": history,
        },
        "time": {"timestamp": 1700000000000, "str": "2023-11-14 22:13:20"},
    }


def messages_record(record_id: str = "chat-1") -> dict[str, Any]:
    """A household run kept as a plain chat log: the agent loops between two drawers."""
    messages = [
        {"role": "system", "content": "You are a household agent."},
        {"role": "user", "content": INSTRUCTION + "Here is your task. " + INTRO},
    ]
    for _ in range(3):
        messages += [
            {"role": "assistant", "content": "THOUGHT: The knife may be in a drawer.\n ACTION: go to drawer 1"},
            {"role": "user", "content": "The drawer 1 is closed."},
            {"role": "assistant", "content": "ACTION: go to drawer 2"},
            {"role": "user", "content": "The drawer 2 is closed."},
        ]
    return {"id": record_id, "messages": messages, "success": False}
