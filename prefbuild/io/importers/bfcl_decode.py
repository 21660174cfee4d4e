"""Decoding the model responses of a BFCL result file, as bfcl-eval's handlers decode them.

``bfcl generate`` records each step's raw response (``result[turn][step]``) and, in the
``inference_log``, what the handler's ``decode_execute`` made of it. The raw response has one of
three shapes, each with its handlers' decoder restated here (bfcl-eval's own functions live in
``bfcl_eval.model_handler.utils``, whose module imports tree-sitter parsers the ``bfcl`` extra
does not install; ``tests/bfclimport`` checks these against bfcl-eval's own):

- a list of ``{function: JSON arguments}`` objects (OpenAI-style FC handlers:
  ``convert_to_function_call``; a text answer, a string or (Claude, Gemini, Nova) a list of
  text blocks, fails to decode there);
- text with ``<tool_call>`` blocks (Qwen/Hermes FC handlers: ``QwenFCHandler.decode_execute``;
  a block that is not JSON is skipped, one without ``arguments`` fails the step);
- text in BFCL's prompting format ``[func(a=1)]`` (``default_decode_execute_prompting``).

Values are read as data, never evaluated: BFCL's prompting decoder ``eval``\\ s arithmetic and
lambdas in arguments; such a value is kept as its source text (a problem on the step says so).
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any

from prefbuild.envs.bfcl.calls import CallRejected, parse_python_calls

_TOOL_CALL = re.compile(r"<tool_call>\n(.*?)\n</tool_call>", re.DOTALL)


@dataclass(frozen=True)
class Decoded:
    """What decoding one step gave: calls (name, keyword arguments), none (an empty response,
    which ends the turn), or an error (BFCL's "Error decoding the model response", which ends it too)."""

    calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    error: str | None = None
    problems: tuple[str, ...] = field(default=())
    separator: str = ","  # BFCL's FC decoders join arguments with ",", its prompting decoder with ", "

    @property
    def texts(self) -> list[str]:
        """The calls in BFCL's execution syntax (``name(k=repr(v),...)``), as the handler logs them."""
        return [f"{name}({self.separator.join(f'{k}={v!r}' for k, v in arguments.items())})"
                for name, arguments in self.calls]


def response_kind(response: Any) -> str:
    """``fc`` (a list of call objects), ``tool_call`` (Hermes text) or ``prompting`` (text).

    Example:
        >>> response_kind([{"ls": "{}"}]), response_kind('<tool_call>\\n{}\\n</tool_call>'), response_kind("[ls()]")
        ('fc', 'tool_call', 'prompting')
    """
    if isinstance(response, list | dict):
        return "fc"
    if isinstance(response, str) and "<tool_call>" in response:
        return "tool_call"
    return "prompting"


def entry_kind(result: Any) -> str:
    """The handler family of one entry's responses: ``fc`` when any step is a list of call objects,
    else ``tool_call`` when any holds a ``<tool_call>`` block, else ``prompting``. A plain-text step
    decodes as its family's handler decodes it (an FC handler fails on it, a Qwen FC handler finds
    no calls, a prompting handler reads it as Python).

    Example:
        >>> entry_kind([[[{"ls": "{}"}], "Done."]])
        'fc'
    """
    kinds = {response_kind(response) for steps in result if isinstance(steps, list) for response in steps}
    return next((kind for kind in ("fc", "tool_call") if kind in kinds), "prompting")


def decode_response(response: Any, family: str | None = None) -> Decoded:
    """Decode one step's raw response as its handler family does (see the module doc).

    Args:
        response: ``result[turn][step]`` as the file holds it.
        family: the entry's ``entry_kind``; None decodes by the response's own shape.

    Returns:
        The decoded calls, or the decoding error.

    Example:
        >>> decode_response([{"cd": '{"folder": "docs"}'}]).texts
        ["cd(folder='docs')"]
        >>> decode_response("I am done.").error
        'not Python call syntax: I am done.'
        >>> decode_response("I am done.", "tool_call").calls
        ()
    """
    kind = family or response_kind(response)
    try:
        if kind == "fc":
            return Decoded(calls=tuple(_fc_calls(response)))
        if kind == "tool_call":
            return Decoded(calls=tuple(_tool_call_calls(response)))
        calls, problems = _prompting_calls(response)
        return Decoded(calls=tuple(calls), problems=tuple(problems), separator=", ")
    except (ValueError, KeyError, TypeError, SyntaxError, RecursionError) as error:
        # handled: BFCL's handler catches any decoding failure and ends the turn; so does the replay
        return Decoded(error=str(error) or type(error).__name__)


def _arguments(name: str, value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        value = json.loads(value)
    if not isinstance(value, dict):
        raise ValueError(f"{name}: arguments are not an object")
    return value


def _fc_calls(response: Any) -> list[tuple[str, dict[str, Any]]]:
    """``convert_to_function_call``: each object's items are ``function: arguments`` (JSON text or object)."""
    items = [response] if isinstance(response, dict) else response
    calls = []
    for item in items:
        if not isinstance(item, dict):
            raise TypeError(f"{type(item).__name__!r} object has no attribute 'items'")
        calls += [(str(name), _arguments(str(name), value)) for name, value in item.items()]
    return calls


def _tool_call_calls(text: Any) -> list[tuple[str, dict[str, Any]]]:
    """``QwenFCHandler.decode_execute``: the JSON ``<tool_call>`` blocks (unreadable ones skipped)."""
    if not isinstance(text, str):
        raise TypeError(f"expected string or bytes-like object, got {type(text).__name__!r}")
    calls = []
    for block in _TOOL_CALL.findall(text):
        try:
            item = json.loads(block)
        except ValueError:  # handled: BFCL's extractor skips a block that is not JSON
            continue
        if not isinstance(item, dict):
            raise ValueError(f"Model did not return a list of function calls: {text}")
        calls.append((str(item["name"]), _arguments(str(item["name"]), item["arguments"])))
    return calls


def _prompting_calls(text: Any) -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
    """``default_decode_execute_prompting``: ``[f(a=1), g(b='x')]`` (keyword arguments; BFCL drops
    positional ones)."""
    if not isinstance(text, str):
        raise TypeError(f"a response of type {type(text).__name__} cannot be decoded")
    body = text.strip("`\n ")
    body = ("" if body.startswith("[") else "[") + body + ("" if body.endswith("]") else "]")
    try:
        tree = ast.parse(body.strip().strip("'"), mode="eval")
    except SyntaxError as error:
        raise SyntaxError(f"not Python call syntax: {text.strip()[:200]}") from error
    elements = [tree.body] if isinstance(tree.body, ast.Call) else getattr(tree.body, "elts", None)
    if elements is None:
        raise ValueError(f"not a list of calls: {text.strip()[:200]}")
    calls: list[tuple[str, dict[str, Any]]] = []
    problems: list[str] = []
    for element in elements:
        if not isinstance(element, ast.Call):
            raise ValueError(f"not a call: {ast.unparse(element)[:200]}")
        name = _dotted(element.func)
        arguments = {}
        for keyword in element.keywords:
            arguments[str(keyword.arg)] = _value(keyword.value, f"{name}({keyword.arg}=)", problems)
        calls.append((name, arguments))
    return calls, problems


def _dotted(node: ast.expr) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _value(node: ast.expr, where: str, problems: list[str]) -> Any:
    """An argument value as BFCL's ``resolve_ast_by_type`` reads it, without evaluating code: literals,
    a bare name as its text; an expression BFCL would evaluate is kept as its source text."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.List):
        return [_value(item, where, problems) for item in node.elts]
    if isinstance(node, ast.Dict):
        return {_value(k, where, problems) if k is not None else None: _value(v, where, problems)
                for k, v in zip(node.keys, node.values, strict=True)}
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        # handled: an expression BFCL evaluates (arithmetic, a lambda, a call) is kept as its text
        source = ast.unparse(node)
        problems.append(f"{where}: {source[:80]!r} is an expression BFCL evaluates; replayed as its text")
        return source


def logged_calls(texts: list[Any]) -> Decoded:
    """The calls a handler logged as decoded (``model_response_decoded``: BFCL call strings).

    Example:
        >>> logged_calls(["cd(folder='docs')"]).calls
        (('cd', {'folder': 'docs'}),)
    """
    calls: list[tuple[str, dict[str, Any]]] = []
    for text in texts:
        try:
            parsed = parse_python_calls(str(text))
        except CallRejected as error:
            return Decoded(error=f"logged call {str(text)[:80]!r} cannot be read: {error}")
        calls += [(call.name, dict(call.kwargs)) for call in parsed]
    return Decoded(calls=tuple(calls))
