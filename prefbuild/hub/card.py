"""The dataset card body: how the data was made, what is in it, how to train on it.

A preference dataset is only as trustworthy as its provenance. The card states the recipe,
teacher model and sampling, environment and protocol, and prefbuild version, then shows the
numbers a user checks before training (pairs per failure mode and split, per strategy, per
task type, token lengths), one sample pair, and copy-paste code to load it and train with TRL.
Everything here is plain data in, markdown out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from prefbuild import __version__
from prefbuild.records import EnvInfo, Pair, TeacherInfo

REPO_PLACEHOLDER = "<user>/<dataset>"
"""Stands for the repo id in the card until ``prefbuild publish`` knows it."""

SAMPLE_CHARS = 1200


@dataclass(frozen=True)
class CardInfo:
    """Provenance facts for the card; build it from a resolved recipe with ``CardInfo.from_recipe``."""

    pretty_name: str
    license: str = "apache-2.0"
    tags: tuple[str, ...] = ()
    repo_id: str | None = None
    recipe: Mapping[str, Any] | None = None
    teachers: tuple[TeacherInfo, ...] = ()
    envs: tuple[EnvInfo, ...] = ()
    prefbuild_version: str = __version__
    description: str = ""

    @classmethod
    def from_recipe(cls, recipe: Mapping[str, Any], **overrides: Any) -> CardInfo:
        """Read name, publish settings, teacher and env from a resolved recipe (as a plain dict)."""
        publish = recipe.get("publish") or {}
        teacher = recipe.get("teacher") or {}
        env_sections = recipe.get("env") or {}
        if isinstance(env_sections, Mapping):
            env_sections = [env_sections]
        values: dict[str, Any] = {
            "pretty_name": publish.get("pretty_name") or str(recipe.get("name") or "prefbuild dataset"),
            "license": publish.get("license") or "apache-2.0",
            "tags": tuple(publish.get("tags") or ()),
            "repo_id": publish.get("repo_id"),
            "recipe": recipe,
            "description": str(recipe.get("description") or "").strip(),
        }
        if teacher.get("backend"):
            values["teachers"] = (
                TeacherInfo(backend=teacher["backend"], model=teacher.get("model") or "",
                            sampling=dict(teacher.get("sampling") or {})),
            )
        envs = tuple(
            EnvInfo(name=env["name"], dialect=env.get("dialect"), protocol=env.get("protocol") or "unknown")
            for env in env_sections
            if isinstance(env, Mapping) and env.get("name")
        )
        if envs:
            values["envs"] = envs
        values.update(overrides)
        return cls(**values)


@dataclass
class ConfigSummary:
    """One dataset config as written: rows and shard files per split."""

    name: str
    splits: dict[str, int]
    files: dict[str, list[str]] = field(default_factory=dict)
    columns: list[str] = field(default_factory=list)
    default: bool = False


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(str(cell).replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def _crosstab(rows: Sequence[Mapping[str, Any]], row_key: str, column_key: str) -> str:
    """A markdown table of counts with one row per ``row_key`` value and a total column."""
    columns = sorted({str(row[column_key]) for row in rows})
    cells: dict[str, dict[str, int]] = {}
    for row in rows:
        cells.setdefault(str(row[row_key]), {})[str(row[column_key])] = int(row["count"])
    body = [
        [name, *(values.get(column, 0) for column in columns), sum(values.values())]
        for name, values in sorted(cells.items(), key=lambda item: (-sum(item[1].values()), item[0]))
    ]
    totals = [sum(values.get(column, 0) for values in cells.values()) for column in columns]
    body.append(["**total**", *totals, sum(totals)])
    return _table([row_key, *columns, "total"], body)


def _counts_table(rows: Sequence[Mapping[str, Any]], key: str) -> str:
    return _table([key, "pairs"], [[row[key], row["count"]] for row in rows])


def _number(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _clip(text: str, limit: int = SAMPLE_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} more characters]"


def sample_pair_markdown(pair: Pair) -> str:
    """One pair as the trainer sees it: the last prompt turn, then chosen and rejected."""
    shown = {
        "id": pair.id,
        "strategy": pair.strategy,
        "reason": pair.reason if pair.reason else None,
        "evidence": pair.evidence,
        "prompt (last turn)": {"role": pair.prompt[-1].role.value, "content": _clip(pair.prompt[-1].content)},
        "prompt turns": len(pair.prompt),
        "chosen": [{"role": m.role.value, "content": _clip(m.content)} for m in pair.chosen],
        "rejected": [{"role": m.role.value, "content": _clip(m.content)} for m in pair.rejected],
    }
    return "```json\n" + json.dumps(shown, indent=2, ensure_ascii=False) + "\n```"


def _provenance(info: CardInfo, stats: Mapping[str, Any]) -> str:
    parts = ["## How this dataset was made", ""]
    parts.append(
        "An agent (the *teacher* model) played tasks in a text environment; rule-based labelers marked "
        "the bad behaviour in its episodes (loops, invalid actions, premature claims of success, ...), and "
        "pair strategies turned each labelled step or episode into a *chosen* / *rejected* pair with the "
        "same prompt. The data is synthetic: every rejected answer is a real output of the teacher, every "
        "chosen answer comes from the strategy named in the `strategy` column."
    )
    parts.append("")
    if info.teachers:
        rows = [[t.model or "-", t.backend, ", ".join(f"{k}={v}" for k, v in sorted(t.sampling.items())
                                                     if v not in (None, [], {})) or "-"]
                for t in info.teachers]
        parts += ["**Teacher**", "", _table(["model", "backend", "sampling"], rows), ""]
    if stats.get("by_teacher_model"):
        models = ", ".join(f"`{row['teacher_model']}` ({row['count']} pairs)" for row in stats["by_teacher_model"])
        parts += [f"**Teacher model(s) in the data:** {models}", ""]
    if info.envs:
        rows = [[e.name, e.dialect or "-", e.protocol] for e in info.envs]
        parts += ["**Environment**", "", _table(["env", "dialect", "protocol"], rows), ""]
    parts.append(f"**Built with** prefbuild {info.prefbuild_version}.")
    if info.recipe is not None:
        recipe_yaml = yaml.safe_dump(dict(info.recipe), sort_keys=False, allow_unicode=True)
        parts += [
            "",
            "The full recipe is in [`recipe.yaml`](recipe.yaml); rerun it with `prefbuild run recipe.yaml`.",
            "",
            "<details><summary>recipe.yaml</summary>",
            "",
            "```yaml",
            recipe_yaml.rstrip(),
            "```",
            "",
            "</details>",
        ]
    return "\n".join(parts)


def _contents(configs: Sequence[ConfigSummary], stats: Mapping[str, Any]) -> str:
    parts = ["## Contents", ""]
    rows = [[f"`{c.name}`" + (" (default)" if c.default else ""), ", ".join(f"{s}: {n}" for s, n in c.splits.items()),
             ", ".join(f"`{col}`" for col in c.columns)] for c in configs]
    parts += ["Configurations (one per export format):", "", _table(["config", "rows per split", "columns"], rows), ""]
    if stats.get("by_reason_split"):
        parts += ["Pairs per rejected behaviour (`reason`) and split:", "",
                  _crosstab(stats["by_reason_split"], "reason", "split"), ""]
    if stats.get("by_strategy"):
        parts += ["Pairs per strategy:", "", _counts_table(stats["by_strategy"], "strategy"), ""]
    if stats.get("by_task_type"):
        parts += ["Pairs per task type:", "", _counts_table(stats["by_task_type"], "task_type"), ""]
    tokens = stats.get("tokens") or {}
    if any(tokens.values()):
        rows = [[name.removesuffix("_tokens"), *(_number(q.get(key)) for key in ("p50", "p90", "p99", "max", "mean"))]
                for name, q in tokens.items() if q]
        parts += [
            "Lengths in tokens (estimated as words and punctuation marks; BPE tokenizers give about 1.3× more):",
            "",
            _table(["part", "p50", "p90", "p99", "max", "mean"], rows),
            "",
        ]
    return "\n".join(parts).rstrip()


def _usage(configs: Sequence[ConfigSummary], repo_id: str) -> str:
    names = [c.name for c in configs]
    trl_config = "trl" if "trl" in names else next((c.name for c in configs if c.default), names[0] if names else "")
    config_arg = "" if trl_config == "default" else f', "{trl_config}"'
    return "\n".join([
        "## Usage",
        "",
        "```python",
        "from datasets import load_dataset",
        "",
        f'dataset = load_dataset("{repo_id}"{config_arg})',
        'print(dataset["train"][0])',
        "```",
        "",
        "Train with TRL's `DPOTrainer` (the `trl` config is in TRL's conversational preference format: "
        "`prompt`, `chosen`, `rejected` message lists):",
        "",
        "```python",
        "from datasets import load_dataset",
        "from transformers import AutoModelForCausalLM, AutoTokenizer",
        "from trl import DPOConfig, DPOTrainer",
        "",
        'model_name = "HuggingFaceTB/SmolLM2-135M-Instruct"',
        "model = AutoModelForCausalLM.from_pretrained(model_name)",
        "tokenizer = AutoTokenizer.from_pretrained(model_name)",
        f'dataset = load_dataset("{repo_id}"{config_arg})',
        "trainer = DPOTrainer(",
        "    model=model,",
        '    args=DPOConfig(output_dir="dpo-agent", beta=0.1),',
        '    train_dataset=dataset["train"],',
        '    eval_dataset=dataset.get("test"),',
        "    processing_class=tokenizer,",
        ")",
        "trainer.train()",
        "```",
    ])


def render_card_body(
    info: CardInfo,
    configs: Sequence[ConfigSummary],
    stats: Mapping[str, Any],
    sample: Pair | None,
) -> str:
    """The markdown body of the dataset card (everything after the YAML header)."""
    repo_id = info.repo_id or REPO_PLACEHOLDER
    total = stats.get("pairs", 0)
    envs = ", ".join(sorted({e.name for e in info.envs})) or "text environments"
    parts = [
        f"# {info.pretty_name}",
        "",
        f"{total} preference pairs (chosen / rejected) for training LLM agents with DPO, built with prefbuild "
        f"from episodes of a teacher model in {envs}.",
    ]
    if info.description:
        parts += ["", info.description]
    parts += ["", _provenance(info, stats), "", _contents(configs, stats)]
    if sample is not None:
        parts += ["", "## Sample pair", "", sample_pair_markdown(sample)]
    parts += ["", _usage(configs, repo_id), ""]
    parts += [
        "## License",
        "",
        f"The dataset is released under `{info.license}`. The chosen and rejected texts were generated by the "
        "teacher model(s) named above: **the teacher model's licence and terms of use also apply** to this "
        "data and to models trained on it.",
        "",
    ]
    return "\n".join(parts)
