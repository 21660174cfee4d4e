"""Pairs that fit a trainer's ``max_length``: tokens counted with the trained model's own chat template.

A DPO trainer truncates (or drops) a row longer than its ``max_length``: an agent prompt holds
the instructions and every turn so far, so a late decision of a long episode can lose the very
turn the pair is about. ``pairs.max_tokens`` with ``pairs.tokenizer`` (the model you train, a
local folder or a Hub id) keeps only pairs whose prompt plus the longer side fits.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from typing import Any

from prefbuild.errors import PrefbuildError
from prefbuild.exports.base import message_dict
from prefbuild.records import Message, Pair

log = logging.getLogger(__name__)
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
# A folder holds a tokenizer when it has one of these (fast, slow SentencePiece, or BPE vocabulary files).
_TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json", "vocab.txt")


def _hub_id(name: str) -> bool:
    """Whether ``name`` reads as a Hub id (``Qwen/Qwen3-4B-Instruct-2507``) rather than a path."""
    return _HUB_ID.match(name) is not None and not Path(name).exists()


class TokenBudget:
    """Counts a pair's tokens as a trainer sees them: the tokenizer's chat template over the prompt
    and one side (tools included), the longer of the two sides.

    Args:
        tokenizer: a local folder or a Hub id of the model you train (its ``tokenizer_config.json``).
        max_tokens: the trainer's ``max_length``.

    Raises:
        PrefbuildError: transformers is missing, or the tokenizer cannot be loaded (one line).

    Example:
        >>> budget = TokenBudget("Qwen/Qwen3-4B-Instruct-2507", 2048)  # doctest: +SKIP
        >>> budget.fits(pair)  # doctest: +SKIP
        True
    """

    def __init__(self, tokenizer: str, max_tokens: int) -> None:
        try:
            from transformers import AutoTokenizer
        except ImportError:  # handled: raised as the one-line error below
            raise PrefbuildError(
                "pairs.max_tokens counts tokens with the transformers library: pip install 'prefbuild[local]'"
            ) from None
        looks_like_a_path = tokenizer.startswith((".", "~")) or (os.sep in tokenizer and not _hub_id(tokenizer))
        if looks_like_a_path and not Path(tokenizer).expanduser().is_dir():
            raise PrefbuildError(f"pairs.tokenizer {tokenizer!r}: cannot load it: no such folder")
        folder = Path(tokenizer).expanduser()
        if folder.is_dir() and not any((folder / name).is_file() for name in _TOKENIZER_FILES):
            raise PrefbuildError(f"pairs.tokenizer {tokenizer!r}: cannot load it: no tokenizer in the folder "
                                 f"(none of {', '.join(_TOKENIZER_FILES)})")
        hub_log = logging.getLogger("huggingface_hub")
        level = hub_log.level
        hub_log.setLevel(logging.ERROR)  # no retry warning per attempt when the Hub is out of reach: one line says so
        try:
            self._tokenizer = AutoTokenizer.from_pretrained(str(folder) if looks_like_a_path else tokenizer)
        except (OSError, ValueError) as error:  # transformers explains at length: its first line says what
            first = next((line.strip() for line in str(error).splitlines() if line.strip()), type(error).__name__)
            raise PrefbuildError(f"pairs.tokenizer {tokenizer!r}: cannot load it: {first}") from None
        finally:
            hub_log.setLevel(level)
        self.name = tokenizer
        self.max_tokens = max_tokens
        self._templated = getattr(self._tokenizer, "chat_template", None) is not None
        if not self._templated:
            log.warning("pairs.tokenizer %r has no chat template: tokens are counted on the plain texts", tokenizer)

    def tokens(self, messages: list[Message], tools: list[dict[str, Any]] | None = None) -> int:
        """Tokens of ``messages`` (and ``tools``) in the tokenizer's chat template."""
        if self._templated:
            ids = self._tokenizer.apply_chat_template(
                [message_dict(message) for message in messages], tools=tools, tokenize=True
            )
            if hasattr(ids, "keys"):  # a BatchEncoding
                ids = ids["input_ids"]
            return len(ids)
        text = "\n".join(message.content or "" for message in messages)
        return len(self._tokenizer(text)["input_ids"])

    def longest(self, pair: Pair) -> int:
        """Tokens of the prompt with the longer of the two sides."""
        return max(self.tokens([*pair.prompt, *side], pair.tools) for side in (pair.chosen, pair.rejected))

    def fits(self, pair: Pair) -> bool:
        """Whether the prompt and either side fit ``max_tokens``."""
        return self.longest(pair) <= self.max_tokens
