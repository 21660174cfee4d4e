"""The labeler plug-in contract: a pure function from a trajectory to labels.

Each labeler finds one failure mode (a registered name: a built-in or one it declares),
explains every label with evidence a human can check, and never raises on a trajectory the
records model accepts. Parameters come from the recipe and are validated by a pydantic model
(``Params``), so a typo or a bad value fails when the recipe is checked, naming the field.
Third-party labelers register through the ``prefbuild.labelers`` entry point.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from prefbuild.errors import PrefbuildError, describe_validation_error
from prefbuild.labelers.tools.scan import is_tool_trajectory
from prefbuild.records import Label, Step, Trajectory


class ParamError(PrefbuildError, ValueError):
    """A labeler parameter from the recipe is unknown or has a bad value; the message names it."""


class NoParams(BaseModel):
    """Parameters of a labeler that takes none."""

    model_config = ConfigDict(extra="forbid", strict=True)


def params_model(name: str, defaults: Mapping[str, Any]) -> type[BaseModel]:
    """A strict pydantic model whose fields are ``defaults`` (types taken from the values).

    Args:
        name: the labeler name (names the model in errors).
        defaults: parameter name -> default value.

    Returns:
        A model class with ``extra="forbid"``; ints accept whole floats, floats accept ints.

    Example:
        >>> params_model("loop", {"k": 2}).model_validate({"k": 3}).k
        3
    """
    fields: dict[str, Any] = {}
    for key, value in defaults.items():
        annotation: Any = type(value) if value is not None else Any
        if isinstance(value, float):
            annotation = float
            if key.endswith("confidence"):  # a confidence is a probability
                annotation = Annotated[float, Field(ge=0.0, le=1.0)]
        elif isinstance(value, list | tuple):
            annotation = list[str]
        fields[key] = (annotation, value)
    config = ConfigDict(extra="forbid")
    return create_model(f"{name}_params", __config__=config, **fields)


class Labeler(ABC):
    """Finds one failure mode.

    Subclasses set ``name``, ``mode`` and either ``Params`` (a pydantic model, for parameters
    with constraints) or ``defaults`` (a mapping from which a strict model is built).
    ``self.config`` holds the validated values as a plain dict.

    Example:
        >>> from prefbuild.labelers.loop import LoopLabeler
        >>> LoopLabeler(k=3).config["k"]
        3
    """

    name: ClassVar[str]
    mode: ClassVar[str]
    version: ClassVar[int] = 1
    # Env names this labeler understands; empty = every env.
    envs: ClassVar[tuple[str, ...]] = ()
    # Envs where another labeler of the same mode takes over (e.g. ``sql`` has its own).
    excluded_envs: ClassVar[tuple[str, ...]] = ()
    # Generic modes this labeler's mode is a narrower reading of: on a step it labels, their labels
    # are dropped, so one mistake is named once, by its most specific mode (``tool_error`` rather
    # than also ``invalid_action``).
    narrows: ClassVar[tuple[str, ...]] = ()
    # Runs only on tool trajectories (``tools.scan.is_tool_trajectory``): the tool labelers.
    tool_trajectories_only: ClassVar[bool] = False
    defaults: ClassVar[Mapping[str, Any]] = {}
    Params: ClassVar[type[BaseModel]] = NoParams

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "Params" not in cls.__dict__ and "defaults" in cls.__dict__:
            cls.Params = params_model(getattr(cls, "name", cls.__name__), cls.defaults)

    def __init__(self, **params: Any) -> None:
        try:
            validated = self.Params.model_validate(params)
        except ValidationError as error:
            where, message = describe_validation_error(error)
            if error.errors()[0].get("type") == "extra_forbidden":
                known = ", ".join(self.Params.model_fields) or "none"
                raise ParamError(f"labeler {self.name!r}: unknown parameter {where!r}; known: {known}") from None
            raise ParamError(f"labeler {self.name!r}: parameter {where!r}: {message}") from None
        self.params: BaseModel = validated
        self.config: dict[str, Any] = validated.model_dump()

    @property
    def tag(self) -> str:
        """``name@version``, recorded on every label so re-labelling is traceable."""
        return f"{self.name}@{self.version}"

    def fits_env(self, env: str) -> bool:
        """Whether this labeler understands the env named ``env`` and is not excluded from it."""
        return (not self.envs or env in self.envs) and env not in self.excluded_envs

    def applies_to(self, trajectory: Trajectory) -> bool:
        """Whether this labeler runs on ``trajectory``: its env is understood and not excluded, and it is a
        tool trajectory where the labeler needs one (``tool_trajectories_only``).

        The label stage decides this once per env and kind of trajectory for every labeler that keeps this
        method (``labelers._Chooser``); a labeler that overrides it is asked of each trajectory.
        """
        return self.fits_env(trajectory.env.name) and (
            not self.tool_trajectories_only or is_tool_trajectory(trajectory)
        )

    def make_label(self, step: Step | int, confidence: float, evidence: str) -> Label:
        """A label of this labeler's mode at ``step`` (confidence clipped to [0, 1], 3 decimals).

        Example:
            >>> from prefbuild.labelers.loop import LoopLabeler
            >>> LoopLabeler().make_label(2, 1.5, "repeats step 1").confidence
            1.0
        """
        index = step if isinstance(step, int) else step.index
        return Label(
            mode=self.mode,
            step=index,
            confidence=round(min(1.0, max(0.0, confidence)), 3),
            evidence=evidence,
            labeler=self.tag,
        )

    @abstractmethod
    def label(self, trajectory: Trajectory) -> list[Label]:
        """Labels for ``trajectory``; pure, no I/O, never raises on a valid record.

        Args:
            trajectory: a trajectory (its existing labels are ignored). The label stage hands the
                built-in labelers (modules under ``prefbuild.``) its struct form from
                ``prefbuild.io.fast_records``, with the same attributes and values, so they read
                attributes only; plug-in labelers always get the pydantic record.

        Returns:
            The labels this labeler finds, each with evidence.
        """
