"""Environment registry: built-in envs plus third-party ones from the ``prefbuild.envs`` entry point."""

from __future__ import annotations

from functools import cache
from importlib import import_module
from importlib.metadata import entry_points

from prefbuild.envs.base import Env, EnvTask, ParsedOutput, Protocol, StepResult

__all__ = ["Env", "EnvTask", "ParsedOutput", "Protocol", "StepResult", "available_envs", "get_env", "get_protocol"]

# name -> "module:Class"; imported lazily so `prefbuild --help` stays fast.
BUILTIN_ENVS: dict[str, str] = {
    "household": "prefbuild.envs.household.env:HouseholdEnv",
    "sql": "prefbuild.envs.sql.env:SqlEnv",
    "alfworld": "prefbuild.envs.alfworld.env:AlfworldEnv",
    "tau2": "prefbuild.envs.tau2.env:Tau2Env",
}


def _load(target: str) -> type[Env]:
    module_name, _, attribute = target.partition(":")
    return getattr(import_module(module_name), attribute)


@cache
def _plugin_envs() -> tuple[tuple[str, str], ...]:
    """Third-party envs from the ``prefbuild.envs`` entry point (scanned once: the scan reads
    every installed distribution's metadata, far too slow to repeat per episode)."""
    return tuple((entry.name, entry.value) for entry in entry_points(group="prefbuild.envs"))


def available_envs() -> dict[str, str]:
    """Every env name with where it comes from (built-in module or entry point)."""
    found = dict(BUILTIN_ENVS)
    for name, target in _plugin_envs():
        found.setdefault(name, target)
    return found


def get_env(name: str) -> type[Env]:
    """The env class registered under ``name``; ``KeyError`` lists the known names."""
    targets = available_envs()
    if name not in targets:
        raise KeyError(f"unknown env {name!r}; known envs: {', '.join(sorted(targets))}")
    return _load(targets[name])


def get_protocol(env_name: str, protocol_name: str, **options: object) -> Protocol:
    """An instance of ``protocol_name`` of env ``env_name``."""
    env_class = get_env(env_name)
    if protocol_name not in env_class.protocols:
        known = ", ".join(sorted(env_class.protocols)) or "none"
        raise KeyError(f"env {env_name!r} has no protocol {protocol_name!r}; known: {known}")
    return env_class.protocols[protocol_name](**options)
