"""The ``transformers`` teacher: an in-process model, the default for a first run.

The model runs on the first CUDA GPU when torch sees one and on the CPU otherwise
(``device`` picks another); prompts are moved to the model's device before ``generate``.

Requests from concurrent episodes are gathered into one padded ``generate`` call (dynamic
batching): ``complete`` puts the request on a queue and awaits a future; one worker thread
takes whatever is queued (up to ``max_batch_size`` rows, each of the ``n`` samples of a
request being one row), groups rows with identical generation settings, runs one batch per
group and resolves the futures. On two CPU cores a batch of four gives roughly two and a
half times the tokens per second of one request, so gathering matters.

Semantics follow the OpenAI API where transformers allows: stop strings end a completion
and are not part of its text; ``temperature == 0`` is greedy decoding; ``top_k`` is off
unless asked for; ``seed`` seeds torch before the batch that contains the request (a batch
only ever mixes requests with the same seed). Token counts are exact: prompt tokens without
padding, completion tokens up to and including the end-of-sequence token.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from prefbuild.teachers.base import Completion, Sampling, Teacher, TeacherError, TeacherRequest
from prefbuild.teachers.embedded import EMBEDDED_MODEL_NAME, is_embedded, require_local_stack, resolve_model
from prefbuild.tooluse.native import with_text_tool_calls

__all__ = ["TransformersTeacher", "resolve_device"]

logger = logging.getLogger(__name__)

# Extensions that constrain the output; silently ignoring them would return wrong data.
UNSUPPORTED_EXTRAS = frozenset(
    {"structured_outputs", "guided_regex", "guided_choice", "guided_json", "response_format"}
)
SUPPORTED_EXTRAS = frozenset({"top_k", "min_p", "repetition_penalty", "chat_template_kwargs"})


@dataclass
class _Job:
    request: TeacherRequest
    future: asyncio.Future[list[Completion]]
    loop: asyncio.AbstractEventLoop
    results: list[Completion | None]


@dataclass(frozen=True)
class _Row:
    job: _Job
    sample: int


def _settings_key(sampling: Sampling) -> tuple[Any, ...]:
    """Rows with equal keys can share one ``generate`` call."""
    extra = sampling.extra_body
    return (
        sampling.temperature,
        sampling.top_p,
        sampling.max_tokens,
        sampling.stop,
        sampling.seed,
        extra.get("top_k"),
        extra.get("min_p"),
        extra.get("repetition_penalty"),
    )


def resolve_device(device: str) -> str:
    """The torch device a ``device`` setting names: ``auto`` is ``cuda`` when torch sees a GPU, else ``cpu``.

    Args:
        device: ``auto`` or a torch device string (``cpu``, ``cuda``, ``cuda:1``, ``mps``).

    Returns:
        A torch device string.

    Raises:
        TeacherError: a device torch does not know.

    Example:
        >>> resolve_device("cpu")
        'cpu'
    """
    require_local_stack("the transformers teacher")
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    try:
        return str(torch.device(device))
    except RuntimeError as error:
        raise TeacherError(f"transformers teacher: device {device!r}: {error}") from None


def _resolve(job: _Job, outcome: list[Completion] | BaseException) -> None:
    def deliver() -> None:
        if job.future.done():
            return
        if isinstance(outcome, BaseException):
            job.future.set_exception(outcome)
        else:
            job.future.set_result(outcome)

    job.loop.call_soon_threadsafe(deliver)


class TransformersTeacher(Teacher):
    """A Hugging Face causal LM loaded in this process, with dynamic batching across requests."""

    backend = "transformers"

    def __init__(
        self,
        model: str = "embedded",
        *,
        max_batch_size: int = 8,
        linger_s: float = 0.01,
        dtype: str = "bfloat16",
        device: str = "auto",
        default_sampling: Sampling | None = None,
    ) -> None:
        self._source = model
        self.model = EMBEDDED_MODEL_NAME if is_embedded(model) else model
        self.max_batch_size = max_batch_size
        self.linger_s = linger_s
        self.dtype = dtype
        self.device = device
        self.default_sampling = default_sampling or Sampling()
        self._queue: queue.Queue[_Job | None] = queue.Queue()
        self._worker: threading.Thread | None = None
        self._lm: Any = None
        self._tokenizer: Any = None
        self._warned: set[str] = set()

    def __repr__(self) -> str:
        return (
            f"TransformersTeacher(model={self.model!r}, max_batch_size={self.max_batch_size}, device={self.device!r})"
        )

    # ----------------------------------------------------------------- lifecycle
    async def start(self) -> None:
        if self._worker is not None:
            return
        await asyncio.to_thread(self._load)
        self._worker = threading.Thread(target=self._work, name="prefbuild-transformers-teacher", daemon=True)
        self._worker.start()

    def _load(self) -> None:
        import os

        require_local_stack("the transformers teacher")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        path, _ = resolve_model(self._source)
        device = resolve_device(self.device)
        try:
            tokenizer = AutoTokenizer.from_pretrained(path)
            lm = AutoModelForCausalLM.from_pretrained(path, dtype=getattr(torch, self.dtype)).to(device)
        # A CPU-only torch build answers a CUDA device with an AssertionError.
        except (OSError, ValueError, RuntimeError, AssertionError) as error:
            raise TeacherError(f"transformers teacher: cannot load model {path!r} on {device}: {error}") from None
        tokenizer.padding_side = "left"
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        if not tokenizer.chat_template:
            raise TeacherError(f"transformers teacher: the tokenizer of {path!r} has no chat template")
        lm.eval()
        self._tokenizer, self._lm = tokenizer, lm

    async def close(self) -> None:
        worker, self._worker = self._worker, None
        if worker is not None:
            self._queue.put(None)
            await asyncio.to_thread(worker.join)
        self._fail_pending(TeacherError("the transformers teacher was closed"))

    def _fail_pending(self, error: TeacherError) -> None:
        while True:
            try:
                job = self._queue.get_nowait()
            except queue.Empty:  # handled: no job left to fail
                return
            if job is not None:
                _resolve(job, error)

    # ----------------------------------------------------------------- requests
    async def complete(self, request: TeacherRequest) -> list[Completion]:
        if self._worker is None:
            raise TeacherError("the transformers teacher is not started: use `async with teacher:`")
        self._check_extras(request.sampling)
        loop = asyncio.get_running_loop()
        job = _Job(request, loop.create_future(), loop, [None] * request.sampling.n)
        self._queue.put(job)
        return await job.future

    def _check_extras(self, sampling: Sampling) -> None:
        blocked = sorted(UNSUPPORTED_EXTRAS & set(sampling.extra_body))
        if blocked:
            raise TeacherError(
                f"the transformers teacher cannot honour {', '.join(blocked)}; use the vllm or openai backend"
            )
        ignored = sorted(set(sampling.extra_body) - SUPPORTED_EXTRAS - self._warned)
        if ignored:
            logger.warning("transformers teacher ignores sampling extras: %s", ", ".join(ignored))
            self._warned.update(ignored)

    # ----------------------------------------------------------------- worker thread
    def _work(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            jobs = [first]
            rows = first.request.sampling.n
            deadline = time.monotonic() + self.linger_s
            stop = False
            while rows < self.max_batch_size:
                try:
                    job = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:  # handled: no more jobs within the batching window: the batch runs as it is
                    break
                if job is None:
                    stop = True
                    break
                jobs.append(job)
                rows += job.request.sampling.n
            self._run(jobs)
            if stop:
                return

    def _run(self, jobs: Sequence[_Job]) -> None:
        groups: dict[tuple[Any, ...], list[_Row]] = {}
        for job in jobs:
            key = _settings_key(job.request.sampling)
            groups.setdefault(key, []).extend(_Row(job, sample) for sample in range(job.request.sampling.n))
        for rows in groups.values():
            for start in range(0, len(rows), self.max_batch_size):
                chunk = rows[start : start + self.max_batch_size]
                try:
                    completions = self._generate(chunk)
                except Exception as error:
                    # handled: boundary: any generation failure fails the batch's requests with a TeacherError
                    failure = TeacherError(f"transformers teacher: generation failed: {type(error).__name__}: {error}")
                    for job in {id(row.job): row.job for row in chunk}.values():
                        _resolve(job, failure)
                    continue
                for row, completion in zip(chunk, completions, strict=True):
                    row.job.results[row.sample] = completion
                    if all(result is not None for result in row.job.results):
                        _resolve(row.job, [result for result in row.job.results if result is not None])

    def _prompt(self, request: TeacherRequest) -> str:
        messages = [message.model_dump(mode="json", exclude_none=True) for message in request.messages]
        template_kwargs = dict(request.sampling.extra_body.get("chat_template_kwargs") or {})
        return self._tokenizer.apply_chat_template(
            messages, tools=request.tools, add_generation_prompt=True, tokenize=False, **template_kwargs
        )

    def _generate(self, rows: Sequence[_Row]) -> list[Completion]:
        import torch

        sampling = rows[0].job.request.sampling
        extra = sampling.extra_body
        tokenizer = self._tokenizer
        prompts = [self._prompt(row.job.request) for row in rows]
        encoded = tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False).to(self._lm.device)
        options: dict[str, Any] = {
            "max_new_tokens": sampling.max_tokens,
            "pad_token_id": tokenizer.pad_token_id,
        }
        if sampling.temperature > 0:
            options.update(do_sample=True, temperature=sampling.temperature, top_p=sampling.top_p)
            if int(extra.get("top_k") or 0) > 0:  # vLLM's -1 and 0 mean "off", as does leaving it out
                options["top_k"] = int(extra["top_k"])
            if extra.get("min_p"):
                options["min_p"] = float(extra["min_p"])
        else:
            options["do_sample"] = False
        if extra.get("repetition_penalty"):
            options["repetition_penalty"] = float(extra["repetition_penalty"])
        if sampling.stop:
            options.update(stop_strings=list(sampling.stop), tokenizer=tokenizer)
        if sampling.seed is not None:
            torch.manual_seed(sampling.seed)
        started = time.perf_counter()
        with torch.inference_mode():
            output = self._lm.generate(**encoded, **options)
        latency = time.perf_counter() - started
        prompt_width = encoded["input_ids"].shape[1]
        prompt_counts = encoded["attention_mask"].sum(dim=1).tolist()
        end_ids = self._end_token_ids()
        completions = []
        for position, generated in enumerate(output[:, prompt_width:].tolist()):
            end = next((index for index, token in enumerate(generated) if token in end_ids), None)
            tokens = generated if end is None else generated[:end]
            text = tokenizer.decode(tokens, skip_special_tokens=True)
            cut = min((text.find(stop) for stop in sampling.stop if stop in text), default=-1)
            if cut >= 0:
                text, finish, count = text[:cut], "stop", len(tokens)
            elif end is not None:
                finish, count = "stop", end + 1
            else:
                finish, count = "length", len(tokens)
            completion = Completion(text, finish, int(prompt_counts[position]), count, latency)
            completions.append(with_text_tool_calls(completion, rows[position].job.request.tools))
        return completions

    def _end_token_ids(self) -> set[int]:
        ids = self._lm.generation_config.eos_token_id
        ends = set(ids if isinstance(ids, list) else [ids]) if ids is not None else set()
        ends.add(self._tokenizer.pad_token_id)
        ends.discard(None)
        return ends
