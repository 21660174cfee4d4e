"""A model-written call can never reach ``eval``/``exec`` or any attribute of a backend except
its public, documented methods."""

from __future__ import annotations

import copy
import json
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefbuild.envs.bfcl.backend import BfclBackend
from prefbuild.envs.bfcl.calls import CallRejected, CallSpec, parse_python_calls
from prefbuild.envs.bfcl.data import class_function_docs, load_entries
from prefbuild.envs.bfcl.env import BfclEnv, task_of
from prefbuild.records import FunctionCall, ToolCall
from prefbuild.tooluse.actions import encode_action

# Text that must never be read as a call of a documented function.
HOSTILE_TEXT = [
    "__import__('os').system('id')",
    "ls.__globals__",
    "ls().__class__",
    "os.system('id')",
    "GorillaFileSystem.ls()",
    "self._load_scenario({})",
    "ls(a=__import__('os'))",
    "ls(a=open('/etc/passwd').read())",
    "ls(a=(lambda: 1)())",
    "ls(a=lambda: 1)",
    "ls(a=[x for x in range(3)])",
    "ls(a={x: 1 for x in 'ab'})",
    "ls(a=(x for x in 'ab'))",
    "ls(a=f'{1+1}')",
    "ls(*[True])",
    "ls(**{'a': True})",
    "ls(a=True)(b=1)",
    "ls(a=cd(folder='x'))",
    "ls(a=True if 1 else False)",
    "ls(a=1 + 2)",
    "ls(a=[1][0])",
    "ls(a=x)",
    "ls(a:=True)",
    "[ls(a=True), rm]",
    "(yield ls())",
    "await ls()",
    "ls(a=True); rm(file_name='x')",
    "import os",
    "ls(a=True, a=False)",
    "_private()",
    "__class__()",
    "ls(__class__=1)",
    "getattr(ls, '__call__')()",
]

# Plain calls with literal arguments that the parser reads as data; the backend refuses them.
PLAIN_BUT_UNKNOWN = [
    "eval('1+1')",
    "exec('x=1')",
    "exit()",
    "open('/etc/passwd')",
    "system('id')",
    "breakpoint()",
    "globals()",
    "rm_rf(path='/')",
    "load_scenario({})",
]

# Names a JSON tool call may carry; none is a public documented function of the file system.
HOSTILE_NAMES = [
    "__init__",
    "__class__",
    "__dict__",
    "__getattribute__",
    "__reduce__",
    "_load_scenario",
    "_current_dir",
    "_api_description",
    "root",
    "eval",
    "exec",
    "__import__",
    "getattr",
    "os.system",
    "ls.__globals__",
    "GorillaFileSystem.ls",
    "ls ",
    "ls()",
    "",
    "_",
    "a.b.c",
    "get_method_called",
]


class ExecSpy:
    """Audit hook that records every code execution (``eval``/``exec`` raise the ``exec`` event)."""

    def __init__(self) -> None:
        self.active = False
        self.events: list[str] = []
        sys.addaudithook(self)

    def __call__(self, event: str, args: tuple) -> None:
        if self.active and event == "exec":
            self.events.append(event)


SPY = ExecSpy()


@pytest.mark.parametrize("text", HOSTILE_TEXT)
def test_hostile_call_text_is_rejected_by_the_parser(text: str) -> None:
    with pytest.raises(CallRejected):
        parse_python_calls(text)


@pytest.mark.parametrize("text", PLAIN_BUT_UNKNOWN)
def test_plain_calls_of_undocumented_names_are_refused(text: str) -> None:
    backend = BfclBackend(load_entries("base")[0])
    outcome = backend.run_text(text)
    assert (outcome.ok, outcome.executed) == (False, False)
    assert outcome.result == f"Error during execution: name {text.split('(')[0]!r} is not defined"


def _state(backend: BfclBackend) -> dict:
    return {name: copy.deepcopy(vars(instance)) for name, instance in backend.instances.items()}


def test_hostile_calls_never_execute_code_or_touch_other_attributes(monkeypatch: pytest.MonkeyPatch) -> None:
    entry = load_entries("miss_func")[0]
    env = BfclEnv(hints="actionable")
    env.reset(task_of(entry))
    documented = {doc["name"] for name in entry.involved_classes for doc in class_function_docs(name)}
    reached: list[str] = []
    original = BfclBackend._method

    def spying_method(self: BfclBackend, name: str):  # the only place that does getattr on an instance
        reached.append(name)
        return original(self, name)

    monkeypatch.setattr(BfclBackend, "_method", spying_method)
    before = _state(env._backend)
    calls = [
        ToolCall(id=f"c{i}", function=FunctionCall(name=name or "x", arguments="{}"))
        for i, name in enumerate(HOSTILE_NAMES)
    ]
    calls += [
        ToolCall(id="t", function=FunctionCall(name=text, arguments="{}")) for text in HOSTILE_TEXT + PLAIN_BUT_UNKNOWN
    ]
    calls.append(ToolCall(id="k", function=FunctionCall(name="ls", arguments='{"__class__": 1}')))
    calls.append(ToolCall(id="s", function=FunctionCall(name="ls", arguments='"a=True"')))
    SPY.active = True
    try:
        result = env.step(encode_action(calls))
    finally:
        SPY.active = False
    assert SPY.events == []
    assert all(not fact.ok for fact in result.facts.tools)
    assert set(reached) <= documented  # a held-out one ("sort" here) too, as BFCL's executor
    assert _state(env._backend) == before
    assert len(result.messages) == len(calls)


def test_the_audit_hook_does_see_eval() -> None:
    SPY.active = True
    try:
        eval("1")  # proves the spy above would catch an eval
    finally:
        SPY.active = False
    assert SPY.events == ["exec"]
    SPY.events.clear()


def test_a_documented_call_does_run() -> None:
    backend = BfclBackend(load_entries("base")[0])
    assert json.loads(backend.call(CallSpec("ls", (), {"a": True})).result)["current_directory_content"]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_any_text_parses_only_to_plain_literal_calls(text: str) -> None:
    try:
        calls = parse_python_calls(text)
    except CallRejected:
        return
    literal = (str, int, float, complex, bool, bytes, type(None), list, tuple, dict, set, frozenset)
    for call in calls:
        assert call.name.isidentifier() and not call.name.startswith("_")
        assert all(isinstance(value, literal) for value in (*call.args, *call.kwargs.values()))
