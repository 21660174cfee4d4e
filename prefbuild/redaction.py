"""Resolved secrets are never written: the values to hide, and the one function that hides them.

A recipe's ``${VAR}`` values taken from the environment, the teacher's API key and the
password of a ``http://user:password@host`` URL are registered when a recipe is loaded;
``redact`` replaces each of them (and any URL password) with ``***`` in text about to be
stored or printed (episode error texts, the recorded recipe, the command line's error line).
"""

from __future__ import annotations

import re
import threading

MASK = "***"
MIN_LENGTH = 4  # shorter values would mask ordinary words

_lock = threading.Lock()
_values: set[str] = set()
_URL_PASSWORD = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^/@:\s]*:)(?P<password>[^/@\s]+)(?=@)")


def register(*values: str | None) -> None:
    """Remember resolved secret values so ``redact`` hides them from now on.

    Args:
        values: secret values; ``None`` and values shorter than 4 characters are ignored.

    Example:
        >>> register("sk-example-123")
        >>> redact("bad key sk-example-123")
        'bad key ***'
    """
    with _lock:
        _values.update(value for value in values if value and len(value) >= MIN_LENGTH)


def redact(text: str) -> str:
    """``text`` with every registered secret and every URL password replaced by ``***``.

    Args:
        text: text about to be stored or printed.

    Returns:
        The masked text.

    Example:
        >>> redact("POST http://bob:hunter22@host/v1 failed")
        'POST http://bob:***@host/v1 failed'
    """
    text = _URL_PASSWORD.sub(lambda match: match.group("head") + MASK, text)
    with _lock:
        values = sorted(_values, key=len, reverse=True)
    for value in values:
        if value in text:
            text = text.replace(value, MASK)
    return text
