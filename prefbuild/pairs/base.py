"""The pair-strategy plug-in contract: labelled trajectories in, preference pairs out, streaming.

Every strategy, built-in or plug-in, is driven the same way by the pair pipeline, over one
pass of the trajectory files: ``feed`` for each trajectory, ``finish`` once at the end (for
strategies that group trajectories, e.g. by task), then ``close``. Memory stays flat in the
number of episodes: a grouping strategy keeps only what it must (one task's trajectories).
Candidates that do not become a pair are counted in ``stats`` (a ``Tally``: pairs kept, candidates
skipped per short reason; refused ones as ``invalid:<why>``), the same shape exports report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, ClassVar, TypeVar

from prefbuild.analysis.counters import Tally
from prefbuild.records import Pair, Trajectory

BuiltT = TypeVar("BuiltT")

INVALID_REASON_PREFIX = "invalid:"
"""Skip reasons of candidates the records model refused start with this (``invalid:<why>``)."""


class InvalidPair(ValueError):
    """A candidate pair the records model refuses; ``why`` is a short countable reason."""

    def __init__(self, why: str, detail: str = "") -> None:
        self.why = why
        self.detail = detail
        super().__init__(f"{why}: {detail}" if detail else why)


class PairStrategy:
    """Turns labelled trajectories into pairs, one trajectory at a time.

    Subclasses implement ``feed`` (pairs from one trajectory, or none yet) and, when they
    group trajectories, ``finish`` (the pairs held back until the input ends). Pair ids
    must be stable: derived from content and source, not from order.

    Example:
        >>> class EveryFailure(PairStrategy):
        ...     name = "every_failure"
        ...     def feed(self, trajectory):
        ...         return iter(())
        >>> list(EveryFailure().pairs([]))
        []
    """

    name: ClassVar[str]
    # Whether ``feed`` also takes the struct form of a trajectory (``prefbuild.io.fast_records``:
    # the same fields and values, read about 3x faster), reading attributes only and making
    # records of its parts with ``records.as_record``. The pair stage reads structs only when
    # every strategy is a built-in that says so; plug-ins always get pydantic records.
    reads_structs: ClassVar[bool] = False

    def __init__(self, **params: Any) -> None:
        self.params = params
        self.stats = Tally()  # kept: pairs built; skipped: candidates left out, per reason

    def feed(self, trajectory: Trajectory) -> Iterator[Pair]:
        """Pairs from ``trajectory`` (possibly none until ``finish``).

        Args:
            trajectory: one labelled trajectory.

        Returns:
            An iterator of pairs.
        """
        raise NotImplementedError(f"strategy {type(self).__name__} must implement feed()")

    def finish(self) -> Iterator[Pair]:
        """Pairs held back until the input ends (strategies that group trajectories)."""
        return iter(())

    def close(self) -> None:
        """Release resources (a teacher event loop); safe to call twice."""

    def pairs(self, trajectories: Iterable[Trajectory]) -> Iterator[Pair]:
        """All pairs of ``trajectories``: ``feed`` each, then ``finish``, then ``close``."""
        try:
            for trajectory in trajectories:
                yield from self.feed(trajectory)
            yield from self.finish()
        finally:
            self.close()

    def emit(self, build: Callable[[], BuiltT]) -> Iterator[BuiltT]:
        """Run a pair builder (a ``Pair``, or a built-in strategy's ``PairDraft``), counting an
        ``InvalidPair`` in ``stats`` instead of raising it."""
        try:
            pair = build()
        except InvalidPair as error:
            self.stats.skip(f"{INVALID_REASON_PREFIX}{error.why}")
            return
        self.stats.keep()
        yield pair

    def param(self, name: str, default: Any) -> Any:
        """The parameter ``name`` from the recipe, or ``default``."""
        return self.params.get(name, default)

    def check_params(self, known: Iterable[str]) -> None:
        """Unknown parameters are a user error (a typo must not be silently ignored)."""
        unknown = sorted(set(self.params) - set(known))
        if unknown:
            raise ValueError(
                f"strategy {self.name!r}: unknown parameter(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
            )
