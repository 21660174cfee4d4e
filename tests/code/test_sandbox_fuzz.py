"""Safety fuzz of the code sandbox: 200+ hostile programs, run concurrently, each must end in
a clear tool error within the wall-clock timeout, with the host and a concurrent episode
unaffected.

Independent checks, not the sandbox's own word: a fake secret is set in the host's
environment and must never appear in any output; a real TCP server on 127.0.0.1 must see no
connection; a host canary directory must stay empty; after the fuzz no process of any
sandbox uid is left on the host; a benign episode running alongside keeps its state and
computes correctly throughout.
"""

from __future__ import annotations

import collections
import os
import secrets
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from prefbuild.envs.code.sandbox import CodeSandbox, Execution, SandboxLimits, namespaces_available
from tests.code.hostile import Hostile, hostile_programs

pytestmark = pytest.mark.skipif(namespaces_available() is not None, reason=f"no sandbox: {namespaces_available()}")

SECRET_NAME = "PREFBUILD_FUZZ_SECRET"
LIMITS = SandboxLimits(
    wall_seconds=3.0,
    cpu_seconds=1,
    episode_cpu_seconds=5,
    memory_bytes=256 << 20,
    processes=8,
    file_bytes=1 << 20,
    open_files=64,
    tmp_bytes=4 << 20,
    output_chars=2000,
)
MARGIN_S = 2.0  # start-up and kill time beyond the wall-clock limit
WORKERS = 8


class LoopbackServer:
    """A TCP server on 127.0.0.1 that counts connections (and UDP datagrams on the same port)."""

    def __init__(self) -> None:
        self.tcp = socket.socket()
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(64)
        self.tcp.settimeout(0.2)
        self.port = self.tcp.getsockname()[1]
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", self.port))
        self.udp.settimeout(0.2)
        self.contacts = 0
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._accept), threading.Thread(target=self._receive)]
        for thread in self._threads:
            thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self.tcp.accept()
            except TimeoutError:
                continue
            self.contacts += 1
            connection.close()

    def _receive(self) -> None:
        while not self._stop.is_set():
            try:
                self.udp.recvfrom(100)
            except TimeoutError:
                continue
            self.contacts += 1

    def close(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()
        self.tcp.close()
        self.udp.close()


def _sandbox_processes(uids: set[int]) -> list[str]:
    """Host processes still running under any sandbox uid."""
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            text = status.read_text()
        except OSError:
            continue
        uid_line = next((line for line in text.splitlines() if line.startswith("Uid:")), "")
        if uid_line and int(uid_line.split()[1]) in uids:
            found.append(status.parent.name)
    return found


class BenignEpisode(threading.Thread):
    """A concurrent episode: increments a counter in one persistent sandbox and checks every answer."""

    def __init__(self, stop: threading.Event) -> None:
        super().__init__()
        self.stop = stop
        self.calls = 0
        self.failures: list[str] = []

    def run(self) -> None:
        with CodeSandbox(LIMITS) as sandbox:
            result = sandbox.run("counter = 0")
            if not result.ok:
                self.failures.append(f"setup: {result.error}")
            while not self.stop.is_set():
                self.calls += 1
                result = sandbox.run("counter += 1\nsum(range(counter + 1))")
                expected = self.calls * (self.calls + 1) // 2
                if result.output.strip() != str(expected):
                    self.failures.append(f"call {self.calls}: {result.output!r} {result.error!r}")
                    return
                time.sleep(0.05)


def test_hostile_programs_are_contained(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    secret_value = "s3cr3t-" + secrets.token_hex(12)
    monkeypatch.setenv(SECRET_NAME, secret_value)
    canary = tmp_path / "canary"
    canary.mkdir()
    (canary / "secret.txt").write_text(secret_value)
    server = LoopbackServer()
    programs = hostile_programs(secret_name=SECRET_NAME, port=server.port, canary_dir=str(canary), host_pid=os.getpid())
    assert len(programs) >= 200
    uids: set[int] = set()
    lock = threading.Lock()

    def attack(program: Hostile) -> tuple[Hostile, Execution, float]:
        sandbox = CodeSandbox(LIMITS)
        start = time.monotonic()
        try:
            execution = sandbox.run(program.code)
        finally:
            elapsed = time.monotonic() - start
            with lock:
                if sandbox.uid is not None:
                    uids.add(sandbox.uid)
            sandbox.close()
        return program, execution, elapsed

    stop = threading.Event()
    benign = BenignEpisode(stop)
    benign.start()
    started = time.monotonic()
    try:
        with ThreadPoolExecutor(WORKERS) as pool:
            results = list(pool.map(attack, programs))
    finally:
        stop.set()
        benign.join()
        server.close()
    total = time.monotonic() - started

    kinds: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    failures: list[str] = []
    for program, execution, elapsed in results:
        error = execution.error or ""
        kind = "timeout" if execution.timed_out else ("stopped" if execution.restarted else error.split(":")[0])
        kinds[program.family][kind] += 1
        if not error:
            failures.append(f"{program.family} / {program.name}: no tool error; output {execution.output[:200]!r}")
        if elapsed > LIMITS.wall_seconds + MARGIN_S:
            failures.append(f"{program.family} / {program.name}: took {elapsed:.1f} s")
        if secret_value in execution.text():
            failures.append(f"{program.family} / {program.name}: the secret leaked")
    with capsys.disabled():
        print(f"\nsandbox fuzz: {len(results)} hostile programs in {total:.1f} s with {WORKERS} workers")
        for family, counter in sorted(kinds.items()):
            print(f"  {family:14s} {sum(counter.values()):3d}  {dict(counter.most_common())}")
        print("  tried: " + "; ".join(program.name for program in programs))
    assert not failures, "\n".join(failures)
    assert server.contacts == 0, "a sandbox reached the loopback server"
    assert sorted(path.name for path in canary.iterdir()) == ["secret.txt"], "a sandbox wrote into the host"
    assert benign.calls > 3 and not benign.failures, benign.failures
    assert os.environ[SECRET_NAME] == secret_value
    time.sleep(0.2)
    assert _sandbox_processes(uids) == [], "sandbox processes outlived their sandbox"
