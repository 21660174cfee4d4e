"""The action text of the slime framework's tau2 pipeline ("Tau2-RL-Pipeline"): read one agent turn,
write one back.

Every turn of that agent is exactly one action, in one of two forms:

- native (Qwen3 function calling): an optional ``<think>...</think>`` (or ``<thinking>``) block, then
  ``<tool_call>\\n{"name": "...", "arguments": {...}}\\n</tool_call>`` (``arguments`` may be a JSON
  string of the object);
- legacy: an optional reasoning block, then ``[ACTION]\\nname(key="value", n=3)\\n[/ACTION]``:
  exactly one non-empty line, a Python call with keyword arguments only, whose values are
  literals (text, numbers, True / False / None) or lists, tuples and dicts of them.

Two names are not tools: ``respond(content="...")`` sends ``content`` to the customer and
``done()`` ends the episode (tau2's agent turns its ``done`` call into the ``###STOP###`` message).
``parse_slime_turn`` reads a turn the way the pipeline's harness does and reports every deviation
in ``problems`` (worded as a broken tool call where the call cannot be read, so that the
``malformed_tool_call`` labeler names it) and every tolerance in ``normalized``;
``render_slime_turn`` writes an action back in either form.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any

from prefbuild.tooluse.hermes import parse_tool_turn

RESPOND = "respond"
DONE = "done"
AGENT_STOP = "###STOP###"  # tau2's agent stop message: what its agent makes of a done() call
NATIVE = "native"
LEGACY = "action"
_OPEN = "[ACTION]"
_CLOSE = "[/ACTION]"
_REASONING = re.compile(r"<(?P<tag>think|thinking)>(?P<body>.*?)(?:</(?P=tag)>|$)", re.DOTALL | re.IGNORECASE)
_CALL_TAG = re.compile(r"<tool_call>", re.IGNORECASE)
_CALL_NAME = re.compile(r"^\s*(?P<name>[A-Za-z_]\w*)\s*\(")


class CallTextError(ValueError):
    """A legacy action line that is not a Python call with keyword arguments of literal values."""


@dataclass
class SlimeTurn:
    """One agent turn read as the pipeline's harness reads it.

    Attributes:
        form: ``native`` (a ``<tool_call>``), ``action`` (an ``[ACTION]`` block) or None (neither).
        thought: the reasoning blocks and any text outside the action, or None.
        name: the called name (``respond`` and ``done`` included); None where no call could be read.
        arguments: the call's arguments as JSON values (tuples read as lists).
        problems: every deviation from the format; empty for a clean turn.
        normalized: every tolerance applied to read the call.
    """

    form: str | None
    thought: str | None
    name: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    normalized: list[str] = field(default_factory=list)


def split_reasoning(text: str) -> tuple[list[str], str]:
    """The ``<think>`` / ``<thinking>`` blocks of a turn and the text without them (a bare leading
    ``...</think>``, whose opening tag the chat template wrote, counts as one).

    Example:
        >>> split_reasoning("<thinking>\\nplan\\n</thinking>\\n[ACTION]\\ndone()\\n[/ACTION]")
        (['plan'], '\\n[ACTION]\\ndone()\\n[/ACTION]')
    """
    thoughts: list[str] = []
    if "</think>" in text and "<think>" not in text:
        head, _, text = text.partition("</think>")
        thoughts.append(head.strip())
    thoughts.extend(match.group("body").strip() for match in _REASONING.finditer(text))
    return [thought for thought in thoughts if thought], _REASONING.sub("", text)


def read_call_line(line: str) -> tuple[str, dict[str, Any], list[str]]:
    """A legacy action line as ``(name, arguments, notes)``; ``notes`` are the readings the harness
    makes of what the format does not allow (a bare name read as its text).

    Args:
        line: the one line of an ``[ACTION]`` block.

    Returns:
        The called name, the arguments as JSON values, and the notes.

    Raises:
        CallTextError: not one call expression with keyword arguments of literal values.

    Example:
        >>> read_call_line('get_user_details(user_id="mia_li_3668", limit=-2, flags=(True, None))')
        ('get_user_details', {'user_id': 'mia_li_3668', 'limit': -2, 'flags': [True, None]}, [])
    """
    try:
        expression = ast.parse(line.strip(), mode="eval").body
    except SyntaxError as error:  # also a null byte or a line too deep for the parser
        raise CallTextError(f"not Python ({error.msg})") from None
    except (ValueError, RecursionError, MemoryError) as error:
        raise CallTextError(f"not Python ({type(error).__name__})") from None
    if not isinstance(expression, ast.Call):
        raise CallTextError("not a function call")
    if not isinstance(expression.func, ast.Name):
        raise CallTextError("the called name is not a plain function name")
    if expression.args:
        raise CallTextError("positional arguments (keyword arguments only)")
    notes: list[str] = []
    arguments: dict[str, Any] = {}
    for keyword in expression.keywords:
        if keyword.arg is None:
            raise CallTextError("**arguments (keyword arguments only)")
        arguments[keyword.arg] = _literal(keyword.value, keyword.arg, notes)
    return expression.func.id, arguments, notes


def _literal(node: ast.expr, key: str, notes: list[str]) -> Any:
    """A keyword value as JSON: literals, lists, tuples and dicts of them; a bare name other than
    True / False / None is read as its text, as the pipeline's parser reads it (noted)."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str | int | float | bool) or node.value is None:
            return node.value
        raise CallTextError(f"argument {key!r} is a {type(node.value).__name__} literal")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _literal(node.operand, key, notes)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return -value if isinstance(node.op, ast.USub) else value
        raise CallTextError(f"argument {key!r}: a sign before something that is not a number")
    if isinstance(node, ast.List | ast.Tuple):
        return [_literal(item, key, notes) for item in node.elts]
    if isinstance(node, ast.Dict):
        found: dict[str, Any] = {}
        for item_key, value in zip(node.keys, node.values, strict=True):
            if item_key is None:
                raise CallTextError(f"argument {key!r}: ** inside a dict")
            name = _literal(item_key, key, notes)
            if not isinstance(name, str):
                raise CallTextError(f"argument {key!r}: a dict key that is not text")
            found[name] = _literal(value, key, notes)
        return found
    if isinstance(node, ast.Name):
        notes.append(f"argument {key!r} is the bare name {node.id}, read as the text {node.id!r}")
        return node.id
    raise CallTextError(f"argument {key!r} is not a literal ({type(node).__name__})")


def called_name(call_text: str) -> str | None:
    """The function name of a call as the pipeline writes it in a result turn (``get_user(id=1)``).

    Example:
        >>> called_name('get_user_details(user_id="x")'), called_name("(reset)")
        ('get_user_details', None)
    """
    match = _CALL_NAME.match(call_text)
    return match.group("name") if match else None


def parse_slime_turn(text: str) -> SlimeTurn:
    """Read one agent turn of the pipeline's formats; never raises.

    Args:
        text: the turn exactly as the model wrote it.

    Returns:
        The turn's form, reasoning and call; ``problems`` empty only for a clean turn.

    Example:
        >>> turn = parse_slime_turn('<think>\\nLook it up.\\n</think>\\n[ACTION]\\nget_user(user_id="u1")\\n[/ACTION]')
        >>> (turn.form, turn.thought, turn.name, turn.arguments, turn.problems)
        ('action', 'Look it up.', 'get_user', {'user_id': 'u1'}, [])
        >>> parse_slime_turn('[ACTION]\\nget_user("u1")\\n[/ACTION]').problems
        ['tool call is not a keyword call: positional arguments (keyword arguments only)']
    """
    if not isinstance(text, str) or not text.strip():
        return SlimeTurn(form=None, thought=None, problems=["empty output"])
    thoughts, rest = split_reasoning(text)
    turn = _native(rest) if _CALL_TAG.search(rest) else None
    if (turn is None or turn.name is None) and _OPEN in rest:
        turn = _legacy(rest)  # the harness tries a <tool_call> first, then an [ACTION] block
    if turn is None:
        # Neither form: the harness runs nothing (worded apart from a broken call: no call was tried).
        turn = SlimeTurn(form=None, thought=rest.strip() or None, problems=["no action: neither [ACTION] nor a call"])
    turn.thought = "\n".join([*thoughts, *([turn.thought] if turn.thought else [])]) or None
    return turn


def _native(text: str) -> SlimeTurn:
    """A ``<tool_call>`` turn, read with the Hermes parser (its repairs and problems kept)."""
    read = parse_tool_turn(text)
    turn = SlimeTurn(form=NATIVE, thought=read.content or None, problems=list(read.problems),
                     normalized=list(read.normalized))
    if not read.calls:
        if not turn.problems:
            turn.problems.append("tool call is not readable")
        return turn
    if len(read.calls) > 1:
        turn.problems.append(f"{len(read.calls)} calls in one turn; the harness runs only the first")
    if read.content:
        turn.normalized.append("text outside the call")
    first = read.calls[0]
    turn.name, turn.arguments = first.function.name, json.loads(first.function.arguments)
    return turn


def _legacy(text: str) -> SlimeTurn:
    """An ``[ACTION]`` turn: the first block's one line, as the harness reads it."""
    start = text.index(_OPEN) + len(_OPEN)
    end = text.find(_CLOSE, start)
    if end < 0:
        outside = text[: start - len(_OPEN)].strip()
        return SlimeTurn(form=LEGACY, thought=outside or None, problems=["tool call is not closed: no [/ACTION]"])
    outside = (text[: start - len(_OPEN)] + text[end + len(_CLOSE) :]).strip()
    turn = SlimeTurn(form=LEGACY, thought=outside or None)
    if outside:
        turn.normalized.append("text outside the [ACTION] block")
    if _OPEN in text[end:]:
        turn.problems.append("more than one [ACTION] block; the harness runs only the first")
    lines = [line.strip() for line in text[start:end].splitlines() if line.strip()]
    if len(lines) != 1:
        turn.problems.append(f"tool call is not one line: the [ACTION] block holds {len(lines)} lines")
        return turn
    try:
        turn.name, turn.arguments, notes = read_call_line(lines[0])
    except CallTextError as error:
        turn.problems.append(f"tool call is not a keyword call: {error}")
        return turn
    turn.problems.extend(notes)
    return turn


def python_call(name: str, arguments: dict[str, Any]) -> str:
    """A legacy action line: ``name(key=<Python literal>, ...)``.

    Example:
        >>> python_call("respond", {"content": 'Say "hi"', "urgent": True, "ids": [1, None]})
        'respond(content="Say \\\\"hi\\\\"", urgent=True, ids=[1, None])'
    """
    return f"{name}(" + ", ".join(f"{key}={_python_value(value)}" for key, value in arguments.items()) + ")"


def _python_value(value: Any) -> str:
    """A JSON value as a Python literal that reads back the same (strings as JSON text, which Python reads alike)."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_python_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k), ensure_ascii=False)}: {_python_value(v)}"
                               for k, v in value.items()) + "}"
    return repr(value)


def render_slime_turn(name: str, arguments: dict[str, Any], thought: str | None = None, *, form: str = NATIVE) -> str:
    """One agent turn performing ``name(arguments)`` in ``form`` (``native`` or ``action``), the
    reasoning in a ``<think>`` block.

    Args:
        name: the called name (``respond`` / ``done`` included).
        arguments: its arguments (JSON values).
        thought: the reasoning, or None for none.
        form: ``native`` (a ``<tool_call>``) or ``action`` (an ``[ACTION]`` block).

    Returns:
        The turn text; ``parse_slime_turn`` reads the same call back.

    Example:
        >>> print(render_slime_turn("done", {}, "Finished.", form="action"))
        <think>
        Finished.
        </think>
        [ACTION]
        done()
        [/ACTION]
    """
    head = f"<think>\n{thought}\n</think>\n" if thought else ""
    if form == LEGACY:
        return f"{head}{_OPEN}\n{python_call(name, arguments)}\n{_CLOSE}"
    payload = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
    return f"{head}<tool_call>\n{payload}\n</tool_call>"
