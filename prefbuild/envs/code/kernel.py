"""The Python kernel that runs inside the code sandbox (this file's source is handed to
``python -I -c``; it imports nothing from prefbuild).

It drops privileges when started as root (a per-sandbox uid, ``no_new_privs``), applies
the resource limits, hides the control channel from user code, then serves requests: one
JSON line per cell on the control fd, one JSON reply per cell on the reply fd. Cells share
one namespace (notebook semantics: the value of a trailing expression is shown). stdout
and stderr of the cell, and of any child process it starts, go to one in-memory file
whose size the file-size limit bounds; the reply carries at most ``output_chars`` of it.
"""

from __future__ import annotations

import ast
import contextlib
import ctypes
import json
import linecache
import os
import resource
import signal
import sys
import traceback
from typing import Any

PR_SET_NO_NEW_PRIVS = 38
TRUNCATION_MARKER = "\n[... output truncated: {omitted} more characters ...]"


class CPUTimeLimitExceeded(BaseException):
    """Raised in the cell when its CPU-time allowance is spent (SIGXCPU)."""


def _drop_privileges(uid: int) -> None:
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def _no_new_privileges() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")


def _apply_limits(config: dict[str, Any]) -> None:
    limits = {
        resource.RLIMIT_AS: config["memory_bytes"],
        resource.RLIMIT_NPROC: config["processes"],
        resource.RLIMIT_FSIZE: config["file_bytes"],
        resource.RLIMIT_NOFILE: config["open_files"],
        resource.RLIMIT_CORE: 0,
        resource.RLIMIT_CPU: config["episode_cpu_seconds"],
    }
    for kind, value in limits.items():
        resource.setrlimit(kind, (value, value))


def _on_cpu_limit(signum: int, frame: object) -> None:
    raise CPUTimeLimitExceeded("CPU time limit exceeded")


def _cpu_used() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _allow_cpu(seconds: int) -> None:
    """Let the next cell use ``seconds`` more CPU seconds (the hard limit is the episode's)."""
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = int(_cpu_used()) + seconds
    resource.setrlimit(resource.RLIMIT_CPU, (min(soft, hard), hard))


def _compile_cell(code: str, filename: str) -> tuple[Any, Any]:
    """(statements, trailing expression or None), compiled for ``filename``."""
    linecache.cache[filename] = (len(code), None, code.splitlines(keepends=True), filename)
    tree = ast.parse(code, filename=filename, mode="exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    body = compile(tree, filename, "exec")
    return body, (compile(last, filename, "eval") if last is not None else None)


def _run_cell(code: str, filename: str, namespace: dict[str, Any]) -> tuple[str | None, str | None]:
    """Run one cell; returns (error line, traceback) or (None, None)."""
    try:
        body, last = _compile_cell(code, filename)
        exec(body, namespace)
        if last is not None:
            value = eval(last, namespace)
            if value is not None:
                print(repr(value))
        return None, None
    except BaseException as error:
        # handled: every failure of user code (SystemExit included) is the cell's result, as a traceback
        tb = error.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != filename:
            tb = tb.tb_next
        lines = traceback.format_exception(type(error), error, tb)
        headline = traceback.format_exception_only(type(error), error)[-1].strip()
        return headline, "".join(lines)


def _read_output(capture: int, limit: int) -> tuple[str, int]:
    size = os.lseek(capture, 0, os.SEEK_END)
    os.lseek(capture, 0, os.SEEK_SET)
    data = os.read(capture, min(size, limit * 4 + 4))
    text = data.decode("utf-8", errors="replace")
    total = len(text) + max(0, size - len(data))
    if total > limit:
        text = text[:limit] + TRUNCATION_MARKER.format(omitted=total - limit)
    return text, size


def _flush_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        # handled: a cell may have closed or replaced the stream; the real streams are restored below
        with contextlib.suppress(BaseException):
            stream.flush()
    sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__


def serve(config: dict[str, Any]) -> None:
    """Answer cells until the control channel closes."""
    control = os.fdopen(os.dup(0), "rb")
    replies = os.fdopen(os.dup(config["reply_fd"]), "wb")
    os.close(config["reply_fd"])
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": __builtins__}
    signal.signal(signal.SIGXCPU, _on_cpu_limit)
    sys.stdout.reconfigure(line_buffering=True)  # stdout and stderr interleave as printed
    saved_out, saved_err = os.dup(1), os.dup(2)
    kernel_pid = os.getpid()
    for number, line in enumerate(iter(control.readline, b""), start=1):
        request = json.loads(line)
        capture = os.memfd_create("cell-output")
        os.dup2(capture, 1)
        os.dup2(capture, 2)
        _allow_cpu(config["cpu_seconds"])
        headline, trace = _run_cell(request["code"], f"<cell {number}>", namespace)
        if os.getpid() != kernel_pid:  # a process the cell forked finished the cell: it must not serve
            os._exit(0)
        signal.signal(signal.SIGXCPU, _on_cpu_limit)
        _flush_streams()
        os.dup2(saved_out, 1)
        os.dup2(saved_err, 2)
        output, size = _read_output(capture, config["output_chars"])
        os.close(capture)
        if trace is not None and len(trace) > config["output_chars"]:
            trace = trace[-config["output_chars"] :]
        reply = {"output": output, "output_bytes": size, "error": headline, "traceback": trace}
        replies.write(json.dumps(reply).encode() + b"\n")
        replies.flush()


def main() -> None:
    config = json.loads(sys.argv[1])
    if config.get("uid") is not None:
        _drop_privileges(config["uid"])
    _no_new_privileges()
    os.chdir(config["workdir"])
    _apply_limits(config)
    serve(config)


if __name__ == "__main__":
    main()
