"""Ordinary permissions for artefacts meant to be shared (datasets, reports, exported JSONL).

Atomic writes go through ``tempfile.mkstemp`` / ``mkdtemp``, which create files 0600 and
folders 0700; an exported dataset or a report is an ordinary file, so it gets what the user's
umask gives any new file (usually 0644 / 0755).
"""

from __future__ import annotations

import os
from pathlib import Path


def current_umask() -> int:
    """The process umask (read without changing it for longer than the call).

    Example:
        >>> 0 <= current_umask() <= 0o777
        True
    """
    umask = os.umask(0)
    os.umask(umask)
    return umask


def make_shareable(path: str | os.PathLike[str]) -> None:
    """Give ``path`` the permissions a new file (0666) or folder (0777) gets under the umask, recursively.

    Example:
        >>> make_shareable("runs/simulate/report.html")  # doctest: +SKIP
    """
    umask = current_umask()
    root = Path(path)
    for item in [root, *root.rglob("*")] if root.is_dir() else [root]:
        item.chmod((0o777 if item.is_dir() else 0o666) & ~umask)
