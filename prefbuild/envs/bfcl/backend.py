"""BFCL's real stateful backends, one fresh set of instances per episode, driven without ``eval``.

Instances are built and initialised exactly as BFCL's ``execute_multi_turn_func_call`` does
(class from ``CLASS_FILE_PATH_MAPPING``, ``_load_scenario(deepcopy(initial_config[class]),
long_context=...)`` for stateful classes), but kept in this object instead of ``globals()``.
A call reaches a backend only as data (``calls.CallSpec``) and only through ``getattr`` on an
instance, after its name was checked against the class's documented functions and found to be a
plain public function defined on the class.
"""

from __future__ import annotations

import copy
import importlib
import inspect
import json
import pickle
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any

import jsonschema
import jsonschema.exceptions

from prefbuild.envs.bfcl.calls import CallRejected, CallSpec, parse_python_calls
from prefbuild.envs.bfcl.data import BfclEntry
from prefbuild.envs.bfcl.hints import execution_error_hint, invalid_arguments_hint, unknown_function_hint
from prefbuild.envs.bfcl.tools import class_tools, validation_schema

ERROR_PREFIX = "Error during execution: "


@dataclass(frozen=True)
class CallOutcome:
    """What one call did.

    ``result`` is the text BFCL's executor records for the call (the checker compares these);
    ``content`` is what the model is shown (``result`` plus the hint, when there is one).
    """

    name: str
    arguments: dict[str, Any] | None
    result: str
    ok: bool
    executed: bool
    error: str | None = None
    hint: str | None = None
    changed: bool | None = False  # it changed its instance's state (``state_snapshot``); None: not comparable

    @property
    def content(self) -> str:
        return f"{self.result}\n{self.hint}" if self.hint else self.result


def bfcl_result_text(value: Any) -> str:
    """A return value as BFCL's executor records it (str as is, dict as JSON, else ``str``).

    Args:
        value: what the backend method returned.

    Returns:
        The result text.

    Example:
        >>> bfcl_result_text({"current_working_directory": "/alex"})
        '{"current_working_directory": "/alex"}'
    """
    if type(value) is str:
        return value
    if type(value) is dict:
        try:
            return json.dumps(value)
        except (TypeError, ValueError):  # handled: a dict that JSON cannot encode is shown as its Python text
            return str(value)
    return str(value)


# Attributes that are no state a call changes: the class's description, its random generator (a call that
# draws from it changes what it generates, which the other attributes show) and fixed lookup tables.
_NOT_STATE = frozenset({"_api_description", "_random", "_flight_cost_lookup"})


def state_snapshot(instance: Any) -> bytes | None:
    """A backend instance's state as bytes, equal exactly when nothing in it changed: every attribute but
    ``_NOT_STATE``, private ones too (the file system's current directory is ``_current_dir``), pickled
    together so shared objects stay shared; None when an attribute cannot be pickled.

    Example:
        >>> from prefbuild.envs.bfcl.data import load_entries
        >>> backend = BfclBackend(load_entries("base")[0])
        >>> files = backend.instances["GorillaFileSystem"]
        >>> before = state_snapshot(files)
        >>> [backend.call(CallSpec(name, kwargs=kwargs)).changed for name, kwargs in
        ...  [("ls", {}), ("cd", {"folder": "document"}), ("cd", {"folder": "nowhere"}), ("cd", {"folder": ".."})]]
        [False, True, False, True]
        >>> state_snapshot(files) == before
        True
    """
    state = {name: value for name, value in vars(instance).items() if name not in _NOT_STATE}
    try:
        return pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        # handled: an attribute pickle cannot write: the change is unknown, not assumed
        return None


def _changed(before: bytes | None, instance: Any) -> bool | None:
    """Whether ``instance`` changed since its snapshot ``before`` (None when either cannot be taken)."""
    if before is None:
        return None
    after = state_snapshot(instance)
    return None if after is None else after != before


@cache
def _validator(class_name: str, name: str) -> jsonschema.protocols.Validator:
    """The argument validator of one documented function (built once)."""
    tool = next(tool for tool in class_tools(class_name) if tool["function"]["name"] == name)
    return jsonschema.Draft202012Validator(validation_schema(tool))


@cache
def _signature(cls: type, name: str) -> inspect.Signature:
    """The signature of a documented method (looked up statically on the class, never on an instance)."""
    function = inspect.getattr_static(cls, name)
    if name.startswith("_") or not inspect.isfunction(function):
        raise CallRejected(f"{name!r} is no public method of {cls.__name__}")
    return inspect.signature(function)


def _new_instance(class_name: str, initial_config: dict[str, Any], long_context: bool) -> Any:
    from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING, STATELESS_CLASSES

    module = importlib.import_module(CLASS_FILE_PATH_MAPPING[class_name])
    instance = getattr(module, class_name)()
    if class_name not in STATELESS_CLASSES:
        instance._load_scenario(copy.deepcopy(initial_config.get(class_name, {})), long_context=long_context)
    return instance


class BfclBackend:
    """The involved backend instances of one episode and the only door into them.

    Args:
        entry: the task (its ``initial_config`` and ``involved_classes``).
        offered: names of the functions offered to the model now (all documented ones when None);
            hints name only these, but a documented function not offered still runs, as in BFCL.
        hints: add actionable hints to failed calls, and check arguments against the schema first.

    Example:
        >>> from prefbuild.envs.bfcl.data import load_entries
        >>> backend = BfclBackend(load_entries("base")[0])
        >>> backend.call(CallSpec("pwd")).result
        '{"current_working_directory": "/workspace"}'
    """

    def __init__(self, entry: BfclEntry, offered: Iterable[str] | None = None, *, hints: bool = False) -> None:
        long_context = "long_context" in entry.category
        self.instances: dict[str, Any] = {
            name: _new_instance(name, entry.initial_config, long_context) for name in entry.involved_classes
        }
        self.hints = hints
        self.owner: dict[str, str] = {}
        self.tools: dict[str, dict[str, Any]] = {}
        for class_name in entry.involved_classes:
            for tool in class_tools(class_name):
                # Later classes win a name clash, as in BFCL's method-name mapping.
                self.owner[tool["function"]["name"]] = class_name
                self.tools[tool["function"]["name"]] = tool
        self.offered: set[str] = set(self.owner if offered is None else offered)

    def offer(self, names: Iterable[str]) -> None:
        """Make more documented functions callable (BFCL's held-out functions, when revealed)."""
        self.offered.update(name for name in names if name in self.owner)

    def _method(self, name: str) -> Any:
        """The bound method for a documented function: the only ``getattr`` on an instance."""
        class_name = self.owner[name]
        instance = self.instances[class_name]
        if name.startswith("_") or not inspect.isfunction(inspect.getattr_static(type(instance), name, None)):
            raise CallRejected(f"{name!r} is no public method of {class_name}")
        return getattr(instance, name)

    def named_arguments(self, call: CallSpec) -> dict[str, Any]:
        """The call's positional and keyword arguments by parameter name.

        Args:
            call: a call of a documented function.

        Returns:
            ``{parameter: value}`` as Python would bind them.

        Raises:
            TypeError: the arguments do not bind to the method's signature.
            KeyError: the function is not documented for an involved class.

        Example:
            >>> from prefbuild.envs.bfcl.data import load_entries
            >>> BfclBackend(load_entries("base")[0]).named_arguments(CallSpec("sort", ("a.txt",)))
            {'file_name': 'a.txt'}
        """
        class_name = self.owner[call.name]
        signature = _signature(type(self.instances[class_name]), call.name)
        bound = dict(signature.bind(None, *call.args, **call.kwargs).arguments)
        bound.pop(next(iter(signature.parameters)))  # the instance slot
        return bound

    def call(self, call: CallSpec) -> CallOutcome:
        """Run one call on its backend instance.

        Args:
            call: the parsed call.

        Returns:
            The outcome; failures never raise. A documented function runs exactly as BFCL would
            run it (hints never change what executes), offered or not: BFCL's executor maps every
            public method of the involved classes, so a held-out function called before its turn
            runs and changes the state the checker compares (the tool labelers mark the call
            ``unknown_tool``: it was not offered). With hints on, a failed call's result also says
            what went wrong and what would be valid (the schema mismatch when the arguments do not
            fit the tool's schema, else a hint from the backend state).

        Example:
            >>> from prefbuild.envs.bfcl.data import load_entries
            >>> BfclBackend(load_entries("base")[0]).call(CallSpec("rm_rf")).result
            "Error during execution: name 'rm_rf' is not defined"
        """
        arguments = dict(call.kwargs) if not call.args else None
        if call.name not in self.owner:
            error = f"name {call.name!r} is not defined"
            hint = unknown_function_hint(call.name, self.offered) if self.hints else None
            return CallOutcome(call.name, arguments, ERROR_PREFIX + error, False, False, error, hint)
        instance = self.instances[self.owner[call.name]]
        before = state_snapshot(instance)
        try:
            value = self._method(call.name)(*call.args, **call.kwargs)
        except Exception as error:
            # handled: boundary: BFCL's tool classes raise anything; the error text is the tool result
            text = str(error)
            changed = _changed(before, instance)
            return CallOutcome(
                call.name, arguments, ERROR_PREFIX + text, False, True, text, self._hint(call, text), changed
            )
        result = bfcl_result_text(value)
        changed = _changed(before, instance)
        if isinstance(value, dict) and "error" in value:
            text = str(value["error"])
            return CallOutcome(call.name, arguments, result, False, True, text, self._hint(call, text), changed)
        return CallOutcome(call.name, arguments, result, True, True, changed=changed)

    def schema_problem(self, call: CallSpec) -> str | None:
        """Why the call's arguments do not fit the tool's JSON Schema, or None when they do.

        Args:
            call: a call of a documented function.

        Returns:
            ``"<path>: <message>"`` from ``jsonschema`` or the binding error, else None.
        """
        try:
            arguments = self.named_arguments(call)
        except TypeError as error:
            return str(error)
        error = jsonschema.exceptions.best_match(_validator(self.owner[call.name], call.name).iter_errors(arguments))
        if error is None:
            return None
        where = ".".join(str(part) for part in error.absolute_path) or "arguments"
        return f"{where}: {error.message}"

    def _hint(self, call: CallSpec, error: str) -> str | None:
        if not self.hints:
            return None
        tool = self.tools[call.name]
        problem = self.schema_problem(call)
        if problem is not None:
            return invalid_arguments_hint(problem, tool)
        class_name = self.owner[call.name]
        class_tools = [name for name, owner in self.owner.items() if owner == class_name and name in self.offered]
        return execution_error_hint(error, tool, class_name, self.instances[class_name], class_tools)

    def run_text(self, text: str) -> CallOutcome:
        """Run one call written in BFCL's Python syntax (a ground-truth entry); rejected text is
        answered as a failed call, never evaluated.

        Args:
            text: e.g. ``"mkdir(dir_name='temp')"``.

        Returns:
            The outcome of the single call.

        Example:
            >>> from prefbuild.envs.bfcl.data import load_entries
            >>> BfclBackend(load_entries("base")[0]).run_text("__import__('os')").ok
            False
        """
        try:
            calls = parse_python_calls(text)
            if len(calls) != 1:
                raise CallRejected(f"expected one call, got {len(calls)}")
        except CallRejected as error:
            return CallOutcome(text[:40] or "?", None, ERROR_PREFIX + str(error), False, False, str(error))
        return self.call(calls[0])
