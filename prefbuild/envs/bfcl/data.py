"""BFCL v4 multi-turn data as shipped in the PyPI package ``bfcl-eval``.

Tasks, ground-truth call sequences and function docs are read from the package's own
``bfcl_eval/data`` folder and validated strictly (a field this module does not know is an
error, so a new package release that changes the format fails loudly instead of silently).
"""

from __future__ import annotations

import copy
import json
from functools import cache
from importlib.resources import files
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from prefbuild.errors import PrefbuildError

CATEGORIES: tuple[str, ...] = ("base", "miss_func", "miss_param", "long_context")
Category = Literal["base", "miss_func", "miss_param", "long_context"]

# The classes of the four multi-turn categories (memory and web search belong to other suites).
MULTI_TURN_CLASSES: tuple[str, ...] = (
    "GorillaFileSystem",
    "MathAPI",
    "MessageAPI",
    "TwitterAPI",
    "TicketAPI",
    "TradingBot",
    "TravelAPI",
    "VehicleControlAPI",
)


class UserMessage(BaseModel):
    """One message of a user turn."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: Literal["user"]
    content: str


class BfclEntry(BaseModel):
    """One line of ``BFCL_v4_multi_turn_<category>.json``.

    ``question`` holds one list of messages per user turn; an empty list marks the turn at which
    ``missed_function`` (turn index -> function names) are revealed (``miss_func`` only).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^multi_turn_[a-z_]+_\d+$")
    question: list[list[UserMessage]]
    initial_config: dict[str, Any]
    path: list[str]
    involved_classes: list[str] = Field(min_length=1)
    missed_function: dict[str, list[str]] = Field(default_factory=dict)
    excluded_function: list[str] = Field(default_factory=list)

    @property
    def category(self) -> str:
        """``base``, ``miss_func``, ``miss_param`` or ``long_context`` (from the id, as BFCL does)."""
        return self.id.rsplit("_", 1)[0].removeprefix("multi_turn_")


class GroundTruth(BaseModel):
    """One line of ``possible_answer/BFCL_v4_multi_turn_<category>.json``: call strings per turn."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    ground_truth: list[list[str]]


def _data_dir() -> Any:
    try:
        return files("bfcl_eval") / "data"
    except ModuleNotFoundError:
        raise PrefbuildError(
            "bfcl env: the package bfcl-eval is not installed; install the 'bfcl' extra "
            "(pip install --no-deps bfcl-eval plus the extra's list, see the Makefile)"
        ) from None


def _read_jsonl(resource: Any) -> list[tuple[int, dict[str, Any]]]:
    lines = resource.read_text(encoding="utf-8").splitlines()
    return [(number, json.loads(line)) for number, line in enumerate(lines, start=1) if line.strip()]


def _validated(model: type[BaseModel], resource: Any) -> list[Any]:
    rows = []
    for number, raw in _read_jsonl(resource):
        try:
            rows.append(model.model_validate(raw))
        except ValueError as error:
            raise PrefbuildError(f"error: {resource}:{number} {error}") from None
    return rows


def _check_category(category: str) -> None:
    if category not in CATEGORIES:
        raise PrefbuildError(f"bfcl env: unknown category {category!r}; known: {', '.join(CATEGORIES)}")


@cache
def load_entries(category: str) -> tuple[BfclEntry, ...]:
    """The category's tasks in the package's order.

    Args:
        category: one of ``CATEGORIES``.

    Returns:
        The validated entries.

    Example:
        >>> load_entries("base")[0].id
        'multi_turn_base_0'
    """
    _check_category(category)
    return tuple(_validated(BfclEntry, _data_dir() / f"BFCL_v4_multi_turn_{category}.json"))


@cache
def load_ground_truth(category: str) -> dict[str, GroundTruth]:
    """The category's ground-truth call sequences by task id.

    Args:
        category: one of ``CATEGORIES``.

    Returns:
        ``{task id: GroundTruth}``.

    Example:
        >>> load_ground_truth("base")["multi_turn_base_0"].ground_truth[0]
        ["cd(folder='document')", "mkdir(dir_name='temp')", "mv(source='final_report.pdf', destination='temp')"]
    """
    _check_category(category)
    rows = _validated(GroundTruth, _data_dir() / "possible_answer" / f"BFCL_v4_multi_turn_{category}.json")
    return {row.id: row for row in rows}


@cache
def _class_docs(class_name: str) -> tuple[dict[str, Any], ...]:
    from bfcl_eval.constants.executable_backend_config import MULTI_TURN_FUNC_DOC_FILE_MAPPING

    if class_name not in MULTI_TURN_FUNC_DOC_FILE_MAPPING:
        raise PrefbuildError(f"bfcl env: unknown backend class {class_name!r}")
    resource = _data_dir() / "multi_turn_func_doc" / MULTI_TURN_FUNC_DOC_FILE_MAPPING[class_name]
    return tuple(raw for _, raw in _read_jsonl(resource))


def class_function_docs(class_name: str) -> list[dict[str, Any]]:
    """The documented functions of one backend class (BFCL's func doc file), as fresh copies.

    Args:
        class_name: a backend class such as ``"GorillaFileSystem"``.

    Returns:
        BFCL function docs (``name``, ``description``, ``parameters``, ``response``).

    Example:
        >>> [doc["name"] for doc in class_function_docs("MathAPI")][:2]
        ['absolute_value', 'add']
    """
    return copy.deepcopy(list(_class_docs(class_name)))


def entry_function_docs(entry: BfclEntry) -> tuple[list[dict[str, Any]], dict[int, list[dict[str, Any]]]]:
    """The docs offered from the first turn and the held-out docs revealed later, as BFCL builds them
    (read-only: the dicts are shared between calls)
    (``populate_test_cases_with_predefined_functions``: involved classes' docs in order, held-out
    functions removed and kept by turn index).

    Args:
        entry: the task.

    Returns:
        ``(offered docs, {turn index: docs revealed at that turn})``.

    Example:
        >>> offered, later = entry_function_docs(load_entries("miss_func")[0])
        >>> [doc["name"] for doc in later[3]]
        ['sort']
    """
    offered: list[dict[str, Any]] = []
    for class_name in entry.involved_classes:
        offered.extend(_class_docs(class_name))  # shared, read-only: callers convert, never mutate
    held_out: dict[int, list[dict[str, Any]]] = {}
    for turn, names in entry.missed_function.items():
        revealed = []
        for name in names:
            position = next((i for i, doc in enumerate(offered) if doc["name"] == name), None)
            if position is None:
                raise PrefbuildError(f"bfcl env: {entry.id}: missed_function {name!r} is no documented function")
            revealed.append(offered.pop(position))
        held_out[int(turn)] = revealed
    return offered, held_out
