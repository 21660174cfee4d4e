"""``Tau2Protocol``: tau2's agent prompt over Hermes tool calls.

The prefix is what tau2's ``LLMAgent`` sends: the system prompt (its instructions and the
domain policy) followed by the orchestrator's opening agent turn ("Hi! How can I help you
today?"); the first observation is the customer's first message. A turn with tool calls
runs them; a turn without calls is a message to the customer (not the end of the episode:
the customer ends the conversation). Tools are the domain's, as tau2's ``Tool.openai_schema``
writes them. Tasks carry their domain, so a recipe names the domain once, in ``env.options``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from prefbuild.envs.base import EnvTask
from prefbuild.envs.tau2.package import agent_system_prompt, check_domain, new_environment, openai_tools
from prefbuild.records import Message
from prefbuild.tooluse.protocol import ToolUseProtocol


def domain_prompt_and_tools(domain: str) -> tuple[str, list[dict[str, Any]]]:
    """tau2's agent system prompt and the assistant tools of ``domain``."""
    environment = new_environment(domain)
    return agent_system_prompt(environment.get_policy()), openai_tools(environment)


class Tau2Protocol(ToolUseProtocol):
    """Hermes tool calls with tau2's agent prompt.

    Args:
        domain: the tau2 domain; None takes it from the first task's payload.

    Example:
        >>> protocol = Tau2Protocol("mock")
        >>> sorted(tool["function"]["name"] for tool in protocol.tools())[:2]
        ['create_task', 'get_users']
    """

    name: ClassVar[str] = "hermes"
    message_is_final: ClassVar[bool] = False

    def __init__(self, domain: str | None = None) -> None:
        super().__init__(tools=[])
        self.domain: str | None = None
        if domain is not None:
            self._load(check_domain(domain))

    def _load(self, domain: str) -> None:
        self.system_prompt, self._tools = domain_prompt_and_tools(domain)
        self.domain = domain

    def prefix_messages(self, task: EnvTask) -> list[Message]:
        domain = task.payload.domain
        if self.domain is None:
            self._load(domain)
        elif domain != self.domain:
            raise ValueError(f"tau2 protocol set up for domain {self.domain!r} got a {domain!r} task")
        return [*super().prefix_messages(task), *task.payload.opening]

    def tools(self) -> list[dict[str, Any]] | None:
        return super().tools() if self.domain is not None else None
