"""Everything a run will use, built once before the first request: ``check-recipe``, ``run`` and ``generate``.

The recipe model checks types and ranges; this module checks what only building the parts
can tell: the env name, its dialect and options, the protocol and its options, the split and
task types (the first task is planned), the teacher backend, every labeler with its params, whether a labeler can
label any env of the run, and every pair strategy with its params. Each problem is one
``RecipeError`` at the recipe's ``file:line`` and field, so hours of generation are never
spent on a recipe whose later stages cannot run.
"""

from __future__ import annotations

from typing import Any

from prefbuild.errors import PrefbuildError
from prefbuild.recipe import EnvConfig, LoadedRecipe, Recipe, RecipeError
from prefbuild.registry import unknown_name


def _fail(recipe: Recipe, path: tuple[str | int, ...], error: BaseException | str) -> RecipeError:
    source, line = recipe.locate(*path)
    message = str(error.args[0]) if isinstance(error, KeyError) and error.args else str(error)
    shown = path[:1] + path[2:] if path[0] == "env" and len(recipe.envs) == 1 else path
    return RecipeError(source, line, ".".join(str(part) for part in shown), message)


def _check_env(recipe: Recipe, index: int, section: EnvConfig) -> None:
    from prefbuild.envs import get_env, make_env, make_protocol

    where = ("env", index)
    try:
        get_env(section.name)
    except (KeyError, PrefbuildError) as error:
        raise _fail(recipe, (*where, "name"), error) from None
    try:
        env = make_env(section.name, dialect=section.dialect, options=section.options)
    except PrefbuildError as error:
        field = "dialect" if "has no dialect" in str(error) else "options"
        raise _fail(recipe, (*where, field), error) from None
    try:
        make_protocol(section.name, section.protocol, dialect=section.dialect, options=section.protocol_options)
    except PrefbuildError as error:
        field = "protocol_options" if "rejected its options" in str(error) else "protocol"
        raise _fail(recipe, (*where, field), error) from None
    try:
        next(iter(env.tasks(section.split, 1, recipe.seed, section.task_types)), None)
    except (ValueError, KeyError, LookupError, OSError, PrefbuildError) as error:
        raise _fail(recipe, (*where, *_tasks_field(section, error)), error) from None
    finally:
        close = getattr(env, "close", None)
        if callable(close):
            close()


def _tasks_field(section: EnvConfig, error: BaseException) -> tuple[str, ...]:
    """The field a failure to plan the first task is about: the task types, a data file the error
    names (``options.data_file``: the file's own ``file:line`` is in the message), or the split."""
    text = str(error)
    if section.task_types and "type" in text:
        return ("task_types",)
    files = section.options.get("data_file")
    named = [files] if isinstance(files, str) else [str(f) for f in files] if isinstance(files, list) else []
    if any(name and name in text for name in named):
        return ("options", "data_file")
    return ("split",)


def _check_labelers(recipe: Recipe) -> None:
    from prefbuild.labelers import available_labelers, build_labelers

    configs = [config.model_dump() for config in recipe.labelers] if recipe.labelers is not None else None
    env_names = {section.name for section in recipe.envs}
    if configs is not None:
        known = available_labelers()
        for position, config in enumerate(configs):
            cls = known.get(config["name"])
            if cls is None:
                message = unknown_name("labelers", config["name"], sorted(known))
                raise _fail(recipe, ("labelers", position, "name"), message)
            if cls.envs and not env_names & set(cls.envs):
                raise _fail(recipe, ("labelers", position, "name"),
                            f"labeler {config['name']!r} labels only {', '.join(cls.envs)} episodes; this run plays "
                            f"{', '.join(sorted(env_names))}")
    for name in sorted(env_names):
        try:
            build_labelers(configs, env=name)
        except (KeyError, ValueError) as error:
            text = str(error.args[0]) if error.args else str(error)
            position = _position(text, "labelers[")
            path: tuple[str | int, ...] = ("labelers", position, "params") if position is not None else ("labelers",)
            raise _fail(recipe, path, text) from None


def _position(text: str, prefix: str) -> int | None:
    if text.startswith(prefix):
        number = text[len(prefix):].split("]", 1)[0]
        if number.isdigit():
            return int(number)
    return None


class _TeacherStandIn:
    """Stands in for the teacher while a strategy that needs one is built (no request is sent)."""

    model = "check"


def _check_strategies(recipe: Recipe) -> None:
    from prefbuild.pairs import build_strategy

    for position, strategy in enumerate(recipe.pairs.strategies):
        try:
            build_strategy(strategy.name, strategy.params, teacher=_TeacherStandIn(), seed=recipe.seed)
        except (KeyError, ValueError, TypeError, PrefbuildError) as error:
            field = "name" if isinstance(error, KeyError) else "params"
            raise _fail(recipe, ("pairs", "strategies", position, field), error) from None


def _check_backend(recipe: Recipe, *, teacher_here: bool) -> None:
    from prefbuild import registry
    from prefbuild.teachers.factories import require_installed

    known = registry.names("teachers")
    if recipe.teacher.backend not in known:
        raise _fail(recipe, ("teacher", "backend"),
                    f"unknown teacher backend {recipe.teacher.backend!r}; known: {', '.join(known)}")
    if not teacher_here:
        return
    try:
        require_installed(recipe.teacher.backend, recipe.teacher.model)
    except PrefbuildError as error:
        raise _fail(recipe, ("teacher", "backend"), error) from None


def check_recipe(loaded: LoadedRecipe, *, teacher_here: bool = True) -> Any:
    """Build every part a run of ``loaded`` will use; raise at the first that cannot be built.

    Args:
        loaded: a loaded recipe (types and ranges already validated).
        teacher_here: the recipe's teacher runs in this process, so what its backend imports
            must be installed here (not so on a Ray cluster, whose nodes serve the model, nor
            with a teacher object handed to ``api.generate``).

    Returns:
        ``loaded``, for chaining.

    Raises:
        RecipeError: ``file:line field: message`` of the first problem.

    Example:
        >>> from prefbuild.recipe import load_recipe
        >>> check_recipe(load_recipe("simulate")).recipe.name
        'simulate'
    """
    recipe = loaded.recipe
    _check_backend(recipe, teacher_here=teacher_here)
    for index, section in enumerate(recipe.envs):
        _check_env(recipe, index, section)
    _check_labelers(recipe)
    _check_strategies(recipe)
    loaded.resolved_dict()  # every ${VAR} placeholder can be recorded
    return loaded
