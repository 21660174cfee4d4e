"""Environments: the plug-in contract (``base``) and lookups through ``prefbuild.registry``."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from prefbuild import registry
from prefbuild.envs.base import Env, EnvTask, ParsedOutput, Protocol, StepResult
from prefbuild.errors import PrefbuildError

__all__ = [
    "Env",
    "EnvTask",
    "ParsedOutput",
    "Protocol",
    "StepResult",
    "available_envs",
    "cached_protocol",
    "get_env",
    "get_protocol",
    "make_env",
    "make_protocol",
]

def available_envs() -> dict[str, str]:
    """Every env name with where it comes from (built-in module or entry point)."""
    return registry.targets("envs")


def get_env(name: str) -> type[Env]:
    """The env class registered under ``name``; ``UnknownPluginError`` lists the known names."""
    return registry.load("envs", name)


def make_env(name: str, *, dialect: str | None = None, options: Mapping[str, Any] | None = None) -> Env:
    """A fresh env instance: the one way prefbuild builds envs (rollout, replay, ``envs play``).

    Args:
        name: a registered env name.
        dialect: the env dialect, where the env has several.
        options: the recipe's ``env.options`` for it.

    Returns:
        The env, ready for ``reset``.

    Raises:
        PrefbuildError: unknown env, dialect or option, naming it.

    Example:
        >>> make_env("household", dialect="modern").dialect
        'modern'
    """
    env_class = get_env(name)
    if dialect is not None and env_class.dialects and dialect not in env_class.dialects:
        raise PrefbuildError(f"env {name!r} has no dialect {dialect!r}; known: {', '.join(env_class.dialects)}")
    settings = dict(options or {})
    if dialect is not None:
        settings["dialect"] = dialect
    try:
        return env_class(**settings)
    except (TypeError, ValueError) as error:
        if isinstance(error, PrefbuildError):
            raise
        raise PrefbuildError(f"env {name!r} rejected its options {sorted(settings)}: {error}") from None


def make_protocol(
    env_name: str, protocol_name: str, *, dialect: str | None = None, options: Mapping[str, Any] | None = None
) -> Protocol:
    """An instance of protocol ``protocol_name`` of env ``env_name``.

    The env dialect is passed where the protocol takes one (its few-shot text differs).

    Raises:
        PrefbuildError: the env has no such protocol, or the protocol rejects an option.

    Example:
        >>> make_protocol("household", "react").name
        'react'
    """
    env_class = get_env(env_name)
    protocol_class = env_class.protocols.get(protocol_name)
    if protocol_class is None:
        known = ", ".join(sorted(env_class.protocols)) or "none"
        raise PrefbuildError(f"env {env_name!r} has no protocol {protocol_name!r}; known: {known}")
    settings = dict(options or {})
    if dialect is not None and "dialect" in inspect.signature(protocol_class).parameters:
        settings.setdefault("dialect", dialect)
    try:
        return protocol_class(**settings)
    except TypeError as error:
        raise PrefbuildError(f"protocol {protocol_name!r} rejected its options {sorted(settings)}: {error}") from None


@lru_cache(maxsize=64)
def cached_protocol(env_name: str, protocol_name: str, dialect: str | None = None) -> Protocol:
    """A shared protocol instance for reading and writing recorded turns (parsers are stateless)."""
    return make_protocol(env_name, protocol_name, dialect=dialect)


def get_protocol(env_name: str, protocol_name: str, **options: Any) -> Protocol:
    """An instance of ``protocol_name`` of env ``env_name`` with ``options`` (see ``make_protocol``)."""
    return make_protocol(env_name, protocol_name, options=options)
