"""The real MySQL-family server for the sql env tests: one private MariaDB per test session.

Tests that take ``mysql_backend`` skip, naming what is missing, where the Debian package
``mariadb-server`` or the ``mysql`` extra (mysql-connector-python) is not installed;
``make test`` installs both when run as root.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from prefbuild.envs.sql.mariadb import mariadb_available
from prefbuild.envs.sql.mysql_client import client_available

_FIDELITY_REPORTS: list[str] = []


@pytest.fixture(scope="session")
def mysql_backend() -> Iterator[object]:
    """The process-wide ``mysql`` backend on a private MariaDB, started once and stopped at the end."""
    reason = client_available() or mariadb_available()
    if reason is not None:
        pytest.skip(f"real MySQL backend unavailable: {reason}")
    from prefbuild.envs.sql.mysql_backend import shared_backend, stop_shared_backends

    backend = shared_backend(None)
    try:
        yield backend
    finally:
        stop_shared_backends()


@pytest.fixture(scope="session")
def fidelity_report() -> list[str]:
    """Texts printed in the terminal summary (the measured agreement shows in every ``make test``)."""
    return _FIDELITY_REPORTS


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for text in _FIDELITY_REPORTS:
        terminalreporter.write_sep("-", "sql env fidelity: SQLite emulation vs a real MariaDB server")
        terminalreporter.write_line(text)
