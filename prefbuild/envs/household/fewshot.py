"""In-context examples for the household protocols, played by our own expert.

The benchmarks ship hand-written example transcripts from ALFWorld games; prefbuild builds
its examples the same shape from ``HouseholdEnv`` + its expert instead, so they match the
generated world exactly (same dialect, same object names) and carry no third-party text.
Everything is deterministic: fixed split and seed, the first tasks of each kind the expert
wins, thoughts written from templates. Results are cached per (protocol, kind, dialect).

Observations pass through the same post-processing as live turns (arrival prefix stripped,
banner dropped), so an example reads like the episode that follows it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from prefbuild.envs.household.protocols.common import KIND_TO_TYPE, benchmark_intro, strip_arrival, task_kind
from prefbuild.errors import PrefbuildError
from prefbuild.records import Message, Role

FEWSHOT_SPLIT = "train"
FEWSHOT_SEED = 104729
CANDIDATES_PER_EXAMPLE = 3
MAX_TRIES_PER_CANDIDATE = 4
MAX_EXPERT_STEPS = 60
ETO_KIND = "put"
# The searching expert looks in plausible places first, like the hand-written benchmark examples.
FEWSHOT_EXPERT = "searching"


@dataclass(frozen=True)
class GoalParts:
    """The goal sentence taken apart: kind, object type, target receptacle type, lamp type."""

    kind: str
    obj: str
    recep: str | None = None
    toggle: str | None = None


@dataclass(frozen=True)
class ExampleEpisode:
    """One expert win: the benchmark-form intro and the (action, shown observation) steps."""

    intro: str
    goal: GoalParts
    steps: tuple[tuple[str, str], ...]


_GOAL_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern))
    for kind, pattern in (
        ("clean", r"^put a clean (?P<obj>\w+) in (?P<recep>\w+)$"),
        ("clean", r"^clean some (?P<obj>\w+) and put it in (?P<recep>\w+)$"),
        ("heat", r"^put a hot (?P<obj>\w+) in (?P<recep>\w+)$"),
        ("heat", r"^heat some (?P<obj>\w+) and put it in (?P<recep>\w+)$"),
        ("cool", r"^put a cool (?P<obj>\w+) in (?P<recep>\w+)$"),
        ("cool", r"^cool some (?P<obj>\w+) and put it in (?P<recep>\w+)$"),
        ("puttwo", r"^put two (?P<obj>\w+) in (?P<recep>\w+)$"),
        ("puttwo", r"^find two (?P<obj>\w+) and put them in (?P<recep>\w+)$"),
        ("examine", r"^look at (?P<obj>\w+) under the (?P<toggle>\w+)$"),
        ("examine", r"^examine the (?P<obj>\w+) with the (?P<toggle>\w+)$"),
        ("put", r"^put (?:a|some) (?P<obj>\w+) (?:in|on) (?P<recep>\w+)$"),
    )
)
_TASK_LINE = re.compile(r"Your task is to: (?P<goal>.+?)\.?\s*$", re.MULTILINE)
_APPLIANCE = {"clean": ("clean", "sinkbasin"), "heat": ("heat", "microwave"), "cool": ("cool", "fridge")}


def parse_goal(text: str) -> GoalParts:
    """Goal parts from a goal sentence or an intro containing ``Your task is to: ...``."""
    line = _TASK_LINE.search(text)
    sentence = (line["goal"] if line else text).strip().rstrip(".")
    for kind, pattern in _GOAL_PATTERNS:
        match = pattern.match(sentence)
        if match:
            parts = match.groupdict()
            return GoalParts(kind=kind, obj=parts["obj"], recep=parts.get("recep"), toggle=parts.get("toggle"))
    raise ValueError(f"not a household goal sentence: {sentence!r}")


def _type_and_number(name: str) -> tuple[str, str]:
    head, _, number = name.rpartition(" ")
    return (head, number) if number.isdigit() else (name, "")


def _put_words(dialect: str) -> str:
    return "move it to" if dialect == "modern" else "put it in/on"


# --------------------------------------------------------------------------------------
# expert episodes


def _play(env: object, task: object) -> ExampleEpisode | None:
    observation, _ = env.reset(task)  # type: ignore[attr-defined]
    intro = benchmark_intro(observation)
    steps: list[tuple[str, str]] = []
    for _ in range(MAX_EXPERT_STEPS):
        action = env.expert_action()  # type: ignore[attr-defined]
        if action is None:
            return None
        result = env.step(action)  # type: ignore[attr-defined]
        steps.append((action, strip_arrival(result.observation)))
        if result.won:
            return ExampleEpisode(intro=intro, goal=parse_goal(intro), steps=tuple(steps))
        if result.done:
            return None
    return None


def _shows_the_whole_task(episode: ExampleEpisode) -> bool:
    """A "put two" example must deliver two objects (some games start with one in place)."""
    puts = sum(1 for action, _ in episode.steps if action.startswith(("put ", "move ")))
    return puts >= 2 if episode.goal.kind == "puttwo" else True


@lru_cache(maxsize=64)
def expert_episodes(kind: str, count: int, dialect: str) -> tuple[ExampleEpisode, ...]:
    """``count`` expert wins of ``kind`` (the shortest of the first few candidates, in task order)."""
    from prefbuild.envs.household.env import HouseholdEnv

    task_type = KIND_TO_TYPE[task_kind(kind)]
    probe = HouseholdEnv(dialect=dialect, expert=FEWSHOT_EXPERT)
    wanted = count * CANDIDATES_PER_EXAMPLE
    won: list[ExampleEpisode] = []
    for task in probe.tasks(FEWSHOT_SPLIT, wanted * MAX_TRIES_PER_CANDIDATE, FEWSHOT_SEED, task_types=[task_type]):
        episode = _play(HouseholdEnv(dialect=dialect, expert=FEWSHOT_EXPERT), task)
        if episode is not None and _shows_the_whole_task(episode):
            won.append(episode)
            if len(won) == wanted:
                break
    if len(won) < count:
        raise PrefbuildError(f"household few-shot: the expert solved only {len(won)} {task_type} example tasks")
    ranked = sorted(range(len(won)), key=lambda index: (len(won[index].steps), index))[:count]
    return tuple(won[index] for index in sorted(ranked))


# --------------------------------------------------------------------------------------
# thoughts


class _Tracker:
    """What the agent holds and has done so far, to write thoughts that fit the moment."""

    def __init__(self, goal: GoalParts, dialect: str) -> None:
        self.goal = goal
        self.dialect = dialect
        self.holding: str | None = None
        self.delivered = 0

    def update(self, action: str) -> None:
        verb = action.split(" ", 1)[0]
        if verb == "take":
            self.holding = action[len("take ") :].split(" from ", 1)[0]
        elif verb in ("put", "move"):
            self.holding = None
            self.delivered += 1


def _next_target(steps: tuple[tuple[str, str], ...], start: int, verbs: tuple[str, ...]) -> str | None:
    """The receptacle of the next ``verbs`` action at or after ``start``."""
    for action, _ in steps[start:]:
        verb = action.split(" ", 1)[0]
        if verb in verbs:
            for separator in (" in/on ", " to ", " with "):
                if separator in action:
                    return action.rsplit(separator, 1)[1]
            return action.split(" ", 1)[1]
    return None


def react_thoughts(episode: ExampleEpisode, dialect: str) -> dict[int, list[str]]:
    """Thoughts to insert before step index ``i`` (ReAct's ``think:`` style)."""
    goal, steps = episode.goal, episode.steps
    thoughts: dict[int, list[str]] = {}
    put = _put_words(dialect)
    plan = {
        "put": f"To solve the task, I need to find and take a {goal.obj}, then {put} {goal.recep}.",
        "puttwo": f"To solve the task, I need to find and take the first {goal.obj}, then {put} {goal.recep}, "
        f"then find and take the second {goal.obj}, then {put} {goal.recep}.",
        "examine": f"To solve the task, I need to find and take a {goal.obj}, then find and use a {goal.toggle}.",
    }
    if goal.kind in _APPLIANCE:
        verb, appliance = _APPLIANCE[goal.kind]
        plan[goal.kind] = (
            f"To solve the task, I need to find and take a {goal.obj}, then {verb} it with {appliance}, "
            f"then put it in {goal.recep}."
        )
    first = [plan[goal.kind]]
    visits = [action[len("go to ") :] for action, _ in steps[: _first_take(steps)] if action.startswith("go to ")]
    if visits:
        first.append(
            f"First I need to find a {goal.obj}. A {goal.obj} is more likely to appear in {', '.join(visits)}. "
            f"I can check one by one, starting with {visits[0]}."
        )
    thoughts[0] = first
    delivered = 0
    for index, (action, _) in enumerate(steps):
        verb = action.split(" ", 1)[0]
        if verb == "take":
            name = action[len("take ") :].split(" from ", 1)[0]
            obj_type, number = _type_and_number(name)
            thoughts.setdefault(index, []).append(f"Now I find a {obj_type} ({number}). Next, I need to take it.")
            thoughts.setdefault(index + 1, []).append(_after_take(goal, name, steps, index + 1, dialect))
        elif verb in ("clean", "heat", "cool"):
            name = action[len(verb) + 1 :].split(" with ", 1)[0]
            obj_type, number = _type_and_number(name)
            target = _next_target(steps, index + 1, ("put", "move")) or goal.recep
            thoughts.setdefault(index + 1, []).append(
                f"Now I {verb} a {obj_type} ({number}). Next, I need to {put} {target}."
            )
        elif verb in ("put", "move") and goal.kind == "puttwo" and delivered == 0:
            delivered += 1
            target = _next_target(steps, index, ("put", "move"))
            if index + 1 < len(steps):
                thoughts.setdefault(index + 1, []).append(
                    f"Now I put the first {goal.obj} in {target}. Next, I need to find the second {goal.obj}."
                )
        elif verb == "use":
            lamp_type, number = _type_and_number(action[len("use ") :])
            thoughts.setdefault(index, []).append(f"Now I find a {lamp_type} ({number}). Next, I need to use it.")
    return {index: lines for index, lines in thoughts.items() if index < len(steps)}


def _first_take(steps: tuple[tuple[str, str], ...]) -> int:
    return next((index for index, (action, _) in enumerate(steps) if action.startswith("take ")), len(steps))


def _after_take(goal: GoalParts, name: str, steps: tuple[tuple[str, str], ...], start: int, dialect: str) -> str:
    obj_type, number = _type_and_number(name)
    head = f"Now I take a {obj_type} ({number}). Next, I need to"
    if goal.kind in _APPLIANCE:
        verb, appliance = _APPLIANCE[goal.kind]
        target = _next_target(steps, start, (verb,)) or appliance
        if start < len(steps) and steps[start][0].startswith(f"{verb} "):
            return f"{head} {verb} it with {target}."
        appliance_type, appliance_number = _type_and_number(target)
        return f"{head} go to {appliance_type} ({appliance_number}) and {verb} it."
    if goal.kind == "examine":
        return f"{head} find a {goal.toggle}."
    target = _next_target(steps, start, ("put", "move")) or goal.recep
    return f"{head} {_put_words(dialect)} {target}."


def agentbench_plan(episode: ExampleEpisode) -> str:
    """The plan-first THOUGHT of an AgentBench example's first agent turn."""
    goal = episode.goal
    sentence = _TASK_LINE.search(episode.intro)
    task = sentence["goal"] if sentence else goal.obj
    extra = ""
    if goal.kind in _APPLIANCE:
        verb, appliance = _APPLIANCE[goal.kind]
        extra = f", and {verb} it with a {appliance}"
    elif goal.kind == "examine":
        extra = f", and look at it under a {goal.toggle}"
    text = f"The task is to {task}, so i need to first find some {goal.obj}{extra}."
    first_action = episode.steps[0][0]
    if first_action.startswith("go to "):
        place, _ = _type_and_number(first_action[len("go to ") :])
        text += f" {goal.obj.capitalize()} is likely to be found in {place}, so i'll start to search there."
    return text


def eto_thought(goal: GoalParts, action: str, tracker: _Tracker) -> str:
    """A one-sentence ETO-style thought for ``action`` in the current situation."""
    verb, _, rest = action.partition(" ")
    held = tracker.holding
    writers: dict[str, Callable[[], str]] = {
        "open": lambda: f"The {rest} is closed. I should open it to see what is inside.",
        "close": lambda: f"I will close the {rest}.",
        "take": lambda: (
            f"I found the {rest.split(' from ', 1)[0]} in the {rest.split(' from ', 1)[-1]}. I should pick it up."
        ),
        "use": lambda: f"The {rest} is here. I will turn it on to look at the {held} under its light.",
    }
    if verb == "go" and rest.startswith("to "):
        place = rest[len("to ") :]
        if held is None:
            which = "another" if tracker.delivered else "a"
            return f"I need to find {which} {goal.obj}. I will check the {place}."
        if goal.kind in _APPLIANCE and place.startswith(_APPLIANCE[goal.kind][1]):
            return f"Now I need to {_APPLIANCE[goal.kind][0]} the {held}, so I will go to the {place}."
        if goal.kind == "examine":
            return f"Now I need to find a {goal.toggle}. I will check the {place}."
        return f"Now I should bring the {held} to the {place}."
    if verb in _APPLIANCE:
        name, _, tool = rest.partition(" with ")
        return f"I will {verb} the {name} with the {tool}."
    if verb in ("put", "move"):
        name = rest.split(" in/on ", 1)[0] if verb == "put" else rest.split(" to ", 1)[0]
        place = rest.rsplit(" in/on ", 1)[-1] if verb == "put" else rest.rsplit(" to ", 1)[-1]
        return f"I'm at the {place} with the {name}. It's time to put it here."
    if verb in writers:
        return writers[verb]()
    return f"I will {action}."


# --------------------------------------------------------------------------------------
# per-protocol renderings (cached per kind and dialect)


@lru_cache(maxsize=64)
def _agentbench_turns(kind: str, dialect: str) -> tuple[tuple[str, str], ...]:
    episode = expert_episodes(kind, 1, dialect)[0]
    turns: list[tuple[str, str]] = [("user", "Here is one example.\n" + episode.intro + "\n")]
    for index, (action, observation) in enumerate(episode.steps):
        agent = f"THOUGHT: {agentbench_plan(episode)}\n ACTION: {action}\n" if index == 0 else f"ACTION: {action}\n"
        turns.extend([("assistant", agent), ("user", observation + "\n")])
    turns.append(("assistant", "ACTION: Task succeeded.\n"))
    return tuple(turns)


def agentbench_example(task_type: str, dialect: str = "classic") -> list[Message]:
    """AgentBench's one-shot example for ``task_type``: alternating user/assistant turns."""
    return [Message(role=Role(role), content=text) for role, text in _agentbench_turns(task_kind(task_type), dialect)]


def react_transcript(episode: ExampleEpisode, dialect: str) -> str:
    """One ReAct example: intro, then ``> action`` / observation lines, thoughts answered ``OK.``."""
    thoughts = react_thoughts(episode, dialect)
    lines = [episode.intro]
    for index, (action, observation) in enumerate(episode.steps):
        for thought in thoughts.get(index, []):
            lines.extend([f"> think: {thought}", "OK."])
        lines.extend([f"> {action}", observation])
    return "\n".join(lines) + "\n"


@lru_cache(maxsize=64)
def _react_examples(kind: str, dialect: str) -> str:
    first, second = expert_episodes(kind, 2, dialect)
    return react_transcript(first, dialect) + react_transcript(second, dialect)


def react_examples(task_type: str, dialect: str = "classic") -> str:
    """ReAct's two example transcripts for ``task_type``, concatenated as ReAct does."""
    return _react_examples(task_kind(task_type), dialect)


@lru_cache(maxsize=8)
def _eto_turns(dialect: str) -> tuple[tuple[str, str], ...]:
    episode = expert_episodes(ETO_KIND, 1, dialect)[0]
    tracker = _Tracker(episode.goal, dialect)
    turns: list[tuple[str, str]] = [("user", episode.intro)]
    for index, (action, observation) in enumerate(episode.steps):
        turns.append(("assistant", f"Thought: {eto_thought(episode.goal, action, tracker)}\nAction: {action}"))
        tracker.update(action)
        if index + 1 < len(episode.steps):
            turns.append(("user", "Observation: " + observation))
    return tuple(turns)


def eto_example(dialect: str = "classic") -> list[Message]:
    """ETO's single in-context episode (a "put" task whatever the task's kind), ending on the
    agent's winning action as ETO's own example does."""
    return [Message(role=Role(role), content=text) for role, text in _eto_turns(dialect)]
