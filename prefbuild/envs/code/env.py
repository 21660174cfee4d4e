"""The ``code`` env: math and programming problems solved with a sandboxed code interpreter.

An episode is one problem. Actions are the JSON tool actions of ``prefbuild.tooluse``: a
turn with ``code_interpreter`` calls runs each call in the episode's sandbox (state kept
across calls unless ``stateless``) and returns their results as ``tool`` messages; a turn
without calls is the final answer and ends the episode, graded with math-verify (math) or
by running the tests in a fresh sandbox (code). After ``max_turns`` tool turns the episode
ends without an answer.

Outcome: ``correct`` / ``incorrect`` / ``no_answer`` in ``info["outcome"]``, ``won`` in the
facts and info. The expert calls the reference program, then answers with the gold answer.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import json
import logging
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

from prefbuild.envs.base import Env, EnvTask, Protocol, StepResult
from prefbuild.envs.code.generator import SPLIT_OFFSETS, TASK_TYPES, generate_problems
from prefbuild.envs.code.grading import Verdict, grade_code, grade_math, require_math_verify
from prefbuild.envs.code.loader import CodeDataError, load_problems, parse_row
from prefbuild.envs.code.problems import CodeProblem
from prefbuild.envs.code.protocol import CODE_INTERPRETER_TOOL, TOOL_NAME, CodeInterpreterProtocol
from prefbuild.envs.code.sandbox import CodeSandbox, Isolation, SandboxLimits
from prefbuild.records import FunctionCall, Message, StepFacts, TaskInfo, ToolCall
from prefbuild.tooluse.actions import decode_action, encode_action
from prefbuild.tooluse.dispatch import ToolBox, ToolOutput, joined_observation, run_calls

logger = logging.getLogger(__name__)

MAX_TURNS = 16


def task_info(problem: CodeProblem, split: str, seed: int | None) -> TaskInfo:
    meta: dict[str, Any] = {"kind": problem.kind, "source": problem.source, "has_reference": bool(problem.reference)}
    if problem.answer is not None:
        meta["answer"] = problem.answer
    if problem.tests is not None:
        meta["tests"] = len(problem.tests.inputs)
    return TaskInfo(id=problem.id, type=problem.category, goal=problem.prompt, split=split, seed=seed, meta=meta)


def expert_answer(problem: CodeProblem) -> str | None:
    """The expert's final message: the boxed gold answer, or the reference program in a fence."""
    if problem.kind == "math":
        return f"The answer is $\\boxed{{{problem.answer}}}$."
    if problem.reference:
        return f"```python\n{problem.reference.rstrip()}\n```"
    return None


def expert_cell(problem: CodeProblem) -> str | None:
    """The expert's ``code_interpreter`` call: the reference program (on the first test's input for code)."""
    if not problem.reference:
        return None
    if problem.tests is None:
        return problem.reference
    first = problem.tests.inputs[0]
    if problem.tests.fn_name is None:
        return f"import io, sys\nsys.stdin = io.StringIO({first!r})\n{problem.reference.rstrip()}\n"
    arguments = first if isinstance(first, list) else [first]
    name = problem.tests.fn_name
    call = f"({name} if '{name}' in globals() else getattr(Solution(), '{name}'))(*{arguments!r})"
    return f"{problem.reference.rstrip()}\n\nprint({call})\n"


def _interleaved(paths: Sequence[Path]) -> Iterator[CodeProblem]:
    """The problems of every file in turn (the first of each, then the second of each, ...), so the
    first ``n`` draw evenly from every source; an id two files share is refused."""
    sources: list[tuple[Path, Iterator[CodeProblem]]] = []
    for path in paths:  # every file's first problem is read before any is played: an empty source is refused
        problems = load_problems(path)
        first = next(problems, None)
        if first is None:
            raise CodeDataError(f"{path}:0 file: no problem in it (an empty file?)")
        sources.append((path, itertools.chain([first], problems)))
    if len(sources) == 1:
        yield from sources[0][1]
        return
    first_file: dict[str, Path] = {}
    while sources:
        remaining = []
        for path, source in sources:
            problem = next(source, None)
            if problem is None:
                continue
            earlier = first_file.setdefault(problem.id, path)
            if earlier != path:
                raise ValueError(f"{path}: problem id {problem.id!r} is also in {earlier}; give the files distinct ids")
            remaining.append((path, source))
            yield problem
        sources = remaining


class CodeEnv(Env):
    """Math and code problems with a ``code_interpreter`` tool.

    Options (the recipe's ``env.options``): ``data_file`` (JSONL / parquet problems instead of
    generated ones; a list of files is read in turn, one problem of each file after the other, so
    ``num_tasks`` draws evenly from every source), ``max_turns`` (16), ``stateless`` (a fresh interpreter per call),
    ``sandbox`` (``SandboxLimits`` fields), ``isolation`` (``auto`` / ``bwrap`` / ``none``).
    """

    name: ClassVar[str] = "code"
    task_types: ClassVar[tuple[str, ...]] = TASK_TYPES
    protocols: ClassVar[dict[str, type[Protocol]]] = {"hermes": CodeInterpreterProtocol}

    def __init__(
        self,
        data_file: str | Path | Sequence[str | Path] | None = None,
        *,
        max_turns: int = MAX_TURNS,
        stateless: bool = False,
        sandbox: SandboxLimits | dict[str, Any] | None = None,
        isolation: Isolation = "auto",
        dialect: str | None = None,
    ) -> None:
        if dialect is not None:
            raise ValueError(f"code env: it has no dialects, got {dialect!r}")
        if max_turns < 1:
            raise ValueError(f"code env: max_turns must be at least 1, got {max_turns}")
        files = [data_file] if isinstance(data_file, str | Path) else list(data_file or [])
        self.data_files = [Path(path) for path in files]
        for position, path in enumerate(self.data_files):
            if path.resolve() in {earlier.resolve() for earlier in self.data_files[:position]}:
                raise ValueError(f"code env: data_file lists {path} twice (its problems would be played twice)")
        self.max_turns = max_turns
        self.stateless = stateless
        self.limits = sandbox if isinstance(sandbox, SandboxLimits) else SandboxLimits(**(sandbox or {}))
        self.isolation: Isolation = isolation
        self.toolbox = ToolBox([CODE_INTERPRETER_TOOL])
        self._problem: CodeProblem | None = None
        self._sandbox: CodeSandbox | None = None
        self._turns = 0
        self._calls = 0
        self._done = True
        self._verdict: Verdict | None = None
        self._cells: list[str] = []
        self._replay: list[str] = []

    def __deepcopy__(self, memo: dict[int, Any]) -> CodeEnv:
        """A copy in the same episode state (pair strategies replay candidates from copies).

        The interpreter process cannot be copied: the copy starts its own sandbox and, unless
        stateless, re-runs this episode's cells there before its first call.
        """
        clone = CodeEnv.__new__(CodeEnv)
        for key, value in self.__dict__.items():
            if key != "_sandbox":
                clone.__dict__[key] = copy.deepcopy(value, memo)
        clone._sandbox = None
        if self._sandbox is not None:
            clone._sandbox = CodeSandbox(self.limits, stateless=self.stateless, isolation=self._sandbox.isolation)
            clone._replay = [] if self.stateless else list(self._cells)
        return clone

    @property
    def problem(self) -> CodeProblem | None:
        """The current episode's problem."""
        return self._problem

    @property
    def cells(self) -> list[str]:
        """The code of every ``code_interpreter`` call of this episode, in order."""
        return list(self._cells)

    # -- tasks ----------------------------------------------------------------------------

    def tasks(self, split: str, n: int, seed: int, task_types: Sequence[str] | None = None) -> Iterator[EnvTask]:
        if not self.data_files:
            split_name = "test" if split == "standard" else split
            if split_name not in SPLIT_OFFSETS:
                raise ValueError(f"unknown split {split!r} for the code env; known: {', '.join(SPLIT_OFFSETS)}")
            for problem in _gradable(generate_problems(split_name, n, seed, task_types)):
                yield EnvTask(info=task_info(problem, split_name, seed), payload=problem)
            return
        produced = 0  # a file's categories are free text: task_types filter by category or kind
        found: set[str] = set()
        matched: set[str] = set()
        for problem in _gradable(_interleaved(self.data_files)):
            if produced >= n:
                return
            if task_types and problem.category not in task_types and problem.kind not in task_types:
                found.update((problem.category, problem.kind))
                continue
            matched.update((problem.category, problem.kind))
            yield EnvTask(info=task_info(problem, split, seed), payload=problem)
            produced += 1
        unmatched = [name for name in task_types or () if name not in matched]
        if produced and unmatched:  # every row read: a task type no row has (a typo?) says so
            logger.warning(
                "%s: no problem of the task_types %s; the data has %s",
                ", ".join(map(str, self.data_files)), unmatched, ", ".join(sorted(found | matched)),
            )
        if task_types and not produced and found:
            raise ValueError(
                f"{', '.join(map(str, self.data_files))}: no problem of the task_types {list(task_types)}; "
                f"the data has "
                f"{', '.join(sorted(found))} (set env.task_types=null to take every row)"
            )

    # -- episode --------------------------------------------------------------------------

    def reset(self, task: EnvTask) -> tuple[str, dict[str, Any]]:
        problem = task.payload
        if not isinstance(problem, CodeProblem):
            problem = parse_row(problem, source=task.info.id, default_id=task.info.id)
        self.close()
        self._problem = problem
        self._sandbox = CodeSandbox(self.limits, stateless=self.stateless, isolation=self.isolation)
        self._turns = 0
        self._calls = 0
        self._done = False
        self._verdict = None
        self._cells = []
        self._replay = []
        info = {"task_id": problem.id, "kind": problem.kind, "max_turns": self.max_turns,
                "isolation": self._sandbox.isolation}  # fmt: skip
        return problem.prompt, info

    def close(self) -> None:
        """Stop the episode's interpreter (also done by the next ``reset``)."""
        if self._sandbox is not None:
            self._sandbox.close()
            self._sandbox = None

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # handled: interpreter shutdown: the sandbox dies with its parent anyway
            self.close()

    def _code_interpreter(self, arguments: dict[str, Any]) -> ToolOutput:
        assert self._sandbox is not None
        for cell in self._replay:  # a copied env rebuilds the interpreter state it copied
            self._sandbox.run(cell)
        self._replay = []
        self._cells.append(arguments["code"])
        execution = self._sandbox.run(arguments["code"])
        return ToolOutput(text=execution.text(), error=execution.error)

    def step(self, action: str) -> StepResult:
        if self._done or self._problem is None:
            return StepResult("The episode is over.", 0.0, True, facts=StepFacts(won=self._won()), valid=False)
        decoded = decode_action(action)
        if not decoded.calls:
            return self._finish(decoded.message or "", list(decoded.problems))
        self._turns += 1
        self._calls += len(decoded.calls)
        replies = run_calls(decoded.calls, self.toolbox, {TOOL_NAME: self._code_interpreter})
        facts = [reply.facts for reply in replies]
        done = self._turns >= self.max_turns
        info: dict[str, Any] = {"turns": self._turns}
        if done:
            self._done = True
            self._verdict = Verdict("no_answer", None, f"no final answer within {self.max_turns} turns")
            info.update(self._outcome_info())
        step_facts = StepFacts(
            won=False, tools=facts, problems=list(decoded.problems),
            stop=f"max turns ({self.max_turns})" if done else None,
        )  # fmt: skip
        messages: list[Message] = [reply.message for reply in replies]
        observation = joined_observation(replies)
        valid = all(fact.ok for fact in facts)
        return StepResult(observation, 0.0, done, info, facts=step_facts, valid=valid, messages=messages)

    def _finish(self, message: str, problems: list[str]) -> StepResult:
        assert self._problem is not None
        problem = self._problem
        if problem.kind == "math":
            assert problem.answer is not None
            verdict = grade_math(message, problem.answer)
        else:
            verdict = grade_code(message, problem, self.limits)
        self._verdict = verdict
        self._done = True
        self.close()
        won = verdict.outcome == "correct"
        info = {"turns": self._turns, **self._outcome_info()}
        facts = StepFacts(won=won, final=True, problems=problems, progress=1.0 if won else 0.0)
        observation = f"Final answer graded {verdict.outcome}: {verdict.detail}"
        valid = verdict.outcome != "no_answer"
        return StepResult(observation, 1.0 if won else 0.0, True, info, facts=facts, valid=valid)

    def _outcome_info(self) -> dict[str, Any]:
        assert self._verdict is not None
        return {
            "outcome": self._verdict.outcome,
            "answer": self._verdict.answer,
            "grading": self._verdict.detail,
            "tool_calls": self._calls,
        }

    def _won(self) -> bool:
        return self._verdict is not None and self._verdict.outcome == "correct"

    # -- oracle ---------------------------------------------------------------------------

    def expert_action(self) -> str | None:
        """Run the reference program once (as a tool call), then give the gold answer."""
        if self._done or self._problem is None:
            return None
        problem = self._problem
        cell = expert_cell(problem)
        if self._calls == 0 and cell is not None and self._turns < self.max_turns - 1:
            arguments = json.dumps({"code": cell}, ensure_ascii=False)
            call = ToolCall(id="call_0", function=FunctionCall(name=TOOL_NAME, arguments=arguments))
            return encode_action([call])
        answer = expert_answer(problem)
        return encode_action(message=answer) if answer is not None else None

    def progress(self) -> float | None:
        if self._verdict is None:
            return 0.0
        return 1.0 if self._verdict.outcome == "correct" else 0.0


def _gradable(problems: Iterable[CodeProblem]) -> Iterator[CodeProblem]:
    """``problems``, failing at the first math problem when math-verify, which grades it, is missing:
    a run says so before it plays, not after every episode has failed."""
    checked = False
    for problem in problems:
        if problem.kind == "math" and not checked:
            require_math_verify()
            checked = True
        yield problem
