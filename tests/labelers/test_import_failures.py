"""An import failure never silently removes labelers: a built-in that fails raises, a broken
plug-in is skipped with a warning and leaves the built-ins (the SQL ones included) in place."""

from __future__ import annotations

import logging
from importlib.metadata import EntryPoint

import pytest

from prefbuild import registry
from prefbuild.labelers import available_labelers, build_labelers

SQL_LABELERS = ("sql_error", "wrong_answer", "sql_premature_success", "sql_loop")


@pytest.fixture(autouse=True)
def _fresh_registry():
    registry.clear_cache()
    yield
    registry.clear_cache()


def test_a_built_in_labeler_that_fails_to_import_raises_instead_of_vanishing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.BUILTINS["labelers"], "sql_error", "prefbuild.labelers.sql.no_such_module:Labeler")
    with pytest.raises(ImportError, match="no_such_module"):
        available_labelers()
    with pytest.raises(ImportError, match="no_such_module"):
        build_labelers(None, env="sql")


@pytest.fixture
def broken_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    """An installed labeler plug-in ``broken`` whose module does not exist."""
    broken = EntryPoint(name="broken", value="no.such.module:Thing", group="prefbuild.labelers")
    monkeypatch.setattr(registry, "entry_points", lambda group: [broken] if group == "prefbuild.labelers" else [])


@pytest.mark.usefixtures("broken_plugin")
def test_a_broken_plugin_is_skipped_with_a_warning_and_the_sql_labelers_stay(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="prefbuild.registry"):
        found = available_labelers()
    assert "broken" not in found
    assert set(SQL_LABELERS) <= found.keys()
    (message,) = [record.getMessage() for record in caplog.records]
    assert "labeler plug-in 'broken' (no.such.module:Thing) could not be loaded" in message
    assert "No module named 'no'" in message
    defaults = {labeler.name for labeler in build_labelers(None, env="sql")}
    assert {"sql_error", "sql_premature_success", "sql_loop"} <= defaults


@pytest.mark.usefixtures("broken_plugin")
def test_naming_a_broken_plugin_says_why_it_failed_and_the_warning_comes_once(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="prefbuild.registry"):
        available_labelers()
        with pytest.raises(KeyError, match=r"labelers\[0\].name: labeler plug-in 'broken' \(no.such.module:Thing\) "
                                           r"could not be loaded: ModuleNotFoundError"):
            build_labelers([{"name": "broken"}])
        with pytest.raises(KeyError, match=r"unknown labeler 'brokn'; known: "):
            build_labelers([{"name": "brokn"}])
    assert len(caplog.records) == 1
