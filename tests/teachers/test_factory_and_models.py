"""The teacher factory, its config errors, third-party backends, and the embedded model commands."""

from __future__ import annotations

import json
import sys

import pytest
from click.testing import CliRunner

from prefbuild import registry
from prefbuild.cli.teachers import models_command
from prefbuild.simulation.scripted import ScriptedTeacher
from prefbuild.teachers import available_backends, build_sampling, make_teacher
from prefbuild.teachers import embedded as models
from prefbuild.teachers.base import Sampling, Teacher
from prefbuild.teachers.config import TeacherConfigError, parse_teacher_config
from prefbuild.teachers.openai_backend import OpenAITeacher
from tests.plugins.distributions import install_distribution


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"backend": "openai", "sampling": {"temperature": "hot"}}, r"teacher\.sampling\.temperature: Input should be"),
        ({"backend": "openai", "retries": {"max_attempts": 0}}, r"teacher\.retries\.max_attempts: .*greater than"),
        ({"backend": "openai", "temprature": 1}, r"teacher\.temprature: Extra inputs are not permitted"),
        ({"backend": "openai", "model": "m"}, r"teacher\.base_urls: the openai backend needs"),
        (
            {"backend": "nope"},
            r"teacher\.backend: unknown teacher backend 'nope'; known: openai, vllm, transformers, scripted",
        ),
        ({"backend": "scripted", "scripted": {"loop": 1.5}}, r"teacher\.scripted\.loop: a rate must be in \[0, 1\]"),
    ],
)
def test_bad_config_names_the_field(config, message):
    with pytest.raises(TeacherConfigError, match=message):
        make_teacher(config)


def test_sampling_extensions_go_to_extra_body():
    sampling = build_sampling(
        {
            "temperature": 0.2,
            "stop": ["\n"],
            "top_k": 20,
            "min_p": 0.1,
            "repetition_penalty": 1.1,
            "chat_template_kwargs": {"enable_thinking": False},
            "extra_body": {"top_k": 5, "structured_outputs": {}},
        }
    )
    assert sampling == Sampling(
        temperature=0.2,
        stop=("\n",),
        extra_body={
            "top_k": 20,
            "min_p": 0.1,
            "repetition_penalty": 1.1,
            "chat_template_kwargs": {"enable_thinking": False},
            "structured_outputs": {},
        },
    )


def test_factory_builds_each_builtin_backend_without_starting_anything():
    openai = make_teacher(
        {
            "backend": "openai",
            "model": "m",
            "base_urls": ["http://10.0.0.1:8000", "http://10.0.0.2:8000/v1/"],
            "concurrency": 3,
            "retries": {"max_attempts": 2},
            "api_key_env": None,
        }
    )
    assert isinstance(openai, OpenAITeacher)
    assert openai.base_urls == ["http://10.0.0.1:8000/v1", "http://10.0.0.2:8000/v1"]
    assert openai.max_attempts == 2 and openai.pool.endpoints[0].concurrency == 3
    scripted = make_teacher({"backend": "scripted", "scripted": {"loop": 0.25}})
    assert isinstance(scripted, ScriptedTeacher) and scripted.rates["loop"] == 0.25


def test_recipe_objects_are_accepted():
    recipe = pytest.importorskip("prefbuild.recipe")
    section = recipe.TeacherConfig(backend="scripted", scripted={"loop": 0.1, "verbose_filler": 0.2})
    parsed = parse_teacher_config(section)
    assert parsed.scripted == {"loop": 0.1, "verbose_filler": 0.2}


def test_third_party_backend_from_entry_point(tmp_path, monkeypatch):
    source = (
        "from prefbuild.teachers.base import Completion, Teacher\n"
        "class EchoTeacher(Teacher):\n"
        "    backend = 'echo'\n"
        "    def __init__(self, config):\n"
        "        self.model = config.options['greeting']\n"
        "    async def complete(self, request):\n"
        "        return [Completion(self.model, 'stop', 0, 1, 0.0)]\n"
    )
    install_distribution(tmp_path, "echo-teacher", "[prefbuild.teachers]\necho = echo_teacher:EchoTeacher\n",
                         modules={"echo_teacher.py": source})
    monkeypatch.syspath_prepend(str(tmp_path))
    registry.clear_cache()
    assert "echo" in available_backends()
    teacher = make_teacher({"backend": "echo", "options": {"greeting": "hello"}})
    assert isinstance(teacher, Teacher) and teacher.model == "hello"
    sys.modules.pop("echo_teacher", None)
    registry.clear_cache()


def test_models_path_and_prepare_commands():
    runner = CliRunner()
    prepared = runner.invoke(models_command, ["prepare"])
    assert prepared.exit_code == 0, prepared.output
    folder = prepared.output.strip().splitlines()[-1]
    assert folder == str(models.embedded_model_dir())
    shown = runner.invoke(models_command, ["path"])
    assert shown.exit_code == 0 and shown.output.strip() == folder


def test_models_path_says_when_not_prepared(tmp_path, monkeypatch):
    monkeypatch.setenv("PREFBUILD_CACHE", str(tmp_path))
    result = CliRunner().invoke(models_command, ["path"])
    assert result.exit_code == 1
    assert str(tmp_path / "models" / models.EMBEDDED_MODEL_NAME) in result.output
    assert "prefbuild models prepare" in result.output


def test_a_crash_mid_conversion_leaves_no_half_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("PREFBUILD_CACHE", str(tmp_path))

    def crash(gguf_path, target):
        (target / "config.json").write_text("{}")
        raise KeyboardInterrupt

    monkeypatch.setattr(models, "_convert", crash)
    with pytest.raises(KeyboardInterrupt):
        models.ensure_embedded_model()
    assert [p.name for p in (tmp_path / "models").iterdir()] == [f".{models.EMBEDDED_MODEL_NAME}.lock"]
    assert not models.is_prepared()


def test_conversion_from_the_bundled_gguf(tmp_path, monkeypatch):
    monkeypatch.setenv("PREFBUILD_CACHE", str(tmp_path))
    folder = models.ensure_embedded_model()
    assert folder == tmp_path / "models" / models.EMBEDDED_MODEL_NAME
    names = {p.name for p in folder.iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json", models.MARKER_FILE} <= names
    config = json.loads((folder / "config.json").read_text())
    assert config["architectures"] == ["LlamaForCausalLM"] and "quantization_config" not in config
    assert sorted(p.name for p in folder.parent.iterdir()) == [f".{models.EMBEDDED_MODEL_NAME}.lock", folder.name]
    assert models.ensure_embedded_model() == folder  # second call: no conversion, same folder

    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    assert "<|im_start|>" in tokenizer.chat_template
    model = AutoModelForCausalLM.from_pretrained(folder)
    prompt = tokenizer.apply_chat_template(
        [{"role": "user", "content": "What is the capital of France?"}], add_generation_prompt=True, tokenize=False
    )
    inputs = tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
    output = model.generate(**inputs, max_new_tokens=8, do_sample=False)
    assert "Paris" in tokenizer.decode(output[0, inputs["input_ids"].shape[1] :])


@pytest.mark.parametrize(
    ("missing", "overrides", "message"),
    [
        ({"torch"}, [], "teacher.backend: the transformers teacher needs torch, which `pip install prefbuild` "
                        "leaves out: pip install 'prefbuild[local]'"),
        ({"vllm"}, ["teacher.backend=vllm", "teacher.model=Qwen/Qwen3-4B-Instruct-2507"],
         "teacher.backend: the vllm teacher needs vLLM: install `prefbuild[vllm]`"),
        ({"transformers"}, ["teacher.backend=vllm"],  # the embedded model is not converted yet (a fresh cache)
         "teacher.backend: converting the embedded model needs transformers"),
        ({"transformers"}, ["teacher.backend=vllm", "teacher.model="],  # an empty model is the embedded one
         "teacher.backend: converting the embedded model needs transformers"),
    ],
)
def test_a_teacher_whose_extra_is_missing_is_one_error_line(tmp_path, monkeypatch, missing, overrides, message):
    """``pip install prefbuild`` alone, then a bundled recipe whose teacher needs an extra: the recipe
    check names it, located at the recipe's backend, before anything runs."""
    import importlib.util

    from prefbuild.cli.main import main

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *args: None if name in missing else real(name, *args))
    monkeypatch.setenv("PREFBUILD_CACHE", str(tmp_path / "cache"))
    args = ["generate", "quickstart", "--out", str(tmp_path / "run"), "--limit", "1"]
    for override in overrides:
        args += ["--set", override]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 1
    assert message in result.output and "Traceback" not in result.output
    assert result.output.count("error:") == 1 and not (tmp_path / "run").exists()


def test_a_teacher_served_elsewhere_needs_no_extra_here(monkeypatch):
    """On a Ray cluster the nodes serve the model; a teacher object handed to ``api.generate`` is built already."""
    import importlib.util

    from prefbuild.checks import check_recipe
    from prefbuild.errors import PrefbuildError
    from prefbuild.recipe import load_recipe

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *args: None if name in ("torch", "vllm") else real(name, *args))
    for overrides in ([], ["teacher.backend=vllm"]):
        with pytest.raises(PrefbuildError, match=r"teacher\.backend: the"):
            check_recipe(load_recipe("quickstart", overrides))
        assert check_recipe(load_recipe("quickstart", overrides), teacher_here=False).recipe.name == "quickstart"


def test_check_recipe_on_a_machine_that_does_not_run_the_teacher(monkeypatch):
    import importlib.util

    from prefbuild.cli.main import main

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: None if name == "vllm" else real(name, *args))
    refused = CliRunner().invoke(main, ["check-recipe", "alfworld-roundwise"], catch_exceptions=False)
    assert refused.exit_code == 1 and "teacher.backend: the vllm teacher needs vLLM" in refused.output
    checked = CliRunner().invoke(main, ["check-recipe", "alfworld-roundwise", "--teacher-elsewhere"],
                                 catch_exceptions=False)
    assert checked.exit_code == 0 and checked.output.startswith("name: alfworld-roundwise")
