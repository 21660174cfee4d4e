"""The ``code`` env's task data: a math problem with a final answer or a programming
problem with input/output tests, each optionally with a reference program."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class IOTests(_Model):
    """Tests of a programming problem, in TACO's ``input_output`` layout.

    Without ``fn_name`` each input is the program's stdin and each output its expected
    stdout (compared line by line, trailing whitespace ignored). With ``fn_name`` each
    input is the list of arguments of that function (or of ``Solution().fn_name``) and each
    output its expected return value.
    """

    inputs: list[Any] = Field(min_length=1)
    outputs: list[Any] = Field(min_length=1)
    fn_name: str | None = None

    @model_validator(mode="after")
    def _same_length(self) -> IOTests:
        if len(self.inputs) != len(self.outputs):
            raise ValueError(f"{len(self.inputs)} inputs but {len(self.outputs)} outputs")
        if self.fn_name is None and not all(isinstance(value, str) for value in [*self.inputs, *self.outputs]):
            raise ValueError("stdin/stdout tests need string inputs and outputs (or set fn_name)")
        return self


class CodeProblem(_Model):
    """One task of the ``code`` env.

    Example:
        >>> CodeProblem(id="p1", kind="math", category="arithmetic", prompt="What is 2+2?", answer="4").kind
        'math'
    """

    id: str = Field(min_length=1)
    kind: Literal["math", "code"]
    category: str = Field(min_length=1, description="Task type: arithmetic, number_theory, ..., or the source's.")
    prompt: str = Field(min_length=1, description="The problem statement shown to the model.")
    answer: str | None = Field(default=None, description="The final answer of a math problem (LaTeX or plain).")
    tests: IOTests | None = Field(default=None, description="The tests of a programming problem.")
    reference: str | None = Field(
        default=None, description="A Python program that prints the answer (math) or solves the problem (code)."
    )
    source: str = "generated"

    @model_validator(mode="after")
    def _has_a_check(self) -> CodeProblem:
        if self.kind == "math" and not (self.answer or "").strip():
            raise ValueError("a math problem needs an answer")
        if self.kind == "code" and self.tests is None:
            raise ValueError("a code problem needs tests")
        return self
