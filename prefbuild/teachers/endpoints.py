"""A pool of OpenAI-compatible endpoints: least-busy routing, bounded concurrency, cool-downs.

A production teacher is often several ``vllm serve`` processes (one per GPU). Each request
goes to the healthy endpoint with the fewest requests in flight, and waits on that
endpoint's semaphore so no server receives more than ``concurrency`` requests at once.

An endpoint that fails ``failure_threshold`` times in a row (connection refused, 5xx,
timeouts, malformed answers) leaves the rotation for ``cooldown_s`` seconds. When the
cool-down is over it is tried again; one more failure sends it straight back, one success
restores it fully. While every endpoint is cooling down, ``acquire`` waits for the first one
to come back (a server restart must not fail the requests in flight); ``choose`` raises
``AllEndpointsDown`` for callers that prefer to fail at once. ``outage_s`` says how long
every endpoint that used to answer has been failing, so callers can keep retrying through a
restart and still give up on a URL that never worked.

Credentials in a base URL (``http://user:pw@host``) are taken out of it: ``Endpoint.base_url``
never contains them (so no message can show them), ``Endpoint.user``/``password`` carry them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Collection, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from prefbuild.secrets import split_userinfo

__all__ = ["AllEndpointsDown", "Endpoint", "EndpointPool", "normalize_base_url"]

logger = logging.getLogger(__name__)


def normalize_base_url(url: str) -> str:
    """``http://host:8000`` and ``http://host:8000/v1/`` both become ``http://host:8000/v1``.

    Args:
        url: A server URL, with or without the ``/v1`` suffix.

    Returns:
        The OpenAI-compatible base URL.

    Example:
        >>> normalize_base_url("http://localhost:8000/")
        'http://localhost:8000/v1'
    """
    url = url.strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        scheme = url.split("://", 1)[0] if "://" in url else url[:16]
        raise ValueError(f"base URL starting {scheme!r} must start with http:// or https://")
    return url if url.endswith("/v1") else f"{url}/v1"


class AllEndpointsDown(RuntimeError):
    """Every endpoint is cooling down after repeated failures."""


@dataclass
class Endpoint:
    base_url: str  # without credentials
    concurrency: int
    user: str | None = field(default=None, repr=False)
    password: str | None = field(default=None, repr=False)
    in_flight: int = 0
    consecutive_failures: int = 0
    down_until: float = 0.0
    last_error: str | None = None
    requests: int = 0
    failures: int = 0
    successes: int = 0
    reached: bool = False  # a server answered here once (any HTTP answer, or a connection it accepted)
    failing_since: float = 0.0  # when the current run of failures began
    semaphore: asyncio.Semaphore = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.semaphore = asyncio.Semaphore(self.concurrency)

    def available(self, now: float) -> bool:
        return self.down_until <= now

    def describe(self, now: float) -> str:
        state = f"cooling down for {self.down_until - now:.1f}s" if not self.available(now) else "up"
        error = f", last error: {self.last_error}" if self.last_error else ""
        return f"{self.base_url} ({state}{error})"


class EndpointPool:
    """Chooses endpoints for requests and keeps their health."""

    def __init__(
        self,
        base_urls: Sequence[str],
        *,
        concurrency: int = 8,
        cooldown_s: float = 5.0,
        failure_threshold: int = 3,
    ) -> None:
        if not base_urls:
            raise ValueError("an OpenAI-compatible teacher needs at least one base URL")
        endpoints: dict[str, Endpoint] = {}
        for url in base_urls:
            bare, user, password = split_userinfo(normalize_base_url(url))
            endpoints.setdefault(bare, Endpoint(bare, concurrency, user=user, password=password))
        self.endpoints = list(endpoints.values())
        self.cooldown_s = cooldown_s
        self.failure_threshold = failure_threshold

    def describe(self) -> str:
        now = time.monotonic()
        return "; ".join(endpoint.describe(now) for endpoint in self.endpoints)

    def choose(self, avoid: Collection[str] = ()) -> Endpoint:
        """The available endpoint with the fewest requests in flight (first listed wins ties).

        Endpoints whose last request failed come after healthy ones, and a retry avoids the
        endpoints it already failed on while another is available, so one dead server in the
        list does not use up a request's attempts before the cool-down kicks in.

        Raises:
            AllEndpointsDown: every endpoint is cooling down.
        """
        endpoints = self.endpoints
        if len(endpoints) == 1 and endpoints[0].down_until == 0.0:
            return endpoints[0]  # the common case, without building lists
        now = time.monotonic()
        candidates = [endpoint for endpoint in endpoints if endpoint.available(now)]
        if not candidates:
            raise AllEndpointsDown(f"every teacher endpoint is down: {self.describe()}")
        fresh = [endpoint for endpoint in candidates if endpoint.base_url not in avoid] or candidates
        return min(fresh, key=lambda endpoint: (endpoint.consecutive_failures > 0, endpoint.in_flight))

    def next_available_in(self) -> float:
        """Seconds until the first endpoint leaves its cool-down (0 when one is available)."""
        now = time.monotonic()
        return max(0.0, min(endpoint.down_until for endpoint in self.endpoints) - now)

    async def wait_available(self) -> None:
        """Sleep until at least one endpoint is out of its cool-down."""
        while (delay := self.next_available_in()) > 0:
            await asyncio.sleep(delay)

    @asynccontextmanager
    async def acquire(self, avoid: Collection[str] = (), *, wait: bool = True) -> AsyncIterator[Endpoint]:
        """Reserve a slot on the least busy endpoint for one HTTP request.

        Args:
            avoid: Base URLs this request already failed on (used only if another is available).
            wait: While every endpoint is cooling down, wait for the first to come back
                (``True``) or raise ``AllEndpointsDown`` at once (``False``).
        """
        while True:
            try:
                endpoint = self.choose(avoid)
                break
            except AllEndpointsDown:
                if not wait:
                    raise
                await self.wait_available()
        endpoint.in_flight += 1
        try:
            async with endpoint.semaphore:
                endpoint.requests += 1
                yield endpoint
        finally:
            endpoint.in_flight -= 1

    def outage_s(self) -> float | None:
        """Seconds since every endpoint that ever answered began failing.

        Returns:
            ``None`` while one of them is healthy, or when none was ever reached (a wrong URL
            is not an outage to wait out; a server that accepted a connection was reached).
        """
        known = [endpoint for endpoint in self.endpoints if endpoint.reached]
        if not known or any(endpoint.consecutive_failures == 0 for endpoint in known):
            return None
        return time.monotonic() - max(endpoint.failing_since for endpoint in known)

    def record_success(self, endpoint: Endpoint) -> None:
        endpoint.successes += 1
        endpoint.reached = True
        if endpoint.consecutive_failures or endpoint.down_until:
            endpoint.consecutive_failures = 0
            endpoint.down_until = 0.0
            endpoint.last_error = None

    def record_failure(self, endpoint: Endpoint, error: str, *, reached: bool = False) -> None:
        """Count a failed request; ``reached``: the server was there (it answered or accepted the connection)."""
        endpoint.failures += 1
        endpoint.reached = endpoint.reached or reached
        if endpoint.consecutive_failures == 0:
            endpoint.failing_since = time.monotonic()
        endpoint.consecutive_failures += 1
        endpoint.last_error = error
        if endpoint.consecutive_failures >= self.failure_threshold:
            if endpoint.available(time.monotonic()):
                logger.warning(
                    "teacher endpoint %s leaves rotation for %.0fs after %d failures in a row: %s",
                    endpoint.base_url,
                    self.cooldown_s,
                    endpoint.consecutive_failures,
                    error,
                )
            endpoint.down_until = time.monotonic() + self.cooldown_s
