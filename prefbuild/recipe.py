"""Recipes: one YAML file says everything about a run (env, teacher, labelers, pairs, output).

Why the care with errors: a recipe is written by hand and often edited on a remote GPU
box. A wrong type three levels deep must say ``recipe.yaml:12 teacher.sampling.temperature:
...`` — the file, the line and the field path — not print a traceback. Secrets come in
through ``${ENV_VAR}`` and are never written back out: the resolved recipe stored in a run
directory keeps the placeholder, not the value.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from prefbuild.errors import LocatedError, PrefbuildError, plain_message
from prefbuild.recipe_yaml import YamlInputError, parse_yaml
from prefbuild.secrets import mask as redact
from prefbuild.secrets import register
from prefbuild.teachers.config import TeacherConfig, TeacherConfigError, parse_teacher_config


class RecipeError(LocatedError):
    """A bad recipe: where (file and line, or ``--set``) and which field, and what is wrong."""


class Section(BaseModel):
    """Recipe sections reject unknown keys: a typo must not be silently ignored."""

    model_config = ConfigDict(extra="forbid")


class EnvConfig(Section):
    name: str = Field(description="Environment name, e.g. 'household' or 'sql' (see `prefbuild envs`).")
    dialect: str | None = Field(default=None, description="Env dialect, e.g. 'classic' or 'modern' for household.")
    protocol: str = Field(description="Prompt protocol, e.g. 'agentbench', 'react', 'eto', 'toolcall', 'dbbench'.")
    split: str = "train"
    num_tasks: int = Field(default=8, ge=1)
    samples_per_task: int = Field(default=1, ge=1, description="Episodes per task (pass@k, best-of-n).")
    task_types: list[str] | None = None
    max_steps: int = Field(default=35, ge=1)
    options: dict[str, Any] = Field(default_factory=dict, description="Env-specific options (data_file, intro...).")
    protocol_options: dict[str, Any] = Field(default_factory=dict, description="Protocol options (fewshot...).")


class LabelerConfig(Section):
    name: str
    params: dict[str, Any] = Field(default_factory=dict)


class StrategyConfig(Section):
    name: Literal["stepwise", "trajectory", "style", "best_of_n"] | str
    params: dict[str, Any] = Field(default_factory=dict)


class PairsConfig(Section):
    strategies: list[StrategyConfig] = Field(default_factory=lambda: [StrategyConfig(name="stepwise")])
    max_per_reason: int | None = Field(default=None, ge=1)
    max_per_trajectory: int | None = Field(default=None, ge=1)
    balance_envs: bool = Field(
        default=False, description="Cut every env's pairs to the count of the env with the fewest (a seeded sample)."
    )
    dedup: bool = True
    near_dedup: bool = False
    test_fraction: float = Field(default=0.1, ge=0, lt=1)
    max_tokens: int | None = Field(
        default=None, ge=16, strict=True,
        description="Keep only pairs whose prompt and longer side fit in this many tokens (the trainer's "
        "max_length), counted with `tokenizer`."
    )
    tokenizer: str | None = Field(
        default=None, description="The trained model's tokenizer (local folder or Hub id) for max_tokens."
    )

    @model_validator(mode="after")
    def _budget_needs_a_tokenizer(self) -> PairsConfig:
        if self.max_tokens is not None and not self.tokenizer:
            raise ValueError("max_tokens needs tokenizer: the model you train (a local folder or a Hub id)")
        return self


class OutputConfig(Section):
    dir: str | None = Field(default=None, description="Run directory; default runs/<recipe name>.")
    formats: list[str] = Field(default_factory=lambda: ["trl"], description="Registered export format names.")

    @field_validator("formats")
    @classmethod
    def _registered_formats(cls, formats: list[str]) -> list[str]:
        from prefbuild import registry

        known = registry.names("exports")
        if not formats:
            raise ValueError(f"give at least one export format; known: {', '.join(known)}")
        for name in formats:
            if name not in known:
                raise ValueError(f"unknown export format {name!r}; known: {', '.join(known)}")
        return formats


class PublishConfig(Section):
    repo_id: str | None = None
    private: bool = False
    license: str = "apache-2.0"
    tags: list[str] = Field(default_factory=list)
    pretty_name: str | None = None


class Recipe(Section):
    """A whole run: ``prefbuild run recipe.yaml`` goes from these settings to a dataset."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", description="Run name; also the default run dir.")
    description: str = ""
    seed: int = 0
    env: list[EnvConfig] = Field(
        min_length=1, description="One env section, or a list of them to mix envs in one run (e.g. household + sql)."
    )
    teacher: TeacherConfig
    labelers: list[LabelerConfig] | None = Field(default=None, description="None: every default labeler of the env.")
    pairs: PairsConfig = Field(default_factory=PairsConfig)
    output: OutputConfig = Field(default_factory=OutputConfig)
    publish: PublishConfig = Field(default_factory=PublishConfig)

    _placeholders: dict[tuple[str | int, ...], str] = PrivateAttr(default_factory=dict)
    _lines: dict[tuple[str | int, ...], int] = PrivateAttr(default_factory=dict)
    _source: str = PrivateAttr(default="<recipe>")
    _overridden: frozenset[tuple[str | int, ...]] = PrivateAttr(default_factory=frozenset)

    def locate(self, *path: str | int) -> tuple[str, int | None]:
        """``(file, line)`` of the field at ``path`` (env sections by index), or of its nearest ancestor.

        Example:
            >>> text = "name: r\\nenv: {name: household, protocol: react}\\nteacher: {backend: scripted}\\n"
            >>> load_recipe_text(text, "r.yaml").recipe.locate("env", 0, "name")
            ('r.yaml', 2)
        """
        for length in range(len(path), 0, -1):
            if path[:length] in self._overridden:
                return "--set", None
        return self._source, _nearest_line(self._lines, path)

    def recorded(self, *path: str | int) -> Any:
        """The section at ``path`` as it may be written down: ``${VAR}`` placeholders, not their values.

        Records (``TeacherInfo.sampling``, ``EnvInfo.options``) store this instead of the resolved
        values, so a secret passed through the environment never reaches a file.

        Args:
            path: the section's path, env sections by index: ``("teacher", "sampling")``, ``("env", 0, "options")``.

        Returns:
            The section as plain JSON data (``None`` values left out), placeholders put back.

        Example:
            >>> import os; os.environ["DOC_TOKEN"] = "tok-123"
            >>> text = "name: r\\nenv: {name: household, protocol: react}\\nteacher: {backend: scripted, model: s}\\n"
            >>> recipe = load_recipe_text(text, overrides=["teacher.sampling.extra_body.token=${DOC_TOKEN}"]).recipe
            >>> recipe.teacher.sampling.extra_body, recipe.recorded("teacher", "sampling")["extra_body"]
            ({'token': 'tok-123'}, {'token': '${DOC_TOKEN}'})
        """
        node: Any = self
        for part in path:
            node = node[part] if isinstance(node, list | dict) else getattr(node, str(part))
        data = node.model_dump(mode="json", exclude_none=True) if isinstance(node, BaseModel) else node
        data = json.loads(json.dumps(data))  # a copy
        for full_path, original in self._placeholders.items():
            if full_path[: len(path)] != tuple(path) or len(full_path) == len(path):
                continue
            _put_back(data, full_path[len(path):], original, ".".join(map(str, full_path)))
        return data

    @field_validator("env", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        """``env:`` may be one mapping (the common case) or a list of them."""
        return [value] if isinstance(value, dict) else value

    @property
    def envs(self) -> list[EnvConfig]:
        """The env sections, in the order the recipe lists them."""
        return self.env

    def run_dir(self) -> Path:
        return Path(self.output.dir) if self.output.dir else Path("runs") / self.name

    def generation_hash(self) -> str:
        """Hash of everything that changes what an episode is: seed, env, teacher model and sampling.

        Endpoints, concurrency, timeouts, the number of tasks and every later stage are left
        out, so a run can be resumed against another server or extended with more tasks.
        """
        envs = [env.model_dump(mode="json", exclude={"num_tasks"}) for env in self.envs]
        env = envs if len(envs) > 1 else envs[0]
        teacher = self.teacher.model_dump(mode="json", include={"backend", "model", "sampling", "scripted"})
        payload = json.dumps({"seed": self.seed, "env": env, "teacher": teacher}, sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


# --------------------------------------------------------------------------------------
# Loading with locations

_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def _line_index(node: yaml.Node, path: tuple[str | int, ...] = ()) -> dict[tuple[str | int, ...], int]:
    """Map every key path in a composed YAML document to its 1-based line."""
    lines = {path: node.start_mark.line + 1}
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value
            nested = _line_index(value_node, (*path, key))
            nested[(*path, key)] = key_node.start_mark.line + 1  # the key's line, where users look
            lines.update(nested)
    elif isinstance(node, yaml.SequenceNode):
        for position, item in enumerate(node.value):
            lines.update(_line_index(item, (*path, position)))
    return lines


def _nearest_line(lines: Mapping[tuple[str | int, ...], int], path: tuple[str | int, ...]) -> int | None:
    """The line of ``path`` or of its closest ancestor present in the file."""
    for length in range(len(path), -1, -1):
        if path[:length] in lines:
            return lines[path[:length]]
    return None


def _interpolate(
    value: Any,
    source: str,
    lines: Mapping[tuple[str | int, ...], int],
    path: tuple[str | int, ...] = (),
    overridden: frozenset[tuple[str, ...]] = frozenset(),
) -> tuple[Any, dict[tuple[str | int, ...], str]]:
    """Replace ``${VAR}`` / ``${VAR:-default}`` from the environment; return placeholders by path.

    ``overridden`` holds the ``--set`` paths, so a missing variable in an override is located at ``--set``.
    """
    originals: dict[tuple[str | int, ...], str] = {}
    if isinstance(value, str) and _PLACEHOLDER.search(value):

        def substitute(match: re.Match[str]) -> str:
            name, default = match.group(1), match.group(2)
            if name in os.environ:
                register(os.environ[name])  # a value from the environment may be a secret: never written
                return os.environ[name]
            if default is not None:
                return default
            text_path = tuple(str(part) for part in path)
            if any(text_path[: len(touched)] == touched for touched in overridden):
                raise RecipeError("--set", None, _dotted(path), f"environment variable {name} is not set")
            raise RecipeError(
                source, _nearest_line(lines, path), _dotted(path), f"environment variable {name} is not set"
            )

        originals[path] = value
        return _PLACEHOLDER.sub(substitute, value), originals
    if isinstance(value, dict):
        result = {}
        for key, item in value.items():
            result[key], found = _interpolate(item, source, lines, (*path, key), overridden)
            originals.update(found)
        return result, originals
    if isinstance(value, list):
        items = []
        for position, item in enumerate(value):
            new_item, found = _interpolate(item, source, lines, (*path, position), overridden)
            items.append(new_item)
            originals.update(found)
        return items, originals
    return value, originals


def _dotted(path: Sequence[str | int]) -> str:
    return ".".join(str(part) for part in path)


def _set_by_override(path: tuple[str, ...], overridden: Iterable[tuple[str, ...]]) -> bool:
    """Did a ``--set`` write the field at ``path``, a field inside it, or a section holding it?"""
    return any(path[: len(touched)] == touched or (path and touched[: len(path)] == path) for touched in overridden)


def parse_override(text: str) -> tuple[tuple[str, ...], Any]:
    """``a.b.c=value`` -> (("a", "b", "c"), value), the value read as YAML (so 0.5 is a float).

    The value is read as a recipe file is (``recipe_yaml.parse_yaml``), with the same limits:
    nesting, integer length, duplicate keys, anchors.

    Example:
        >>> parse_override("env.num_tasks=5")
        (('env', 'num_tasks'), 5)
        >>> parse_override("seed=" + "[" * 2000)
        Traceback (most recent call last):
        ...
        prefbuild.recipe.RecipeError: --set seed: value is not valid YAML: exceeded maximum nesting depth
    """
    key, separator, raw = text.partition("=")
    if not separator or not key.strip():
        raise RecipeError("--set", None, text, "expected KEY.PATH=VALUE")
    if any(not part.strip() for part in key.strip().split(".")):
        problem = "a key is empty (two dots, or a dot at an end); expected KEY.PATH=VALUE"
        raise RecipeError("--set", None, key.strip(), problem)
    try:
        value = parse_yaml(raw, "--set")[1] if raw.strip() else ""
    except YamlInputError as error:
        problem = error.message.removeprefix("invalid YAML: ")
        raise RecipeError("--set", None, key, f"value is not valid YAML: {problem}") from None
    return tuple(part for part in key.strip().split(".")), value


def _env_section(node: Any, name: str) -> dict[str, Any] | None:
    """The env section named ``name`` (``--set env.sql.options.data_file=...``), in a list of
    sections or as the single section; None when ``name`` is a field, not an env name."""
    sections = node if isinstance(node, list) else [node] if isinstance(node, dict) else []
    if isinstance(node, dict) and name in node:
        return None
    matches = [section for section in sections if isinstance(section, dict) and section.get("name") == name]
    if len(matches) > 1:
        raise RecipeError("--set", None, f"env.{name}", "several env sections have this name; use its index")
    return matches[0] if matches else None


def _cannot_set_inside(node: Any, path: tuple[str, ...], depth: int) -> str:
    """Why ``path`` cannot be set at ``path[depth]`` of ``node``; for a list, how to address an item."""
    if not isinstance(node, list):
        return f"cannot set inside a {type(node).__name__}"
    where, rest = ".".join(path[:depth]), ".".join(path[depth:])
    if path[depth].removeprefix("-").isdigit():
        return f"{where} has {len(node)} items (indices 0 to {len(node) - 1})"
    if path[:1] == ("env",) and depth == 1 and len(path) > 2:  # an env section addressed by a name none has
        names = ", ".join(str(section.get("name")) for section in node if isinstance(section, dict))
        return f"no env section is named {path[1]!r}; address one by its index (0 to {len(node) - 1}) or name ({names})"
    return f"{where} is a list of {len(node)}: address one item by its index, e.g. {where}.0.{rest}"


def apply_overrides(data: dict[str, Any], overrides: Iterable[str]) -> set[tuple[str, ...]]:
    """Apply ``--set`` overrides in place; returns the overridden paths (for error locations).

    An env section is addressed by index (``env.1.num_tasks=5``) or by its env name
    (``env.sql.options.data_file=dev.jsonl``), whether ``env`` is one section or a list.
    """
    touched: set[tuple[str, ...]] = set()
    for text in overrides:
        path, value = parse_override(text)
        node: Any = data
        single_section = False
        for depth, part in enumerate(path[:-1]):
            if isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
                continue
            named = _env_section(node, part) if depth == 1 and path[0] == "env" else None
            if named is not None:
                node = named
                continue
            if depth == 1 and path[0] == "env" and isinstance(node, dict) and part.isdigit():
                if part != "0":  # a single section is env.0, as in the recipe's other error messages
                    raise RecipeError("--set", None, ".".join(path), "env has 1 section (index 0)")
                single_section = True
                continue
            if not isinstance(node, dict):
                raise RecipeError("--set", None, ".".join(path), _cannot_set_inside(node, path, depth))
            node = node.setdefault(part, {})
        last = path[-1]
        if isinstance(node, list) and last.isdigit() and int(last) < len(node):
            node[int(last)] = value
        elif isinstance(node, dict):
            node[last] = value
        else:
            raise RecipeError("--set", None, ".".join(path), _cannot_set_inside(node, path, len(path) - 1))
        touched.add(path[:1] + path[2:] if single_section else path)  # recorded as written without the index
    return touched


def _humanise(error: dict[str, Any]) -> str:
    if error["type"] == "extra_forbidden":
        return "unknown field (check the spelling; `prefbuild recipes NAME` prints a whole recipe)"
    return plain_message(error)


class LoadedRecipe(BaseModel):
    """A validated recipe plus what is needed to write it back without secrets."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    recipe: Recipe
    source: str
    placeholders: dict[str, str] = Field(default_factory=dict, description="dotted path -> original ${VAR} text")

    def resolved_dict(self) -> dict[str, Any]:
        """The recipe with every default filled in and every ``${VAR}`` value put back as its placeholder."""
        data = self.recipe.model_dump(mode="json")
        if len(data["env"]) == 1:
            data["env"] = data["env"][0]
        for path, original in self.recipe._placeholders.items():
            parts = list(path)
            if parts[0] == "env" and isinstance(data["env"], dict):
                del parts[1]  # a single env section is written as a mapping
            _put_back(data, tuple(parts), original, _dotted(path))
        data["teacher"]["base_urls"] = [redact(url) for url in data["teacher"]["base_urls"]]
        return data

    def resolved_yaml(self) -> str:
        return yaml.safe_dump(self.resolved_dict(), sort_keys=False, allow_unicode=True)


def _put_back(data: Any, path: tuple[str | int, ...], original: str, dotted: str) -> None:
    """Write the placeholder ``original`` at ``path`` in ``data``; refuse rather than leave the value in clear."""
    node = data
    try:
        for part in path[:-1]:
            node = node[part]
        node[path[-1]]
        node[path[-1]] = original
    except (KeyError, IndexError, TypeError):
        raise PrefbuildError(
            f"{dotted}: cannot record this field with its ${{VAR}} placeholder (the field is not kept as "
            "written); give it a plain value or set it with --set"
        ) from None


def _typed_override_path(path: tuple[str, ...], env_names: list[str]) -> tuple[str | int, ...]:
    """A ``--set`` path with env sections by index (``env.sql.x`` and single-section ``env.x`` -> ``env.N.x``)."""
    typed: list[str | int] = [int(part) if part.isdigit() else part for part in path]
    if typed[:1] == ["env"] and len(typed) > 1:
        if isinstance(typed[1], str) and typed[1] in env_names and env_names.count(typed[1]) == 1:
            typed[1] = env_names.index(typed[1])
        elif not isinstance(typed[1], int):
            typed.insert(1, 0)
    return tuple(typed)


def expand_placeholders(value: Any) -> Any:
    """``value`` with every ``${VAR}`` / ``${VAR:-default}`` replaced from the environment (unset: kept).

    Used where recorded data (``EnvInfo.options``) is put to use again, e.g. by replay.

    Example:
        >>> expand_placeholders({"path": "${NO_SUCH_VAR_X:-db.sqlite}"})
        {'path': 'db.sqlite'}
    """
    if isinstance(value, str):
        def substitute(match: re.Match[str]) -> str:
            return os.environ.get(match.group(1), match.group(2) if match.group(2) is not None else match.group(0))

        return _PLACEHOLDER.sub(substitute, value)
    if isinstance(value, dict):
        return {key: expand_placeholders(item) for key, item in value.items()}
    if isinstance(value, list):
        return [expand_placeholders(item) for item in value]
    return value


def load_recipe_text(text: str, source: str = "<recipe>", overrides: Iterable[str] = ()) -> LoadedRecipe:
    """Parse, interpolate, override and validate a recipe; every failure is a ``RecipeError``."""
    try:
        node, data = parse_yaml(text, source)
    except YamlInputError as error:
        raise RecipeError(error.source, error.line, error.field, error.message) from None
    if not isinstance(data, dict):
        raise RecipeError(source, 1, "", "a recipe must be a YAML mapping (name, env, teacher, ...)")
    lines = _line_index(node) if node is not None else {}
    overridden = apply_overrides(data, overrides)  # first, so a --set value replaces a ${VAR} and is recorded
    data, originals = _interpolate(data, source, lines, overridden=frozenset(overridden))
    try:
        recipe = Recipe.model_validate(data)
        parse_teacher_config(recipe.teacher)  # the checks the teacher factory makes (scripted rates...)
    except TeacherConfigError as error:
        field, _, message = str(error).partition(": ")
        if _set_by_override(tuple(field.split(".")), overridden):
            raise RecipeError("--set", None, field, message) from None
        path = tuple(int(p) if p.isdigit() else p for p in field.split("."))
        raise RecipeError(source, _nearest_line(lines, path), field, message) from None
    except ValidationError as error:
        first = error.errors()[0]
        location = list(first["loc"])
        if location[:2] == ["env", 0] and isinstance(data.get("env"), dict):
            del location[1]  # a single env section: report env.x, not env.0.x
        path = tuple(str(part) for part in location)
        if _set_by_override(path, overridden):
            raise RecipeError("--set", None, _dotted(path), _humanise(first)) from None
        typed_path = tuple(int(p) if p.isdigit() else p for p in path)
        raise RecipeError(source, _nearest_line(lines, typed_path), _dotted(path), _humanise(first)) from None
    placeholders = {_dotted(path): original for path, original in originals.items()}
    single_env = isinstance(data.get("env"), dict)
    recipe._source = source
    env_names = [section.name for section in recipe.envs]
    recipe._overridden = frozenset(_typed_override_path(path, env_names) for path in overridden)
    recipe._lines = {
        (path[0], 0, *path[1:]) if single_env and path and path[0] == "env" else path: line
        for path, line in lines.items()
    }
    recipe._placeholders = {
        (path[0], 0, *path[1:]) if single_env and path[0] == "env" else path: original
        for path, original in originals.items()
    }
    if recipe.teacher.api_key_env:
        register(os.environ.get(recipe.teacher.api_key_env))
    LoadedRecipe(recipe=recipe, source=source).resolved_dict()  # every placeholder can be written back
    return LoadedRecipe(recipe=recipe, source=source, placeholders=placeholders)


def load_recipe(path: str | os.PathLike[str], overrides: Iterable[str] = ()) -> LoadedRecipe:
    """Load a recipe file (or a bundled recipe by name, e.g. ``quickstart``)."""
    candidate = Path(path)
    if not candidate.exists():
        bundled = bundled_recipes().get(str(path))
        if bundled is None:
            names = ", ".join(bundled_recipes()) or "none"
            raise RecipeError(str(path), None, "", f"no such recipe file (bundled recipes: {names})")
        candidate = bundled
    try:
        text = candidate.read_text(encoding="utf-8")
    except OSError as error:
        raise RecipeError(str(candidate), None, "", f"cannot read: {error.strerror}") from None
    except UnicodeDecodeError as error:
        line = candidate.read_bytes()[: error.start].count(b"\n") + 1
        raise RecipeError(str(candidate), line, "", f"not UTF-8 text (byte {error.start}); is it a recipe?") from None
    return load_recipe_text(text, str(candidate), overrides)


def bundled_recipes() -> dict[str, Path]:
    """Recipes shipped inside the package (``prefbuild/recipes/``) by name."""
    folder = Path(__file__).resolve().parent / "recipes"
    if not folder.is_dir():
        return {}
    return {path.stem: path for path in sorted(folder.glob("*.yaml"))}
