"""The turns of a slime tau2 trajectory record (``prompt`` or ``messages``) as ``ChatTurn`` objects,
and how such a record is told from the other chat logs.

The pipeline keeps system / user / assistant turns only. A user turn that carries a tool result is
a tool turn here, its text unwrapped to the tool's output: legacy ``[TOOL_RESULT]\\n<call>\\n<output>\\n
[/TOOL_RESULT]``, native ``Tool result for <call>:\\n<output>``. A ``tool`` turn is read the same way
(wrapped or the bare output), for files converted to that role. Whether the call failed is read
from the output (``chat_turns.call_failure``: tau2 answers ``Error: ...``); tau2's ``Error: Tool 'x'
not found.`` says the tool was not offered.

A tool result must answer the call of the assistant turn right before it, once: a result with no
call before it (first in the conversation, after a customer turn, after ``respond`` / ``done`` or a
turn whose action cannot be read, or a second result for one call), or one that names another tool
than the one called, is refused with its ``file:line field``.
"""

from __future__ import annotations

import re
from typing import Any

from prefbuild.io.importers.chat_turns import call_failure
from prefbuild.io.importers.located import JsonPath, Locate, fail, field_name
from prefbuild.io.importers.tau2 import not_found_tool
from prefbuild.io.importers.tool_chat import has_tools
from prefbuild.io.importers.tool_steps import ChatTurn
from prefbuild.tooluse.slime import DONE, RESPOND, called_name, parse_slime_turn

ROLES = ("system", "user", "assistant", "tool")
_LEGACY_OPEN = "[TOOL_RESULT]"
_LEGACY_CLOSE = "[/TOOL_RESULT]"
_NATIVE_HEAD = re.compile(r"^Tool result for (?P<call>[^\n]*):(?:\n|$)")
_ACTION_BLOCK = re.compile(r"\[ACTION\].*?\[/ACTION\]", re.DOTALL)
# Tau2 metadata that only this pipeline's records carry next to a chat turn list.
_TAU2_KEYS = ("tau2_task_id",)


def is_slime_record(record: Any) -> bool:
    """Is ``record`` a slime tau2 trajectory: a ``prompt`` (without ``messages`` or ``conversations``)
    of role/content turns with the pipeline's action or result text, or tau2 ``metadata``; or
    ``messages`` of plain role/content turns (no structured calls, no ``tools`` or ``env``) with an
    ``[ACTION]`` block or a result turn (``[TOOL_RESULT]``, ``Tool result for ...:``), or with
    ``<tool_call>`` text and tau2 ``metadata``; never one with a Hermes ``<tool_response>`` result.

    Example:
        >>> is_slime_record({"prompt": [{"role": "assistant", "content": "[ACTION]\\ndone()\\n[/ACTION]"}]})
        True
        >>> is_slime_record({"messages": [{"role": "assistant", "content": "<tool_call>{}</tool_call>"}]})
        False
        >>> is_slime_record({"prompt": "Translate to French: cat", "chosen": "chat"})
        False
    """
    if not isinstance(record, dict) or "steps" in record or "conversations" in record:
        return False
    metadata = record.get("metadata")
    tau2 = isinstance(metadata, dict) and any(key in metadata for key in _TAU2_KEYS)
    if "prompt" in record and "messages" not in record:
        return tau2 or _marked(record["prompt"], calls_count=True)
    if "messages" not in record or has_tools(record.get("tools")) or "env" in record:
        return False
    return _marked(record["messages"], calls_count=tau2)


def _marked(turns: Any, *, calls_count: bool) -> bool:
    """Are ``turns`` plain role/content turns with the pipeline's text (``<tool_call>`` text counts
    only where ``calls_count``: Hermes chat logs write it too), and none of a Hermes log's
    ``<tool_response>`` results?"""
    if not isinstance(turns, list) or not turns:
        return False
    marked = False
    for turn in turns:
        if not isinstance(turn, dict) or "role" not in turn or "tool_calls" in turn:
            return False
        text = turn.get("content")
        if not isinstance(text, str):
            continue
        if turn["role"] == "assistant":
            marked = marked or bool(_ACTION_BLOCK.search(text)) or (calls_count and "<tool_call>" in text)
        elif turn["role"] in ("user", "tool"):
            if "<tool_response>" in text:
                return False
            marked = marked or text.startswith(_LEGACY_OPEN) or bool(_NATIVE_HEAD.match(text))
    return marked


def slime_turns(history: Any, key: str, locate: Locate) -> list[ChatTurn]:
    """The turns of a record's ``prompt`` / ``messages`` list, tool results unwrapped.

    Args:
        history: the list.
        key: its key in the record (for error locations).
        locate: ``file:line`` of a JSON path.

    Returns:
        The turns in order; each tool result a ``tool`` turn named after its tool.

    Raises:
        ExternalLogError: a turn is not of the pipeline's form, naming ``file:line field``.

    Example:
        >>> turns = slime_turns([{"role": "user", "content": "Hi"},
        ...     {"role": "assistant", "content": '[ACTION]\\nget_user(user_id="u1")\\n[/ACTION]'},
        ...     {"role": "user", "content": '[TOOL_RESULT]\\nget_user(user_id="u1")\\nError: User not found\\n'
        ...                                 '[/TOOL_RESULT]'}], "prompt", str)
        >>> [(turn.role, turn.name, turn.content, turn.failed) for turn in turns[2:]]
        [('tool', 'get_user', 'Error: User not found', True)]
    """
    if not isinstance(history, list):
        raise fail(locate, (key,), f"expected a list of chat turns, got {type(history).__name__}")
    turns: list[ChatTurn] = []
    called: tuple[str, JsonPath] | None = None  # the tool the last assistant turn called and where, until answered
    for position, raw in enumerate(history):
        path: JsonPath = (key, position)
        role, text = _role_and_text(raw, locate, path)
        if role == "assistant":
            name = parse_slime_turn(text).name
            called = (name, path) if name is not None and name not in (RESPOND, DONE) else None
            turns.append(ChatTurn(role="assistant", content=text))
            continue
        result = _result(text, role, locate, path)
        if result is None:
            turns.append(ChatTurn(role=role, content=text))
            called = None
            continue
        call_text, output = result
        if called is None:
            raise fail(locate, (*path, "content"), "a tool result with no call before it: the turn before is not "
                                                   "an assistant turn that called a tool (respond, done and an "
                                                   "action that cannot be read call none)")
        name = called_name(call_text)
        if name is not None and name != called[0]:
            raise fail(locate, (*path, "content"),
                       f"the result of {name!r}, but {field_name(called[1])} called {called[0]!r}")
        error = call_failure(output)
        turns.append(ChatTurn(role="tool", content=output, name=called[0], failed=error is not None, error=error,
                              not_offered=error is not None and not_found_tool(output) is not None))
        called = None
    return turns


def _role_and_text(raw: Any, locate: Locate, path: JsonPath) -> tuple[str, str]:
    """A turn's role (system / user / assistant / tool) and its text (null for none)."""
    if not isinstance(raw, dict) or "role" not in raw:
        raise fail(locate, path, "expected a chat turn object with 'role' and 'content'")
    role = raw["role"]
    if role not in ROLES:
        raise fail(locate, (*path, "role"), f"unknown role {role!r}; a slime tau2 trajectory has system, user "
                                            "and assistant turns (and tool turns for results)")
    content = raw.get("content")
    if content is not None and not isinstance(content, str):
        raise fail(locate, (*path, "content"), f"expected text, got {type(content).__name__}")
    return role, content or ""


def _result(text: str, role: str, locate: Locate, path: JsonPath) -> tuple[str, str] | None:
    """``(call text, output)`` of a result turn; None for a user turn that is no result (the customer's)."""
    if text.startswith(_LEGACY_OPEN):
        body = text[len(_LEGACY_OPEN) :].strip("\n")
        if not body.rstrip().endswith(_LEGACY_CLOSE):
            raise fail(locate, (*path, "content"), f"a {_LEGACY_OPEN} block without {_LEGACY_CLOSE} at its end")
        body = body.rstrip()[: -len(_LEGACY_CLOSE)].rstrip("\n")
        call_text, _, output = body.partition("\n")
        return call_text.strip(), output
    head = _NATIVE_HEAD.match(text)
    if head is not None:
        return head.group("call").strip(), text[head.end() :]
    if role == "tool":
        return "", text  # a bare output in a tool turn: it names no call
    return None
