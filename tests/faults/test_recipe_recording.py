"""The run's recipe.yaml records exactly what ran: --set values over ${VAR} fields, placeholders for secrets."""

from __future__ import annotations

import pytest
import yaml

from prefbuild.errors import PrefbuildError
from prefbuild.recipe import LoadedRecipe, load_recipe_text

RECIPE = """\
name: rec
env: {name: household, protocol: react, options: {close_after_search: "${PB_REC_CLOSE:-true}"}}
teacher:
  backend: openai
  model: m
  base_urls: ["${PB_REC_URL}"]
  sampling: {extra_body: {token: "${PB_REC_TOKEN}"}}
"""


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PB_REC_URL", "http://from-env:8000/v1")
    monkeypatch.setenv("PB_REC_TOKEN", "tok-from-env-1234")


def _written(loaded: LoadedRecipe) -> dict:
    return yaml.safe_load(loaded.resolved_yaml())


def test_set_over_a_placeholder_is_recorded_as_set() -> None:
    loaded = load_recipe_text(RECIPE, "r.yaml", ["teacher.base_urls=[http://override:9000/v1]"])
    written = _written(loaded)
    assert written["teacher"]["base_urls"] == ["http://override:9000/v1"]
    assert written["teacher"]["sampling"]["extra_body"] == {"token": "${PB_REC_TOKEN}"}
    assert written["env"]["options"] == {"close_after_search": "${PB_REC_CLOSE:-true}"}


def test_set_of_a_whole_section_drops_the_placeholders_inside_it() -> None:
    loaded = load_recipe_text(RECIPE, "r.yaml", ["teacher.sampling.extra_body={token: plain}"])
    assert _written(loaded)["teacher"]["sampling"]["extra_body"] == {"token": "plain"}


def test_set_with_a_placeholder_keeps_the_placeholder_not_the_value() -> None:
    loaded = load_recipe_text(RECIPE, "r.yaml", ["teacher.sampling.extra_body.token=${PB_REC_TOKEN}"])
    assert loaded.recipe.teacher.sampling.extra_body["token"] == "tok-from-env-1234"
    assert _written(loaded)["teacher"]["sampling"]["extra_body"] == {"token": "${PB_REC_TOKEN}"}
    assert "tok-from-env-1234" not in loaded.resolved_yaml()


def test_set_with_an_unset_variable_is_located_at_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PB_REC_MISSING", raising=False)
    with pytest.raises(PrefbuildError, match=r"^--set teacher.model: environment variable PB_REC_MISSING"):
        load_recipe_text(RECIPE, "r.yaml", ["teacher.model=${PB_REC_MISSING}"])


def test_a_password_in_a_literal_base_url_is_not_written() -> None:
    loaded = load_recipe_text(RECIPE, "r.yaml", ["teacher.base_urls=[http://bob:hunter2x@host:1/v1]"])
    assert _written(loaded)["teacher"]["base_urls"] == ["http://bob:***@host:1/v1"]


def test_a_placeholder_that_cannot_be_put_back_is_an_error_not_a_clear_value() -> None:
    loaded = load_recipe_text(RECIPE, "r.yaml")
    loaded.recipe._placeholders[("teacher", "no_such_field")] = "${PB_REC_TOKEN}"
    with pytest.raises(PrefbuildError, match=r"teacher\.no_such_field: cannot record"):
        loaded.resolved_yaml()
