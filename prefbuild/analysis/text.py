"""Cutting long record text for display (terminal views, the HTML report, the dataset card).

One rule everywhere: keep at most ``limit`` characters and say how many were cut, so a reader
always knows that something is missing and how much.
"""

from __future__ import annotations

from typing import Literal


def clip(text: str, limit: int, *, keep: Literal["head", "tail"] = "head") -> str:
    """``text`` cut to ``limit`` characters, saying how many were cut; ``keep`` picks the start or the end.

    Args:
        text: any text.
        limit: characters to keep at most.
        keep: ``"head"`` keeps the start (an answer), ``"tail"`` the end (the latest part of an observation).

    Returns:
        ``text`` itself when it fits, else the kept part with a ``[N characters cut]`` marker.

    Example:
        >>> clip("abcdef", 3)
        'abc… [3 characters cut]'
        >>> clip("abcdef", 3, keep="tail")
        '[3 characters cut] …def'
    """
    if len(text) <= limit:
        return text
    cut = len(text) - limit
    if keep == "tail":
        return f"[{cut:,} characters cut] …{text[-limit:]}"
    return f"{text[:limit]}… [{cut:,} characters cut]"


def rate(value: float | None) -> str:
    """A share as a percentage with one decimal; ``unknown`` where there is none.

    Example:
        >>> rate(0.25), rate(None)
        ('25.0%', 'unknown')
    """
    return "unknown" if value is None else f"{value:.1%}"
