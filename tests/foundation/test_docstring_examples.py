"""The Examples in the public docstrings of the contracts and the API run as written."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "prefbuild.api",
    "prefbuild.registry",
    "prefbuild.errors",
    "prefbuild.records",
    "prefbuild.envs",
    "prefbuild.envs.base",
    "prefbuild.teachers.base",
    "prefbuild.labelers.base",
    "prefbuild.labelers.stage",
    "prefbuild.pairs.base",
    "prefbuild.exports.base",
    "prefbuild.simulation",
    "prefbuild.rollout.plan",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"
