"""Teacher registry and factory: a recipe's ``teacher`` mapping in, a ready ``Teacher`` out.

Built-in backends: ``openai``, ``vllm``, ``transformers``, ``scripted``. Third-party
backends register a factory under the ``prefbuild.teachers`` entry point; the factory is
called with the validated ``TeacherConfig`` (its free-form ``options`` mapping carries
settings only the plug-in knows) and returns a ``Teacher``.

Backends are imported lazily, so choosing ``scripted`` never imports torch or vLLM.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from prefbuild import registry
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


def available_backends() -> list[str]:
    """Built-in backend names plus those registered under the ``prefbuild.teachers`` entry point."""
    return registry.names("teachers")


def _factory(name: str) -> TeacherFactory:
    try:
        return registry.load("teachers", name)
    except registry.UnknownPluginError as error:
        raise TeacherConfigError(f"teacher.backend: {error}") from None


def make_teacher(config: Any) -> Teacher:
    """A teacher from a recipe's ``teacher`` mapping (or an object with the same fields).

    Keys: ``backend, model, base_urls, api_key_env, launch, sampling, concurrency, timeout_s,
    retries, cooldown_s, max_batch_size, scripted`` (and ``options`` for plug-ins). Raises
    ``TeacherConfigError`` naming the field path for a bad value. Nothing is started here:
    use ``async with make_teacher(...) as teacher:``.
    """
    parsed = parse_teacher_config(config)
    return _factory(parsed.backend)(parsed)
