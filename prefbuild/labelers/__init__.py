"""Labeler registry: built-in labelers, SQL-specific ones, and plug-ins from entry points.

``build_labelers`` turns a recipe's ``labelers`` section into instances; ``label_trajectory``
runs them on one trajectory and returns a copy whose step labels are *replaced*, so
re-labelling old trajectories after a threshold change never stacks stale labels.

Env-specific labelers (``envs=("sql",)``) replace the generic labeler of the same failure
mode for their env; verbose_filler and format_violation apply to every env.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from prefbuild import registry
from prefbuild.io.fast_records import is_struct, replace_record, struct_of
from prefbuild.labelers.base import Labeler
from prefbuild.labelers.format_violation import FormatViolationLabeler
from prefbuild.labelers.implausible_location import ImplausibleLocationLabeler
from prefbuild.labelers.invalid_action import InvalidActionLabeler
from prefbuild.labelers.loop import LoopLabeler
from prefbuild.labelers.phantom_object import PhantomObjectLabeler
from prefbuild.labelers.premature_success import PrematureSuccessLabeler
from prefbuild.labelers.tools.scan import is_tool_trajectory, one_scan
from prefbuild.labelers.verbose_filler import VerboseFillerLabeler
from prefbuild.records import Label, Trajectory
from prefbuild.registry import unknown_name

__all__ = [
    "BUILTIN_LABELERS",
    "Labeler",
    "available_labelers",
    "build_labelers",
    "label_trajectories",
    "label_trajectory",
]

logger = logging.getLogger(__name__)

BUILTIN_LABELERS: dict[str, type[Labeler]] = {
    cls.name: cls
    for cls in (
        LoopLabeler,
        PrematureSuccessLabeler,
        ImplausibleLocationLabeler,
        VerboseFillerLabeler,
        FormatViolationLabeler,
        InvalidActionLabeler,
        PhantomObjectLabeler,
    )
}


def available_labelers() -> dict[str, type[Labeler]]:
    """Every labeler by registry name: built-ins (generic and env-specific) then plug-ins."""
    found: dict[str, type[Labeler]] = {}
    for name, cls in registry.load_all("labelers").items():
        if isinstance(cls, type) and issubclass(cls, Labeler):
            found[name] = cls
        else:
            logger.warning("labeler plug-in %r is not a Labeler subclass", name)
    return found


def _joins_unasked(name: str, cls: type[Labeler]) -> bool:
    """Whether ``cls`` may run without a recipe naming it (as a default, or as the env-specific
    stand-in of a configured generic labeler): every built-in, and a plug-in only where it labels
    plug-in envs alone, so installing a package never changes what a recipe does on a built-in env."""
    if registry.is_builtin("labelers", name):
        return True
    return bool(cls.envs) and not any(registry.is_builtin("envs", env) for env in cls.envs)


def _for_env(classes: Iterable[type[Labeler]], env: str | None) -> list[type[Labeler]]:
    """Classes usable for ``env``; a generic class is dropped where an env-specific one covers its mode."""
    chosen = [
        cls
        for cls in classes
        if env is None or ((not cls.envs or env in cls.envs) and env not in getattr(cls, "excluded_envs", ()))
    ]
    if env is None:
        return chosen
    specific_modes = {cls.mode for cls in chosen if cls.envs and env in cls.envs}
    return [cls for cls in chosen if cls.envs or cls.mode not in specific_modes]


def build_labelers(configs: list[dict[str, Any]] | None, env: str | None = None) -> list[Labeler]:
    """Instances for a recipe's ``labelers`` entries (``{name, params}``); None = every default for ``env``.

    A configured generic name also brings in the env-specific labelers of the same failure
    mode (which replace it on their env), with those of its params they declare, unless the
    recipe configures them itself. Raises ``KeyError`` for an unknown name and ``ValueError``
    for bad params, naming the entry.
    """
    registry = available_labelers()
    if configs is None:
        return [cls() for cls in _for_env([c for n, c in registry.items() if _joins_unasked(n, c)], env)]
    entries: list[tuple[int, str, type[Labeler], dict[str, Any]]] = []
    for position, entry in enumerate(configs):
        if not isinstance(entry, Mapping) or "name" not in entry:
            raise ValueError(f"labelers[{position}]: expected a mapping with 'name' (and optional 'params')")
        name = str(entry["name"])
        params = entry.get("params") or {}
        if not isinstance(params, Mapping):
            raise ValueError(f"labelers[{position}].params: expected a mapping, got {type(params).__name__}")
        cls = registry.get(name) or next((c for c in registry.values() if c.name == name), None)
        if cls is None:
            raise KeyError(f"labelers[{position}].name: {unknown_name('labelers', name, sorted(registry))}")
        entries.append((position, name, cls, dict(params)))
    configured = {cls for _, _, cls, _ in entries}
    labelers: list[Labeler] = []
    for position, name, cls, params in entries:
        chosen: list[tuple[type[Labeler], dict[str, Any]]] = [(cls, params)]
        if not cls.envs:
            for other_name, other in registry.items():
                if (other.envs and other.mode == cls.mode and other not in configured
                        and _joins_unasked(other_name, other)):
                    declared = getattr(other, "defaults", None)
                    shared = {k: v for k, v in params.items() if isinstance(declared, Mapping) and k in declared}
                    chosen.append((other, shared))
        usable = set(_for_env([c for c, _ in chosen], env))
        for target, target_params in chosen:
            if target not in usable:
                continue
            try:
                labelers.append(target(**target_params))
            except (TypeError, ValueError) as error:
                raise ValueError(f"labelers[{position}] ({name}): {error}") from error
    if env is not None:
        specific = {labeler.mode for labeler in labelers if labeler.envs and env in labeler.envs}
        labelers = [labeler for labeler in labelers if labeler.envs or labeler.mode not in specific]
    return labelers


def _applicable(labelers: Iterable[Labeler], trajectory: Trajectory) -> list[Labeler]:
    """The labelers of ``labelers`` that run on ``trajectory``, each asked in turn (``applies_to``)."""
    with one_scan(trajectory):
        usable = [labeler for labeler in labelers if labeler.applies_to(trajectory)]
    return _without_replaced(usable, trajectory.env.name)


def _without_replaced(usable: list[Labeler], env: str) -> list[Labeler]:
    """``usable`` less the generic labelers whose mode an env-specific one of ``usable`` covers for ``env``."""
    specific_modes = {labeler.mode for labeler in usable if labeler.envs and env in labeler.envs}
    if not specific_modes:
        return usable
    return [labeler for labeler in usable if labeler.envs or labeler.mode not in specific_modes]


class _Chooser:
    """Which of ``labelers`` run on each trajectory of a stream, as ``_applicable`` decides.

    A labeler that keeps ``Labeler.applies_to`` depends only on the trajectory's env and, for the
    tool labelers, on whether it is a tool trajectory: both are read once per trajectory and the
    choice is kept per (env, tool trajectory). Where a labeler overrides ``applies_to`` (it may read
    anything), every labeler is asked of every trajectory, as ``_applicable`` does.
    """

    def __init__(self, labelers: list[Labeler]) -> None:
        self._labelers = labelers
        self._standard = all(type(labeler).applies_to is Labeler.applies_to for labeler in labelers)
        self._asks_tool: dict[str, bool] = {}  # env -> whether a tool labeler fits it
        self._chosen: dict[tuple[str, bool], list[Labeler]] = {}  # (env, tool trajectory) -> the labelers

    def __call__(self, trajectory: Trajectory) -> list[Labeler]:
        """The labelers that run on ``trajectory``, in their order (a list shared between trajectories)."""
        if not self._standard:
            return _applicable(self._labelers, trajectory)
        env = trajectory.env.name
        asks_tool = self._asks_tool.get(env)
        if asks_tool is None:
            asks_tool = self._asks_tool[env] = any(
                labeler.tool_trajectories_only and labeler.fits_env(env) for labeler in self._labelers
            )
        key = (env, asks_tool and is_tool_trajectory(trajectory))
        chosen = self._chosen.get(key)
        if chosen is None:
            chosen = self._chosen[key] = self._choose(*key)
        return chosen

    def _choose(self, env: str, tool: bool) -> list[Labeler]:
        """``_applicable`` for a trajectory of ``env`` that is (``tool``) or is not a tool trajectory."""
        usable = [
            labeler
            for labeler in self._labelers
            if labeler.fits_env(env) and (tool or not labeler.tool_trajectories_only)
        ]
        return _without_replaced(usable, env)


def label_trajectory(trajectory: Trajectory, labelers: Iterable[Labeler]) -> Trajectory:
    """A copy of ``trajectory`` whose ``Step.labels`` are exactly what ``labelers`` find now.

    ``trajectory`` is a record or its struct (``prefbuild.io.fast_records``, as the label stage
    reads files for the built-in labelers); the copy is of the same kind.
    """
    return _relabel(trajectory, _applicable(labelers, trajectory))


def label_trajectories(trajectories: Iterable[Trajectory], labelers: Iterable[Labeler]) -> Iterator[Trajectory]:
    """``label_trajectory`` of each of ``trajectories`` in turn (the label stage's loop), streamed."""
    choose = _Chooser(list(labelers))
    for trajectory in trajectories:
        yield _relabel(trajectory, choose(trajectory))


_NO_LABELS: list[Label] = []  # compared with, never handed out


def _name_once(by_step: dict[int, list[Label]], labelers: list[Labeler]) -> None:
    """Drop, in place, each label whose mode a narrower label of the same step names (``Labeler.narrows``).

    A code cell that raised gets ``tool_error``, not also the generic ``invalid_action``; a step
    no narrower labeler labelled keeps its generic labels.
    """
    narrows = {labeler.tag: labeler.narrows for labeler in labelers if labeler.narrows}
    if not narrows:
        return
    for index, labels in list(by_step.items()):
        named = {mode for label in labels for mode in narrows.get(label.labeler, ())}
        if named:  # the narrower label itself stays: no labeler narrows its own mode
            by_step[index] = [label for label in labels if label.mode not in named]


def _relabel(trajectory: Trajectory, labelers: list[Labeler]) -> Trajectory:
    """``label_trajectory`` with the applicable labelers chosen."""
    steps = trajectory.steps
    by_step: dict[int, list[Label]] = {}  # the steps that get labels
    indices: set[int] | None = None
    seen: set[tuple[str, int, str]] = set()
    for labeler in labelers:
        try:
            found = labeler.label(trajectory)
        except Exception as error:
            raise RuntimeError(f"labeler {labeler.tag} failed on trajectory {trajectory.id!r}: {error}") from error
        if not found:
            continue
        if indices is None:
            indices = {step.index for step in steps}
        for label in found:
            if label.step not in indices:
                raise ValueError(
                    f"labeler {labeler.tag} labelled step {label.step} of trajectory {trajectory.id!r}, "
                    f"which has {len(steps)} steps"
                )
            key = (label.mode, label.step, label.labeler)
            if key not in seen:
                seen.add(key)
                if label.step in by_step:
                    by_step[label.step].append(label)
                else:
                    by_step[label.step] = [label]
    if by_step:
        _name_once(by_step, labelers)
    if by_step and is_struct(trajectory):  # read by the fast record layer: labels become structs too
        by_step = {index: [struct_of(label) for label in labels] for index, labels in by_step.items()}
    # Steps whose labels do not change are shared with the input (records are not mutated here).
    relabelled = []
    for step in steps:
        labels = by_step.get(step.index, _NO_LABELS)
        if step.labels == labels:
            relabelled.append(step)
        else:
            relabelled.append(replace_record(step, labels=list(labels) if labels is _NO_LABELS else labels))
    return replace_record(trajectory, steps=relabelled)
