"""The dataset card: how the data was made, what is in it, how to train on it.

A preference dataset is only as trustworthy as its provenance. The card states the recipe,
teacher model and sampling, environment and protocol, and prefbuild version, says plainly when
the data is simulated (the scripted teacher, no model), then shows the numbers a user checks
before training (pairs per failure mode and split, per strategy, per task type, token lengths),
one sample pair, and each export format's own copy-paste code to load and train on it.
Everything here is plain data in, markdown out: the YAML header (``card_metadata``), the body
(``render_card_body``), and reading/writing a ``README.md`` (``render_card`` / ``split_card``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

from prefbuild import __version__
from prefbuild.analysis.text import clip
from prefbuild.errors import PrefbuildError
from prefbuild.records import EnvInfo, Pair, TeacherInfo

REPO_PLACEHOLDER = "<user>/<dataset>"
"""Stands for the repo id in the card until ``prefbuild publish`` knows it."""

SAMPLE_CHARS = 1200
DESCRIPTION_CHARS = 5000
RECIPE_BLOCK_CHARS = 20_000
CARD_NAME = "README.md"
SIMULATED_BACKEND = "scripted"
"""The teacher backend whose episodes are simulated (an expert with injected mistakes, no model)."""
BASE_TAGS = ("dpo", "preference", "agent", "synthetic", "prefbuild")
TASK_CATEGORIES = ("text-generation",)


class CardError(PrefbuildError):
    """A dataset card that cannot be read; the message says which part."""


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

    @property
    def simulated(self) -> bool:
        """Whether any of the data comes from the scripted teacher (simulated mistakes, no model)."""
        return any(teacher.backend == SIMULATED_BACKEND for teacher in self.teachers)

    @property
    def fully_simulated(self) -> bool:
        """Whether all of the data comes from the scripted teacher."""
        return bool(self.teachers) and all(teacher.backend == SIMULATED_BACKEND for teacher in self.teachers)

    def with_teachers(self, teachers: Iterable[TeacherInfo]) -> CardInfo:
        """A copy whose teachers are those that really played the episodes (from the trajectories).

        Example:
            >>> info = CardInfo(pretty_name="x").with_teachers([TeacherInfo(backend="scripted", model="s")])
            >>> info.simulated
            True
        """
        found = tuple({(t.backend, t.model): t for t in teachers}.values())
        return replace(self, teachers=found) if found else self

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


def _clip(text: str) -> str:
    return clip(text, SAMPLE_CHARS)


def sample_pair_markdown(pair: Pair) -> str:
    """One pair as the trainer sees it: the last prompt turn, then chosen and rejected."""
    shown = {
        "id": pair.id,
        "strategy": pair.strategy,
        "reason": pair.reason if pair.reason else None,
        "evidence": pair.evidence,
        "prompt (last turn)": {"role": str(pair.prompt[-1].role), "content": _clip(pair.prompt[-1].content)},
        "prompt turns": len(pair.prompt),
        "chosen": [{"role": str(m.role), "content": _clip(m.content)} for m in pair.chosen],
        "rejected": [{"role": str(m.role), "content": _clip(m.content)} for m in pair.rejected],
    }
    return "```json\n" + json.dumps(shown, indent=2, ensure_ascii=False) + "\n```"


def simulation_notice(info: CardInfo) -> str | None:
    """The card's warning that the data is simulated, or ``None`` when a real model played every episode.

    Example:
        >>> simulation_notice(CardInfo(pretty_name="x")) is None
        True
    """
    if not info.simulated:
        return None
    share = "All of this data is" if info.fully_simulated else "Part of this data is"
    return (
        f"> **{share} simulated.** Episodes marked with the `{SIMULATED_BACKEND}` teacher backend were not "
        "played by a language model: prefbuild's scripted teacher followed the environment's expert and made "
        "mistakes on purpose at the rates set in the recipe, so those rejected answers are injected mistakes, "
        "not outputs of a model. Use such data to test a training pipeline, not as a model's real behaviour.\n\n"
        "Rule-based labelers marked the bad behaviour in the episodes, and pair strategies turned each "
        "labelled step or episode into a *chosen* / *rejected* pair with the same prompt; every chosen answer "
        "comes from the strategy named in the `strategy` column."
    )


def _provenance(info: CardInfo, stats: Mapping[str, Any]) -> str:
    parts = ["## How this dataset was made", ""]
    parts.append(simulation_notice(info) or (
        "An agent (the *teacher* model) played tasks in a text environment; rule-based labelers marked "
        "the bad behaviour in its episodes (loops, invalid actions, premature claims of success, ...), and "
        "pair strategies turned each labelled step or episode into a *chosen* / *rejected* pair with the "
        "same prompt. The data is synthetic: every rejected answer is a real output of the teacher, every "
        "chosen answer comes from the strategy named in the `strategy` column."
    ))
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
        recipe_yaml = clip(dump_yaml(info.recipe), RECIPE_BLOCK_CHARS)
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


def _usage(configs: Sequence[ConfigSummary], repo_id: str, snippets: Mapping[str, str]) -> str:
    """Loading code for the default config, then each config's own training snippet (from its format)."""
    default = next((c.name for c in configs if c.default), configs[0].name if configs else "default")
    config_arg = "" if default == "default" else f', "{default}"'
    parts = [
        "## Usage",
        "",
        "```python",
        "from datasets import load_dataset",
        "",
        f'dataset = load_dataset("{repo_id}"{config_arg})',
        'print(dataset["train"][0])',
        "```",
    ]
    for config in configs:
        snippet = snippets.get(config.name)
        if snippet:
            parts += ["", snippet.replace(REPO_PLACEHOLDER, repo_id)]
    return "\n".join(parts)


def render_card_body(
    info: CardInfo,
    configs: Sequence[ConfigSummary],
    stats: Mapping[str, Any],
    sample: Pair | None,
    snippets: Mapping[str, str] | None = None,
) -> str:
    """The markdown body of the dataset card (everything after the YAML header).

    Args:
        info: provenance (recipe, teachers, envs, licence).
        configs: the configs written, with rows per split.
        stats: ``prefbuild.analysis.stats.pair_stats`` of the pairs the rows came from.
        sample: one pair to show, or ``None``.
        snippets: config -> markdown telling how to load/train on it (``ExportFormat.loading_snippet``).

    Returns:
        Markdown text.

    Example:
        >>> body = render_card_body(CardInfo(pretty_name="demo"), [], {"pairs": 0}, None)
        >>> body.splitlines()[0]
        '# demo'
    """
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
        parts += ["", clip(info.description, DESCRIPTION_CHARS)]
    parts += ["", _provenance(info, stats), "", _contents(configs, stats)]
    if sample is not None:
        parts += ["", "## Sample pair", "", sample_pair_markdown(sample)]
    parts += ["", _usage(configs, repo_id, snippets or {}), ""]
    parts += [
        "## License",
        "",
        f"The dataset is released under `{info.license}`. The chosen and rejected texts were generated by the "
        "teacher model(s) named above: **the teacher model's licence and terms of use also apply** to this "
        "data and to models trained on it.",
        "",
    ]
    return "\n".join(parts)


# --------------------------------------------------------------------------------------
# The YAML header and the README.md file


def size_category(rows: int) -> str:
    """The Hub's ``size_categories`` bucket for a row count.

    Example:
        >>> size_category(1500)
        '1K<n<10K'
    """
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
                        (10_000_000, "1M<n<10M")):
        if rows < limit:
            return name
    return "10M<n<100M"


def card_metadata(
    info: CardInfo,
    configs: Sequence[ConfigSummary],
    dataset_infos: Mapping[str, Any],
    stats: Mapping[str, Any],
    data_dirs: Mapping[str, str],
) -> dict[str, Any]:
    """The card's YAML header as a plain dict: licence, tags, size, configs with data files, features.

    Args:
        info: provenance; its licence, pretty name and tags go into the header.
        configs: the configs written.
        dataset_infos: config -> ``datasets.DatasetInfo`` (features and split sizes).
        stats: pair statistics (for the size category and env tags).
        data_dirs: config -> folder of its shards, relative to the dataset directory.

    Returns:
        A dict ready for ``render_card``.
    """
    from datasets.info import DatasetInfosDict
    from huggingface_hub import DatasetCardData

    env_tags = [env.name for env in info.envs] + [row["env"] for row in stats.get("by_env", [])]
    simulated = ["simulated"] if info.simulated else []
    tags = list(dict.fromkeys([*BASE_TAGS, *simulated, *env_tags, *info.tags]))
    card_data = DatasetCardData(
        license=info.license,
        task_categories=list(TASK_CATEGORIES),
        tags=tags,
        size_categories=[size_category(stats.get("pairs", 0))],
        pretty_name=info.pretty_name,
    )
    DatasetInfosDict(dict(dataset_infos)).to_dataset_card_data(card_data)
    card_data["configs"] = [
        {
            "config_name": config.name,
            **({"default": True} if config.default else {}),
            "data_files": [{"split": split, "path": f"{data_dirs[config.name]}/{split}-*"}
                           for split in config.splits],
        }
        for config in configs
    ]
    return card_data.to_dict()


def dump_yaml(data: Mapping[str, Any], *, width: int | None = None) -> str:
    """``data`` as block YAML in key order, with libyaml's C emitter when available.

    The pure-Python emitter inspects every character of every scalar: a recipe with a 60 MB
    description took minutes; the C emitter takes a fraction of a second.

    Example:
        >>> dump_yaml({"name": "demo", "seed": 1})
        'name: demo\\nseed: 1\\n'
    """
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(dict(data), Dumper=dumper, sort_keys=False, allow_unicode=True, width=width)


def render_card(metadata: Mapping[str, Any], body: str) -> str:
    """A README.md: YAML header between ``---`` lines, then the markdown body.

    Example:
        >>> render_card({"license": "mit"}, "# t")
        '---\\nlicense: mit\\n---\\n\\n# t'
    """
    header = dump_yaml(metadata, width=1000)
    return f"---\n{header}---\n\n{body.lstrip()}"


def split_card(text: str) -> tuple[dict[str, Any], str]:
    """``(metadata, body)`` of a README.md; a README without a YAML header has empty metadata.

    Example:
        >>> split_card("---\\nlicense: mit\\n---\\n# t")
        ({'license': 'mit'}, '# t')
    """
    match = re.match(r"^---\r?\n(.*?)\r?\n---[ \t]*\r?\n?(.*)$", text, re.DOTALL)
    if not match:
        return {}, text
    try:
        metadata = yaml.safe_load(match.group(1)) or {}
    except yaml.YAMLError as error:
        raise CardError(f"{CARD_NAME}: the YAML header does not parse: {error}") from None
    if not isinstance(metadata, dict):
        raise CardError(f"{CARD_NAME}: the YAML header must be a mapping")
    return metadata, match.group(2)
