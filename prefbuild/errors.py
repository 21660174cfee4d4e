"""The one exception type the CLI turns into a clean message and a non-zero exit code.

Library code raises ``PrefbuildError`` (or the located ``RecordError`` / ``RecipeError``)
for anything a user can fix; the CLI prints ``error: <message>`` without a traceback.
"""

from __future__ import annotations


class PrefbuildError(RuntimeError):
    """A failure the user can act on; the message says what and where."""

    exit_code: int = 1
