"""The customer side of a tau2 conversation: an LLM user simulator or a deterministic script.

Both answer the same call, ``next_message(incoming)``: ``incoming`` is what reached the user
since its last turn (the agent's text message, or the results of the user's own device tool
calls), the return value is a tau2 ``UserMessage`` (text, or device tool calls in telecom).
Stop tokens are tau2's (``###STOP###``, ``###TRANSFER###``, ``###OUT-OF-SCOPE###``).

``LlmUser`` is tau2's ``UserSimulator`` (its guidelines, scenario prompt and role flipping)
with the model call made through httpx to an OpenAI-compatible server. ``ScriptedUser`` is
deterministic, for tests and simulations: it opens with the scenario's reason for calling
and known information, performs device actions the agent names in call syntax
(``toggle_airplane_mode()``), answers a question with a confirmation, and ends the
conversation when the agent makes a statement that asks nothing of it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from typing import Any, Protocol

from prefbuild.envs.tau2.convert import to_openai, tool_calls_from_openai
from prefbuild.envs.tau2.llm import ChatModelConfig, chat
from prefbuild.envs.tau2.package import tau2_modules

CONFIRMATION = "Yes, please go ahead."
MAX_SCRIPTED_TURNS = 30


class SimulatedUser(Protocol):
    def next_message(self, incoming: Sequence[Any]) -> Any:
        """The user's next tau2 ``UserMessage`` after ``incoming`` messages."""


def is_stop(message: Any) -> bool:
    """tau2's ``UserSimulator.is_stop``: a text turn holding a stop, transfer or out-of-scope token."""
    return bool(tau2_modules().user_simulator.UserSimulator.is_stop(message))


class LlmUser:
    """tau2's user simulator, asking an OpenAI-compatible model.

    Args:
        config: the ``user:`` section of the env options.
        scenario: ``str(task.user_scenario)``, as tau2's runner passes it.
        tools: the user's device tools (telecom) as OpenAI definitions, or None.
        history: the task's message history already behind the user (tau2 keeps the user's
            own view of it: its turns, the agent's text turns, its device results).
    """

    def __init__(
        self,
        config: ChatModelConfig,
        scenario: str,
        tools: list[dict[str, Any]] | None,
        history: Sequence[Any] = (),
    ) -> None:
        modules = tau2_modules()
        simulator = modules.user_simulator
        guidelines = simulator.get_global_user_sim_guidelines(use_tools=tools is not None)
        system = simulator.SYSTEM_PROMPT.format(global_user_sim_guidelines=guidelines, instructions=scenario)
        self.config = config
        self.tools = tools
        self.state = modules.user.UserState(
            system_messages=[modules.messages.SystemMessage(role="system", content=system)],
            messages=[message for message in history if modules.user.is_valid_user_history_message(message)],
        )
        self._turns = 0

    def next_message(self, incoming: Sequence[Any]) -> Any:
        self.state.messages.extend(incoming)
        messages = [to_openai(message) for message in self.state.system_messages + self.state.flip_roles()]
        reply = chat(self.config, messages, self.tools)
        self._turns += 1
        calls = tool_calls_from_openai(reply.get("tool_calls"), "user", f"user_{self._turns}_")
        message = tau2_modules().messages.UserMessage(
            role="user", content=reply.get("content") or None, tool_calls=calls or None
        )
        if not calls and not message.has_text_content():
            message.content = tau2_modules().user.OUT_OF_SCOPE  # an empty user turn cannot continue the talk
        self.state.messages.append(message)
        return message


_CALL = re.compile(r"\b([a-z_][a-z0-9_]*)\s*\(")


def requested_calls(text: str, tool_names: Sequence[str]) -> list[tuple[str, dict[str, Any]]]:
    """Device actions an agent message asks for, written in call syntax with literal arguments.

    Only names of the user's tools count; arguments must be Python literals (``ast``), never
    evaluated code. Example: ``"Please run toggle_airplane_mode() now"`` ->
    ``[("toggle_airplane_mode", {})]``.
    """
    found: list[tuple[str, dict[str, Any]]] = []
    for match in _CALL.finditer(text):
        name = match.group(1)
        if name not in tool_names:
            continue
        depth, end = 0, None
        for position in range(match.end() - 1, len(text)):
            depth += {"(": 1, ")": -1}.get(text[position], 0)
            if depth == 0:
                end = position + 1
                break
        if end is None:
            continue
        try:
            call = ast.parse(text[match.start(1) : end], mode="eval").body
            if not isinstance(call, ast.Call) or call.args:
                continue
            arguments = {keyword.arg: ast.literal_eval(keyword.value) for keyword in call.keywords if keyword.arg}
        except (SyntaxError, ValueError):
            # handled: a call the simulated user wrote that is not a literal call is not a call
            continue
        found.append((name, arguments))
    return found


def opening_message(task: Any) -> str:
    """The scripted user's first turn: the scenario's reason for calling and what it knows."""
    instructions = task.user_scenario.instructions
    if isinstance(instructions, str):
        return instructions.strip()
    parts = [instructions.reason_for_call.strip()]
    if instructions.known_info:
        parts.append(instructions.known_info.strip())
    return "\n\n".join(parts)


class ScriptedUser:
    """A deterministic user for tests and simulated runs (see the module doc for its rules).

    Args:
        task: the tau2 task (its user scenario opens the talk).
        tool_names: the user's device tools (empty outside telecom).
    """

    def __init__(self, task: Any, tool_names: Sequence[str] = ()) -> None:
        self.task = task
        self.tool_names = tuple(tool_names)
        self._turns = 0
        self._opened = False
        self._awaiting_results = False
        self._transferred = False

    def note_transfer(self) -> None:
        """The agent transferred the call to a human: the next user turn says so and ends."""
        self._transferred = True

    def next_message(self, incoming: Sequence[Any]) -> Any:
        modules = tau2_modules()
        user_message = modules.messages.UserMessage
        self._turns += 1
        if self._awaiting_results:
            self._awaiting_results = False
            results = "; ".join((message.content or "") for message in incoming if message.role == "tool")
            return user_message(role="user", content=f"Done. The phone shows: {results}")
        if not self._opened:
            self._opened = True
            return user_message(role="user", content=opening_message(self.task))
        if self._transferred:
            return user_message(role="user", content=modules.user.TRANSFER)
        if self._turns > MAX_SCRIPTED_TURNS:
            return user_message(role="user", content=modules.user.STOP)
        text = " ".join((message.content or "") for message in incoming if message.role == "assistant")
        calls = requested_calls(text, self.tool_names)
        if calls:
            self._awaiting_results = True
            tool_call = modules.messages.ToolCall
            return user_message(
                role="user",
                tool_calls=[
                    tool_call(id=f"user_{self._turns}_{position}", name=name, arguments=arguments, requestor="user")
                    for position, (name, arguments) in enumerate(calls)
                ],
            )
        if text.rstrip().endswith("?"):
            return user_message(role="user", content=CONFIRMATION)
        return user_message(role="user", content=modules.user.STOP)
