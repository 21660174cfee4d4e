"""The rollout engine: many (environment x teacher) episodes in flight, every finished one on disk.

Why it is built this way:

* Episodes are independent coroutines bounded by a semaphore, so a vLLM server sees many
  requests at once (it batches them) while one slow episode never blocks the others.
* Finished episodes are written **in episode order** through a bounded reorder window: the
  same recipe with a deterministic teacher gives byte-identical files, and memory stays
  flat because at most ``window`` finished episodes wait for an earlier one.
* Each trajectory is appended and flushed before it is counted; a killed run loses only
  the episodes in flight, and re-running the same recipe into the same directory skips
  every episode already on disk (episode ids derive from the recipe's generation hash,
  the task id and the sample index).
* A teacher or env failure ends that episode with stop reason ``error`` and the error
  text — it is written, never dropped and never padded with a placeholder.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import hashlib
import inspect
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from prefbuild.envs import Env, EnvTask, Protocol, get_env, get_protocol
from prefbuild.errors import PrefbuildError
from prefbuild.recipe import EnvConfig, Recipe
from prefbuild.records import (
    EnvInfo,
    Message,
    Outcome,
    Role,
    Step,
    StepFacts,
    StopReason,
    TeacherInfo,
    Trajectory,
    Usage,
    UsageTotals,
)
from prefbuild.teachers.base import EnvView, Sampling, Teacher, TeacherError, TeacherRequest
from prefbuild.teachers.config import build_sampling


@dataclass(frozen=True)
class Episode:
    """One planned episode: a task, which sample of it, and its stable id."""

    id: str
    task: EnvTask
    sample_index: int
    task_position: int
    env: EnvConfig


@dataclass(frozen=True)
class Shard:
    """``k/n``: this process runs tasks whose position modulo ``n`` equals ``k`` (0-based k)."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        try:
            index_text, count_text = text.split("/")
            index, count = int(index_text), int(count_text)
        except ValueError:
            raise PrefbuildError(f"--shard {text!r}: expected K/N, e.g. 0/4") from None
        if count < 1 or not 0 <= index < count:
            raise PrefbuildError(f"--shard {text!r}: need N >= 1 and 0 <= K < N")
        return cls(index, count)

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    @property
    def file_name(self) -> str:
        return f"shard-{self.index:03d}-of-{self.count:03d}.jsonl"


def episode_id(generation_hash: str, task_id: str, sample_index: int) -> str:
    """Stable id of one episode; the same recipe always plans the same ids."""
    payload = f"{generation_hash}\x1f{task_id}\x1f{sample_index}".encode()
    return hashlib.sha256(payload).hexdigest()[:20]


def make_env(env_config: EnvConfig) -> Env:
    """A fresh env instance for one episode, from one env section of the recipe."""
    env_class = get_env(env_config.name)
    options = dict(env_config.options)
    if env_config.dialect is not None:
        options["dialect"] = env_config.dialect
    try:
        return env_class(**options)
    except (TypeError, ValueError) as error:
        raise PrefbuildError(f"env {env_config.name!r} rejected its options {sorted(options)}: {error}") from None


def plan_episodes(recipe: Recipe, shard: Shard | None = None, limit: int | None = None) -> list[Episode]:
    """Every episode the recipe asks for (optionally one shard's slice), in a fixed order.

    A recipe with several env sections plans them one after the other; task positions run on
    across sections, so ``--shard`` slices the whole run evenly.
    """
    generation = recipe.generation_hash()
    episodes = []
    position = 0
    for env_config in recipe.envs:
        env = make_env(env_config)
        try:
            tasks = list(env.tasks(env_config.split, env_config.num_tasks, recipe.seed, env_config.task_types))
        except (ValueError, KeyError) as error:
            raise PrefbuildError(f"env {env_config.name!r}: cannot make tasks: {error}") from None
        for task in tasks:
            if shard is None or position % shard.count == shard.index:
                for sample in range(env_config.samples_per_task):
                    identity = episode_id(generation, task.info.id, sample)
                    episodes.append(Episode(identity, task, sample, position, env_config))
            position += 1
    return episodes[:limit] if limit is not None else episodes


def make_protocol(env_config: EnvConfig) -> Protocol:
    """The env section's protocol, given the env dialect when the protocol takes one (few-shot text differs)."""
    options = dict(env_config.protocol_options)
    env_class = get_env(env_config.name)
    protocol_class = env_class.protocols.get(env_config.protocol)
    if protocol_class is None:
        known = ", ".join(sorted(env_class.protocols)) or "none"
        raise PrefbuildError(f"env {env_config.name!r} has no protocol {env_config.protocol!r}; known: {known}")
    if env_config.dialect is not None and "dialect" in inspect.signature(protocol_class).parameters:
        options.setdefault("dialect", env_config.dialect)
    try:
        return get_protocol(env_config.name, env_config.protocol, **options)
    except TypeError as error:
        message = f"protocol {env_config.protocol!r} rejected its options {sorted(options)}: {error}"
        raise PrefbuildError(message) from None


def sampling_from_recipe(recipe: Recipe) -> Sampling:
    """The per-request sampling of an episode turn: the recipe's, with one completion per turn."""
    return dataclasses.replace(build_sampling(recipe.teacher.sampling), n=1)


@dataclass
class EpisodeRunner:
    """Plays single episodes of one recipe against one teacher."""

    recipe: Recipe
    teacher: Teacher
    protocols: dict[int, Protocol] = field(default_factory=dict)

    def protocol_for(self, env_config: EnvConfig) -> Protocol:
        """One protocol instance per env section (few-shot examples are built once)."""
        key = id(env_config)
        if key not in self.protocols:
            self.protocols[key] = make_protocol(env_config)
        return self.protocols[key]

    async def run(self, episode: Episode) -> Trajectory:
        recipe = self.recipe
        env = make_env(episode.env)
        task = episode.task
        protocol = self.protocol_for(episode.env)
        sampling = sampling_from_recipe(recipe)
        if sampling.seed is not None:
            # Different samples of one task must differ, and stay reproducible.
            sampling = dataclasses.replace(sampling, seed=sampling.seed + episode.sample_index)
        usage = UsageTotals()
        steps: list[Step] = []
        outputs: list[str] = []
        outcome: Outcome | None = None
        try:
            observation, _ = env.reset(task)
            prefix = protocol.prefix_messages(task)
            admissible = env.admissible_actions()
            turn = protocol.observation_turn(observation, first=True, task=task, admissible=admissible)
        except Exception as error:  # an env that cannot start this task is recorded, not fatal
            return self._trajectory(episode, [], [], _error_outcome(f"env reset failed: {error!r}"), usage)
        role = Role(protocol.turn_role(first=True))
        history: list[Message] = [*prefix, Message(role=role, content=turn)]
        tools = protocol.tools()
        for index in range(episode.env.max_steps):
            expert = _safe(env.expert_action)
            view = (
                EnvView(env=env, protocol=protocol, step_index=index, previous_outputs=tuple(outputs),
                        seed=recipe.seed, episode_id=episode.id)
                if self.teacher.reads_env_state
                else None
            )
            request = TeacherRequest(messages=list(history), sampling=sampling, tools=tools, env_view=view)
            try:
                completion = (await self.teacher.complete(request))[0]
            except TeacherError as error:
                outcome = _error_outcome(f"teacher error: {error}")
                break
            except Exception as error:  # a backend bug must not take the whole run down
                outcome = _error_outcome(f"teacher error: {error!r}")
                break
            step_usage = Usage(prompt_tokens=completion.prompt_tokens, completion_tokens=completion.completion_tokens)
            usage.add(step_usage)
            text = completion.text
            outputs.append(text)
            parsed = protocol.parse(text)
            info: dict[str, Any] = {}
            facts = StepFacts(
                finish_reason=completion.finish_reason,
                simulated=completion.simulated,
                problems=list(parsed.problems),
                final=parsed.final,
            )
            reward, done, valid, won = 0.0, False, False, False
            stop_episode: StopReason | None = None
            if parsed.action is None:
                reply = protocol.unparsed_reply(parsed)
                if reply is None:
                    feedback = ""
                    stop_episode = StopReason.protocol_stop
                    facts.stop = "no action in the output"
                else:
                    feedback = reply
            else:
                executed = protocol.executed_action(parsed.action, admissible)
                if executed != parsed.action:
                    facts.executed_action = executed
                try:
                    result = await asyncio.to_thread(env.step, executed)
                except Exception as error:
                    outcome = _error_outcome(f"env step failed on {executed!r}: {error!r}")
                    break
                feedback, reward, done = result.observation, result.reward, result.done
                valid = bool(result.valid) if result.valid is not None else True
                won = result.won
                info.update(result.info)
                if result.facts is not None:
                    facts = _merge_facts(facts, result.facts)
            history_form = protocol.history_turn(turn)
            steps.append(
                Step(
                    index=index,
                    observation=turn,
                    observation_role=role.value,
                    observation_in_history=None if history_form == turn else history_form,
                    raw_output=text,
                    thought=parsed.thought,
                    action=parsed.action,
                    format_ok=parsed.format_ok,
                    normalized=list(parsed.normalized),
                    valid=valid if parsed.action is not None else False,
                    expert_action=expert,
                    feedback=feedback,
                    reward=reward,
                    done=done,
                    usage=step_usage,
                    latency_s=completion.latency_s,
                    facts=facts,
                    info=info,
                )
            )
            if won:
                outcome = Outcome(success=True, reward=reward, progress=1.0, stop_reason=StopReason.success)
                break
            if stop_episode is not None:
                break
            if parsed.final or done:
                stop_episode = StopReason.agent_finished
                break
            rule = protocol.stop_reason(outputs)
            if rule is not None:
                stop_episode = StopReason.protocol_stop
                steps[-1].facts.stop = rule
                break
            admissible = env.admissible_actions()
            next_turn = protocol.observation_turn(feedback, first=False, task=task, admissible=admissible)
            history[-1] = Message(role=role, content=history_form)
            history.append(Message(role=Role.assistant, content=text))
            role = Role(protocol.turn_role(unparsed_reply=parsed.action is None))
            history.append(Message(role=role, content=next_turn))
            turn = next_turn
        else:
            stop_episode = StopReason.max_steps
        if outcome is None:
            outcome = Outcome(
                success=False,
                reward=steps[-1].reward if steps else 0.0,
                progress=_safe(env.progress),
                stop_reason=stop_episode or StopReason.max_steps,
            )
        elif outcome.stop_reason is StopReason.error and outcome.progress is None:
            outcome = outcome.model_copy(update={"progress": _safe(env.progress)})
        return self._trajectory(episode, prefix, steps, outcome, usage)

    def _trajectory(
        self, episode: Episode, prefix: Sequence[Message], steps: list[Step], outcome: Outcome, usage: UsageTotals
    ) -> Trajectory:
        recipe = self.recipe
        return Trajectory(
            id=episode.id,
            task=episode.task.info,
            env=EnvInfo(name=episode.env.name, dialect=episode.env.dialect, protocol=episode.env.protocol),
            teacher=TeacherInfo(
                backend=recipe.teacher.backend,
                model=self.teacher.model or recipe.teacher.model,
                sampling=recipe.teacher.sampling.model_dump(mode="json", exclude_none=True),
            ),
            sample_index=episode.sample_index,
            messages=list(prefix),
            steps=steps,
            outcome=outcome,
            usage=usage,
        )


def _merge_facts(parsed: StepFacts, from_env: StepFacts) -> StepFacts:
    """The env's facts, with what the parser and the protocol found (a turn is final when
    either says so; the executed command is the protocol's when the env did not name one)."""
    return from_env.model_copy(
        update={
            "finish_reason": parsed.finish_reason,
            "simulated": parsed.simulated,
            "problems": [*parsed.problems, *from_env.problems],
            "final": parsed.final or from_env.final,
            "executed_action": from_env.executed_action or parsed.executed_action,
        }
    )


def _error_outcome(text: str) -> Outcome:
    return Outcome(success=False, stop_reason=StopReason.error, error=text[:2000])


def _safe(function: Callable[[], Any]) -> Any:
    """Call an optional env hook; a failing oracle must not end the episode."""
    try:
        value = function()
    except Exception:
        return None
    if isinstance(value, float):
        return min(1.0, max(0.0, value))
    return value


@dataclass
class RolloutStats:
    """Live counters for the progress display and the final summary."""

    total: int = 0
    skipped: int = 0
    done: int = 0
    success: int = 0
    errors: int = 0
    steps: int = 0
    usage: UsageTotals = field(default_factory=UsageTotals)
    stop_reasons: collections.Counter[str] = field(default_factory=collections.Counter)
    by_task_type: dict[str, list[int]] = field(default_factory=dict)  # type -> [episodes, successes]
    first_error: str | None = None
    started: float = field(default_factory=time.monotonic)

    def add(self, trajectory: Trajectory) -> None:
        self.done += 1
        self.steps += len(trajectory.steps)
        self.success += int(trajectory.outcome.success)
        self.stop_reasons[trajectory.outcome.stop_reason.value] += 1
        if trajectory.outcome.stop_reason is StopReason.error:
            self.errors += 1
            self.first_error = self.first_error or trajectory.outcome.error
        self.usage.requests += trajectory.usage.requests
        self.usage.prompt_tokens += trajectory.usage.prompt_tokens
        self.usage.completion_tokens += trajectory.usage.completion_tokens
        counts = self.by_task_type.setdefault(trajectory.task.type, [0, 0])
        counts[0] += 1
        counts[1] += int(trajectory.outcome.success)

    @property
    def elapsed(self) -> float:
        return max(time.monotonic() - self.started, 1e-9)


async def rollout(
    episodes: Sequence[Episode],
    runner: EpisodeRunner,
    *,
    concurrency: int,
    window: int | None = None,
) -> AsyncIterator[Trajectory]:
    """Run ``episodes`` with at most ``concurrency`` in flight; yield trajectories in episode order.

    At most ``window`` episodes are started ahead of the oldest unfinished one, which bounds
    the memory held by finished episodes waiting for their turn.
    """
    window = window or max(4 * concurrency, 8)
    semaphore = asyncio.Semaphore(concurrency)

    async def guarded(episode: Episode) -> Trajectory:
        async with semaphore:
            return await runner.run(episode)

    pending: collections.deque[asyncio.Task[Trajectory]] = collections.deque()
    queue: Iterator[Episode] = iter(episodes)
    try:
        for episode in queue:
            pending.append(asyncio.ensure_future(guarded(episode)))
            if len(pending) >= window:
                yield await pending.popleft()
        while pending:
            yield await pending.popleft()
    finally:
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
