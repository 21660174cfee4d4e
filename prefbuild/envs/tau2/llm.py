"""A small synchronous OpenAI-compatible chat client (httpx) for tau2's simulated user and judge.

tau2 reaches models through litellm; prefbuild does not install it. The user simulator and
the optional natural-language-assertion judge only need one chat completion at a time from
an OpenAI-compatible server (vLLM, SGLang, the teacher's own server), which is what this does.
"""

from __future__ import annotations

import os
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field

from prefbuild.errors import PrefbuildError
from prefbuild.teachers.endpoints import normalize_base_url


class ChatModelConfig(BaseModel):
    """One OpenAI-compatible model: the env's ``user:`` section (and ``judge:``).

    Example:
        >>> ChatModelConfig(base_url="http://127.0.0.1:8000", model="Qwen/Qwen3-4B-Instruct-2507").temperature
        0.0
    """

    model_config = ConfigDict(extra="forbid")

    base_url: str = Field(description="Server URL, with or without /v1 (e.g. http://127.0.0.1:8000).")
    model: str = Field(min_length=1, description="Model name the server serves.")
    api_key_env: str | None = Field(default=None, description="Environment variable holding the API key, if any.")
    temperature: float = Field(default=0.0, ge=0.0, description="tau2's default user temperature is 0.0.")
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    max_tokens: int | None = Field(default=1024, ge=1)
    seed: int | None = None
    timeout_s: float = Field(default=120.0, gt=0.0)
    extra_body: dict[str, Any] = Field(
        default_factory=dict, description="Extra request fields, e.g. {chat_template_kwargs: {enable_thinking: false}}."
    )


class ChatModelError(PrefbuildError):
    """The user or judge model could not answer (server unreachable, bad reply)."""


def chat(
    config: ChatModelConfig, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """One chat completion; returns the reply ``message`` object (``content``, ``tool_calls``).

    Args:
        config: the model to ask.
        messages: OpenAI chat messages.
        tools: OpenAI tool definitions, or None.

    Returns:
        The first choice's ``message`` dict as the server sent it.

    Raises:
        ChatModelError: transport error, non-2xx status or a reply without a message.

    Example:
        >>> chat(config, [{"role": "user", "content": "hi"}])["content"]  # doctest: +SKIP
        'Hello!'
    """
    payload: dict[str, Any] = {"model": config.model, "messages": messages, "temperature": config.temperature}
    for key in ("top_p", "max_tokens", "seed"):
        value = getattr(config, key)
        if value is not None:
            payload[key] = value
    if tools:
        payload["tools"] = tools
    payload.update(config.extra_body)
    headers = {}
    if config.api_key_env:
        headers["Authorization"] = f"Bearer {os.environ.get(config.api_key_env, '')}"
    url = normalize_base_url(config.base_url) + "/chat/completions"
    try:
        response = httpx.post(url, json=payload, headers=headers, timeout=config.timeout_s)
    except httpx.HTTPError as error:
        raise ChatModelError(f"{url}: {error!r}") from None
    if response.status_code >= 400:
        raise ChatModelError(f"{url}: HTTP {response.status_code}: {response.text[:300]}")
    try:
        return response.json()["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise ChatModelError(f"{url}: reply without choices[0].message: {response.text[:300]}") from None
