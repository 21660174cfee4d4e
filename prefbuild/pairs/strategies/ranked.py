"""``ranked_samples``: best-of-n by outcome across the samples of one problem.

The tool cards sample several responses per prompt (``samples_per_task``) and reward the
outcome. This strategy groups the episodes of a task and ranks them by what they achieved:
success first, then ``progress`` (the last step's ``StepFacts.progress``, else the outcome's:
BFCL's fraction of turns whose state matched), then fewer response tokens (concise wins a
tie). The best episode is the chosen continuation against each clearly worse one (the score
gap is at least ``min_margin``), with the shared prompt (system prompt, tools, task turn).

``rank_by: progress`` ranks by progress alone (BFCL environment tuning: partial successes are
still better than no progress). Streaming: a group is closed once its task has not been seen
for ``window`` trajectories, as in the ``trajectory`` strategy.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from typing import Any, ClassVar

from prefbuild.pairs.base import PairStrategy
from prefbuild.pairs.common import make_pair, messages_payload, primary_label, source_for
from prefbuild.pairs.strategies.trajectory import continuation
from prefbuild.records import FailureMode, Pair, StopReason, Trajectory, prompt_messages, tools_at

RANKINGS = ("outcome", "progress")


def final_progress(trajectory: Trajectory) -> float:
    """The fraction of the task done at the end: the last step's progress fact, else the outcome's."""
    for step in reversed(trajectory.steps):
        if step.facts.progress is not None:
            return step.facts.progress
    if trajectory.outcome.progress is not None:
        return trajectory.outcome.progress
    return 1.0 if trajectory.outcome.success else 0.0


def response_tokens(trajectory: Trajectory) -> int:
    return sum(step.usage.completion_tokens if step.usage else len(step.raw_output) // 4 for step in trajectory.steps)


def sample_score(trajectory: Trajectory, rank_by: str) -> float:
    """Higher is better: success counts 1 (outcome ranking), progress adds its fraction.

    Example:
        >>> from prefbuild.records import Outcome, StopReason, TaskInfo, EnvInfo, TeacherInfo
        >>> t = Trajectory(id="t", task=TaskInfo(id="x", type="", goal="", split="test"),
        ...     env=EnvInfo(name="e", protocol="p"), teacher=TeacherInfo(backend="b", model="m"),
        ...     outcome=Outcome(success=False, progress=0.5, stop_reason=StopReason.max_steps))
        >>> sample_score(t, "outcome"), sample_score(t, "progress")
        (0.5, 0.5)
    """
    progress = final_progress(trajectory)
    if rank_by == "progress":
        return progress
    return (1.0 if trajectory.outcome.success else 0.0) + progress


class RankedSamplesStrategy(PairStrategy):
    name: ClassVar[str] = "ranked_samples"
    PARAMS: ClassVar[tuple[str, ...]] = ("rank_by", "min_margin", "max_pairs_per_task", "window")

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.check_params(self.PARAMS)
        self.rank_by = str(self.param("rank_by", "outcome"))
        if self.rank_by not in RANKINGS:
            raise ValueError(f"strategy 'ranked_samples': rank_by must be one of {', '.join(RANKINGS)}")
        self.min_margin = float(self.param("min_margin", 0.1))
        self.max_pairs_per_task = int(self.param("max_pairs_per_task", 3))
        self.window = int(self.param("window", 256))
        self.groups: OrderedDict[str, tuple[int, list[Trajectory]]] = OrderedDict()
        self.seen = 0

    def feed(self, trajectory: Trajectory) -> Iterator[Pair]:
        self.seen += 1
        if trajectory.outcome.stop_reason is StopReason.error or not trajectory.steps:
            self.stats.skip("error_or_empty_episode")
        else:
            _, members = self.groups.pop(trajectory.task.id, (0, []))
            members.append(trajectory)
            self.groups[trajectory.task.id] = (self.seen, members)
        while self.groups:
            task_id, (last_seen, members) = next(iter(self.groups.items()))
            if self.seen - last_seen < self.window:
                break
            del self.groups[task_id]
            yield from self._group_pairs(members)

    def finish(self) -> Iterator[Pair]:
        while self.groups:
            _, (_, members) = self.groups.popitem(last=False)
            yield from self._group_pairs(members)

    def _group_pairs(self, members: list[Trajectory]) -> Iterator[Pair]:
        if len(members) < 2:
            self.stats.skip("single_sample", len(members))
            return
        ranked = sorted(
            members, key=lambda t: (-sample_score(t, self.rank_by), response_tokens(t), t.sample_index, t.id)
        )
        best, best_score = ranked[0], sample_score(ranked[0], self.rank_by)
        prompt = prompt_messages(best, 0)
        made = 0
        for worse in reversed(ranked[1:]):  # the worst first
            if made >= self.max_pairs_per_task:
                break
            margin = best_score - sample_score(worse, self.rank_by)
            if margin < self.min_margin:
                self.stats.skip("margin_too_small")
                continue
            if messages_payload(prompt_messages(worse, 0)) != messages_payload(prompt):
                self.stats.skip("prompt_mismatch")
                continue
            made += 1
            yield from self._pair(best, worse, prompt, margin)

    def _pair(self, best: Trajectory, worse: Trajectory, prompt: list, margin: float) -> Iterator[Pair]:
        label = primary_label(worse.labels)
        reason = label.mode if label is not None else FailureMode.task_failure.value
        evidence = (
            f"sample {best.sample_index} ({'success' if best.outcome.success else 'failure'}, progress "
            f"{final_progress(best):.2f}) over sample {worse.sample_index} "
            f"({'success' if worse.outcome.success else 'failure'}, progress {final_progress(worse):.2f})"
            + (f"; {label.evidence}" if label is not None else "")
        )
        yield from self.emit(
            lambda: make_pair(
                self.name,
                prompt=prompt,
                chosen=continuation(best, len(best.steps)),
                rejected=continuation(worse, len(worse.steps)),
                source=source_for(worse, None, chosen_trajectory_id=best.id),
                reason=reason,
                evidence=evidence,
                scores={
                    "chosen_score": sample_score(best, self.rank_by),
                    "rejected_score": sample_score(worse, self.rank_by),
                    "margin": margin,
                },
                tools=tools_at(best, 0),  # what the model was offered at the prompt's end
            )
        )
