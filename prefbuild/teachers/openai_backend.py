"""The ``openai`` teacher: any OpenAI-compatible chat server (vLLM, SGLang, llama.cpp server).

One request asks for all ``n`` completions at once, so vLLM computes the shared prompt once;
a server that ignores ``n`` (answers fewer choices) gets the missing ones as separate
requests, each with ``seed + i`` so they differ when a seed is set.

vLLM extensions (``chat_template_kwargs``, ``structured_outputs``, ``top_k``, ``min_p``,
``repetition_penalty``...) travel in ``Sampling.extra_body`` and are merged into the top
level of the request body, as the official OpenAI client does with ``extra_body``.

Failures are retried with exponential backoff and jitter (tenacity) when they can heal:
connection errors, timeouts, HTTP 429 and 5xx. Anything else (an unknown model, a bad
regex) fails at once with the server's own message. Token counts per completion: the
server reports one prompt count (shared by all ``n``) and one completion total; for
``n > 1`` the total is split across the completions in proportion to their text length, so
the counts always add up to what the server billed.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Sequence
from typing import Any

import httpx
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt, wait_exponential, wait_random

from prefbuild.teachers.base import Completion, Sampling, Teacher, TeacherError, TeacherRequest
from prefbuild.teachers.endpoints import AllEndpointsDown, Endpoint, EndpointPool
from prefbuild.tooluse.native import response_tool_calls, tool_options

__all__ = ["OpenAITeacher", "build_payload"]

logger = logging.getLogger(__name__)

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})


class _Retryable(Exception):
    """A failure worth another attempt; ``str()`` names the endpoint and the cause."""


class _Unavailable(_Retryable):
    """Every endpoint is cooling down; ``str()`` lists them with their last errors."""


def build_payload(model: str, request: TeacherRequest, n: int, seed: int | None) -> dict[str, Any]:
    """The JSON body of one ``/chat/completions`` request."""
    sampling = request.sampling
    payload: dict[str, Any] = {
        "model": model,
        "messages": [message.model_dump(mode="json", exclude_none=True) for message in request.messages],
        "temperature": sampling.temperature,
        "top_p": sampling.top_p,
        "max_tokens": sampling.max_tokens,
        "n": n,
    }
    if sampling.stop:
        payload["stop"] = list(sampling.stop)
    if seed is not None:
        payload["seed"] = seed
    payload.update(tool_options(request.tools, request.tool_choice))
    payload.update(sampling.extra_body)
    return payload


def _split_tokens(total: int, texts: Sequence[str]) -> list[int]:
    """Share ``total`` completion tokens across completions by text length; the parts add up to ``total``."""
    if len(texts) == 1:
        return [total]
    weights = [max(len(text), 1) for text in texts]
    shares = [total * weight // sum(weights) for weight in weights]
    for index in range(total - sum(shares)):
        shares[index % len(shares)] += 1
    return shares


def _server_message(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:500]
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and "message" in error:
            return str(error["message"])
        if isinstance(body.get("detail"), str):
            return body["detail"]
    return response.text[:500]


class OpenAITeacher(Teacher):
    """A teacher behind one or more OpenAI-compatible endpoints."""

    backend = "openai"

    def __init__(
        self,
        model: str,
        base_urls: str | Sequence[str],
        *,
        api_key_env: str | None = "OPENAI_API_KEY",
        concurrency: int = 8,
        timeout_s: float = 300.0,
        max_attempts: int = 5,
        initial_backoff_s: float = 0.5,
        max_backoff_s: float = 10.0,
        cooldown_s: float = 30.0,
        failure_threshold: int = 3,
        default_sampling: Sampling | None = None,
    ) -> None:
        self.model = model
        urls = [base_urls] if isinstance(base_urls, str) else list(base_urls)
        try:
            self.pool = EndpointPool(
                urls, concurrency=concurrency, cooldown_s=cooldown_s, failure_threshold=failure_threshold
            )
        except ValueError as error:
            raise TeacherError(f"openai teacher: {error}") from None
        self.api_key_env = api_key_env
        self.timeout_s = timeout_s
        self.max_attempts = max_attempts
        self.initial_backoff_s = initial_backoff_s
        self.max_backoff_s = max_backoff_s
        self.default_sampling = default_sampling or Sampling()
        self._client: httpx.AsyncClient | None = None

    def __repr__(self) -> str:
        urls = [endpoint.base_url for endpoint in self.pool.endpoints]
        return f"OpenAITeacher(model={self.model!r}, base_urls={urls!r})"

    @property
    def base_urls(self) -> list[str]:
        return [endpoint.base_url for endpoint in self.pool.endpoints]

    def _headers(self) -> dict[str, str]:
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        return {"Authorization": f"Bearer {key}"} if key else {}

    async def start(self) -> None:
        if self._client is None:
            connections = max(1, sum(endpoint.concurrency for endpoint in self.pool.endpoints))
            self._client = httpx.AsyncClient(
                headers=self._headers(),
                timeout=httpx.Timeout(self.timeout_s, connect=min(10.0, self.timeout_s)),
                limits=httpx.Limits(max_connections=connections, max_keepalive_connections=connections),
            )

    async def close(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()

    async def served_models(self) -> list[str]:
        """The model names the first reachable endpoint serves (``GET /models``)."""
        await self.start()
        assert self._client is not None
        errors = []
        for endpoint in self.pool.endpoints:
            try:
                response = await self._client.get(f"{endpoint.base_url}/models")
                response.raise_for_status()
                return [entry["id"] for entry in response.json().get("data", [])]
            except (httpx.HTTPError, ValueError, KeyError) as error:
                errors.append(f"{endpoint.base_url}: {error}")
        raise TeacherError(f"no teacher endpoint answered GET /models: {'; '.join(errors)}")

    async def complete(self, request: TeacherRequest) -> list[Completion]:
        await self.start()
        wanted = request.sampling.n
        completions = await self._with_retries(request, wanted, request.sampling.seed)
        if len(completions) < wanted:
            # The server ignored ``n``: ask for the rest one by one.
            seed = request.sampling.seed
            extra = await asyncio.gather(
                *(
                    self._with_retries(request, 1, None if seed is None else seed + index)
                    for index in range(len(completions), wanted)
                )
            )
            completions.extend(completion for batch in extra for completion in batch[:1])
        return completions[:wanted]

    async def _with_retries(self, request: TeacherRequest, n: int, seed: int | None) -> list[Completion]:
        payload = build_payload(self.model, request, n, seed)
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.max_attempts),
            # Exponential backoff plus up to one initial backoff of jitter, so clients that failed
            # together do not retry together.
            wait=wait_exponential(multiplier=self.initial_backoff_s, max=self.max_backoff_s)
            + wait_random(0, self.initial_backoff_s),
            retry=retry_if_exception_type(_Retryable),
            reraise=True,
        )
        failed_on: set[str] = set()
        try:
            async for attempt in retrying:
                with attempt:
                    result = await self._attempt(payload, failed_on)
        except _Unavailable as error:
            raise TeacherError(
                f"teacher model {self.model!r}: {error}; gave up after {self.max_attempts} attempts"
            ) from None
        except _Retryable as error:
            raise TeacherError(
                f"teacher model {self.model!r}: request failed after {self.max_attempts} attempts; "
                f"last error: {error}; endpoints: {self.pool.describe()}"
            ) from None
        return result

    async def _attempt(self, payload: dict[str, Any], failed_on: set[str]) -> list[Completion]:
        assert self._client is not None, "start() the teacher first"
        try:
            async with self.pool.acquire(avoid=failed_on) as endpoint:
                try:
                    return await self._post(endpoint, payload)
                except _Retryable:
                    failed_on.add(endpoint.base_url)
                    raise
        except AllEndpointsDown as error:
            raise _Unavailable(str(error)) from None

    async def _post(self, endpoint: Endpoint, payload: dict[str, Any]) -> list[Completion]:
        assert self._client is not None
        url = f"{endpoint.base_url}/chat/completions"
        started = time.perf_counter()
        try:
            response = await self._client.post(url, json=payload)
        except httpx.TransportError as error:
            cause = f"POST {url}: {type(error).__name__}: {error or 'no detail'}"
            self.pool.record_failure(endpoint, cause)
            logger.debug("teacher request failed: %s", cause)
            raise _Retryable(cause) from None
        latency = time.perf_counter() - started
        if response.status_code in RETRYABLE_STATUS:
            cause = f"POST {url}: HTTP {response.status_code}: {_server_message(response)}"
            if response.status_code >= 500:
                self.pool.record_failure(endpoint, cause)
            logger.debug("teacher request failed: %s", cause)
            raise _Retryable(cause)
        if response.status_code == 404:
            raise TeacherError(
                f"teacher model {self.model!r} was not found at {url} (HTTP 404): {_server_message(response)}"
            )
        if response.status_code >= 400:
            raise TeacherError(f"POST {url} was rejected: HTTP {response.status_code}: {_server_message(response)}")
        self.pool.record_success(endpoint)
        try:
            return self._parse(response.json(), latency)
        except (ValueError, KeyError, TypeError, IndexError) as error:
            raise TeacherError(f"POST {url}: unexpected response ({error!r}): {response.text[:300]}") from None

    @staticmethod
    def _parse(body: dict[str, Any], latency: float) -> list[Completion]:
        choices = sorted(body["choices"], key=lambda choice: choice.get("index", 0))
        usage = body.get("usage") or {}
        texts = [choice["message"].get("content") or "" for choice in choices]
        shares = _split_tokens(int(usage.get("completion_tokens", 0)), texts)
        prompt_tokens = int(usage.get("prompt_tokens", 0))
        completions: list[Completion] = []
        for choice, text, tokens in zip(choices, texts, shares, strict=True):
            completions.append(
                Completion(
                    text=text,
                    finish_reason=str(choice.get("finish_reason") or "stop"),
                    prompt_tokens=prompt_tokens,
                    completion_tokens=tokens,
                    latency_s=latency,
                    tool_calls=response_tool_calls(choice["message"].get("tool_calls")),
                )
            )
        return completions
