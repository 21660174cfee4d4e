"""math-verify in a child process, with a wall-clock limit the parent enforces.

The rollout steps the code env in worker threads, where math-verify's own timeouts (SIGALRM)
cannot be set, and a costly answer (``\\boxed{10^{10^{10^{10}}}}``) computes big integers in C
while holding the interpreter lock: in-process, one such answer stalls every episode of a run.
So answers are compared in one child process, in its main thread (math-verify's own 5 s limits
apply there), and the parent waits at most ``limit_s`` seconds; a child past it is killed and
started again, and the answer is graded incorrect, as math-verify grades a comparison it timed out.

The child is started on first use (``spawn``: it imports math-verify once, about a second) and
is shared by the threads of a process, one answer at a time.
"""

from __future__ import annotations

import multiprocessing
import threading
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

# What the child sends back: (outcome, answer, detail) of a ``grading.Verdict``.
Graded = tuple[str, "str | None", str]

DEFAULT_LIMIT_S = 30.0


def _serve(connection: Connection) -> None:
    """The child: grade each ``(message, gold)`` it receives, until the pipe closes."""
    from prefbuild.envs.code.grading import grade_math_here

    while True:
        try:
            message, gold = connection.recv()
        except EOFError:  # handled: the parent closed the pipe (it exited, or replaces this child)
            return
        verdict = grade_math_here(message, gold)
        connection.send((verdict.outcome, verdict.answer, verdict.detail))


class MathGrader:
    """A child process that grades math answers, restarted when an answer takes past ``limit_s``.

    Example:
        >>> MathGrader().grade(r"\\boxed{0.5}", r"\\frac{1}{2}")  # doctest: +SKIP
        ('correct', '0.5', "math-verify: '0.5' vs gold '\\\\frac{1}{2}'")
    """

    def __init__(self, limit_s: float = DEFAULT_LIMIT_S) -> None:
        self.limit_s = limit_s
        self._lock = threading.Lock()
        self._process: BaseProcess | None = None
        self._connection: Connection | None = None

    def grade(self, message: str, gold: str) -> Graded | None:
        """The verdict of math-verify on ``message`` against ``gold``; None when it took past ``limit_s``."""
        with self._lock:
            connection = self._started()
            connection.send((message, gold))
            if connection.poll(self.limit_s):
                try:
                    answer: Any = connection.recv()
                except EOFError:  # handled: the child died (out of memory): graded as a timeout, restarted
                    self._stop()
                    return None
                return answer
            self._stop()
            return None

    def _started(self) -> Connection:
        if self._process is None or not self._process.is_alive() or self._connection is None:
            self._stop()
            context = multiprocessing.get_context("spawn")  # no fork of a threaded process
            parent, child = context.Pipe()
            process = context.Process(target=_serve, args=(child,), name="prefbuild-math-verify", daemon=True)
            process.start()
            child.close()
            self._process, self._connection = process, parent
        return self._connection

    def _stop(self) -> None:
        """Kill the child (it may be deep in a C computation that no signal interrupts) and forget it."""
        if self._connection is not None:
            self._connection.close()
        if self._process is not None:
            self._process.kill()
            self._process.join(timeout=10)
        self._process, self._connection = None, None


GRADER = MathGrader()
