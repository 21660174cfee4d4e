"""One episode: the teacher plays one task of an env through the env's protocol.

The loop keeps the exact prompt the model saw (history turns as the protocol shortens
them), records every step with typed facts, and ends with an outcome. ``env.step`` runs in
a worker thread, so a slow SQL statement or a code sandbox never stalls the other episodes
in flight (an env that declares ``fast_step``, an in-memory state machine, is stepped
inline). A teacher or env failure ends the episode with stop reason ``error`` and the error
text: it is written, never dropped.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from prefbuild.envs import Protocol, make_protocol
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
    assistant_turn,
)
from prefbuild.rollout.plan import Episode, env_for
from prefbuild.rollout.tools import request_tools, turn_calls, updated_tools
from prefbuild.secrets import mask as redact
from prefbuild.teachers.base import ContextLimitError, EnvView, Sampling, Teacher, TeacherError, TeacherRequest
from prefbuild.teachers.config import build_sampling
from prefbuild.tooluse.hermes import render_tool_turn

log = logging.getLogger(__name__)


def sampling_from_recipe(recipe: Recipe) -> Sampling:
    """The per-request sampling of an episode turn: the recipe's, with one completion per turn."""
    return dataclasses.replace(build_sampling(recipe.teacher.sampling), n=1)


def protocol_for_section(env_config: EnvConfig) -> Protocol:
    """The protocol of an env section, with the section's dialect and protocol options."""
    return make_protocol(
        env_config.name, env_config.protocol, dialect=env_config.dialect, options=env_config.protocol_options
    )


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
            self.protocols[key] = protocol_for_section(env_config)
        return self.protocols[key]

    async def run(self, episode: Episode) -> Trajectory:
        recipe = self.recipe
        env = env_for(episode.env)
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
            observation, reset_info = env.reset(task)
            prefix = protocol.prefix_messages(task)
            admissible = env.admissible_actions()
            turn = protocol.observation_turn(observation, first=True, task=task, admissible=admissible)
            tools = request_tools(protocol, task, reset_info or {})
        except Exception as error:
            # handled: boundary: an env that cannot start this task is recorded as an error outcome, not fatal
            return self._trajectory(episode, [], [], _error_outcome(f"env reset failed: {error!r}"), usage, None)
        role = Role(protocol.turn_role(first=True))
        history: list[Message] = [*prefix, Message(role=role, content=turn)]
        # The env's reply as several messages (tool results, a user turn), shown before the next turn.
        turn_messages: list[Message] | None = None
        # An env that states the benchmark's own turn budget (DBBench: operations + the answer
        # turn, after which the table is always graded) gets at least that many steps.
        budget = max(episode.env.max_steps, int(getattr(env, "step_budget", 0) or 0))
        # Envs written against an older base class may lack the hook; their steps record None.
        searcher_hook = getattr(env, "searcher_action", None)
        stop_episode: StopReason | None = None
        offered: list[list[dict[str, Any]] | None] = []  # the tools of each step's request
        for index in range(budget):
            expert = _optional(env.expert_action, episode, "expert_action")
            searcher = _optional(searcher_hook, episode, "searcher_action") if searcher_hook else None
            view = (
                EnvView(env=env, protocol=protocol, step_index=index, previous_outputs=tuple(outputs),
                        seed=recipe.seed, episode_id=episode.id)
                if self.teacher.reads_env_state
                else None
            )
            request = TeacherRequest(messages=list(history), sampling=sampling, tools=tools, env_view=view)
            offered.append(tools)
            try:
                completion = (await self.teacher.complete(request))[0]
            except ContextLimitError as error:
                if not steps:
                    # not even the first request fits (a too small --max-model-len, a max_tokens larger
                    # than the window): a configuration error that must fail the run and be retried
                    outcome = _error_outcome(f"teacher error: {error}")
                    break
                # the episode ends as AgentBench ends it: a failure with every step played, not an error
                log.info("episode %s: %s", episode.id, error)
                stop_episode = StopReason.context_limit
                break
            except TeacherError as error:
                outcome = _error_outcome(f"teacher error: {error}")
                break
            except Exception as error:
                # handled: boundary: a backend bug is recorded as an error outcome and must not take the whole run down
                outcome = _error_outcome(f"teacher error: {error!r}")
                break
            step_usage = Usage(prompt_tokens=completion.prompt_tokens, completion_tokens=completion.completion_tokens)
            usage.add(step_usage)
            text = completion.text
            structured = () if completion.calls_in_text else completion.tool_calls
            # Stop rules over raw outputs (three identical turns) see structured calls as their text.
            outputs.append(render_tool_turn(list(structured), content=text or None) if structured else text)
            parsed = protocol.parse_completion(text, structured)
            calls, native = turn_calls(protocol, parsed, structured)
            result_messages: list[Message] | None = None
            info: dict[str, Any] = {}
            facts = StepFacts(
                finish_reason=completion.finish_reason,
                simulated=completion.simulated,
                problems=list(parsed.problems),
                final=parsed.final,
            )
            reward, done, valid, won, truncated = 0.0, False, False, False, False
            stop_episode = None
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
                    result = env.step(executed) if env.fast_step else await asyncio.to_thread(env.step, executed)
                except Exception as error:
                    # handled: boundary: a failing env step is an error outcome; it must not take the run down
                    outcome = _error_outcome(f"env step failed on {executed!r}: {error!r}")
                    break
                feedback, reward, done, truncated = result.observation, result.reward, result.done, result.truncated
                valid = bool(result.valid) if result.valid is not None else True
                won = result.won
                info.update(result.info)
                result_messages = result.messages
                tools = updated_tools(tools, result.info)
                if result.facts is not None:
                    facts = _merge_facts(facts, result.facts)
            history_form = protocol.history_turn(turn)
            steps.append(
                Step(
                    index=index,
                    observation=turn,
                    observation_role=role.value,
                    observation_in_history=None if history_form == turn or turn_messages else history_form,
                    observation_messages=turn_messages,
                    raw_output=text,
                    tool_calls=calls,
                    native_tool_calls=native,
                    thought=parsed.thought,
                    action=parsed.action,
                    format_ok=parsed.format_ok,
                    normalized=list(parsed.normalized),
                    valid=valid if parsed.action is not None else False,
                    expert_action=expert,
                    searcher_action=searcher,
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
                stop_episode = StopReason.max_steps if truncated and not parsed.final else StopReason.agent_finished
                break
            rule = protocol.stop_reason(outputs)
            if rule is not None:
                stop_episode = StopReason.protocol_stop
                steps[-1].facts.stop = rule
                break
            admissible = env.admissible_actions()
            next_turn = protocol.observation_turn(feedback, first=False, task=task, admissible=admissible)
            if turn_messages is None:
                history[-1] = Message(role=role, content=history_form)
            history.append(assistant_turn(steps[-1]))
            if result_messages:
                turn_messages = list(result_messages)
                role = Role(turn_messages[0].role.value if turn_messages[0].role.value in ("user", "tool") else "user")
                history.extend(turn_messages)
            else:
                turn_messages = None
                role = Role(protocol.turn_role(unparsed_reply=parsed.action is None))
                history.append(Message(role=role, content=next_turn))
            turn = next_turn
        else:
            stop_episode = StopReason.max_steps
        if outcome is None:
            outcome = Outcome(
                success=False,
                reward=steps[-1].reward if steps else 0.0,
                progress=_optional(env.progress, episode, "progress"),
                stop_reason=stop_episode or StopReason.max_steps,
            )
        elif outcome.stop_reason is StopReason.error and outcome.progress is None:
            outcome = outcome.model_copy(update={"progress": _optional(env.progress, episode, "progress")})
        for step, step_tools in zip(steps, offered, strict=False):
            if step_tools is not None and step_tools != tools:
                step.offered_tools = step_tools
        return self._trajectory(episode, prefix, steps, outcome, usage, tools)

    def _recorded_options(self, episode: Episode) -> dict[str, Any]:
        """The env options as recorded: ``${VAR}`` placeholders, not resolved secrets."""
        for index, section in enumerate(self.recipe.envs):
            if section is episode.env:
                return dict(self.recipe.recorded("env", index, "options"))
        return dict(episode.env.options)

    def _trajectory(
        self,
        episode: Episode,
        prefix: Sequence[Message],
        steps: list[Step],
        outcome: Outcome,
        usage: UsageTotals,
        tools: list[dict[str, Any]] | None,
    ) -> Trajectory:
        recipe = self.recipe
        return Trajectory(
            id=episode.id,
            task=episode.task.info,
            env=EnvInfo(
                name=episode.env.name,
                dialect=episode.env.dialect,
                protocol=episode.env.protocol,
                options=self._recorded_options(episode),
            ),
            teacher=TeacherInfo(
                backend=recipe.teacher.backend,
                model=self.teacher.model or recipe.teacher.model,
                sampling=recipe.recorded("teacher", "sampling"),  # ${VAR} placeholders, never their values
            ),
            sample_index=episode.sample_index,
            messages=list(prefix),
            tools=tools,
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
    return Outcome(success=False, stop_reason=StopReason.error, error=redact(text)[:2000])


def _optional(function: Callable[[], Any], episode: Episode, hook: str) -> Any:
    """Call an optional env hook (oracle, progress). A failing hook must not end the episode:
    it is logged with the episode and the hook, and its value is unknown (None)."""
    try:
        value = function()
    except Exception as error:  # handled: boundary: an optional hook may fail in any way; logged, its value unknown
        log.warning("episode %s: env %s() failed: %r; recorded as unknown", episode.id, hook, error)
        return None
    if isinstance(value, float):
        return min(1.0, max(0.0, value))
    return value


