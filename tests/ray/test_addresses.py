"""A Ray address where no cluster runs is one error line at once: Ray itself retries such an
address for minutes, and ``--ray auto`` with no cluster on the machine raises a traceback."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from prefbuild.cli.main import main
from prefbuild.errors import PrefbuildError
from prefbuild.ray import driver


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_address_where_nothing_listens_is_one_error_line(tmp_path: Path) -> None:
    port = _closed_port()
    result = CliRunner().invoke(
        main,
        ["generate", "simulate", "--ray", f"127.0.0.1:{port}", "--out", str(tmp_path / "run"), "-q",
         "--set", "env.num_tasks=2"],
        catch_exceptions=False,
    )
    assert result.exit_code == 1, result.output
    (line,) = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert line.startswith(f"error: --ray 127.0.0.1:{port}: no Ray cluster answers there (connection refused)")
    assert "Traceback" not in result.output


@pytest.mark.parametrize("address", ["ray://127.0.0.1:{port}", "127.0.0.1:{port}"])
def test_reachability_is_checked_for_both_address_forms(address: str) -> None:
    with pytest.raises(PrefbuildError, match="no Ray cluster answers there"):
        driver._check_reachable(address.format(port=_closed_port()), timeout_s=2.0)


def test_auto_without_a_cluster_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """What ``ray.init(address="auto")`` raises on a machine with no cluster, as Ray words it."""

    class NoCluster:
        @staticmethod
        def is_initialized() -> bool:
            return False

        @staticmethod
        def init(**_: Any) -> None:
            raise ConnectionError(
                "Could not find any running Ray instance. Please specify the one to connect to by setting "
                "`--address` flag or `RAY_ADDRESS` environment variable."
            )

    monkeypatch.setattr(driver, "require_ray", lambda: NoCluster)
    with pytest.raises(PrefbuildError, match=r"^--ray auto: Could not find any running Ray instance\."), \
            driver.connected("auto"):
        pass
