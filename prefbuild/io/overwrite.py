"""What an output may replace: never an input of the same command, never a device or other
special file, never a directory prefbuild did not write.

Every stage writes its output whole and renames it into place, so an output path that names
an input (``pair labelled.jsonl -o labelled.jsonl``), a device (``-o /dev/sda``) or a folder
of the user's files would silently replace it. These checks run before anything is written.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from prefbuild.errors import PrefbuildError


class OutputError(PrefbuildError, ValueError):
    """An output path that would replace something it must not; the message names the path."""


def check_replaceable_file(path: str | os.PathLike[str]) -> None:
    """Refuse a file output whose path holds a directory, a device, a pipe or a socket.

    Args:
        path: the file an atomic write will rename into place.

    Raises:
        OutputError: ``path`` exists and is not a regular file (a link to one is fine), or a folder on
            its way is a file.

    Example:
        >>> check_replaceable_file("/dev/null")
        Traceback (most recent call last):
        ...
        prefbuild.io.overwrite.OutputError: /dev/null: exists and is not a regular file (a character device); ...
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:  # handled: nothing there to replace
        return
    except NotADirectoryError:  # handled: reported as the folder on the way that is a file
        check_folders_on_the_way(path)
        raise
    if stat.S_ISREG(mode):
        return
    kind = "a directory" if stat.S_ISDIR(mode) else _special_kind(mode)
    raise OutputError(f"{path}: exists and is not a regular file ({kind}); choose another output path")


def check_folders_on_the_way(path: str | os.PathLike[str]) -> None:
    """Refuse an output path one of whose folders is an existing file (``-o notes.txt/out``).

    Raises:
        OutputError: the nearest existing parent of ``path`` is not a directory.
    """
    existing = next((parent for parent in Path(path).parents if parent.exists()), None)
    if existing is not None and not existing.is_dir():
        mode = existing.stat().st_mode
        kind = "a file" if stat.S_ISREG(mode) else _special_kind(mode)
        raise OutputError(f"{path}: {existing} is {kind}, not a folder; choose another output path")


def _special_kind(mode: int) -> str:
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISFIFO(mode):
        return "a pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def refuse_inputs_as_output(output: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str]],
                            *, option: str = "--output") -> None:
    """Refuse an output path that is one of the command's input files.

    Args:
        output: the file the command will write.
        inputs: the files it reads.
        option: how the output was given, for the message.

    Raises:
        OutputError: ``output`` is the same file as an input (also through a link or another spelling).

    Example:
        >>> refuse_inputs_as_output("labelled.jsonl", ["labelled.jsonl"])  # doctest: +SKIP
        Traceback (most recent call last):
        ...
        prefbuild.io.overwrite.OutputError: labelled.jsonl: --output is also an input of this command; ...
    """
    target = Path(output)
    if not target.exists():
        return
    for source in inputs:
        if Path(source).exists() and os.path.samefile(target, source):
            raise OutputError(
                f"{output}: {option} is also an input of this command; writing it would replace the input "
                "(choose another output path)"
            )


def refuse_replacing_foreign_dir(target: str | os.PathLike[str], *, marker: str, written_by: str) -> None:
    """Refuse to replace a non-empty directory unless an earlier run of the same writer made it.

    Args:
        target: the directory a writer will replace whole.
        marker: a file name only that writer puts in its directories.
        written_by: the command, for the message (``prefbuild export``).

    Raises:
        OutputError: ``target`` is the working directory or holds it, or is a non-empty directory without
            ``marker``.
    """
    path = Path(target)
    if not path.is_dir():
        return
    here = Path.cwd().resolve()
    resolved = path.resolve()
    if resolved == here or resolved in here.parents:
        raise OutputError(f"{target}: is the working directory or holds it; choose a new directory to write into")
    if (path / marker).exists() or not any(path.iterdir()):
        return
    raise OutputError(
        f"{target}: a non-empty directory that {written_by} did not write; it would be replaced whole "
        "(choose a new directory, or empty this one first)"
    )


def refuse_inputs_inside(target: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str]]) -> None:
    """Refuse a directory output that holds one of the command's input files (it is replaced whole).

    Raises:
        OutputError: an input lies inside ``target``.
    """
    root = Path(target).resolve()
    for source in inputs:
        resolved = Path(source).resolve()
        if root == resolved or root in resolved.parents:
            raise OutputError(
                f"{target}: holds the input {source}, and the output directory is replaced whole "
                "(choose another output directory)"
            )
