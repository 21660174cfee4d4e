"""A faithful ALFWorld text game for writing the blind labeler sets (spec: /work/shared/spec/alfworld.md).

The blind sets' sources name the room, what lies where and the agent's written turns; the replies
and the admissible command lists are computed here from the spec's rules (sections 1, 4, 5, 6,
8.2, 8.3), so every observation in the built logs is one the real engine produces.

Example:
    >>> game = Game(["countertop 1", "fridge 1"], {"countertop 1": ["apple 1"]}, "put some apple on fridge")
    >>> game.step("go to countertop 1")
    'On the countertop 1, you see a apple 1.'
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Spec section 8 (object properties, placement table 8.3). The project's catalog transcribes the same text; an
# independent transcription made for these sets was compared with it and is identical, so it is imported.
from prefbuild.envs.household.catalog import CAN_CONTAIN as CAN_HOLD
from prefbuild.envs.household.catalog import CLEANABLE, COOLABLE, HEATABLE, PICKUPABLE, SLICEABLE
from prefbuild.envs.household.catalog import CONTAINER_OBJECTS as CONTAINERS
from prefbuild.envs.household.catalog import OPENABLE_TYPES as OPENABLE

LAMPS = frozenset({"desklamp", "floorlamp"})
GOALS: list[tuple[str, str]] = [
    (r"put two (?P<obj>\w+) in (?P<recep>\w+)", "puttwo"),
    (r"find two (?P<obj>\w+) and put them in (?P<recep>\w+)", "puttwo"),
    (r"put a (?P<state>clean|hot|cool) (?P<obj>\w+) in (?P<recep>\w+)", "state"),
    (r"(?P<state>clean|heat|cool) some (?P<obj>\w+) and put it in (?P<recep>\w+)", "state"),
    (r"look at (?P<obj>\w+) under the (?P<lamp>desklamp|floorlamp)", "look"),
    (r"examine the (?P<obj>\w+) with the (?P<lamp>desklamp|floorlamp)", "look"),
    (r"put a (?P<obj>\w+) in (?P<recep>\w+)", "put"),
    (r"put some (?P<obj>\w+) on (?P<recep>\w+)", "put"),
]
STATE_WORDS = {"clean": "clean", "hot": "hot", "heat": "hot", "cool": "cool"}


class GameError(ValueError):
    """A room, goal or command the real game could not have."""


def kind(name: str) -> str:
    """The type of a display name.

    Args:
        name: a display name such as ``"cabinet 13"``.

    Returns:
        The type (``"cabinet"``).

    Example:
        >>> kind("peppershaker 2")
        'peppershaker'
    """
    return name.rsplit(" ", 1)[0]


def _order(name: str) -> tuple[str, int]:
    head, _, number = name.rpartition(" ")
    return head, -int(number)


def listing(names: list[str]) -> str:
    """Entities as the engine lists them: by type, numbers descending, ``, and`` before the last, ``nothing``.

    Args:
        names: display names.

    Returns:
        The list text.

    Example:
        >>> listing(["potato 2", "cup 3", "potato 3"])
        'a cup 3, a potato 3, and a potato 2'
    """
    if not names:
        return "nothing"
    items = [f"a {name}" for name in sorted(names, key=_order)]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + ", and " + items[-1]


def intro(room: list[str], goal: str) -> str:
    """The benchmark-form first observation: the receptacles and the task line.

    Args:
        room: every receptacle of the room.
        goal: the goal sentence without its final period.

    Returns:
        ``You are in the middle of a room. ...\\nYour task is to: <goal>.``

    Example:
        >>> print(intro(["fridge 1", "cabinet 1"], "put some apple on fridge"))
        You are in the middle of a room. Looking quickly around you, you see a cabinet 1, and a fridge 1.
        Your task is to: put some apple on fridge.
    """
    return (
        f"You are in the middle of a room. Looking quickly around you, you see {listing(room)}.\n"
        f"Your task is to: {goal}."
    )


@dataclass
class Goal:
    """A parsed task sentence."""

    task: str
    obj: str
    recep: str = ""
    state: str = ""
    lamp: str = ""


def parse_goal(goal: str) -> Goal:
    """The task of a goal sentence (spec section 2 templates).

    Args:
        goal: e.g. ``"heat some egg and put it in countertop"``.

    Returns:
        The parsed goal.

    Example:
        >>> parse_goal("heat some egg and put it in countertop").state
        'hot'
    """
    for pattern, task in GOALS:
        found = re.fullmatch(pattern, goal)
        if found:
            parts = found.groupdict()
            state = STATE_WORDS.get(parts.get("state") or "", "")
            return Goal(task, parts["obj"], parts.get("recep") or "", state, parts.get("lamp") or "")
    raise GameError(f"goal {goal!r} matches no ALFWorld task template")


@dataclass
class Game:
    """Room state and the engine's rules: admissible commands, replies, the goal test."""

    room: list[str]
    contents: dict[str, list[str]]
    goal_text: str
    dialect: str = "classic"
    here: str | None = None
    held: str | None = None
    opened: set[str] = field(default_factory=set)
    states: dict[str, set[str]] = field(default_factory=dict)
    lit: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.goal = parse_goal(self.goal_text)
        names = list(self.room)
        for recep, items in self.contents.items():
            if recep not in self.room:
                raise GameError(f"contents: {recep!r} is not a receptacle of the room")
            for item in items:
                if kind(item) not in LAMPS and kind(item) in PICKUPABLE and kind(item) not in CAN_HOLD[kind(recep)]:
                    raise GameError(f"contents: a {kind(item)} cannot be in a {kind(recep)}")
            names += items
        for name in names:
            if not re.fullmatch(r"[a-z]+ [1-9][0-9]*", name):
                raise GameError(f"{name!r} is not a display name")
            if kind(name) in CAN_HOLD and name not in self.room:
                raise GameError(f"{name!r} is a receptacle type but not in the room")
        if len(set(names)) != len(names):
            raise GameError("a display name occurs twice in the room or its contents")
        self.contents = {recep: list(self.contents.get(recep, [])) for recep in self.room}
        if self.won():
            raise GameError("the goal already holds at the start")

    def visible(self, recep: str) -> bool:
        """Whether the contents of ``recep`` can be seen and touched."""
        return kind(recep) not in OPENABLE or recep in self.opened

    def _describe(self, recep: str) -> str:
        if kind(recep) in OPENABLE:
            if recep not in self.opened:
                return f"The {recep} is closed."
            return f"The {recep} is open. In it, you see {listing(self.contents[recep])}."
        return f"On the {recep}, you see {listing(self.contents[recep])}."

    def _put_verb(self, obj: str, recep: str) -> str:
        return f"move {obj} to {recep}" if self.dialect == "modern" else f"put {obj} in/on {recep}"

    def admissible(self) -> list[str]:
        """The engine's admissible commands now, sorted as plain strings (spec section 6)."""
        commands = [f"go to {recep}" for recep in self.room if recep != self.here]
        here = self.here
        if here is not None:
            commands.append(f"examine {here}")
            if kind(here) in OPENABLE:
                commands.append(f"close {here}" if here in self.opened else f"open {here}")
            items = self.contents[here]
            if self.held is None and self.visible(here):
                commands += [f"take {item} from {here}" for item in items if kind(item) in PICKUPABLE]
            if self.held is not None:
                held = kind(self.held)
                if self.visible(here) and held in CAN_HOLD[kind(here)]:
                    commands.append(self._put_verb(self.held, here))
                if kind(here) == "microwave" and held in HEATABLE:
                    commands.append(f"heat {self.held} with {here}")
                if kind(here) == "fridge" and held in COOLABLE:
                    commands.append(f"cool {self.held} with {here}")
                if kind(here) == "sinkbasin" and held in CLEANABLE:
                    commands.append(f"clean {self.held} with {here}")
                if held in ("knife", "butterknife") and self.visible(here):
                    commands += [f"slice {item} with {self.held}" for item in items if kind(item) in SLICEABLE]
            commands += [f"use {item}" for item in items if kind(item) in LAMPS]
        if self.held is not None:
            commands.append(f"examine {self.held}")
        commands += ["inventory", "look"]
        if self.dialect == "modern":
            commands.append("help")
        return sorted(set(commands))

    def _examine_object(self, obj: str) -> str:
        flags = self.states.get(obj, set())
        if kind(obj) in CONTAINERS:
            return f"This is a normal {obj}. In it, you see nothing."
        if "clean" in flags and "hot" in flags:
            return f"This is a hot and clean {obj}."
        if "clean" in flags and "cool" in flags:
            return f"This is a cool and clean {obj}."
        if "hot" in flags:
            return f"This is a hot {obj}."
        if "clean" in flags:
            return f"This is a clean {obj}."
        if "cool" in flags:
            return f"This is a cold {obj}."
        return f"There's nothing special about {obj}."

    def step(self, command: str) -> str:
        """Play one command exactly as written; ``Nothing happens.`` unless it is admissible.

        Args:
            command: the command the engine receives.

        Returns:
            The reply, arrival prefix stripped as every benchmark does (classic ``You arrive at loc N. ``).
        """
        if command not in self.admissible():
            return "Nothing happens."
        verb = command.split(" ", 1)[0]
        if command.startswith("go to "):
            self.here = command[len("go to ") :]
            arrival = f"You arrive at {self.here}. " if self.dialect == "modern" else ""
            return arrival + self._describe(self.here)
        if command in ("inventory", "look", "help"):
            return self._status(command)
        here = str(self.here)
        if verb == "examine":
            target = command[len("examine ") :]
            return self._describe(target) if target == here else self._examine_object(target)
        if verb == "open":
            self.opened.add(here)
            return f"You open the {here}. " + self._describe(here)
        if verb == "close":
            self.opened.discard(here)
            return f"You close the {here}."
        if verb == "take":
            obj = command[len("take ") :].split(" from ", 1)[0]
            self.contents[here].remove(obj)
            self.held = obj
            return f"You pick up the {obj} from the {here}."
        if verb in ("put", "move"):
            obj = str(self.held)
            self.contents[here].append(obj)
            self.held = None
            if self.dialect == "modern":
                return f"You move the {obj} to the {here}."
            return f"You put the {obj} in/on the {here}."
        if verb in ("heat", "cool", "clean"):
            flags = self.states.setdefault(str(self.held), set())
            if verb == "heat":
                flags.add("hot")
                flags.discard("cool")
            elif verb == "cool":
                flags.add("cool")
                flags.discard("hot")
            else:
                flags.add("clean")
            return f"You {verb} the {self.held} using the {here}."
        if verb == "use":
            lamp = command[len("use ") :]
            self.lit.add(lamp)
            return f"You turn on the {lamp}."
        target = command[len("slice ") :].split(" with ", 1)[0]
        self.states.setdefault(target, set()).add("sliced")
        return f"You sliced the {target} with the {self.held}."

    def _status(self, command: str) -> str:
        if command == "inventory":
            return f"You are carrying: a {self.held}." if self.held else "You are not carrying anything."
        if command == "help":
            raise GameError("help is not used in the blind sets")
        if self.here is None:
            return "You are in the middle of a room. Looking quickly around you, you see nothing."
        return f"You are facing the {self.here}. Next to it, you see nothing."

    def won(self) -> bool:
        """The goal test of spec section 2, on the current state."""
        goal = self.goal
        if goal.task == "look":
            if self.held is None or kind(self.held) != goal.obj or self.here is None:
                return False
            return any(kind(lamp) == goal.lamp and lamp in self.contents[self.here] for lamp in self.lit)
        for recep, items in self.contents.items():
            if kind(recep) != goal.recep:
                continue
            matching = [item for item in items if kind(item) == goal.obj]
            if goal.task == "state":
                matching = [item for item in matching if goal.state in self.states.get(item, set())]
            if len(matching) >= (2 if goal.task == "puttwo" else 1):
                return True
        return False
