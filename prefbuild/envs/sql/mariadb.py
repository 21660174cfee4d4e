"""Start and stop a throwaway MariaDB server for the ``sql`` env's ``mysql`` backend.

The server runs as a child process in its own process group, on a private data directory
(created with ``mariadb-install-db`` in a temporary folder), a private Unix socket and a
free port on 127.0.0.1. It is configured as close to MySQL 8 (the server DBBench was built
on) as MariaDB 10.11 allows:

* MySQL 8's default ``sql_mode`` (strict, ``ONLY_FULL_GROUP_BY``, no zero dates);
* ``utf8mb4`` with ``utf8mb4_uca1400_nopad_ai_ci``: accent- and case-insensitive, NO PAD,
  like MySQL 8's ``utf8mb4_0900_ai_ci`` (MariaDB 10.11 has no ``0900`` collation; the
  ``uca1400`` tables are UCA 14.0 where MySQL uses UCA 9.0, which orders a few rare
  characters differently);
* ``group_concat_max_len=1024`` (MySQL's default; MariaDB's is 1 MiB), which the benchmark's
  table hash relies on;
* case-sensitive table names (``lower_case_table_names=0``, as on MySQL under Linux);
* no binary log, no performance schema, small InnoDB files in one tablespace, no durability
  flushes, files in ``/dev/shm`` where it exists: the data lives for one run.

Start-up bootstraps the system tables, then runs an init file that creates an administrator
account with a random password (the only account reachable over the socket and port besides
root's socket login). Stopping sends SIGTERM to the group, then SIGKILL after a grace period,
and removes the data directory. Servers still running when the interpreter exits are stopped
by an ``atexit`` hook.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from prefbuild.teachers.vllm_launcher import find_free_port

__all__ = [
    "MARIADB_COLLATION",
    "MYSQL8_SQL_MODE",
    "MariaDbError",
    "MariaDbServer",
    "ServerAddress",
    "find_free_port",
    "mariadb_available",
]

MYSQL8_SQL_MODE = (
    "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,"
    "ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"
)
MARIADB_COLLATION = "utf8mb4_uca1400_nopad_ai_ci"
GROUP_CONCAT_MAX_LEN = 1024
ADMIN_USER = "prefbuild_admin"

_LIVE_SERVERS: weakref.WeakSet[MariaDbServer] = weakref.WeakSet()


class MariaDbError(RuntimeError):
    """The throwaway server could not be installed, started or reached."""


@dataclass(frozen=True)
class ServerAddress:
    """Where a MySQL-family server listens and which account administers it."""

    host: str
    port: int
    user: str
    password: str
    unix_socket: str | None = None


def _binary(name: str) -> str | None:
    """A MariaDB executable from PATH or the Debian locations (``/usr/sbin`` is not on every PATH)."""
    found = shutil.which(name)
    if found:
        return found
    for folder in ("/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"):
        candidate = Path(folder) / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def mariadb_available() -> str | None:
    """None when ``mariadbd`` and ``mariadb-install-db`` are installed, else why not (for skips).

    Example:
        >>> reason = mariadb_available()
        >>> reason is None or "mariadb-server" in reason
        True
    """
    missing = [name for name in ("mariadbd", "mariadb-install-db") if _binary(name) is None]
    if missing:
        return f"{' and '.join(missing)} not found: install the Debian package mariadb-server"
    return None


def _tail(path: Path, lines: int = 30) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError as error:
        return f"(log {path} unreadable: {error})"
    return "\n".join(text.splitlines()[-lines:])


def _memory_folder() -> str | None:
    """``/dev/shm`` where it is a writable folder (table creation is then free of disk syncs)."""
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


def _sql_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


class MariaDbServer:
    """One private ``mariadbd``. Use ``with MariaDbServer() as server:`` or ``start()``/``stop()``.

    Args:
        port: the TCP port on 127.0.0.1 (a free one when None).
        max_statement_time_s: the server-wide statement time limit (sessions set their own too).
        startup_timeout_s: how long to wait for the socket to accept connections.
        stop_timeout_s: grace period between SIGTERM and SIGKILL.
        extra_args: more ``mariadbd`` options, appended last (they win).

    Example:
        >>> with MariaDbServer() as server:  # doctest: +SKIP
        ...     server.address.port > 0
        True
    """

    def __init__(
        self,
        *,
        port: int | None = None,
        max_statement_time_s: float = 10.0,
        startup_timeout_s: float = 60.0,
        stop_timeout_s: float = 10.0,
        extra_args: Sequence[str] = (),
    ) -> None:
        self.port = port
        self.max_statement_time_s = max_statement_time_s
        self.startup_timeout_s = startup_timeout_s
        self.stop_timeout_s = stop_timeout_s
        self.extra_args = list(extra_args)
        self.process: subprocess.Popen[bytes] | None = None
        self.password = secrets.token_hex(16)
        self._root: Path | None = None
        self._log_handle: IO[bytes] | None = None

    def __repr__(self) -> str:
        return f"MariaDbServer(port={self.port}, pid={self.pid})"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    @property
    def socket_path(self) -> Path:
        assert self._root is not None, "server not started"
        return self._root / "mariadb.sock"

    @property
    def log_path(self) -> Path:
        assert self._root is not None, "server not started"
        return self._root / "mariadb.log"

    @property
    def address(self) -> ServerAddress:
        """The administrator account's address (socket preferred, port as a fallback)."""
        if self.port is None:
            raise MariaDbError("the MariaDB server is not started")
        return ServerAddress("127.0.0.1", self.port, ADMIN_USER, self.password, str(self.socket_path))

    def is_running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def server_options(self, datadir: Path) -> list[str]:
        """The ``mariadbd`` options (shared by the bootstrap and the server itself)."""
        options = [
            "--no-defaults",
            f"--datadir={datadir}",
            "--innodb-log-file-size=4M",
            "--innodb-buffer-pool-size=16M",
            "--innodb-flush-log-at-trx-commit=0",
            "--innodb-doublewrite=0",
            "--innodb-file-per-table=0",
            "--skip-name-resolve",
        ]
        if os.geteuid() == 0:
            options.append("--user=root")
        return options

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> MariaDbServer:
        """Install a private data directory, start ``mariadbd`` and wait until it answers."""
        if self.is_running():
            return self
        reason = mariadb_available()
        if reason is not None:
            raise MariaDbError(reason)
        self._root = Path(tempfile.mkdtemp(prefix="prefbuild-mariadb-", dir=_memory_folder()))
        datadir = self._root / "data"
        if self.port is None:
            self.port = find_free_port()
        self._log_handle = self.log_path.open("ab")
        try:
            self._install(datadir)
            (self._root / "no-files").mkdir()
            init_file = self._root / "init.sql"
            init_file.write_text(self._init_sql())
            command = [
                str(_binary("mariadbd")),
                *self.server_options(datadir),
                f"--socket={self.socket_path}",
                f"--port={self.port}",
                "--bind-address=127.0.0.1",
                f"--pid-file={self._root / 'mariadb.pid'}",
                f"--init-file={init_file}",
                "--skip-log-bin",
                "--performance-schema=0",
                "--character-set-server=utf8mb4",
                f"--collation-server={MARIADB_COLLATION}",
                f"--sql-mode={MYSQL8_SQL_MODE}",
                f"--group-concat-max-len={GROUP_CONCAT_MAX_LEN}",
                "--lower-case-table-names=0",
                f"--max-statement-time={self.max_statement_time_s}",
                "--max-connections=200",
                "--event-scheduler=OFF",
                "--local-infile=0",
                "--secure-file-priv=" + str(self._root / "no-files"),
                *self.extra_args,
            ]
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=self._log_handle,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            _LIVE_SERVERS.add(self)
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _install(self, datadir: Path) -> None:
        command = [
            str(_binary("mariadb-install-db")),
            *self.server_options(datadir),
            "--auth-root-authentication-method=socket",
            "--skip-test-db",
        ]
        assert self._log_handle is not None
        result = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=self._log_handle, stderr=subprocess.STDOUT)
        if result.returncode != 0:
            raise MariaDbError(
                f"mariadb-install-db failed (exit {result.returncode}); log {self.log_path}:\n{_tail(self.log_path)}"
            )

    def _init_sql(self) -> str:
        password = _sql_string(self.password)
        hosts = ("localhost", "127.0.0.1")
        lines = [f"CREATE USER IF NOT EXISTS '{ADMIN_USER}'@'{host}' IDENTIFIED BY {password};" for host in hosts]
        lines += [f"GRANT ALL PRIVILEGES ON *.* TO '{ADMIN_USER}'@'{host}' WITH GRANT OPTION;" for host in hosts]
        return "\n".join(lines) + "\n"

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if not self.is_running():
                code = self.process.returncode if self.process is not None else None
                raise MariaDbError(f"mariadbd exited with code {code}; log {self.log_path}:\n{_tail(self.log_path)}")
            if self._answers():
                return
            time.sleep(0.05)
        raise MariaDbError(
            f"mariadbd did not accept connections within {self.startup_timeout_s:.0f}s; "
            f"log {self.log_path}:\n{_tail(self.log_path)}"
        )

    def _answers(self) -> bool:
        """Whether the administrator account can log in (the init file has run)."""
        from prefbuild.envs.sql.mysql_client import connect

        try:
            connection = connect(self.address, timeout_s=2.0)
        except Exception:
            # handled: boundary: any client error while the server starts means not ready yet
            return False
        connection.close()
        return True

    def stop(self) -> None:
        """SIGTERM the server's process group, SIGKILL after the grace period, remove its files."""
        process = self.process
        if process is not None and process.poll() is None:
            with contextlib.suppress(ProcessLookupError):  # handled: the process group is already gone
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=self.stop_timeout_s)
            except subprocess.TimeoutExpired:  # handled: the server ignored SIGTERM: it is killed
                with contextlib.suppress(ProcessLookupError):  # handled: the process group is already gone
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
        self.process = None
        if self._log_handle is not None:
            self._log_handle.close()
            self._log_handle = None
        if self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None
        _LIVE_SERVERS.discard(self)

    def __enter__(self) -> MariaDbServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


@atexit.register
def _stop_all() -> None:
    for server in list(_LIVE_SERVERS):
        # handled: boundary: at exit every server is stopped even when one fails to stop
        with contextlib.suppress(Exception):
            server.stop()
