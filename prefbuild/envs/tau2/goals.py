"""What a tau2 task asks for, checked step by step: progress and the expert's next action.

Progress is the fraction of the task's checkable goals met so far, each checked with tau2's
own code: expected actions matched by a call that ran without error (``Action.compare_with_tool_call``),
information communicated (``CommunicateEvaluator.evaluate_communicate_info``), environment
assertions that hold on the live environment (``Environment.run_env_assertion``) and, when
the task's reward counts the database, whether the live database already equals the gold one
(the package's initial state with the expected actions applied, as tau2's evaluator builds it).

The expert walks the expected actions in order (``evaluation_criteria.actions``): an
assistant action is a tool call with the listed arguments; a user action (telecom device
steps) is a message asking the user to perform it, in call syntax; once every action is
done, a closing message carries the information the task requires to be communicated.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from typing import Any

from prefbuild.envs.tau2.package import find_task, new_environment, tau2_modules
from prefbuild.records import FunctionCall, ToolCall
from prefbuild.tooluse.actions import encode_action

CLOSING = "Everything you asked for is taken care of. Thank you for contacting us."


def initial_state(task: Any) -> tuple[Any, Any, list[Any]]:
    """(initialization_data, initialization_actions, message_history) of a task."""
    state = task.initial_state
    if state is None:
        return None, None, []
    return state.initialization_data, state.initialization_actions, list(state.message_history or [])


@cache
def gold_hashes(domain: str, task_id: str) -> tuple[str | None, str | None]:
    """(agent DB hash, user DB hash) after the expected actions, built as tau2's evaluator does.

    Cached per task: it depends on the package's data only (an airline database load and hash
    take about a second, and pass@k plays each task k times).
    """
    task = find_task(domain, task_id)
    data, actions, history = initial_state(task)
    gold = new_environment(domain)
    gold.set_state(initialization_data=data, initialization_actions=actions, message_history=history)
    for action in (task.evaluation_criteria.actions if task.evaluation_criteria else None) or []:
        try:
            gold.make_tool_call(tool_name=action.name, requestor=action.requestor, **action.arguments)
        except Exception:
            # handled: boundary: tau2's evaluator logs and skips a failing golden action too
            continue
    return gold.get_db_hash(), gold.get_user_db_hash()


def calls_with_results(trajectory: Sequence[Any]) -> list[tuple[Any, bool]]:
    """Every tool call of the conversation (agent's and user's) with whether it ran without error.

    Results follow their calls in order, as tau2's ``Environment.set_state`` pairs them.
    """
    calls: list[tuple[Any, bool]] = []
    pending: list[Any] = []
    for message in trajectory:
        if message.role == "tool":
            if pending:
                calls.append((pending.pop(0), not getattr(message, "error", False)))
        elif message.role in ("assistant", "user") and getattr(message, "tool_calls", None):
            pending = list(message.tool_calls)
    return calls


def successful_calls(trajectory: Sequence[Any]) -> list[Any]:
    """The calls of ``calls_with_results`` that ran without error."""
    return [call for call, ok in calls_with_results(trajectory) if ok]


def counts_db(task: Any) -> bool:
    """The task's reward compares databases (``DB`` in its reward basis)."""
    criteria = task.evaluation_criteria
    return criteria is not None and tau2_modules().tasks.RewardType.DB in criteria.reward_basis


def progress(task: Any, trajectory: Sequence[Any], environment: Any, db_match: bool | None) -> float | None:
    """Fraction of the task's goals met after ``trajectory`` (None when the task lists none).

    Args:
        task: the tau2 task.
        trajectory: the tau2 messages so far.
        environment: the live tau2 environment (its assertions are run).
        db_match: whether the live databases equal the gold ones (``gold_hashes``); None when
            the task's reward does not count the database.

    Returns:
        A number in [0, 1], or None.
    """
    criteria = task.evaluation_criteria
    if criteria is None:
        return None
    from tau2.evaluator.evaluator_communicate import CommunicateEvaluator

    met: list[bool] = []
    if criteria.actions:
        done = successful_calls(trajectory)
        met += [any(action.compare_with_tool_call(call) for call in done) for action in criteria.actions]
    if criteria.communicate_info:
        checks = CommunicateEvaluator.evaluate_communicate_info(list(trajectory), criteria.communicate_info)
        met += [check.met for check in checks]
    for assertion in criteria.env_assertions or []:
        try:
            met.append(bool(environment.run_env_assertion(assertion, raise_assertion_error=False)))
        except Exception:  # handled: boundary: an env assertion that raises on this state is not met
            met.append(False)
    if db_match is not None:
        met.append(db_match)
    return sum(met) / len(met) if met else None


def has_expert(task: Any) -> bool:
    """The task lists its expected actions (an empty list counts: the expert then only answers)."""
    return task.evaluation_criteria is not None and task.evaluation_criteria.actions is not None


def actions_done(task: Any, trajectory: Sequence[Any]) -> int:
    """How many expected actions, in order, the calls so far cover (a subsequence match of
    successful calls, plus the exact expected call even where the package itself fails it)."""
    expected = task.evaluation_criteria.actions or []
    done = 0
    for call, ok in calls_with_results(trajectory):
        if done >= len(expected):
            break
        action = expected[done]
        # A failed call does not do the action, except the expected call itself: some golden
        # actions fail in the package too (tau2's evaluator skips them), and retrying cannot help.
        exact = call.name == action.name and call.arguments == action.arguments
        if (ok and action.compare_with_tool_call(call)) or exact:
            done += 1
    return done


def call_syntax(name: str, arguments: dict[str, Any]) -> str:
    """``name(key='value', n=3)``: a device action written so ``users.requested_calls`` reads it back."""
    return f"{name}({', '.join(f'{key}={value!r}' for key, value in arguments.items())})"


def expert_action(task: Any, trajectory: Sequence[Any]) -> str | None:
    """The expert's next action (a tool-action JSON string), or None when the task has no expert."""
    if not has_expert(task):
        return None
    expected = task.evaluation_criteria.actions or []
    done = actions_done(task, trajectory)
    if done < len(expected):
        action = expected[done]
        if action.requestor == "assistant":
            function = FunctionCall(name=action.name, arguments=json.dumps(action.arguments))
            call = ToolCall(id=f"expert_{done}", function=function)
            return encode_action(calls=[call])
        return encode_action(message=f"Please do this on your phone now: {call_syntax(action.name, action.arguments)}")
    facts = [info.strip().rstrip(".") + "." for info in task.evaluation_criteria.communicate_info or []]
    return encode_action(message=" ".join([*facts, CLOSING]))
