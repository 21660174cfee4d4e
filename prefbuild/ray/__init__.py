"""Scale out on a Ray cluster: shards of a run as Ray tasks, vLLM replicas as Ray actors.

``prefbuild generate RECIPE --ray [ADDRESS]`` plans the run on the driver, splits its tasks
into shards (``prefbuild.rollout.plan.Shard``) and runs each shard as a Ray task that
streams finished episodes into a shard store (``storage``) on a shared filesystem or an
fsspec URL. Ray retries a shard whose worker died; the retry skips what is already stored.
The driver then merges the shards into the run directory a single-machine run writes
(``driver``). ``replicas`` starts vLLM servers as Ray actors, ``progress`` aggregates the
workers' counters into one view, ``stages`` labels trajectory files as Ray tasks.

Ray is an optional dependency: ``pip install 'prefbuild[ray]'``.
"""

from __future__ import annotations

__all__ = ["require_ray"]


def require_ray():
    """The ``ray`` module, or a clear error naming the extra to install.

    Returns:
        The imported ``ray`` package.

    Example:
        >>> require_ray().__name__  # doctest: +SKIP
        'ray'
    """
    try:
        import ray
    except ImportError:
        from prefbuild.errors import PrefbuildError

        raise PrefbuildError("--ray needs Ray: pip install 'prefbuild[ray]'") from None
    return ray
