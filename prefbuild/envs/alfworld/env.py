"""The ``alfworld`` env: the real ALFWorld TextWorld games behind prefbuild's household protocols.

When the ``alfworld`` package (and its ``textworld[pddl]`` engine) is installed and
``$ALFWORLD_DATA`` holds the downloaded games, this env plays them with the same protocols
as ``household``. Game text depends on the data release (spec section 0): the classic
dialect says ``put X in/on Y`` and ``You arrive at loc N.``, the modern one ``move X to Y``
and ``You arrive at Y.``. The adapter detects the game's dialect and translates commands,
admissible lists and feedback into the dialect the agent was prompted with, so a recipe can
keep ``dialect: classic`` (the one ReAct, AgentBench and ETO use) on a fresh modern download.

The translation and detection functions are pure and need neither package.
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

from prefbuild.envs.base import Env, EnvTask, Protocol, StepResult
from prefbuild.envs.household.protocols import PROTOCOLS
from prefbuild.envs.household.protocols.common import KIND_TO_TYPE, task_kind
from prefbuild.errors import PrefbuildError
from prefbuild.records import StepFacts, TaskInfo

DIALECTS: tuple[str, ...] = ("classic", "modern")
INVALID_FEEDBACK = "Nothing happens."
SPLIT_FOLDERS: dict[str, str] = {
    "train": "train",
    "valid_seen": "valid_seen",
    "valid_unseen": "valid_unseen",
    "eval_in_distribution": "valid_seen",
    "eval_out_of_distribution": "valid_unseen",
    "dev": "valid_seen",
    "test": "valid_unseen",
}
_PUT_CLASSIC = re.compile(r"^put (?P<obj>.+?) in/on (?P<recep>.+)$")
_PUT_MODERN = re.compile(r"^move (?P<obj>.+?) to (?P<recep>.+)$")
_FEEDBACK_CLASSIC = re.compile(r"^You put the (?P<obj>.+?) in/on the (?P<recep>.+?)\.$")
_FEEDBACK_MODERN = re.compile(r"^You move the (?P<obj>.+?) to the (?P<recep>.+?)\.$")
_ARRIVAL_CLASSIC = re.compile(r"^You arrive at loc \d+\. ")
_ARRIVAL_MODERN = re.compile(r"^You arrive at (?!loc \d)(?P<recep>[a-z]+ \d+)\. ")
_GO_TO = re.compile(r"^go to (?P<recep>.+)$")
_GOAL = re.compile(r"Your task is to: (?P<goal>[^\"\\\n]+?)\.?(?:\"|\\n|$)")


def check_dialect(dialect: str) -> str:
    """``dialect`` when it is one of ``DIALECTS``; ``ValueError`` naming them otherwise."""
    if dialect not in DIALECTS:
        raise ValueError(f"unknown household dialect {dialect!r}; known: {', '.join(DIALECTS)}")
    return dialect


def detect_dialect(admissible: Sequence[str] | None = None, observation: str | None = None) -> str | None:
    """The dialect a game speaks, from its admissible commands and/or one observation.

    ``move ...`` commands or a ``help`` command mean modern; ``put ... in/on ...`` means
    classic; otherwise the arrival prefix decides (``You arrive at loc N.`` is classic). None
    when the evidence is silent (e.g. at the start, before any put or arrival).
    """
    for command in admissible or ():
        if command.startswith("move ") or command == "help":
            return "modern"
        if command.startswith("put ") and " in/on " in command:
            return "classic"
    if observation:
        if _ARRIVAL_CLASSIC.match(observation) or _FEEDBACK_CLASSIC.match(observation):
            return "classic"
        if _ARRIVAL_MODERN.match(observation) or _FEEDBACK_MODERN.match(observation):
            return "modern"
    return None


def translate_command(command: str, source: str, target: str) -> str:
    """``put X in/on Y`` <-> ``move X to Y``; every other command reads the same in both."""
    check_dialect(source)
    check_dialect(target)
    if source == target:
        return command
    stripped = command.strip()
    if source == "classic":
        match = _PUT_CLASSIC.match(stripped)
        return f"move {match['obj']} to {match['recep']}" if match else command
    match = _PUT_MODERN.match(stripped)
    return f"put {match['obj']} in/on {match['recep']}" if match else command


def translate_admissible(commands: Sequence[str], source: str, target: str) -> list[str]:
    """The admissible list in ``target``: commands translated, modern-only ``help`` dropped when
    going to classic, sorted as plain strings like the engine sorts them."""
    translated = {translate_command(command, source, target) for command in commands}
    if target == "classic":
        translated.discard("help")
    return sorted(translated)


def translate_feedback(text: str, source: str, target: str, command: str | None = None) -> str:
    """Game text in ``target``'s words.

    Put feedback is rewritten both ways. The arrival prefix: classic -> modern needs the
    receptacle, taken from ``command`` (``go to R``); modern -> classic drops the prefix,
    because the location number is unknown and every harness strips that prefix anyway.
    """
    check_dialect(source)
    check_dialect(target)
    if source == target:
        return text
    if source == "classic":
        match = _FEEDBACK_CLASSIC.match(text)
        if match:
            return f"You move the {match['obj']} to the {match['recep']}."
        arrival = _ARRIVAL_CLASSIC.match(text)
        go_to = _GO_TO.match(command.strip()) if command else None
        if arrival and go_to:
            return f"You arrive at {go_to['recep']}. " + text[arrival.end() :]
        return text
    match = _FEEDBACK_MODERN.match(text)
    if match:
        return f"You put the {match['obj']} in/on the {match['recep']}."
    arrival = _ARRIVAL_MODERN.match(text)
    return text[arrival.end() :] if arrival else text


def task_type_from_gamefile(path: str) -> str:
    """The ALFWorld task-type name from a game path (``pick_heat_then_place_in_recep-Apple-...``)."""
    return KIND_TO_TYPE[task_kind(path)]


def alfworld_available() -> bool:
    """True when the ``alfworld`` and ``textworld`` packages can be imported."""
    return all(importlib.util.find_spec(name) is not None for name in ("alfworld", "textworld"))


def data_root(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """The ``json_2.1.x`` folder under ``data_dir`` or ``$ALFWORLD_DATA`` (newest-classic first)."""
    base = Path(data_dir or os.environ.get("ALFWORLD_DATA") or Path.home() / ".cache" / "alfworld").expanduser()
    for version in ("json_2.1.1", "json_2.1.2", "json_2.1.3"):
        if (base / version).is_dir():
            return base / version
    raise PrefbuildError(
        f"{base}: no ALFWorld games (expected json_2.1.1/ from `alfworld-download`); set ALFWORLD_DATA to that folder"
    )


def game_files(root: Path, split: str) -> list[Path]:
    """Every ``game.tw-pddl`` of ``split`` under ``root``, in path order."""
    folder = SPLIT_FOLDERS.get(split)
    if folder is None:
        raise PrefbuildError(f"alfworld split {split!r}: known splits are {', '.join(SPLIT_FOLDERS)}")
    found = sorted((root / folder).glob("*/*/game.tw-pddl"))
    if not found:
        raise PrefbuildError(f"{root / folder}: no game.tw-pddl files for split {split!r}")
    return found


def goal_of(game_file: Path) -> str:
    """The goal sentence stored in a game's grammar; empty when it cannot be found."""
    try:
        text = game_file.read_text(encoding="utf-8")
    except OSError:  # handled: an unreadable game file has no goal to show; resetting on it fails and is recorded
        return ""
    match = _GOAL.search(text)
    return match["goal"].strip() if match else ""


class AlfworldEnv(Env):
    """ALFWorld's own TextWorld games, one per episode, spoken in the agent's dialect."""

    name: ClassVar[str] = "alfworld"
    dialects: ClassVar[tuple[str, ...]] = DIALECTS
    protocols: ClassVar[dict[str, type[Protocol]]] = PROTOCOLS

    def __init__(self, dialect: str = "classic", data_dir: str | None = None, expert: bool = True) -> None:
        self.dialect = check_dialect(dialect)
        self.data_dir = data_dir
        self.expert = expert
        self._env: Any = None
        self._state: Any = None
        self._game_dialect: str | None = None

    def tasks(self, split: str, n: int, seed: int, task_types: Sequence[str] | None = None) -> Iterator[EnvTask]:
        root = data_root(self.data_dir)
        wanted = {KIND_TO_TYPE[task_kind(name)] for name in task_types} if task_types else None
        files = [path for path in game_files(root, split) if wanted is None or self._type_of(path, root) in wanted]
        random.Random(seed).shuffle(files)
        for path in files[:n]:
            relative = path.parent.relative_to(root / SPLIT_FOLDERS[split]).as_posix()
            info = TaskInfo(
                id=relative,
                type=self._type_of(path, root),
                goal=goal_of(path),
                split=split,
                seed=seed,
                meta={"gamefile": str(path)},
            )
            yield EnvTask(info=info, payload=str(path))

    @staticmethod
    def _type_of(path: Path, root: Path) -> str:
        return task_type_from_gamefile(path.relative_to(root).as_posix())

    def reset(self, task: EnvTask) -> tuple[str, dict[str, Any]]:
        self.close()
        self._env = _start_game(str(task.payload), expert=self.expert)
        self._state = self._env.reset()
        feedback = str(self._state["feedback"])
        raw_admissible = list(self._state["admissible_commands"] or [])
        self._game_dialect = detect_dialect(raw_admissible, None) or _dialect_of_game_file(str(task.payload))
        info = {"admissible": self.admissible_actions(), "game_dialect": self._game_dialect, "gamefile": task.payload}
        return feedback, info

    def step(self, action: str) -> StepResult:
        if self._env is None:
            facts = StepFacts(won=False)
            return StepResult(INVALID_FEEDBACK, 0.0, False, {"error": "no game loaded"}, facts, valid=False)
        game_dialect = self._dialect()
        command = translate_command(action.strip(), self.dialect, game_dialect)
        try:
            self._state, _, done = self._env.step(command)
        except Exception as error:
            # handled: boundary: the engine raises assorted errors on bad commands: an invalid step, error in info
            return StepResult(INVALID_FEEDBACK, 0.0, False, {"error": str(error)}, StepFacts(won=False), valid=False)
        raw = str(self._state["feedback"])
        if self._game_dialect is None:
            self._game_dialect = detect_dialect(self._state["admissible_commands"], raw)
        feedback = translate_feedback(raw, self._dialect(), self.dialect, command=command)
        won = bool(self._state["won"])
        valid = raw.strip() != INVALID_FEEDBACK
        facts = StepFacts(won=won, executed_action=command if command != action.strip() else None)
        return StepResult(feedback, 1.0 if won else 0.0, bool(done) or won, {}, facts, valid=valid)

    def admissible_actions(self) -> list[str] | None:
        if self._state is None:
            return None
        return translate_admissible(list(self._state["admissible_commands"] or []), self._dialect(), self.dialect)

    def expert_action(self) -> str | None:
        if self._state is None:
            return None
        plan = self._state.get("extra.expert_plan") if hasattr(self._state, "get") else None
        if not plan:
            return None
        return translate_command(str(plan[0]), self._dialect(), self.dialect)

    def close(self) -> None:
        if self._env is not None:
            self._env.close()
        self._env = None
        self._state = None
        self._game_dialect = None

    def _dialect(self) -> str:
        return self._game_dialect or self.dialect


def _dialect_of_game_file(path: str) -> str | None:
    """The dialect written in a game's grammar (its put template), read without the engine."""
    try:
        grammar = json.loads(Path(path).read_text(encoding="utf-8")).get("grammar", "")
    except (OSError, ValueError, AttributeError):
        # handled: an unreadable grammar leaves the dialect unknown (None), as a grammar without a put template
        return None
    if "in/on" in grammar:
        return "classic"
    if "You move the" in grammar:
        return "modern"
    return None


def _start_game(game_file: str, *, expert: bool) -> Any:
    """A single-game TextWorld env with ALFWorld's name demangler (and its handcoded expert)."""
    if not alfworld_available():
        raise PrefbuildError("the alfworld env needs `pip install alfworld` (it brings textworld[pddl])")
    import textworld
    from alfworld.agents.environment import alfred_tw_env

    request_infos = textworld.EnvInfos(won=True, admissible_commands=True, extras=["gamefile"])
    wrappers: list[Any] = [alfred_tw_env.AlfredDemangler(shuffle=False), alfred_tw_env.AlfredInfos]
    expert_class = getattr(alfred_tw_env, "AlfredExpert", None)
    if expert and expert_class is not None:
        wrappers.append(expert_class(expert_type="handcoded"))
        request_infos.extras.append("expert_plan")
    return textworld.start(game_file, request_infos=request_infos, wrappers=wrappers)
