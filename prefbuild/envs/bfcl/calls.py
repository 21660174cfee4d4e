"""Safe reading of function calls: BFCL's Python call text and JSON tool calls.

BFCL's own executor rewrites a call string into ``instance.method(...)`` and runs it with
``eval``; here a call is *data*: a function name plus literal arguments. Python text is parsed
with ``ast`` and accepted only when every element is ``name(literal, key=literal, ...)``: no
attribute access, no nested calls, no names, lambdas, comprehensions, f-strings, starred or
double-starred arguments. Literals are read with ``ast.literal_eval``, which evaluates nothing.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
MAX_CALL_TEXT = 100_000


class CallRejected(ValueError):
    """A call that is not a plain function call with literal arguments; the message says why."""


@dataclass(frozen=True)
class CallSpec:
    """One function call as data: ``name(*args, **kwargs)`` with literal values only."""

    name: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)

    def text(self) -> str:
        """The call in BFCL's Python syntax (``repr`` of each value, as BFCL's FC decoder writes it)."""
        parts = [repr(value) for value in self.args] + [f"{key}={value!r}" for key, value in self.kwargs.items()]
        return f"{self.name}({','.join(parts)})"


def check_name(name: object) -> str:
    """A function name as the only thing a call may name: a plain identifier, not private.

    Args:
        name: the name a model wrote.

    Returns:
        The name, unchanged.

    Raises:
        CallRejected: for anything but ``[A-Za-z][A-Za-z0-9_]*`` (``_private``, ``__dunder__``,
            dotted names, empty or non-string names).

    Example:
        >>> check_name("ls")
        'ls'
    """
    if not isinstance(name, str) or not NAME.match(name):
        raise CallRejected(f"{name!r} is not a plain function name")
    return name


def _literal(node: ast.expr, where: str) -> Any:
    if isinstance(node, ast.Starred):
        raise CallRejected(f"{where}: starred arguments are not allowed")
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise CallRejected(f"{where}: only literal values are allowed, got {ast.unparse(node)[:80]!r}") from None


def _call(node: ast.expr) -> CallSpec:
    if not isinstance(node, ast.Call):
        raise CallRejected(f"{ast.unparse(node)[:80]!r} is not a function call")
    if not isinstance(node.func, ast.Name):
        raise CallRejected(f"{ast.unparse(node.func)[:80]!r}: call a function by its plain name")
    name = check_name(node.func.id)
    args = tuple(_literal(argument, f"{name}()") for argument in node.args)
    kwargs: dict[str, Any] = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            raise CallRejected(f"{name}(): '**' arguments are not allowed")
        key = check_name(keyword.arg)
        if key in kwargs:
            raise CallRejected(f"{name}(): argument {key!r} given twice")
        kwargs[key] = _literal(keyword.value, f"{name}({key}=)")
    return CallSpec(name, args, kwargs)


def parse_python_calls(text: str) -> list[CallSpec]:
    """Read BFCL's call text: ``[f(a=1), g('x')]``, a bare ``f(a=1)`` or a tuple of calls.

    Args:
        text: the call text (a model's output or a ground-truth entry).

    Returns:
        The calls in order.

    Raises:
        CallRejected: the text is not a list of plain calls with literal arguments.

    Example:
        >>> [call.text() for call in parse_python_calls("[cd(folder='document'), sort('report.pdf')]")]
        ["cd(folder='document')", "sort('report.pdf')"]
    """
    if not isinstance(text, str) or len(text) > MAX_CALL_TEXT:
        raise CallRejected("call text must be a string of reasonable length")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError) as error:
        raise CallRejected(f"not Python call syntax: {error}") from None
    body = tree.body
    elements = body.elts if isinstance(body, ast.List | ast.Tuple) else [body]
    return [_call(element) for element in elements]


def json_call(name: object, arguments: object) -> CallSpec:
    """A JSON tool call (``{"name": ..., "arguments": {...}}``) as a call.

    Args:
        name: the tool name.
        arguments: the decoded arguments object.

    Returns:
        The call with keyword arguments only.

    Raises:
        CallRejected: a bad name, arguments that are not an object, or argument names that are
            not plain identifiers.

    Example:
        >>> json_call("mkdir", {"dir_name": "temp"})
        CallSpec(name='mkdir', args=(), kwargs={'dir_name': 'temp'})
    """
    checked = check_name(name)
    if not isinstance(arguments, dict):
        raise CallRejected(f"{checked}(): arguments must be a JSON object")
    for key in arguments:
        check_name(key)
    return CallSpec(checked, (), dict(arguments))
