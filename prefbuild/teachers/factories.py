"""Factories of the built-in teacher backends: a validated ``TeacherConfig`` in, a ``Teacher`` out.

The registry (``prefbuild.registry``, family ``teachers``) points at these; a plug-in backend
registers a function of the same shape under the ``prefbuild.teachers`` entry point.
Backends are imported inside the factories, so choosing one never imports the others.
"""

from __future__ import annotations

from typing import Any

from prefbuild.teachers.base import Teacher
from prefbuild.teachers.config import TeacherConfig, TeacherConfigError, build_sampling


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


def openai_teacher(config: TeacherConfig) -> Teacher:
    from prefbuild.teachers.openai_backend import OpenAITeacher

    if not config.base_urls:
        raise TeacherConfigError("teacher.base_urls: the openai backend needs at least one server URL")
    if not config.model:
        raise TeacherConfigError("teacher.model: the openai backend needs the served model name")
    return OpenAITeacher(config.model, config.base_urls, **_retry_options(config))


def vllm_teacher(config: TeacherConfig) -> Teacher:
    from prefbuild.teachers.embedded import resolve_model
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


def require_installed(backend: str, model: str | None) -> None:
    """Raise ``PrefbuildError`` naming the extra when what ``backend`` imports to run ``model`` here
    is missing: torch and transformers (``transformers``), vLLM (``vllm``), and for the embedded
    model (the default) not yet converted, the converter's imports and its package. The other
    backends run no model in this process.

    Example:
        >>> require_installed("openai", "Qwen/Qwen3-4B-Instruct-2507")
    """
    from prefbuild.teachers.embedded import embedded_gguf_path, is_embedded, is_prepared, require_local_stack
    from prefbuild.teachers.vllm_launcher import require_vllm

    if backend == "transformers":
        require_local_stack("the transformers teacher")
    elif backend == "vllm":
        require_vllm()
    if backend in ("transformers", "vllm") and is_embedded(model or "embedded") and not is_prepared():
        require_local_stack("converting the embedded model")
        embedded_gguf_path()


def transformers_teacher(config: TeacherConfig) -> Teacher:
    from prefbuild.teachers.transformers_backend import TransformersTeacher

    return TransformersTeacher(
        config.model or "embedded",
        max_batch_size=config.max_batch_size,
        default_sampling=build_sampling(config.sampling),
    )
