"""``best_of_n``: n teacher samples at one state, ranked by what they achieve in the env.

At ``states_per_trajectory`` steps of each episode (picked by a seeded hash, so the choice is
reproducible), the env is replayed to that state and the teacher is asked once with
``n`` samples on exactly the prompt the model saw there. Each distinct sample is parsed
with the trajectory's protocol and tried from a snapshot of the state:

- a turn without an action, or a completion claim that does not win, scores ``FAIL_SCORE``;
- otherwise the score is minus the oracle steps still needed after the action
  (``expert_steps_remaining()``, 0 once won), minus ``invalid_penalty`` if the env rejected it.

The best and worst samples form a pair when their scores differ by at least ``min_margin``.
Envs without ``expert_steps_remaining`` rank by ``progress()`` (scaled to [0, 100]).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from prefbuild.envs import Env, Protocol
from prefbuild.pairs.base import PairStrategy
from prefbuild.pairs.common import canonical_json, digest, make_pair, source_for, trajectory_protocol
from prefbuild.pairs.replay import ReplayError, replay
from prefbuild.pairs.teacher_bridge import TeacherRunner, env_view
from prefbuild.records import FailureMode, Message, Pair, Role, ToolCall, Trajectory, prompt_messages, tools_at
from prefbuild.teachers.base import Completion, Sampling, TeacherError, TeacherRequest

FAIL_SCORE = -1000.0


@dataclass(frozen=True)
class Scored:
    """One distinct sample and what it did."""

    text: str
    score: float
    remaining: float | None
    failure: FailureMode | None
    well_formed: bool = True  # the protocol parsed it without problems (a fenced or broken turn is not)


def _remaining(env: Env) -> float | None:
    steps = getattr(env, "expert_steps_remaining", None)
    if callable(steps):
        return float(steps())
    progress = env.progress()
    return None if progress is None else 100.0 * (1.0 - progress)


def score_sample(
    env: Env, protocol: Protocol, text: str, invalid_penalty: float, calls: Sequence[ToolCall] = ()
) -> Scored:
    """Try ``text`` (with the server's structured ``calls``) on ``env`` (which it changes: pass a
    copy or restore afterwards)."""
    parsed = protocol.parse_completion(text, calls)
    if parsed.action is None:
        return Scored(text, FAIL_SCORE, None, FailureMode.format_violation, False)
    command = protocol.executed_action(parsed.action, env.admissible_actions())
    result = env.step(command)
    if parsed.final and not result.won:
        return Scored(text, FAIL_SCORE, None, FailureMode.premature_success)
    remaining = 0.0 if result.won else _remaining(env)
    if remaining is None:
        raise ReplayError(f"env {type(env).__name__} has neither expert_steps_remaining() nor progress()")
    valid = result.valid is not False
    score = -remaining - (0.0 if valid else invalid_penalty)
    well_formed = parsed.format_ok and not parsed.problems
    return Scored(text, score, remaining, None if valid else FailureMode.invalid_action, well_formed)


class BestOfNStrategy(PairStrategy):
    name: ClassVar[str] = "best_of_n"
    PARAMS: ClassVar[tuple[str, ...]] = (
        "n",
        "states_per_trajectory",
        "min_margin",
        "invalid_penalty",
        "sampling",
        "teacher",
        "seed",
    )

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.check_params(self.PARAMS)
        self.n = int(self.param("n", 4))
        if self.n < 2:
            raise ValueError("strategy 'best_of_n': n must be at least 2")
        self.states = int(self.param("states_per_trajectory", 2))
        self.min_margin = float(self.param("min_margin", 1.0))
        self.invalid_penalty = float(self.param("invalid_penalty", 0.5))
        self.seed = int(self.param("seed", 0))
        self.sampling = Sampling(**{"temperature": 1.0, "max_tokens": 256, **dict(self.param("sampling", {}))})
        teacher = self.param("teacher", None)
        if teacher is None:
            raise ValueError("strategy 'best_of_n' needs a teacher")
        self.runner = TeacherRunner(teacher)

    def close(self) -> None:
        self.runner.close()

    def sampled_states(self, trajectory: Trajectory) -> list[int]:
        """Up to ``states_per_trajectory`` step indices, chosen by a seeded hash of the trajectory and step."""
        indices = sorted(
            range(len(trajectory.steps)), key=lambda i: digest(str(self.seed), "best_of_n", trajectory.id, str(i))
        )
        return sorted(indices[: self.states])

    def feed(self, trajectory: Trajectory) -> Iterator[Pair]:
        if not trajectory.steps:
            return
        protocol = trajectory_protocol(trajectory)
        states, requests = [], []
        for index in self.sampled_states(trajectory):
            try:
                view = env_view(self.runner.teacher, trajectory, index, protocol=protocol, seed=self.seed)
            except ReplayError:  # handled: counted in the pair stats as skipped: replay_failed
                self.stats.skip("replay_failed")
                continue
            sampling = replace(self.sampling, n=self.n)
            states.append(index)
            requests.append(
                TeacherRequest(
                    messages=prompt_messages(trajectory, index),
                    sampling=sampling,
                    tools=tools_at(trajectory, index) if trajectory.tools is not None else protocol.tools(),
                    env_view=view,
                )
            )
        for index, answer in zip(states, self.runner.complete_many(requests), strict=True):
            if isinstance(answer, TeacherError):
                self.stats.skip("teacher_error")
                continue
            yield from self._pair_at(trajectory, index, protocol, [sample_turn(c) for c in answer])

    def _pair_at(
        self, trajectory: Trajectory, index: int, protocol: Protocol, turns: list[Message]
    ) -> Iterator[Pair]:
        by_key = {_turn_key(turn): turn for turn in reversed(turns)}
        distinct = list(dict.fromkeys(_turn_key(turn) for turn in turns))
        if len(distinct) < 2:
            self.stats.skip("samples_identical")
            return
        try:
            env = replay(trajectory, index)
        except ReplayError:  # handled: counted in the pair stats as skipped: replay_failed
            self.stats.skip("replay_failed")
            return
        scored = [self._try(env, protocol, by_key[key]) for key in distinct]
        # The chosen turn must itself be well-formed: a fenced or broken turn is a format violation.
        eligible = [s for s in scored if s.well_formed]
        if not eligible:
            self.stats.skip("no_well_formed_sample")
            return
        best = max(eligible, key=lambda s: s.score)  # first of equals wins: deterministic
        worst = min(scored, key=lambda s: s.score)
        margin = best.score - worst.score
        if margin < self.min_margin:
            self.stats.skip("margin_too_small")
            return
        scores = {"chosen_score": best.score, "rejected_score": worst.score, "margin": margin}
        evidence = f"best of {len(turns)} samples scored {best.score:g}, worst {worst.score:g} (margin {margin:g})"
        yield from self.emit(
            lambda: make_pair(
                self.name,
                prompt=prompt_messages(trajectory, index),
                chosen=[by_key[best.text]],
                rejected=[by_key[worst.text]],
                source=source_for(trajectory, index),
                reason=worst.failure,
                evidence=evidence,
                scores=scores,
                tools=tools_at(trajectory, index),
            )
        )

    def _try(self, env: Env, protocol: Protocol, turn: Message) -> Scored:
        key, calls = _turn_key(turn), turn.tool_calls or []
        save = getattr(env, "snapshot", None)
        load = getattr(env, "restore", None)
        if callable(save) and callable(load):
            state = save()
            try:
                return replace(score_sample(env, protocol, turn.content, self.invalid_penalty, calls), text=key)
            finally:
                load(state)
        return replace(score_sample(copy.deepcopy(env), protocol, turn.content, self.invalid_penalty, calls), text=key)


def sample_turn(completion: Completion) -> Message:
    """A sampled completion as the assistant turn it would be in history (structured calls kept,
    Hermes calls left in the text)."""
    calls = None if completion.calls_in_text or not completion.tool_calls else list(completion.tool_calls)
    return Message(role=Role.assistant, content=completion.text, tool_calls=calls)


def _turn_key(turn: Message) -> str:
    """Identity of a sampled turn: its text and structured calls."""
    calls = [call.function.model_dump() for call in turn.tool_calls or []]
    return turn.content if not calls else canonical_json({"content": turn.content, "calls": calls})
