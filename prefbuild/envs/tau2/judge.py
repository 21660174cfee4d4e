"""The stand-in for tau2's ``llm_utils`` model calls, and the optional natural-language judge.

tau2's natural-language assertions (``evaluation_criteria.nl_assertions``) are graded by an
LLM judge. prefbuild leaves that part **off by default**: it is not part of any bundled
domain's ``reward_basis``, and a judged verdict is not reproducible. With the env option
``judge: {base_url, model, ...}`` the env asks tau2's own ``NLAssertionsEvaluator`` to grade
them, and its model call comes here (an OpenAI-compatible server through httpx). Every
record says whether the judge ran (``info["tau2"]["nl_assertions"]``).
"""

from __future__ import annotations

from typing import Any

from prefbuild.envs.tau2.convert import to_openai, tool_calls_from_openai
from prefbuild.envs.tau2.llm import ChatModelConfig, chat
from prefbuild.errors import PrefbuildError

_judge: ChatModelConfig | None = None


class NoModelConfigured(PrefbuildError):
    """tau2 asked for a model call that prefbuild has no model for."""


def configure(config: ChatModelConfig | None) -> None:
    """Set (or clear) the model that answers tau2's judge calls in this process."""
    global _judge
    _judge = config


def generate(
    model: str | None = None, messages: list[Any] | None = None, tools: list[Any] | None = None, **_: Any
) -> Any:
    """tau2's ``generate`` signature, answered by the configured judge model.

    ``model`` (tau2's hard-coded judge name) is ignored: the env's ``judge.model`` is asked.
    Raises ``NoModelConfigured`` when no judge is configured (tau2's own agent and user
    simulator are never used by prefbuild, so nothing else reaches this).
    """
    if _judge is None:
        raise NoModelConfigured(
            "tau2 asked for a model call but no judge model is configured (env option 'judge'), "
            "and litellm is not installed"
        )
    from prefbuild.envs.tau2.package import tau2_modules

    openai_tools = [tool.openai_schema for tool in tools] if tools else None
    reply = chat(_judge, [to_openai(message) for message in messages or []], openai_tools)
    return tau2_modules().messages.AssistantMessage(
        role="assistant",
        content=reply.get("content"),
        tool_calls=tool_calls_from_openai(reply.get("tool_calls"), "assistant", "judge_") or None,
    )


def get_cost(messages: list[Any]) -> None:
    """tau2's cost accounting needs litellm's price table; prefbuild reports no cost."""
    return None
