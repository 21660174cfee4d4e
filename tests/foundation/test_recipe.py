"""Recipes: located errors, overrides, ${ENV} secrets that never reach the run directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from prefbuild.recipe import RecipeError, bundled_recipes, load_recipe, load_recipe_text

BASE = """\
name: demo
seed: 3
env:
  name: household
  protocol: agentbench
  num_tasks: 4
teacher:
  backend: openai
  model: qwen
  base_urls: ["http://127.0.0.1:8000/v1"]
  sampling:
    temperature: 0.2
    max_tokens: 64
"""


def test_bundled_recipes_are_valid() -> None:
    names = set(bundled_recipes())
    assert {"quickstart", "simulate", "alfworld-roundwise"} <= names
    for name in names:
        assert load_recipe(name).recipe.name == name


def test_wrong_type_three_levels_deep_names_file_line_and_path(tmp_path: Path) -> None:
    path = tmp_path / "recipe.yaml"
    path.write_text(BASE.replace("temperature: 0.2", "temperature: hot"))
    with pytest.raises(RecipeError) as caught:
        load_recipe(path)
    assert str(caught.value).startswith(f"{path}:12 teacher.sampling.temperature: ")
    assert caught.value.line == 12


def test_out_of_range_value(tmp_path: Path) -> None:
    with pytest.raises(RecipeError, match=r"recipe.yaml:12 teacher.sampling.temperature: .*greater than or equal to 0"):
        load_recipe_text(BASE.replace("temperature: 0.2", "temperature: -1"), "recipe.yaml")


def test_unknown_and_missing_fields() -> None:
    with pytest.raises(RecipeError, match=r"r.yaml:13 teacher.sampling.max_token: unknown field"):
        load_recipe_text(BASE.replace("max_tokens", "max_token"), "r.yaml")
    with pytest.raises(RecipeError, match=r"r.yaml:3 env.protocol: required field is missing"):
        load_recipe_text(BASE.replace("  protocol: agentbench\n", ""), "r.yaml")


def test_invalid_yaml_reports_line() -> None:
    with pytest.raises(RecipeError, match=r"r.yaml:3: invalid YAML"):
        load_recipe_text("name: x\nenv:\n  name: a: b\n", "r.yaml")
    with pytest.raises(RecipeError, match="must be a YAML mapping"):
        load_recipe_text("- a\n- b\n", "r.yaml")


def test_set_overrides_are_typed_and_located() -> None:
    loaded = load_recipe_text(BASE, "r.yaml", ["teacher.sampling.temperature=0", "env.num_tasks=9", "seed=11"])
    assert loaded.recipe.teacher.sampling.temperature == 0.0
    assert loaded.recipe.envs[0].num_tasks == 9
    assert loaded.recipe.seed == 11
    with pytest.raises(RecipeError, match=r"^--set teacher.sampling.temperature: "):
        load_recipe_text(BASE, "r.yaml", ["teacher.sampling.temperature=-3"])
    with pytest.raises(RecipeError, match=r"KEY\.PATH=VALUE"):
        load_recipe_text(BASE, "r.yaml", ["novalue"])


def test_a_set_into_a_list_of_sections_says_how_to_address_one() -> None:
    with pytest.raises(RecipeError, match=r"^--set env.num_tasks: env is a list of 3: .* e.g. env.0.num_tasks$"):
        load_recipe("tau2-grpo-data", ["env.num_tasks=2"])
    with pytest.raises(RecipeError, match=r"^--set env.3.num_tasks: env has 3 items \(indices 0 to 2\)$"):
        load_recipe("tau2-grpo-data", ["env.3.num_tasks=2"])
    with pytest.raises(RecipeError, match="several env sections have this name; use its index"):
        load_recipe("tau2-grpo-data", ["env.tau2.num_tasks=2"])
    assert [section.num_tasks for section in load_recipe("tau2-grpo-data", ["env.1.num_tasks=2"]).recipe.envs][1] == 2


def test_env_interpolation_and_secrets_stay_out_of_resolved_recipe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PREFBUILD_TEST_URL", "http://10.0.0.1:9000/v1")
    text = BASE.replace('["http://127.0.0.1:8000/v1"]', '["${PREFBUILD_TEST_URL}"]')
    text += "publish:\n  repo_id: ${NO_SUCH:-me}/ds\n"
    loaded = load_recipe_text(text, "r.yaml")
    assert loaded.recipe.teacher.base_urls == ["http://10.0.0.1:9000/v1"]
    assert loaded.recipe.publish.repo_id == "me/ds"
    resolved = loaded.resolved_yaml()
    assert "10.0.0.1" not in resolved
    assert "${PREFBUILD_TEST_URL}" in resolved
    assert "temperature: 0.2" in resolved  # defaults and values are filled in


def test_missing_env_var_is_located() -> None:
    text = BASE.replace("model: qwen", "model: ${PREFBUILD_SURELY_UNSET}")
    with pytest.raises(RecipeError, match=r"r.yaml:9 teacher.model: environment variable PREFBUILD_SURELY_UNSET"):
        load_recipe_text(text, "r.yaml")


def test_generation_hash_ignores_endpoints_and_task_count() -> None:
    a = load_recipe_text(BASE, "r").recipe
    b = load_recipe_text(BASE, "r", ["teacher.base_urls=[http://other/v1]", "env.num_tasks=100"]).recipe
    c = load_recipe_text(BASE, "r", ["teacher.sampling.temperature=0.9"]).recipe
    assert a.generation_hash() == b.generation_hash()
    assert a.generation_hash() != c.generation_hash()


def test_missing_recipe_file() -> None:
    with pytest.raises(RecipeError, match="no such recipe file"):
        load_recipe("surely/not/here.yaml")


def test_teacher_checks_are_located_at_recipe_load() -> None:
    text = BASE.replace("  backend: openai\n", "  backend: scripted\n  scripted:\n    lopo: 0.2\n")
    with pytest.raises(RecipeError, match=r"^r.yaml:10 teacher.scripted.lopo: unknown failure mode"):
        load_recipe_text(text, "r.yaml")


def test_set_addresses_env_sections_by_name_in_lists_and_single_sections() -> None:
    mixed = load_recipe("agentbench-ironguard", ["env.sql.options.data_file=dev.jsonl", "env.household.num_tasks=3"])
    by_name = {section.name: section for section in mixed.recipe.envs}
    assert by_name["sql"].options["data_file"] == "dev.jsonl" and by_name["household"].num_tasks == 3
    single = load_recipe("simulate", ["env.household.num_tasks=4"])
    assert single.recipe.envs[0].num_tasks == 4


def test_set_addresses_a_single_env_section_by_index_0_as_the_error_messages_name_it() -> None:
    single = load_recipe("simulate", ["env.0.num_tasks=4", "env.0.options.close_after_search=true"])
    assert single.recipe.envs[0].num_tasks == 4 and single.recipe.envs[0].options["close_after_search"] is True
    with pytest.raises(RecipeError, match=r"^--set env.num_tasks: Input should be greater than or equal to 1$"):
        load_recipe("simulate", ["env.0.num_tasks=-3"])
    with pytest.raises(RecipeError, match=r"^--set env.1.num_tasks: env has 1 section \(index 0\)$"):
        load_recipe("simulate", ["env.1.num_tasks=4"])


def test_a_set_naming_no_env_section_or_a_negative_index_says_what_exists() -> None:
    with pytest.raises(RecipeError, match=r"^--set env.nope.num_tasks: no env section is named 'nope'; "
                                          r"address one by its index \(0 to 1\) or name \(sql, household\)$"):
        load_recipe("agentbench-ironguard", ["env.nope.num_tasks=3"])
    with pytest.raises(RecipeError, match=r"^--set pairs.strategies.-1.name: pairs.strategies has 2 items "):
        load_recipe("simulate", ["pairs.strategies.-1.name=style"])


def test_scripted_teacher_takes_env_specific_mistake_rates() -> None:
    loaded = load_recipe("simulate", ["teacher.scripted={sql_error: 0.1, wrong_answer: 0.1}"])
    assert loaded.recipe.teacher.scripted == {"sql_error": 0.1, "wrong_answer": 0.1}


def test_the_roundwise_recipe_runs_without_a_gpu_as_its_comment_says(tmp_path: Path) -> None:
    from prefbuild.api import run

    overrides = ["teacher.backend=scripted", "teacher.model=scripted-expert", "env.num_tasks=12"]
    assert "--set teacher.backend=scripted" in (Path(__file__).parents[2] / "prefbuild" / "recipes" /
                                                "alfworld-roundwise.yaml").read_text()
    summary = run("alfworld-roundwise", overrides=overrides, out=tmp_path / "run", quiet=True)
    assert summary.pairs > 0
