"""A sandboxed Python interpreter for the ``code`` env's ``code_interpreter`` tool.

Why bubblewrap plus rlimits
---------------------------
Model-written code is untrusted. prefbuild needs isolation that installs from a distribution
(``apt-get install bubblewrap``), runs without a daemon or root (unprivileged user namespaces),
starts in milliseconds (hundreds of episodes, a fresh interpreter each) and composes with the
plain POSIX resource limits. bubblewrap (``bwrap``, the sandbox under Flatpak) gives:

- a private **network** namespace: no interface but loopback, so no host or internet access;
- a private **pid** namespace: the code sees and can signal only its own processes, and
  killing the sandbox kills all of them (fork bombs cannot outlive it);
- a private **mount** namespace built from read-only binds of the system and the Python
  installation only (no home, no project, no credentials), with private size-capped tmpfs
  at ``/tmp`` (the working directory) and ``/dev/shm``: no writes anywhere else;
- a cleared **environment** (host secrets in env vars never reach the code), a new session
  (no terminal), and ``--die-with-parent``.

Inside, the kernel (``kernel.py``) sets rlimits on CPU time (per cell and per episode),
address space, processes, file size (which also bounds output), open files and core dumps,
and sets ``no_new_privs``; a seccomp filter (``seccomp.py``) refuses namespace creation,
mounts, keyrings, BPF, ptrace and other kernel interfaces Python code never needs; when
prefbuild runs as root, each sandbox also gets its own
unprivileged uid so the process limit is per episode and nothing runs as root. The host
enforces a wall-clock timeout per cell and kills the whole sandbox on expiry. Docker or
gVisor would isolate more strongly but need a daemon and root; seccomp-only or Python-level
restrictions (audit hooks) are bypassable from ``ctypes``.

Limits of the guarantee: memory is bounded per process (address space), so a sandbox may use
up to ``processes x memory_bytes``; there are no cgroups. Where the kernel forbids namespaces
(some containers, hardened kernels), the interpreter runs with rlimits, a cleared environment
and a temporary working directory only, after a loud warning: network and filesystem are
then NOT isolated.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import select
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
import warnings
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from prefbuild.envs.code.seccomp import filter_program

logger = logging.getLogger(__name__)

KERNEL_SOURCE = (Path(__file__).parent / "kernel.py").read_text(encoding="utf-8")
WORKDIR = "/tmp"
SANDBOX_UID_RANGE = (1_000_000, 2_000_000_000)
SAFE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": WORKDIR, "LANG": "C.UTF-8", "PYTHONHASHSEED": "0"}
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/etc/alternatives")
Isolation = Literal["auto", "bwrap", "none"]


class SandboxLimits(BaseModel):
    """Resource limits of one sandbox (recipe key ``env.options.sandbox``).

    Example:
        >>> SandboxLimits(wall_seconds=5).cpu_seconds
        10
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    wall_seconds: float = Field(default=15.0, gt=0, description="Wall-clock timeout of one call.")
    cpu_seconds: int = Field(default=10, ge=1, description="CPU seconds one call may use.")
    episode_cpu_seconds: int = Field(default=120, ge=1, description="CPU seconds of the whole episode.")
    memory_bytes: int = Field(default=1 << 30, ge=64 << 20, description="Address space per process.")
    processes: int = Field(default=16, ge=1, description="Processes (and threads) the sandbox may run.")
    file_bytes: int = Field(default=16 << 20, ge=1 << 16, description="Largest file (and captured output).")
    open_files: int = Field(default=64, ge=16, description="Open file descriptors per process.")
    tmp_bytes: int = Field(default=64 << 20, ge=1 << 20, description="Size of the private /tmp.")
    output_chars: int = Field(default=4000, ge=100, description="Characters of output returned per call.")


@dataclass(frozen=True)
class Execution:
    """The result of one ``code_interpreter`` call.

    Attributes:
        output: stdout and stderr of the call, interleaved, truncated with a marker.
        error: The exception line (``ZeroDivisionError: division by zero``) or the reason the
            interpreter stopped (timeout, killed); None when the code ran cleanly.
        traceback: The traceback text of an exception, or None.
        timed_out: The wall-clock timeout expired (the interpreter was restarted).
        restarted: The interpreter died or was killed; the next call starts a fresh one.
    """

    output: str
    error: str | None = None
    traceback: str | None = None
    timed_out: bool = False
    restarted: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None

    def text(self) -> str:
        """The tool result shown to the model."""
        parts = [self.output.rstrip("\n")] if self.output.strip() else []
        if self.traceback:
            parts.append(self.traceback.rstrip("\n"))
        elif self.error:
            parts.append(f"Error: {self.error}")
        return "\n".join(parts) if parts else "(no output)"


def _python_roots() -> list[str]:
    """Directories the interpreter needs: its prefixes and the real paths of its library dirs."""
    roots: set[str] = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            roots.add(path)
    roots.add(os.path.dirname(os.path.realpath(sys.executable)))
    resolved = {os.path.realpath(root) for root in roots} | roots
    kept = sorted(root for root in resolved if os.path.isdir(root) and root != "/")
    return [root for root in kept if not any(root != other and root.startswith(other + os.sep) for other in kept)]


def _bwrap_argv(limits: SandboxLimits) -> list[str]:
    """The bubblewrap command line (without the program) for the current user."""
    argv = [
        "bwrap", "--die-with-parent", "--new-session", "--unshare-ipc", "--unshare-pid", "--unshare-net",
        "--unshare-uts", "--unshare-cgroup-try", "--hostname", "sandbox", "--clearenv",
    ]  # fmt: skip
    if os.geteuid() != 0:
        argv += ["--unshare-user", "--disable-userns"]
    for name, value in SAFE_ENV.items():
        argv += ["--setenv", name, value]
    made: set[str] = set()

    def parents(path: str) -> None:
        parent = os.path.dirname(path)
        chain: list[str] = []
        while parent not in ("/", "") and parent not in made:
            chain.append(parent)
            parent = os.path.dirname(parent)
        for directory in reversed(chain):
            argv.extend(["--perms", "0755", "--dir", directory])
            made.add(directory)

    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            argv += ["--ro-bind", path, path]
    for path in SYSTEM_FILES:
        if os.path.exists(path):
            parents(path)
            argv += ["--ro-bind", path, path]
    # The private tmpfs goes first: an interpreter installed under the temp folder (a virtual
    # environment in /tmp) is bound on top of it afterwards, read-only, and stays visible.
    argv += ["--perms", "1777", "--size", str(limits.tmp_bytes), "--tmpfs", WORKDIR]
    made.add(WORKDIR)
    for root in _python_roots():
        if any(root == system or root.startswith(system + os.sep) for system in SYSTEM_DIRS):
            continue
        parents(root)
        argv += ["--ro-bind", root, root]
    argv += ["--proc", "/proc", "--dev", "/dev"]
    argv += ["--perms", "1777", "--size", str(min(limits.tmp_bytes, 16 << 20)), "--tmpfs", "/dev/shm"]
    argv += ["--chdir", WORKDIR]
    return argv


def _seccomp_args() -> tuple[list[str], list[int]]:
    """``--seccomp FD`` and the pipe's read end holding the BPF program (none where no table)."""
    program = filter_program()
    if program is None:
        return [], []
    # bubblewrap reads the program from this pipe before it runs the interpreter.
    filter_read, filter_write = os.pipe()
    os.write(filter_write, program)
    os.close(filter_write)
    return ["--seccomp", str(filter_read)], [filter_read]


@cache
def namespaces_available() -> str | None:
    """None when bubblewrap can build a sandbox here, else why not (checked once per process)."""
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed: apt-get install bubblewrap"
    seccomp_args, filter_fds = _seccomp_args()
    probe = [*_bwrap_argv(SandboxLimits()), *seccomp_args, "--", sys.executable, "-I", "-c", "pass"]
    try:
        result = subprocess.run(
            probe, capture_output=True, text=True, timeout=30, check=False, pass_fds=tuple(filter_fds)
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"bubblewrap failed to start: {error}"
    finally:
        for descriptor in filter_fds:
            os.close(descriptor)
    if result.returncode != 0:
        return f"the kernel refused the namespaces bubblewrap needs: {result.stderr.strip()[:300]}"
    return None


def _warn_unisolated(reason: str) -> None:
    message = (
        f"CODE SANDBOX IS NOT ISOLATED: {reason}. Model-written code will run with resource limits, a cleared "
        "environment and a temporary working directory only: it CAN reach the network and read or write your "
        "files. Install bubblewrap and allow unprivileged user namespaces, or run only code you trust."
    )
    logger.warning(message)
    warnings.warn(message, RuntimeWarning, stacklevel=3)


class CodeSandbox:
    """One episode's interpreter: a sandboxed Python process that keeps state across calls.

    Args:
        limits: Resource limits.
        stateless: Start a fresh interpreter for every call (no state carried over).
        isolation: ``auto`` (bubblewrap when the kernel allows it, else a loud warning and
            rlimits only), ``bwrap`` (fail when unavailable) or ``none`` (rlimits only; tests
            of the fallback).

    Example:
        >>> with CodeSandbox() as box:
        ...     _ = box.run("x = 6 * 7")
        ...     box.run("x").output
        '42\\n'
    """

    def __init__(self, limits: SandboxLimits | None = None, *, stateless: bool = False,
                 isolation: Isolation = "auto") -> None:  # fmt: skip
        self.limits = limits or SandboxLimits()
        self.stateless = stateless
        self.isolation = self._choose_isolation(isolation)
        self._process: subprocess.Popen[bytes] | None = None
        self._replies: int | None = None
        self._workdir: tempfile.TemporaryDirectory[str] | None = None
        self.uid: int | None = None

    @staticmethod
    def _choose_isolation(isolation: Isolation) -> Literal["bwrap", "none"]:
        if isolation == "none":
            return "none"
        reason = namespaces_available()
        if reason is None:
            return "bwrap"
        if isolation == "bwrap":
            raise RuntimeError(f"no sandbox: {reason}")
        _warn_unisolated(reason)
        return "none"

    def __enter__(self) -> CodeSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _config(self, workdir: str, reply_fd: int) -> dict[str, object]:
        limits = self.limits
        return {
            "uid": self.uid,
            "workdir": workdir,
            "reply_fd": reply_fd,
            "memory_bytes": limits.memory_bytes,
            "processes": limits.processes,
            "file_bytes": limits.file_bytes,
            "open_files": limits.open_files,
            "cpu_seconds": limits.cpu_seconds,
            "episode_cpu_seconds": limits.episode_cpu_seconds,
            "output_chars": limits.output_chars,
        }

    def _start(self) -> None:
        read_end, write_end = os.pipe()
        passed = [write_end]
        if self.isolation == "bwrap":
            self.uid = secrets.randbelow(SANDBOX_UID_RANGE[1] - SANDBOX_UID_RANGE[0]) + SANDBOX_UID_RANGE[0]
            self.uid = self.uid if os.geteuid() == 0 else None
            workdir = WORKDIR
            seccomp_args, filter_fds = _seccomp_args()
            passed += filter_fds
            prefix = [*_bwrap_argv(self.limits), *seccomp_args, "--", sys.executable]
            env: dict[str, str] | None = None
            cwd = None
        else:
            self._workdir = tempfile.TemporaryDirectory(prefix="prefbuild-code-")
            workdir = cwd = self._workdir.name
            prefix = [sys.executable]
            env = {**SAFE_ENV, "HOME": workdir, "TMPDIR": workdir}
        argv = [*prefix, "-I", "-c", KERNEL_SOURCE, json.dumps(self._config(workdir, write_end))]
        self._process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=tuple(passed),
            start_new_session=True,
            env=env,
            cwd=cwd,
        )
        for descriptor in passed:
            os.close(descriptor)
        self._replies = read_end

    def _kill(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            with contextlib.suppress(ProcessLookupError):  # handled: the process group is already gone
                os.killpg(process.pid, signal.SIGKILL)
            process.kill()
            process.wait()
            if process.stdin is not None:
                process.stdin.close()
        if self._replies is not None:
            os.close(self._replies)
            self._replies = None
        if self._workdir is not None:
            self._workdir.cleanup()
            self._workdir = None

    def close(self) -> None:
        """Kill the interpreter and everything it started."""
        self._kill()

    def _read_reply(self, deadline: float) -> bytes | None:
        assert self._replies is not None
        chunks: list[bytes] = []
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            ready, _, _ = select.select([self._replies], [], [], remaining)
            if not ready:
                return None
            chunk = os.read(self._replies, 1 << 16)
            if not chunk:
                return b"".join(chunks) if chunks and chunks[-1].endswith(b"\n") else b""
            chunks.append(chunk)
            if chunk.endswith(b"\n"):
                return b"".join(chunks)

    def run(self, code: str) -> Execution:
        """Run one cell of Python; never raises for anything the code does.

        Args:
            code: Python source; a trailing expression's value is shown, as in a notebook.

        Returns:
            The ``Execution``: output, error line, traceback, whether it timed out.
        """
        if self._process is None:
            self._start()
        assert self._process is not None and self._process.stdin is not None
        deadline = time.monotonic() + self.limits.wall_seconds
        try:
            self._process.stdin.write(json.dumps({"code": code}).encode() + b"\n")
            self._process.stdin.flush()
            raw = self._read_reply(deadline)
        except (BrokenPipeError, OSError):  # handled: a dead sandbox gives no reply; reported below from its exit code
            raw = b""
        if raw is None:
            self._kill()
            return Execution(
                output="",
                error=f"TimeoutError: the call ran longer than {self.limits.wall_seconds:g} s and was stopped; "
                "the interpreter was restarted and its state is lost",
                timed_out=True,
                restarted=True,
            )
        if not raw:
            try:
                code_ = self._process.wait(timeout=1.0) if self._process else None
            except subprocess.TimeoutExpired:
                # handled: a sandbox still running after the grace time has no exit code; it is killed next
                code_ = None
            self._kill()
            how = _exit_description(code_)
            return Execution(
                output="",
                error=f"the interpreter stopped ({how}); it was restarted and its state is lost",
                restarted=True,
            )
        reply = json.loads(raw)
        if self.stateless:
            self._kill()
        error, trace = reply["error"], reply["traceback"]
        return Execution(output=_text(reply["output"]), error=None if error is None else _text(error),
                         traceback=None if trace is None else _text(trace))  # fmt: skip


def _text(value: str) -> str:
    """``value`` with lone surrogates (an exception message may hold them: ``os.fsdecode(b"\\xff")``)
    escaped as ``\\udcff``, so the tool result is valid UTF-8 that records can be written with."""
    return value.encode("utf-8", "backslashreplace").decode("utf-8")


def _exit_description(returncode: int | None) -> str:
    if returncode is None:
        return "it closed its reply channel"
    if returncode < 0:
        return f"killed by {signal.Signals(-returncode).name}"
    if returncode >= 128 and returncode - 128 in signal.valid_signals():
        return f"killed by {signal.Signals(returncode - 128).name}"
    return f"exit status {returncode}"
