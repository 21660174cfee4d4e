"""Resolved secrets never leave the process in clear text: a registry of their values and a mask.

Whatever resolves a secret (an API key read from the environment, a ``${VAR}`` placeholder
in a recipe, the password inside ``http://user:pw@host``) calls ``register``. Everything that
writes text a user or a file will see (error messages, logs, records, the recorded recipe)
passes it through ``mask`` first, which replaces every registered value with ``***``.

Values shorter than ``MIN_SECRET_LENGTH`` characters are not registered: masking ``"pw"``
everywhere would corrupt ordinary text. URLs are masked structurally by ``mask_url`` (the
password of the user-info part), whatever its length.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, unquote, urlsplit, urlunsplit

__all__ = ["MASK", "MIN_SECRET_LENGTH", "mask", "mask_data", "mask_url", "register", "registered", "split_userinfo"]

MASK = "***"
MIN_SECRET_LENGTH = 4

_lock = threading.Lock()
_registry: set[str] = set()
_pattern_cache: dict[frozenset[str], re.Pattern[str]] = {}


def register(*values: str | None) -> None:
    """Remember resolved secret values so that ``mask`` hides them from now on.

    Args:
        values: Secret values; ``None``, empty and shorter than ``MIN_SECRET_LENGTH`` ones are ignored.
            A value's URL-encoded form is registered too (passwords travel encoded in URLs).

    Example:
        >>> register("sk-test-123456")
        >>> mask("server said: bad key sk-test-123456")
        'server said: bad key ***'
    """
    with _lock:
        for value in values:
            if value and len(value) >= MIN_SECRET_LENGTH:
                _registry.add(value)
                encoded = quote(value, safe="")
                if encoded != value:
                    _registry.add(encoded)


def registered() -> frozenset[str]:
    """The secret values registered so far in this process.

    Returns:
        A snapshot of the registry.
    """
    with _lock:
        return frozenset(_registry)


def _pattern(secrets: frozenset[str]) -> re.Pattern[str]:
    pattern = _pattern_cache.get(secrets)
    if pattern is None:
        # Longest first, so a secret that contains another is masked whole.
        alternatives = sorted(secrets, key=len, reverse=True)
        pattern = re.compile("|".join(re.escape(secret) for secret in alternatives))
        if len(_pattern_cache) > 64:
            _pattern_cache.clear()
        _pattern_cache[secrets] = pattern
    return pattern


def mask(text: str, secrets: Iterable[str] | None = None) -> str:
    """``text`` with every secret value (and every URL password) replaced by ``***``.

    Args:
        text: Any text about to be printed, logged or stored.
        secrets: The values to hide; ``None`` means every registered one. Values shorter than
            ``MIN_SECRET_LENGTH`` are ignored here too.

    Returns:
        The masked text (the same object when there was nothing to hide).

    Example:
        >>> mask("GET http://bob:hunter22@host/v1 failed; key abcd1234", ["abcd1234"])
        'GET http://bob:***@host/v1 failed; key ***'
    """
    chosen = registered() if secrets is None else frozenset(s for s in secrets if s and len(s) >= MIN_SECRET_LENGTH)
    if "@" in text:
        text = _URL_PASSWORD.sub(rf"\1{MASK}@", text)
    if not chosen:
        return text
    return _pattern(chosen).sub(MASK, text)


# scheme://user:password@ -> scheme://user:***@ (the password may not contain '@', '/' or whitespace).
_URL_PASSWORD = re.compile(r"([a-zA-Z][a-zA-Z0-9+.-]*://[^:/@\s]*:)[^@/\s]*@")


def mask_data(data: Any, secrets: Iterable[str] | None = None) -> Any:
    """A copy of JSON-like ``data`` (dicts, lists, strings) with ``mask`` applied to every string.

    Args:
        data: A recipe mapping, a record's ``model_dump()``, a list of them.
        secrets: As for ``mask``.

    Returns:
        The masked copy; keys are masked too, other scalars are kept.

    Example:
        >>> mask_data({"extra_body": {"api_key": "abcd1234"}}, ["abcd1234"])
        {'extra_body': {'api_key': '***'}}
    """
    chosen = registered() if secrets is None else frozenset(secrets)
    if isinstance(data, str):
        return mask(data, chosen)
    if isinstance(data, dict):
        return {mask_data(key, chosen): mask_data(value, chosen) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return type(data)(mask_data(item, chosen) for item in data)
    return data


def split_userinfo(url: str) -> tuple[str, str | None, str | None]:
    """Split ``http://user:pw@host/v1`` into the URL without credentials, the user and the password.

    The password (decoded) is registered as a secret, so it is masked wherever it shows up later.

    Args:
        url: An absolute URL.

    Returns:
        ``(url_without_userinfo, user or None, password or None)``.

    Example:
        >>> split_userinfo("http://bob:s3cret!@localhost:8000/v1")
        ('http://localhost:8000/v1', 'bob', 's3cret!')
    """
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, None, None
    user = unquote(parts.username) if parts.username is not None else None
    password = unquote(parts.password) if parts.password is not None else None
    register(password)
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port is not None else host
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment)), user, password


def mask_url(url: str) -> str:
    """``url`` with the password of its user-info part replaced by ``***``.

    Example:
        >>> mask_url("https://bob:hunter2@example.org/v1")
        'https://bob:***@example.org/v1'
    """
    return _URL_PASSWORD.sub(rf"\1{MASK}@", url)
