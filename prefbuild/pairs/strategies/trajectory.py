"""``trajectory``: a successful episode versus a failed one on the same task.

The prompt is the instruction and the first observation (the prefix plus the first user
turn, identical for every episode of a task); the chosen continuation is a successful
episode, the rejected one a failed episode cut to the chosen length plus ``extra_turns``
assistant turns, so length alone does not separate them. When no episode of a task
succeeded, ``expert_fallback`` (default on) plays the env's oracle from the same start and
uses that demonstration, written in the trajectory's protocol, as the chosen side.

Known caveat: a multi-turn continuation contains the env's observation turns. TRL's
``DPOTrainer`` computes the loss over every completion token, so it trains on those
observation tokens too (text the policy never writes). Use ``continuation: first_divergence``
for the per-step alternative (the first turn where the two episodes part ways, with the
identical history as prompt), or the ``stepwise`` strategy.

Streaming: episodes of one task usually arrive close together. Groups are kept open while
their task was seen within the last ``window`` trajectories; an evicted group emits its
pairs, so memory is bounded by the window, not by the run.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from prefbuild.pairs.base import PairStrategy
from prefbuild.pairs.common import (
    assistant,
    digest,
    make_pair,
    messages_payload,
    primary_label,
    same_action,
    source_for,
    trajectory_protocol,
)
from prefbuild.pairs.replay import ReplayError, replay, task_for
from prefbuild.records import (
    FailureMode,
    Message,
    Pair,
    Role,
    StopReason,
    Trajectory,
    assistant_turn,
    observation_turns,
    prompt_messages,
    tools_at,
)

CONTINUATIONS = ("full", "first_divergence")


@dataclass
class TaskGroup:
    """What is kept of one task: its shortest success and a bounded, order-independent set of failures."""

    success: Trajectory | None = None
    failures: list[Trajectory] = field(default_factory=list)
    last_seen: int = 0


def continuation(trajectory: Trajectory, turns: int) -> list[Message]:
    """The first ``turns`` assistant turns of an episode with the observation turns between them.

    Each observation reads as the model saw it when it answered (``Step.observation``).
    """
    messages: list[Message] = []
    for step in trajectory.steps[:turns]:
        if step.index > 0:
            messages.extend(observation_turns(step))
        messages.append(assistant_turn(step))
    return messages


def expert_continuation(trajectory: Trajectory, max_steps: int) -> list[Message] | None:
    """The env oracle playing the task of ``trajectory`` from its start, as protocol turns; None if it does not win.

    Observation turns are written by the protocol exactly as the rollout writes them.
    """
    protocol = trajectory_protocol(trajectory)
    env = replay(trajectory, 0)
    task = task_for(trajectory)
    role = Role(protocol.observation_role)
    messages: list[Message] = []
    for _ in range(max_steps):
        action = env.expert_action()
        if action is None:
            return None
        messages.append(assistant(protocol.render(action)))
        result = env.step(protocol.executed_action(action, env.admissible_actions()))
        if result.won:
            return messages
        if result.messages:
            messages.extend(result.messages)
            continue
        turn = protocol.observation_turn(
            result.observation, first=False, task=task, admissible=env.admissible_actions()
        )
        messages.append(Message(role=role, content=turn))
    return None


def _rank(trajectory: Trajectory, seed: int) -> str:
    return digest(str(seed), trajectory.id)


class TrajectoryStrategy(PairStrategy):
    name: ClassVar[str] = "trajectory"
    PARAMS: ClassVar[tuple[str, ...]] = (
        "continuation",
        "extra_turns",
        "max_pairs_per_task",
        "window",
        "seed",
        "expert_fallback",
        "max_expert_steps",
    )

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.check_params(self.PARAMS)
        self.mode: str = self.param("continuation", "full")
        if self.mode not in CONTINUATIONS:
            raise ValueError(f"strategy 'trajectory': continuation must be one of {', '.join(CONTINUATIONS)}")
        self.extra_turns = int(self.param("extra_turns", 5))
        self.max_pairs_per_task = int(self.param("max_pairs_per_task", 4))
        self.window = int(self.param("window", 256))
        self.seed = int(self.param("seed", 0))
        self.expert_fallback = bool(self.param("expert_fallback", True))
        self.max_expert_steps = int(self.param("max_expert_steps", 60))
        self.groups: OrderedDict[str, TaskGroup] = OrderedDict()
        self.seen = 0

    def feed(self, trajectory: Trajectory) -> Iterator[Pair]:
        self.seen += 1
        if trajectory.outcome.stop_reason is StopReason.error:
            self.stats.skip("error_episode")
        elif not trajectory.steps:
            self.stats.skip("empty_episode")
        else:
            self._add(trajectory)
        while self.groups:
            task_id, group = next(iter(self.groups.items()))
            if self.seen - group.last_seen < self.window:
                break
            del self.groups[task_id]
            yield from self._group_pairs(group)

    def finish(self) -> Iterator[Pair]:
        while self.groups:
            _, group = self.groups.popitem(last=False)
            yield from self._group_pairs(group)

    def _add(self, trajectory: Trajectory) -> None:
        group = self.groups.pop(trajectory.task.id, None) or TaskGroup()
        group.last_seen = self.seen
        self.groups[trajectory.task.id] = group  # most recently seen last
        if trajectory.outcome.success:
            best = group.success
            if best is None or (len(trajectory.steps), trajectory.id) < (len(best.steps), best.id):
                group.success = trajectory
            return
        group.failures.append(trajectory)
        group.failures.sort(key=lambda t: _rank(t, self.seed))
        del group.failures[self.max_pairs_per_task :]

    def _group_pairs(self, group: TaskGroup) -> Iterator[Pair]:
        if group.success is None:
            if self.expert_fallback and self.mode == "full" and group.failures:
                yield from self._expert_pairs(group.failures)
            else:
                self.stats.skip("no_success_for_task", len(group.failures))
            return
        for failure in group.failures:
            if self.mode == "full":
                yield from self._full_pair(group.success, failure)
            else:
                yield from self._divergence_pair(group.success, failure)

    def _full_pair(self, success: Trajectory, failure: Trajectory) -> Iterator[Pair]:
        prompt = prompt_messages(success, 0)
        if messages_payload(prompt) != messages_payload(prompt_messages(failure, 0)):
            self.stats.skip("prompt_mismatch")
            return
        turns = len(success.steps)
        chosen = continuation(success, turns)
        rejected = continuation(failure, turns + self.extra_turns)
        modes = sorted({label.mode for label in failure.labels})
        evidence = f"failed episode ({failure.outcome.stop_reason.value}); labels: {', '.join(modes) or 'none'}"
        yield from self.emit(
            lambda: make_pair(
                self.name,
                prompt=prompt,
                chosen=chosen,
                rejected=rejected,
                source=source_for(failure, None, chosen_trajectory_id=success.id),
                reason=FailureMode.task_failure,
                evidence=evidence,
                scores={"chosen_turns": float(turns), "rejected_turns": float(len(failure.steps))},
                tools=tools_at(failure, 0),  # what the model was offered at the prompt's end
            )
        )

    def _expert_pairs(self, failures: list[Trajectory]) -> Iterator[Pair]:
        """Pairs against an oracle demonstration from the task's start (no episode succeeded)."""
        try:
            chosen = expert_continuation(failures[0], self.max_expert_steps)
        except ReplayError:  # handled: counted in the pair stats as skipped: replay_failed
            self.stats.skip("replay_failed", len(failures))
            return
        if chosen is None:
            self.stats.skip("no_success_for_task", len(failures))
            return
        turns = sum(message.role is Role.assistant for message in chosen)
        for failure in failures:
            prompt = prompt_messages(failure, 0)
            rejected = continuation(failure, turns + self.extra_turns)
            modes = sorted({label.mode for label in failure.labels})
            evidence = (
                f"failed episode ({failure.outcome.stop_reason.value}; labels: {', '.join(modes) or 'none'}) "
                "against the env oracle's demonstration"
            )
            yield from self.emit(
                lambda failure=failure, prompt=prompt, rejected=rejected, evidence=evidence: make_pair(
                    self.name,
                    prompt=prompt,
                    chosen=chosen,
                    rejected=rejected,
                    source=source_for(failure, None),
                    reason=FailureMode.task_failure,
                    evidence=evidence,
                    scores={"chosen_turns": float(turns), "rejected_turns": float(len(failure.steps)), "expert": 1.0},
                    tools=tools_at(failure, 0),
                )
            )

    def _divergence_pair(self, success: Trajectory, failure: Trajectory) -> Iterator[Pair]:
        index = next(
            (
                i
                for i, (good, bad) in enumerate(zip(success.steps, failure.steps, strict=False))
                if good.raw_output != bad.raw_output
            ),
            None,
        )
        if index is None:
            self.stats.skip("no_divergence")
            return
        good, bad = success.steps[index], failure.steps[index]
        if same_action(good.action, bad.action):
            self.stats.skip("divergence_same_action")
            return
        prompt = prompt_messages(success, index)
        if messages_payload(prompt) != messages_payload(prompt_messages(failure, index)):
            self.stats.skip("prompt_mismatch")
            return
        label = primary_label(bad.labels)
        yield from self.emit(
            lambda: make_pair(
                self.name,
                prompt=prompt,
                chosen=[assistant_turn(good)],
                rejected=[assistant_turn(bad)],
                source=source_for(failure, index, chosen_trajectory_id=success.id),
                reason=label.mode if label else FailureMode.task_failure,
                evidence=label.evidence if label else f"first divergence from a successful episode at step {index}",
                tools=tools_at(failure, index),
            )
        )
