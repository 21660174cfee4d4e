"""Real Ray clusters on this machine for the tests, and finding their shard workers.

``two_nodes`` starts a head and a second node (``ray.cluster_utils.Cluster``, each its own
raylet with its own CPU resources) and connects this process as the driver. Teardown
shuts both nodes down and then kills, by pid, any process still left under their raylets,
so no test leaves Ray running (other people's Ray processes on the machine are never touched).
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ray = __import__("pytest").importorskip("ray")


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(entry.name))
    return found


def _descendants(pid: int) -> list[int]:
    pending, found = [pid], []
    while pending:
        for child in _children(pending.pop()):
            found.append(child)
            pending.append(child)
    return found


def raylet_pids(cluster: Any) -> list[int]:
    """Pids of the raylets of ``cluster``'s nodes (the parents of their worker processes)."""
    from ray._private import ray_constants

    return [info.process.pid for node in cluster.list_all_nodes()
            for info in node.all_processes.get(ray_constants.PROCESS_TYPE_RAYLET, [])]


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def workers_running(cluster: Any, task_name: str) -> list[int]:
    """Pids of this cluster's worker processes executing a task named ``task_name`` right now."""
    return [pid for raylet in raylet_pids(cluster) for pid in _children(raylet)
            if command_line(pid).startswith(f"ray::{task_name}")]


@contextlib.contextmanager
def two_nodes(cpus_per_node: int = 1, **head_resources: Any) -> Iterator[Any]:
    """A head and a second node of ``cpus_per_node`` CPUs each, with this process connected as the driver."""
    from ray.cluster_utils import Cluster

    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    cluster = Cluster()
    try:
        cluster.add_node(num_cpus=cpus_per_node, include_dashboard=False, **head_resources)
        cluster.add_node(num_cpus=cpus_per_node)
        if ray.is_initialized():  # a connection an earlier test left behind would make init fail
            ray.shutdown()
        ray.init(address=cluster.address, include_dashboard=False, log_to_driver=False)
        cluster.wait_for_nodes()
        yield cluster
    finally:
        with contextlib.suppress(Exception):
            ray.shutdown()
        leftovers = {pid: command_line(pid) for raylet in raylet_pids(cluster) for pid in _descendants(raylet)}
        with contextlib.suppress(Exception):
            cluster.shutdown()
        for pid, line in leftovers.items():
            if command_line(pid) == line:  # still the same process, not a reused pid
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
