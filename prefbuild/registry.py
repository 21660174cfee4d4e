"""The one registry of prefbuild's plug-in families.

Every family (envs, teachers, labelers, pair strategies, export formats, and the scripted
teacher's per-env mistake makers, ``simulation``) is a mapping from a
name to an object: built-ins are listed here as ``"module:attribute"`` strings and imported
lazily (choosing the scripted teacher never imports torch); third-party plug-ins register
through the entry point group ``prefbuild.<family>`` of their package.

One precedence rule: **built-ins win**. A plug-in that uses a built-in's name is ignored
with a warning that names both, so a stray package can never silently change what a
bundled recipe does. One error message for unknown names: ``unknown <kind> 'x'; known: ...``.

Example:
    >>> from prefbuild import registry
    >>> sorted(registry.names("exports"))[:2]
    ['llamafactory', 'roundwise']
    >>> registry.load("envs", "household").name
    'household'
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from functools import cache
from importlib import import_module
from importlib.metadata import entry_points
from typing import Any, Literal

from prefbuild.errors import PrefbuildError

logger = logging.getLogger(__name__)

Family = Literal["envs", "teachers", "labelers", "pairs", "exports", "simulation"]
FAMILIES: tuple[Family, ...] = ("envs", "teachers", "labelers", "pairs", "exports", "simulation")

# What one member of each family is called in error messages.
KIND: dict[str, str] = {
    "envs": "env",
    "teachers": "teacher backend",
    "labelers": "labeler",
    "pairs": "pair strategy",
    "exports": "export format",
    "simulation": "mistake maker",
}

BUILTINS: dict[str, dict[str, str]] = {
    "envs": {
        "household": "prefbuild.envs.household.env:HouseholdEnv",
        "sql": "prefbuild.envs.sql.env:SqlEnv",
        "alfworld": "prefbuild.envs.alfworld.env:AlfworldEnv",
        "code": "prefbuild.envs.code.env:CodeEnv",
        "bfcl": "prefbuild.envs.bfcl.env:BfclEnv",
        "tau2": "prefbuild.envs.tau2.env:Tau2Env",
    },
    "teachers": {
        "openai": "prefbuild.teachers.factories:openai_teacher",
        "vllm": "prefbuild.teachers.factories:vllm_teacher",
        "transformers": "prefbuild.teachers.factories:transformers_teacher",
        "scripted": "prefbuild.simulation.scripted:scripted_teacher",
    },
    "labelers": {
        "loop": "prefbuild.labelers.loop:LoopLabeler",
        "premature_success": "prefbuild.labelers.premature_success:PrematureSuccessLabeler",
        "implausible_location": "prefbuild.labelers.implausible_location:ImplausibleLocationLabeler",
        "verbose_filler": "prefbuild.labelers.verbose_filler:VerboseFillerLabeler",
        "format_violation": "prefbuild.labelers.format_violation:FormatViolationLabeler",
        "invalid_action": "prefbuild.labelers.invalid_action:InvalidActionLabeler",
        "phantom_object": "prefbuild.labelers.phantom_object:PhantomObjectLabeler",
        "sql_error": "prefbuild.labelers.sql.labelers:SqlErrorLabeler",
        "wrong_answer": "prefbuild.labelers.sql.labelers:SqlWrongAnswerLabeler",
        "sql_premature_success": "prefbuild.labelers.sql.labelers:SqlPrematureSuccessLabeler",
        "sql_loop": "prefbuild.labelers.sql.labelers:SqlLoopLabeler",
        "service_premature_success": "prefbuild.labelers.service_success:ServiceSuccessLabeler",
        "malformed_tool_call": "prefbuild.labelers.tools.calls:MalformedToolCallLabeler",
        "unknown_tool": "prefbuild.labelers.tools.calls:UnknownToolLabeler",
        "invalid_arguments": "prefbuild.labelers.tools.calls:InvalidArgumentsLabeler",
        "tool_error": "prefbuild.labelers.tools.calls:ToolErrorLabeler",
        "repeated_tool_call": "prefbuild.labelers.tools.calls:RepeatedToolCallLabeler",
        "no_tool_use": "prefbuild.labelers.tools.answers:NoToolUseLabeler",
        "hallucinated_tool_output": "prefbuild.labelers.tools.answers:HallucinatedToolOutputLabeler",
        "tool_wrong_answer": "prefbuild.labelers.tools.answers:ToolWrongAnswerLabeler",
        "overlong": "prefbuild.labelers.tools.length:OverlongLabeler",
    },
    "pairs": {
        "stepwise": "prefbuild.pairs.strategies.stepwise:StepwiseStrategy",
        "trajectory": "prefbuild.pairs.strategies.trajectory:TrajectoryStrategy",
        "style": "prefbuild.pairs.strategies.style:StyleStrategy",
        "best_of_n": "prefbuild.pairs.strategies.best_of_n:BestOfNStrategy",
        "ranked_samples": "prefbuild.pairs.strategies.ranked:RankedSamplesStrategy",
    },
    "exports": {
        "trl": "prefbuild.exports.trl:TrlFormat",
        "roundwise": "prefbuild.exports.roundwise:RoundwiseFormat",
        "llamafactory": "prefbuild.exports.llamafactory:LlamaFactoryFormat",
        "swift": "prefbuild.exports.swift:SwiftFormat",
        "sft": "prefbuild.exports.sft:SftFormat",
        "sft_first": "prefbuild.exports.sft:SftFirstFormat",
    },
    # Per env name: failure_action(env, mode, rng), the scripted teacher's mistakes in that env.
    "simulation": {
        "household": "prefbuild.simulation.household_mistakes:failure_action",
        "sql": "prefbuild.simulation.sql_mistakes:failure_action",
        "code": "prefbuild.simulation.code_mistakes:failure_action",
        "bfcl": "prefbuild.simulation.bfcl_mistakes:failure_action",
        "tau2": "prefbuild.simulation.tau2_mistakes:failure_action",
    },
}


class UnknownPluginError(PrefbuildError, KeyError):
    """A name that no built-in and no installed plug-in of the family answers to."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


@cache
def _entry_points(family: str) -> tuple[tuple[str, str], ...]:
    """(name, target) of the ``prefbuild.<family>`` entry points, scanned once per process
    (the scan reads every installed distribution's metadata)."""
    found: list[tuple[str, str]] = []
    for entry in entry_points(group=f"prefbuild.{family}"):
        if entry.name in BUILTINS[family]:
            logger.warning(
                "ignoring plug-in %s %r (%s): the built-in %s of that name wins",
                KIND[family], entry.name, entry.value, BUILTINS[family][entry.name],
            )
            continue
        found.append((entry.name, entry.value))
    return tuple(found)


def targets(family: Family) -> dict[str, str]:
    """Every name of ``family`` with its ``"module:attribute"`` target, built-ins first.

    Args:
        family: one of ``envs``, ``teachers``, ``labelers``, ``pairs``, ``exports``, ``simulation``.

    Returns:
        An ordered mapping name -> target.

    Example:
        >>> targets("pairs")["stepwise"]
        'prefbuild.pairs.strategies.stepwise:StepwiseStrategy'
    """
    if family not in BUILTINS:
        raise ValueError(f"unknown plug-in family {family!r}; known: {', '.join(FAMILIES)}")
    found = dict(BUILTINS[family])
    for name, target in _entry_points(family):
        found.setdefault(name, target)
    return found


def names(family: Family) -> list[str]:
    """The registered names of ``family`` (built-ins first, then plug-ins).

    Example:
        >>> "household" in names("envs")
        True
    """
    return list(targets(family))


def is_builtin(family: Family, name: str) -> bool:
    """Whether ``name`` is one of prefbuild's own members of ``family``."""
    return name in BUILTINS[family]


def is_own_class(cls: type) -> bool:
    """Whether ``cls`` is defined in prefbuild itself (not a plug-in, nor a plug-in's subclass of a
    built-in): the stages trust such labelers and strategies to read structs and keep what they built.

    Example:
        >>> from prefbuild.labelers import LoopLabeler
        >>> is_own_class(LoopLabeler), is_own_class(dict)
        (True, False)
    """
    return cls.__module__.startswith("prefbuild.")


@cache
def _import(target: str) -> Any:
    module_name, _, attribute = target.partition(":")
    value: Any = import_module(module_name)
    for part in attribute.split(".") if attribute else ():
        value = getattr(value, part)
    return value


def load(family: Family, name: str) -> Any:
    """The object registered as ``name`` in ``family`` (a class, or a factory for teachers).

    Args:
        family: the plug-in family.
        name: the registered name, as a recipe writes it.

    Returns:
        The imported object.

    Raises:
        UnknownPluginError: no built-in or plug-in has that name; the message lists the known ones.

    Example:
        >>> load("labelers", "loop").mode
        'loop'
    """
    found = targets(family)
    if name not in found:
        raise UnknownPluginError(f"unknown {KIND[family]} {name!r}; known: {', '.join(found)}")
    return _import(found[name])


# (family, name) -> why that plug-in could not be loaded; warned about once per process.
_LOAD_FAILURES: dict[tuple[str, str], str] = {}


def load_all(family: Family) -> dict[str, Any]:
    """Every member of ``family`` imported; a plug-in that fails to import is skipped with a
    warning, once per process (it must not hide the built-ins), a built-in that fails raises."""
    loaded: dict[str, Any] = {}
    for name, target in targets(family).items():
        try:
            loaded[name] = _import(target)
        except Exception as error:
            if is_builtin(family, name):
                raise
            if (family, name) not in _LOAD_FAILURES:
                why = f"{KIND[family]} plug-in {name!r} ({target}) could not be loaded: {type(error).__name__}: {error}"
                _LOAD_FAILURES[family, name] = why
                logger.warning("%s", why)
    return loaded


def unknown_name(family: Family, name: str, known: Iterable[str]) -> str:
    """The message for a name ``load_all`` did not return: why its plug-in failed to load, when it is
    one, else that it is unknown, listing ``known``.

    Example:
        >>> unknown_name("labelers", "lop", ["loop"])
        "unknown labeler 'lop'; known: loop"
    """
    return _LOAD_FAILURES.get((family, name)) or f"unknown {KIND[family]} {name!r}; known: {', '.join(known)}"


def clear_cache() -> None:
    """Forget scanned entry points, imports and load failures (tests that install plug-ins call this)."""
    _entry_points.cache_clear()
    _import.cache_clear()
    _LOAD_FAILURES.clear()
