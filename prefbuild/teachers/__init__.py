"""Teacher registry and factory: a recipe's ``teacher`` mapping in, a ready ``Teacher`` out.

Built-in backends: ``openai``, ``vllm``, ``transformers``, ``scripted``. Third-party
backends register a factory under the ``prefbuild.teachers`` entry point; the factory is
called with the validated ``TeacherConfig`` (its free-form ``options`` mapping carries
settings only the plug-in knows) and returns a ``Teacher``.

Backends are imported lazily, so choosing ``scripted`` never imports torch or vLLM.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

from prefbuild.teachers.base import Completion, Sampling, Teacher, TeacherError, TeacherRequest
from prefbuild.teachers.config import TeacherConfig, TeacherConfigError, build_sampling, parse_teacher_config

__all__ = [
    "Completion",
    "Sampling",
    "Teacher",
    "TeacherConfig",
    "TeacherConfigError",
    "TeacherError",
    "TeacherRequest",
    "available_backends",
    "build_sampling",
    "make_teacher",
]

TeacherFactory = Callable[[TeacherConfig], Teacher]


def _retry_options(config: TeacherConfig) -> dict[str, Any]:
    return {
        "api_key_env": config.api_key_env,
        "concurrency": config.concurrency,
        "timeout_s": config.timeout_s,
        "max_attempts": config.retries.max_attempts,
        "max_outage_s": config.retries.max_outage_s,
        "initial_backoff_s": config.retries.initial_backoff_s,
        "max_backoff_s": config.retries.max_backoff_s,
        "cooldown_s": config.cooldown_s,
        "default_sampling": build_sampling(config.sampling),
    }


def _openai(config: TeacherConfig) -> Teacher:
    from prefbuild.teachers.openai_backend import OpenAITeacher

    if not config.base_urls:
        raise TeacherConfigError("teacher.base_urls: the openai backend needs at least one server URL")
    if not config.model:
        raise TeacherConfigError("teacher.model: the openai backend needs the served model name")
    return OpenAITeacher(config.model, config.base_urls, **_retry_options(config))


def _vllm(config: TeacherConfig) -> Teacher:
    from prefbuild.models import resolve_model
    from prefbuild.teachers.vllm_backend import VllmTeacher
    from prefbuild.teachers.vllm_launcher import VllmServer

    path, served_name = resolve_model(config.model or "embedded")
    launch = config.launch
    server = VllmServer(
        path,
        served_model_name=served_name,
        port=launch.port,
        args=launch.args,
        env=launch.env,
        log_path=launch.log_path,
        startup_timeout_s=launch.startup_timeout_s,
    )
    return VllmTeacher(server, **_retry_options(config))


def _transformers(config: TeacherConfig) -> Teacher:
    from prefbuild.teachers.transformers_backend import TransformersTeacher

    return TransformersTeacher(
        config.model or "embedded",
        max_batch_size=config.max_batch_size,
        default_sampling=build_sampling(config.sampling),
    )


def _scripted(config: TeacherConfig) -> Teacher:
    from prefbuild.teachers.scripted import ScriptedTeacher

    return ScriptedTeacher(config.scripted, model=config.model or "scripted-expert")


BUILTIN_BACKENDS: dict[str, TeacherFactory] = {
    "openai": _openai,
    "vllm": _vllm,
    "transformers": _transformers,
    "scripted": _scripted,
}


def available_backends() -> list[str]:
    """Built-in backend names plus those registered under the ``prefbuild.teachers`` entry point."""
    names = set(BUILTIN_BACKENDS)
    names.update(entry.name for entry in entry_points(group="prefbuild.teachers"))
    return sorted(names)


def _factory(name: str) -> TeacherFactory:
    if name in BUILTIN_BACKENDS:
        return BUILTIN_BACKENDS[name]
    for entry in entry_points(group="prefbuild.teachers"):
        if entry.name == name:
            return entry.load()
    raise TeacherConfigError(f"teacher.backend: unknown backend {name!r}; known: {', '.join(available_backends())}")


def make_teacher(config: Any) -> Teacher:
    """A teacher from a recipe's ``teacher`` mapping (or an object with the same fields).

    Keys: ``backend, model, base_urls, api_key_env, launch, sampling, concurrency, timeout_s,
    retries, cooldown_s, max_batch_size, scripted`` (and ``options`` for plug-ins). Raises
    ``TeacherConfigError`` naming the field path for a bad value. Nothing is started here:
    use ``async with make_teacher(...) as teacher:``.
    """
    parsed = parse_teacher_config(config)
    return _factory(parsed.backend)(parsed)
