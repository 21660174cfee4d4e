"""Environments: the plug-in contract (``base``) and lookups through ``prefbuild.registry``."""

from __future__ import annotations

from prefbuild import registry
from prefbuild.envs.base import Env, EnvTask, ParsedOutput, Protocol, StepResult

__all__ = ["Env", "EnvTask", "ParsedOutput", "Protocol", "StepResult", "available_envs", "get_env", "get_protocol"]

def available_envs() -> dict[str, str]:
    """Every env name with where it comes from (built-in module or entry point)."""
    return registry.targets("envs")


def get_env(name: str) -> type[Env]:
    """The env class registered under ``name``; ``UnknownPluginError`` lists the known names."""
    return registry.load("envs", name)


def get_protocol(env_name: str, protocol_name: str, **options: object) -> Protocol:
    """An instance of ``protocol_name`` of env ``env_name``."""
    env_class = get_env(env_name)
    if protocol_name not in env_class.protocols:
        known = ", ".join(sorted(env_class.protocols)) or "none"
        raise KeyError(f"env {env_name!r} has no protocol {protocol_name!r}; known: {known}")
    return env_class.protocols[protocol_name](**options)
