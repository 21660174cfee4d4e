"""Grade a final answer: math with ``math-verify`` (Hugging Face's math-equivalence checker),
programs by running their tests in a fresh sandbox.

The outcome is ``correct``, ``incorrect`` or ``no_answer`` (nothing answer-like in the
final message: no ``\\boxed{}`` and no expression math-verify can read, or no program).
"""

from __future__ import annotations

import importlib.util
import json
import logging
import re
import secrets
import threading
from dataclasses import dataclass
from typing import Any, Literal

from prefbuild.envs.code.problems import CodeProblem, IOTests
from prefbuild.envs.code.sandbox import CodeSandbox, SandboxLimits
from prefbuild.errors import PrefbuildError

Outcome = Literal["correct", "incorrect", "no_answer"]
_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{")
_CODE_BLOCK = re.compile(r"```(?P<lang>[\w+-]*)[ \t]*\n(?P<body>.*?)```", re.DOTALL)
RESULT_MARKER = "__prefbuild_test_results__"


@dataclass(frozen=True)
class Verdict:
    """How a final answer was graded.

    Attributes:
        outcome: ``correct``, ``incorrect`` or ``no_answer``.
        answer: The extracted answer (boxed text, parsed expression or program), or None.
        detail: Human-readable evidence ("3/4 tests passed", "math-verify: 1/2 vs 0.5").
    """

    outcome: Outcome
    answer: str | None
    detail: str


def extract_boxed(text: str) -> str | None:
    """The content of the last ``\\boxed{...}`` (or ``\\fbox{...}``), braces balanced.

    Example:
        >>> extract_boxed(r"so \\boxed{\\frac{1}{2}} and \\boxed{3}")
        '3'
    """
    found: str | None = None
    for match in _BOXED.finditer(text):
        depth, start = 1, match.end()
        for position in range(start, len(text)):
            if text[position] == "{":
                depth += 1
            elif text[position] == "}":
                depth -= 1
                if depth == 0:
                    found = text[start:position].strip()
                    break
    return found


def extract_program(text: str) -> str | None:
    """The last fenced code block (a ``python`` one preferred), or None.

    Example:
        >>> extract_program("Here:\\n```python\\nprint(1)\\n```")
        'print(1)\\n'
    """
    blocks = [(match.group("lang").lower(), match.group("body")) for match in _CODE_BLOCK.finditer(text)]
    python = [body for lang, body in blocks if lang in ("python", "py", "python3")]
    chosen = python or [body for _, body in blocks]
    return chosen[-1] if chosen else None


class _KnownTimeoutNotice(logging.Filter):
    """Drop math-verify's notice that its SIGALRM timeouts are off: prefbuild turns them off on
    purpose in worker threads (the rollout steps envs off the event loop), where SIGALRM cannot be used."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Timeout is disabled")


for _name in ("math_verify.grader", "math_verify.parser", "math_verify.utils"):
    logging.getLogger(_name).addFilter(_KnownTimeoutNotice())


def _math_verify_timeouts() -> dict[str, Any]:
    # math-verify's timeouts use SIGALRM, which only the main thread may set.
    main = threading.current_thread() is threading.main_thread()
    return {"parsing_timeout": 5 if main else None}


def require_math_verify() -> None:
    """Raise ``PrefbuildError`` naming the extra when math-verify, which grades math answers, is missing."""
    if importlib.util.find_spec("math_verify") is None:
        raise PrefbuildError("the code env grades math with math-verify: pip install 'prefbuild[code]'")


def grade_math(message: str, gold: str) -> Verdict:
    """Grade a final message against the gold answer with math-verify, in a child process that
    may take at most ``math_process.GRADER.limit_s`` seconds (``math_process`` says why).

    Args:
        message: The model's final message.
        gold: The reference answer (LaTeX or plain).

    Returns:
        The verdict; ``no_answer`` when math-verify finds nothing to compare, ``incorrect`` when
        the comparison took past the limit.

    Example:
        >>> grade_math(r"The value is \\boxed{0.5}.", r"\\frac{1}{2}").outcome
        'correct'
    """
    require_math_verify()
    from prefbuild.envs.code.math_process import GRADER

    graded = GRADER.grade(message, gold)
    if graded is None:
        boxed = extract_boxed(message)
        return Verdict("incorrect", boxed, f"math-verify did not finish within {GRADER.limit_s:.0f} s "
                                           f"comparing {boxed!r} with gold {gold!r}")
    outcome, answer, detail = graded
    return Verdict(outcome, answer, detail)  # type: ignore[arg-type]  # an Outcome, as grade_math_here made it


def grade_math_here(message: str, gold: str) -> Verdict:
    """``grade_math`` in this process, with math-verify's own timeouts where this is the main thread
    (``math_process`` runs it in its child's main thread)."""
    from math_verify import parse, verify

    options = _math_verify_timeouts()
    boxed = extract_boxed(message)
    predicted = parse(f"\\boxed{{{boxed}}}" if boxed is not None else message, **options)
    if not predicted:
        return Verdict("no_answer", boxed, "no \\boxed{} answer and no expression math-verify can read")
    expected = parse(f"\\boxed{{{gold}}}", **options) or parse(gold, **options)
    timeout = None if options["parsing_timeout"] is None else 5
    correct = bool(expected) and verify(expected, predicted, timeout_seconds=timeout)
    shown = boxed if boxed is not None else str(predicted[-1])
    return Verdict("correct" if correct else "incorrect", shown, f"math-verify: {shown!r} vs gold {gold!r}")


# Each test runs ``program`` in a fresh ``python -I`` process inside the sandbox, given only its
# input: the expected outputs, the results and the marker stay in the harness process, which is
# made non-dumpable so the program cannot read or patch it through /proc. A program therefore
# cannot fake results, and ends as a judge would run it (``sys.exit``, ``sys.stdin.buffer``,
# ``open(0)``, threads, ``os.write(1, ...)`` all work).
_CALL_DRIVER = """
import json, sys
_args = json.load(open(sys.argv[1]))
_scope = {"__name__": "__main__"}
exec(compile(open(sys.argv[2]).read(), "<solution>", "exec"), _scope)
_name = sys.argv[3]
_fn = _scope.get(_name) or getattr(_scope["Solution"](), _name)
_got = _fn(*_args)
with open(sys.argv[4], "w") as _out:
    _out.write(json.dumps(_got, default=str))
"""


def tests_cell(program: str, tests: IOTests, marker: str) -> str:
    """A sandbox cell that runs ``program`` on every test and prints ``marker`` + one JSON line of results."""
    payload = json.dumps({"program": program, "tests": tests.model_dump(), "driver": _CALL_DRIVER})
    return f"""
import ctypes, json, os, signal, subprocess, sys, tempfile
ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: the tested program cannot reach this process
_spec = json.loads({payload!r})
_dir = tempfile.mkdtemp()
_paths = {{name: os.path.join(_dir, name) for name in ("solution.py", "driver.py", "args.json", "result.json")}}
with open(_paths["solution.py"], "w") as _file:
    _file.write(_spec["program"])
with open(_paths["driver.py"], "w") as _file:
    _file.write(_spec["driver"])
_lines = lambda text: [line.rstrip() for line in text.rstrip().splitlines()]
_fn_name = _spec["tests"]["fn_name"]
_results = []
for _input, _expected in zip(_spec["tests"]["inputs"], _spec["tests"]["outputs"]):
    try:
        if _fn_name is None:
            _run = subprocess.run([sys.executable, "-I", _paths["solution.py"]], input=_input.encode(),
                                  capture_output=True, cwd=_dir)
            _got = _run.stdout.decode("utf-8", "replace")
            _ok = _run.returncode == 0 and _lines(_got) == _lines(_expected)
        else:
            with open(_paths["args.json"], "w") as _file:
                json.dump(_input if isinstance(_input, list) else [_input], _file)
            if os.path.exists(_paths["result.json"]):
                os.unlink(_paths["result.json"])
            _run = subprocess.run([sys.executable, "-I", _paths["driver.py"], _paths["args.json"],
                                   _paths["solution.py"], _fn_name, _paths["result.json"]],
                                  stdin=subprocess.DEVNULL, capture_output=True, cwd=_dir)
            _got = json.loads(open(_paths["result.json"]).read()) if _run.returncode == 0 else None
            # TACO / APPS compare a return value with the output or, as they store it, its one-element list
            _ok = _run.returncode == 0 and (_got == _expected or (
                isinstance(_expected, list) and len(_expected) == 1 and _got == _expected[0]))
        if _run.returncode < 0:
            _signal = signal.Signals(-_run.returncode).name
            _prefix = "CPUTimeLimitExceeded: " if _signal == "SIGXCPU" else ""
            _results.append([False, _prefix + "killed by " + _signal])
        elif _run.returncode != 0:
            _why = _run.stderr.decode("utf-8", "replace").strip().splitlines()
            _results.append([False, (_why[-1] if _why else f"SystemExit: exit status {{_run.returncode}}")[:200]])
        else:
            _results.append([_ok, None if _ok else repr(_got)[:200]])
    except BaseException as _error:
        _results.append([False, f"{{type(_error).__name__}}: {{_error}}"[:200]])
print({marker!r} + json.dumps(_results))
"""


def grade_code(message: str, problem: CodeProblem, limits: SandboxLimits | None = None) -> Verdict:
    """Run the program of the final message on the problem's tests in a fresh sandbox.

    Args:
        message: The final message (its last fenced code block is the program).
        problem: A ``code`` problem with tests.
        limits: Sandbox limits for the test run.

    Returns:
        ``correct`` when every test passes, ``incorrect`` otherwise, ``no_answer`` without a program.
    """
    assert problem.tests is not None
    program = extract_program(message)
    if program is None:
        return Verdict("no_answer", None, "no fenced code block in the final message")
    with CodeSandbox(limits or SandboxLimits(), stateless=True) as sandbox:
        # A fresh marker per run: the program cannot print fake results it does not know.
        marker = f"{RESULT_MARKER}{secrets.token_hex(8)}:"
        execution = sandbox.run(tests_cell(program, problem.tests, marker))
    found = execution.output.rfind(marker)
    if found < 0:
        return Verdict("incorrect", program, f"the tests did not finish: {execution.error or execution.output[-200:]}")
    try:
        results = json.loads(execution.output[found + len(marker) :].splitlines()[0])
    except (ValueError, IndexError):
        # handled: garbled test output is graded incorrect, with that reason in the verdict
        return Verdict("incorrect", program, "the test results were garbled by the program's output")
    passed = sum(1 for ok, _ in results if ok is True)
    failures = [why for ok, why in results if ok is not True]
    detail = f"{passed}/{len(results)} tests passed" + (f"; first failure: {failures[0]}" if failures else "")
    return Verdict("correct" if passed == len(results) == len(problem.tests.inputs) else "incorrect", program, detail)
