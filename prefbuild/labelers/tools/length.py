"""``overlong``: responses over a token budget, with the cards' soft buffer.

The GRPO cards penalise a response whose length ``L`` exceeds ``budget - buffer`` linearly up
to ``budget`` and fully beyond it (DAPO's overlong reward shaping). The label's confidence is
that penalty: ``(L - (budget - buffer)) / buffer`` inside the buffer, 1 over the budget or
when the model was cut off (finish reason ``length``).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from prefbuild.labelers.text import token_count
from prefbuild.labelers.tools.calls import ToolLabeler
from prefbuild.records import FailureMode, Label, Step, Trajectory


class OverlongParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    budget_tokens: int = Field(default=4096, gt=0, description="Tokens over which a response is fully overlong.")
    buffer_tokens: int = Field(default=1024, ge=0, description="Soft buffer below the budget, graded linearly.")
    min_confidence: float = Field(default=0.05, ge=0.0, le=1.0, description="Grades below this are not labelled.")

    @model_validator(mode="after")
    def _buffer_fits(self) -> OverlongParams:
        if self.buffer_tokens >= self.budget_tokens:
            raise ValueError("buffer_tokens must be smaller than budget_tokens")
        return self


def response_tokens(step: Step) -> tuple[int, bool]:
    """The step's response tokens and whether they were counted by the teacher (else estimated)."""
    if step.usage is not None and step.usage.completion_tokens > 0:
        return step.usage.completion_tokens, True
    return token_count(step.raw_output), False


def overlong_grade(tokens: int, budget: int, buffer: int) -> float:
    """The soft overlong penalty in [0, 1].

    Example:
        >>> [overlong_grade(n, 100, 20) for n in (80, 90, 100, 150)]
        [0.0, 0.5, 1.0, 1.0]
    """
    if tokens >= budget:
        return 1.0
    start = budget - buffer
    if tokens <= start or buffer == 0:
        return 0.0
    return (tokens - start) / buffer


class OverlongLabeler(ToolLabeler):
    """Responses whose length is in the soft buffer or over the budget (any env with tool use)."""

    name: ClassVar[str] = "overlong"
    mode: ClassVar[str] = FailureMode.overlong.value
    narrows: ClassVar[tuple[str, ...]] = (FailureMode.verbose_filler.value,)
    Params: ClassVar[type[BaseModel]] = OverlongParams

    def label(self, trajectory: Trajectory) -> list[Label]:
        budget, buffer = self.config["budget_tokens"], self.config["buffer_tokens"]
        labels: list[Label] = []
        for step in trajectory.steps:
            tokens, counted = response_tokens(step)
            grade = overlong_grade(tokens, budget, buffer)
            cut = step.facts.finish_reason == "length"
            if cut:
                grade = 1.0
            if grade < self.config["min_confidence"]:
                continue
            how = "tokens" if counted else "tokens (estimated from words)"
            evidence = f"{tokens} response {how} against a budget of {budget} with a {buffer}-token soft buffer"
            if cut:
                evidence += "; the response was cut off at max_tokens"
            labels.append(self.make_label(step, grade, evidence))
        return labels
