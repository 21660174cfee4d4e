"""The command line's one error handler: ``error: <where> <what>``, a non-zero exit, no traceback.

Every command and group of prefbuild uses ``PrefbuildCommand`` / ``PrefbuildGroup``, so the
same handling applies whether a command runs under ``prefbuild`` or on its own (tests, a
plug-in that reuses a command). Usage errors (a bad option) keep click's own exit code 2.
"""

from __future__ import annotations

import signal
import sys
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import click
import yaml

from prefbuild.errors import PrefbuildError
from prefbuild.io.jsonl import TruncatedLineWarning
from prefbuild.io.rundir import StaleLabelsWarning
from prefbuild.secrets import mask as redact


def report(message: str, exit_code: int = 1) -> None:
    """Print one error line on stderr and exit."""
    click.secho(f"error: {redact(message)}", fg="red", err=True)
    sys.exit(exit_code)


_python_show_warning = warnings.showwarning


def _show_warning(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
    """A prefbuild warning is one ``warning: file:line ...`` line, not Python's source-quoting format."""
    if issubclass(category, (TruncatedLineWarning, StaleLabelsWarning)):
        click.secho(f"warning: {redact(str(message))}", fg="yellow", err=True)
    else:
        _python_show_warning(message, category, *args, **kwargs)


@contextmanager
def handled_errors() -> Iterator[None]:
    """Turn the errors a user can fix into one located line and an exit code."""
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            yield
    except PrefbuildError as error:
        report(str(error), error.exit_code)
    except click.exceptions.Exit:
        raise
    except click.ClickException as error:
        report(error.format_message(), error.exit_code)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError) as error:
        report(f"{error.filename}: {error.strerror.lower() if error.strerror else type(error).__name__}")
    except OSError as error:  # the machine, not prefbuild: a full disk, a file too large, a path in use, ...
        report(_os_error_line(error))
    except UnicodeDecodeError as error:
        report(f"input is not UTF-8 text ({error.reason} at byte {error.start})")
    except yaml.YAMLError as error:
        report(f"not valid YAML: {str(error).splitlines()[0]}")
    except KeyboardInterrupt:
        if _terminated.is_set():
            click.secho("terminated", fg="yellow", err=True)
            sys.exit(128 + signal.SIGTERM)
        click.secho("interrupted", fg="yellow", err=True)
        sys.exit(130)


_terminated = threading.Event()


def _interrupt_on_sigterm(signum: int, frame: FrameType | None) -> None:
    """SIGTERM (``kill``, a job scheduler's time limit) takes Ctrl-C's path: SIGINT's handler runs
    (asyncio's cancels its main task, so episodes in flight stop cleanly; elsewhere Python raises
    ``KeyboardInterrupt``), temporary files are removed, what was written is kept."""
    _terminated.set()
    if not callable(signal.getsignal(signal.SIGINT)):  # SIGINT ignored (a background job) or not Python's
        raise KeyboardInterrupt
    signal.raise_signal(signal.SIGINT)


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """While a command runs in the main thread, SIGTERM ends it as Ctrl-C does (exit 143)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _terminated.clear()
    previous = signal.signal(signal.SIGTERM, _interrupt_on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _os_error_line(error: OSError) -> str:
    """``path: what the OS said`` (both paths of a rename), or the error's own text without a path."""
    what = error.strerror.lower() if error.strerror else str(error) or type(error).__name__
    paths = [str(name) for name in (error.filename, error.filename2) if name is not None]
    return f"{' -> '.join(paths)}: {what}" if paths else what


class PrefbuildCommand(click.Command):
    """A command whose user errors are reported by ``handled_errors``."""

    def invoke(self, ctx: click.Context) -> Any:
        with handled_errors():
            return super().invoke(ctx)


class PrefbuildGroup(click.Group):
    """A group whose commands (and itself) report user errors by ``handled_errors``."""

    command_class = PrefbuildCommand

    def main(self, *args: Any, **kwargs: Any) -> Any:
        with terminate_as_interrupt():
            return super().main(*args, **kwargs)

    def invoke(self, ctx: click.Context) -> Any:
        with handled_errors():
            return super().invoke(ctx)


PrefbuildGroup.group_class = PrefbuildGroup
