"""vLLM replicas as Ray actors: started with the GPUs they ask for, watched, restarted, stopped.

With ``teacher.backend: vllm`` a ``--ray`` run starts ``teacher.launch.replicas`` actors, each
running one ``vllm serve`` (``prefbuild.teachers.vllm_launcher.VllmServer``) on its node with
``teacher.launch.gpus_per_replica`` GPUs. The shard workers then talk to them as an ``openai``
teacher with every replica's URL in ``base_urls``: the client's least-busy routing spreads the
requests, and its cool-down takes a failing replica out of rotation.

A watcher thread on the driver asks every replica whether its server is alive and restarts a
dead server on the same node and port, so it rejoins the rotation when its cool-down ends; an
actor that dies itself is restarted by Ray (``max_restarts``), on the same port. Replica ``i``
listens on ``launch.port + i`` when ``launch.port`` is set (needed on multi-node clusters),
otherwise on a port free on the driver's machine. Every replica is stopped at the end.

With any other backend (``openai`` with ``base_urls``, ``scripted``...) the workers build the
recipe's teacher themselves and nothing is started here.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from prefbuild.recipe import LoadedRecipe
from prefbuild.rollout.generate import teacher_settings

log = logging.getLogger("prefbuild.ray.replicas")


class VllmReplica:
    """One ``vllm serve`` on the node Ray placed this actor on (wrapped by ``ray.remote``)."""

    def __init__(self, settings: dict[str, Any], port: int, log_path: str | None) -> None:
        import ray

        from prefbuild.teachers.embedded import resolve_model
        from prefbuild.teachers.vllm_launcher import VllmServer

        launch = settings.get("launch") or {}
        path, served_name = resolve_model(settings.get("model") or "embedded")
        self.server = VllmServer(
            path, served_model_name=served_name, host=ray.util.get_node_ip_address(), port=port,
            args=launch.get("args", []), env=launch.get("env", {}), log_path=log_path,
            startup_timeout_s=launch.get("startup_timeout_s", 600.0),
        )
        self.url = self.server.start()
        self.served_name = served_name

    def endpoint(self) -> tuple[str, str]:
        """``(base URL, served model name)``."""
        return self.url, self.served_name

    def alive(self) -> bool:
        return self.server.is_running()

    def pid(self) -> int | None:
        return self.server.pid

    def restart(self) -> str:
        """Start a new server on the same host and port (after the old one died); returns its URL."""
        self.server.stop()
        self.url = self.server.start()
        return self.url

    def stop(self) -> None:
        self.server.stop()


def _gpus(settings: dict[str, Any]) -> float:
    from prefbuild.teachers.vllm_launcher import is_cpu_build

    asked = (settings.get("launch") or {}).get("gpus_per_replica")
    if asked is not None:
        return float(asked)
    return 0.0 if is_cpu_build() else 1.0


class ReplicaSet:
    """The replica actors of one run, and the thread that restarts dead ones.

    Args:
        ray: the ``ray`` module (connected).
        settings: the teacher settings (``teacher_settings``).
        log_dir: where replica ``i`` logs (``vllm-<i>.log``), on a filesystem its node can write.
        check_every_s: seconds between health checks.
    """

    def __init__(self, ray: Any, settings: dict[str, Any], log_dir: Path, check_every_s: float = 2.0) -> None:
        from prefbuild.teachers.vllm_launcher import find_free_port

        self.ray = ray
        launch = settings.get("launch") or {}
        count = int(launch.get("replicas", 1))
        base_port = launch.get("port")
        ports = [base_port + index if base_port else find_free_port() for index in range(count)]
        actor = ray.remote(num_cpus=1, num_gpus=_gpus(settings), max_restarts=-1, max_task_retries=-1)(VllmReplica)
        self.actors = [actor.remote(settings, port, str(log_dir / f"vllm-{index}.log"))
                       for index, port in enumerate(ports)]
        self.endpoints: list[tuple[str, str]] = ray.get([replica.endpoint.remote() for replica in self.actors])
        self.restarts = 0
        self._stop = threading.Event()
        self._check_every_s = check_every_s
        self._watcher = threading.Thread(target=self._watch, name="prefbuild-replica-watch", daemon=True)
        self._watcher.start()

    def _watch(self) -> None:
        while not self._stop.wait(self._check_every_s):
            for index, replica in enumerate(self.actors):
                try:
                    alive = self.ray.get(replica.alive.remote(), timeout=60)
                except Exception:
                    # handled: boundary: the actor is restarting (Ray brings it back); ask again next round
                    continue
                if not alive and not self._stop.is_set():
                    log.warning("vLLM replica %d (%s) died; restarting it", index, self.endpoints[index][0])
                    try:
                        self.ray.get(replica.restart.remote())
                        self.restarts += 1
                    except Exception as error:
                        # handled: boundary: tried again next round; routing keeps it cooled down meanwhile
                        log.warning("vLLM replica %d did not restart: %s", index, error)

    def base_urls(self) -> list[str]:
        return [url for url, _ in self.endpoints]

    def close(self) -> None:
        """Stop watching and stop every server and actor."""
        self._stop.set()
        self._watcher.join(timeout=10)
        # handled: boundary: closing goes on when a server fails to stop; the actors are killed next
        with contextlib.suppress(Exception):
            self.ray.get([replica.stop.remote() for replica in self.actors], timeout=60)
        for replica in self.actors:
            with contextlib.suppress(Exception):  # handled: boundary: the actor may already be dead
                self.ray.kill(replica, no_restart=True)


@contextlib.contextmanager
def cluster_teacher(ray: Any, loaded: LoadedRecipe, run_dir: Path) -> Iterator[dict[str, Any]]:
    """Teacher settings the shard workers use in place of the recipe's, for the block.

    With ``teacher.backend: vllm``: start the replicas and yield ``openai`` settings pointing at
    them; they are stopped when the block ends. Otherwise yield ``{}`` (the recipe's teacher).

    Example:
        >>> with cluster_teacher(ray, loaded, run_dir) as override:  # doctest: +SKIP
        ...     override["base_urls"]
    """
    recipe = loaded.recipe
    if recipe.teacher.backend != "vllm":
        yield {}
        return
    settings = teacher_settings(recipe, run_dir)
    replicas = ReplicaSet(ray, settings, run_dir / "logs")
    try:
        yield {"backend": "openai", "base_urls": replicas.base_urls(), "model": replicas.endpoints[0][1],
               "api_key_env": None}
    finally:
        replicas.close()
