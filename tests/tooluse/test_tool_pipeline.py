"""The code env end to end with tools: generate -> label -> pair -> export, then the exported
tool dataset loaded by the real libraries (``datasets``, TRL's ``apply_chat_template`` with
``tools`` on the embedded model's tokenizer)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from prefbuild import api
from prefbuild.envs.code.sandbox import namespaces_available
from prefbuild.exports.llamafactory import TOOL_CALL_WORDS
from prefbuild.io.jsonl import read_records
from prefbuild.records import Pair, Role, Trajectory

pytestmark = pytest.mark.skipif(namespaces_available() is not None, reason=f"no sandbox: {namespaces_available()}")

TOOL_MODES = ("tool_error", "invalid_arguments", "unknown_tool", "repeated_tool_call", "hallucinated_tool_output",
              "no_tool_use")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("code-tools") / "run"
    overrides = ["teacher.backend=scripted", "env.num_tasks=6", "env.samples_per_task=2", "teacher.concurrency=4",
                 "pairs.strategies.1.params.n=2"]
    overrides += [f"teacher.scripted.{mode}=0.07" for mode in TOOL_MODES]
    api.run("code-interpreter", overrides=overrides, out=out)
    return out


def test_labels_find_the_simulated_tool_mistakes(run_dir: Path) -> None:
    trajectories = list(read_records(run_dir / "labelled.jsonl", Trajectory))
    assert len(trajectories) == 12
    simulated, found, clean_hits = Counter(), Counter(), Counter()
    for trajectory in trajectories:
        assert trajectory.tools and trajectory.tools[0]["function"]["name"] == "code_interpreter"
        for step in trajectory.steps:
            modes = {label.mode for label in step.labels}
            for label in step.labels:
                assert label.evidence and label.labeler
            if step.facts.simulated == "expert":
                clean_hits.update(modes & set(TOOL_MODES))
            elif step.facts.simulated in TOOL_MODES:
                simulated[step.facts.simulated] += 1
                found[step.facts.simulated] += step.facts.simulated in modes
            if step.tool_calls:
                assert [fact.call_id for fact in step.facts.tools] == [call.id for call in step.tool_calls]
    assert sum(simulated.values()) >= 4, simulated
    assert found == simulated, (found, simulated)  # every simulated tool mistake is labelled
    assert not clean_hits, clean_hits  # and no expert step gets a tool label


def test_pairs_and_exports_carry_tools(run_dir: Path) -> None:
    pairs = list(read_records(run_dir / "pairs.jsonl", Pair))
    strategies = Counter(pair.strategy for pair in pairs)
    assert strategies["stepwise"] and strategies["ranked_samples"], strategies
    assert all(pair.tools for pair in pairs)
    assert {pair.reason for pair in pairs} & set(TOOL_MODES)
    summary = api.export(
        [run_dir / "pairs.jsonl"], run_dir / "tools-export", ["trl", "llamafactory", "swift", "sft", "sft_first"],
        trajectory_files=[run_dir / "labelled.jsonl"], jsonl=True,
    )
    counts = summary.as_dict()["formats"]
    assert sum(counts["trl"]["rows"].values()) == len(pairs)
    assert sum(counts["sft_first"]["rows"].values()) <= sum(counts["sft"]["rows"].values())
    rows = [json.loads(line) for path in (run_dir / "tools-export" / "trl").glob("*.jsonl")
            for line in path.read_text().splitlines()]
    structured = [m for row in rows for m in row["prompt"] + row["chosen"] if m.get("tool_calls")]
    assert structured, "Hermes calls are exported as structured tool_calls"
    call = structured[0]["tool_calls"][0]
    assert call["function"]["name"] == "code_interpreter" and json.loads(call["function"]["arguments"])["code"]
    assert "<tool_call>" not in structured[0]["content"]
    assert all(json.loads(row["tools"])[0]["function"]["name"] == "code_interpreter" for row in rows)
    sharegpt = [json.loads(line) for path in (run_dir / "tools-export" / "llamafactory").glob("*.jsonl")
                for line in path.read_text().splitlines()]
    turns = [turn["from"] for row in sharegpt for turn in row["conversations"]]
    assert "function_call" in turns and "observation" in turns and all(row["tools"] for row in sharegpt)
    swift = [json.loads(line) for path in (run_dir / "tools-export" / "swift").glob("*.jsonl")
             for line in path.read_text().splitlines()]
    roles = {message["role"] for row in swift for message in row["messages"]}
    assert {"tool_call", "tool_response"} <= roles


def test_trl_renders_the_exported_tool_dataset_with_the_embedded_tokenizer(run_dir: Path) -> None:
    datasets = pytest.importorskip("datasets")
    trl_data = pytest.importorskip("trl.data_utils")
    from transformers import AutoTokenizer

    from prefbuild.teachers.embedded import ensure_embedded_model

    api.export([run_dir / "pairs.jsonl"], run_dir / "trl-export", ["trl", "sft"],
               trajectory_files=[run_dir / "labelled.jsonl"])
    tokenizer = AutoTokenizer.from_pretrained(ensure_embedded_model())
    for config in ("trl", "sft"):
        files = sorted(str(path) for path in (run_dir / "trl-export").rglob("*.parquet") if config in path.parts)
        dataset = datasets.load_dataset("parquet", data_files=files, split="train")
        assert "tools" in dataset.column_names
        for example in dataset:
            tools = json.loads(example["tools"])
            if config == "trl":
                example = {key: example[key] for key in ("prompt", "chosen", "rejected")}
            else:
                example = {"messages": example["messages"]}
            rendered = trl_data.apply_chat_template(example, tokenizer, tools=tools)
            text = rendered.get("prompt", rendered.get("text", ""))
            assert text, rendered
            tool_turns = [m for m in example.get("prompt", example.get("messages", [])) if m["role"] == Role.tool]
            for message in tool_turns:
                assert message["content"] in text


def test_stats_and_report_give_pass_at_k_by_domain(run_dir: Path) -> None:
    from prefbuild.analysis.passk import pass_at_k
    from prefbuild.analysis.stats import collect_stats

    trajectories = list(read_records(run_dir / "labelled.jsonl", Trajectory))
    rows = {row["domain"]: row for row in collect_stats(run_dir)["trajectory"]["pass_at_k_by_domain"]}
    assert set(rows) == {f"code/{t.task.type}" for t in trajectories}
    for domain, row in rows.items():
        mine = [t for t in trajectories if f"code/{t.task.type}" == domain]
        tasks = {t.task.id for t in mine}
        expected = sum(pass_at_k(2, sum(t.outcome.success for t in mine if t.task.id == task), 2) for task in tasks)
        assert row["tasks"] == len(tasks) and row["episodes"] == len(mine) == 2 * len(tasks)
        assert row["pass@2"] == round(expected / len(tasks), 4)
    assert 'id="table-passk-domain"' in (run_dir / "report.html").read_text()


def _llamafactory_data_modules():
    """LLaMA-Factory's own dataset parser, sharegpt converter and function formatter.

    The package ``__init__`` files import its multimodal plugin (torchaudio, which prefbuild's
    environment does not ship); the data modules themselves need none of it, so they are loaded
    from the installed package without running those ``__init__`` files.
    """
    import importlib
    import importlib.util
    import sys
    import types

    spec = importlib.util.find_spec("llamafactory")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("llamafactory is not installed (make test installs it with --no-deps)")
    root = Path(next(iter(spec.submodule_search_locations)))
    for name, folder in (("llamafactory", root), ("llamafactory.data", root / "data")):
        if name not in sys.modules:
            package = types.ModuleType(name)
            package.__path__ = [str(folder)]
            sys.modules[name] = package
    load = importlib.import_module
    return load("llamafactory.data.parser"), load("llamafactory.data.converter"), load("llamafactory.data.formatter")


def test_llamafactory_reads_the_exported_tool_dataset(run_dir: Path) -> None:
    parser, converter, formatter = _llamafactory_data_modules()
    out = run_dir / "lf-export"
    api.export([run_dir / "pairs.jsonl"], out, ["llamafactory"], jsonl=True)
    info = json.loads((out / "dataset_info.json").read_text())
    names = sorted(info)
    attrs = parser.get_dataset_list(names, str(out))
    functions = formatter.FunctionFormatter(slots=["{{content}}"], tool_format="qwen")
    converted = 0
    for name, attr in zip(names, attrs, strict=True):
        assert attr.formatting == "sharegpt" and attr.ranking and attr.tools == "tools"
        to_lf = converter.get_dataset_converter("sharegpt", attr, None)
        for line in (out / info[name]["file_name"]).read_text().splitlines():
            row = json.loads(line)
            example = to_lf(row)
            assert example["_prompt"], row  # LLaMA-Factory did not drop it as abnormal
            assert json.loads(example["_tools"])[0]["function"]["name"] == "code_interpreter"
            responses = []
            prompt_turns = len(example["_prompt"])
            for position, message in enumerate([*example["_prompt"], *example["_response"]]):
                rendered = message["content"]
                if message["role"] == "function":
                    rendered = "".join(functions.apply(content=message["content"], tool_call_words=TOOL_CALL_WORDS))
                    text, words, rest = message["content"].partition(TOOL_CALL_WORDS[0])
                    calls = json.loads(rest.rpartition(TOOL_CALL_WORDS[1])[0] if words else text)
                    if words:  # the text the model wrote beside its calls comes before them
                        assert rendered.startswith(text) and text.strip(), message
                    for call in calls if isinstance(calls, list) else [calls]:
                        assert f'<tool_call>\n{{"name": "{call["name"]}", "arguments": ' in rendered
                if position >= prompt_turns:
                    responses.append(rendered)
            chosen, rejected = responses
            assert chosen != rejected, row  # what LLaMA-Factory trains on still differs
            converted += 1
    assert converted
