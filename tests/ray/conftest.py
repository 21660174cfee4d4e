"""One real two-node Ray cluster shared by the Ray tests of this folder (started once, always torn down)."""

from __future__ import annotations

import pytest

pytest.importorskip("ray")


@pytest.fixture(scope="package")
def cluster():
    from tests.ray.cluster import two_nodes

    with two_nodes(cpus_per_node=1) as running:
        yield running
