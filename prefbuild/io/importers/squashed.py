"""Calls a log squashed into one assistant turn: some agent frameworks run tools one after another
inside a single model turn and log them as one message with several calls (tau2-bench's
``langchain_agent``: ``find_user_id_by_name_zip``, then ``get_user_details`` on the id it returned,
all in one message). Read as one parallel turn, such a step shows a model using ids nothing had
shown it yet, which is what a preference set must not teach.

``sequential_turns`` finds those turns by their evidence (a later call of the turn uses an id that
only an earlier call's result of the same turn holds) and splits them into one turn per call, each
followed by its result, as the calls were made. Turns without such evidence stay as logged: their
calls may well have been parallel.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

from prefbuild.io.importers.tool_steps import ChatTurn

_MIN_ID_LENGTH = 4


def _ids(value: Any) -> Iterator[str]:
    """The id-like leaves of a call's arguments: strings of four characters or more holding a digit
    (``yusuf_rossi_9620``, ``#W6247578``), and whole numbers of four digits or more."""
    if isinstance(value, dict):
        for item in value.values():
            yield from _ids(item)
    elif isinstance(value, list):
        for item in value:
            yield from _ids(item)
    elif isinstance(value, str):
        text = value.strip()
        if len(text) >= _MIN_ID_LENGTH and any(char.isdigit() for char in text):
            yield text
    elif isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10 ** (_MIN_ID_LENGTH - 1):
        yield str(value)


def _results(turn: ChatTurn, after: Sequence[ChatTurn]) -> list[str] | None:
    """The result text of each of ``turn``'s calls among the tool turns ``after`` it (by call id, else by
    position); None where a call has none."""
    by_id = {result.call_id: result.content for result in after if result.call_id}
    texts: list[str] = []
    for position, call in enumerate(turn.calls):
        if call.id in by_id:
            texts.append(by_id[call.id])
        elif not by_id and position < len(after):
            texts.append(after[position].content)
        else:
            return None
    return texts


def used_before_shown(turn: ChatTurn, results: Sequence[str], known: str) -> bool:
    """Whether a call of ``turn`` after its first uses an id that ``known`` (everything shown before the
    turn, and the turn's own text) lacks and a result of an earlier call of the turn holds.

    Example:
        >>> from prefbuild.io.importers.tool_steps import RawCall
        >>> find = RawCall(id="a", name="find_user", arguments={"zip": "19122"}, encoded="")
        >>> details = RawCall(id="b", name="get_user_details", arguments={"user_id": "yusuf_9620"}, encoded="")
        >>> turn = ChatTurn(role="assistant", content="", calls=(find, details))
        >>> used_before_shown(turn, ["yusuf_9620", "{...}"], "I am Yusuf Rossi, zip 19122.")
        True
        >>> used_before_shown(turn, ["yusuf_9620", "{...}"], "My user id is yusuf_9620.")
        False
    """
    seen = known.lower()
    for position, call in enumerate(turn.calls):
        if position:
            earlier = [text.lower() for text in results[:position]]
            for value in _ids(call.arguments):
                lowered = value.lower()
                if lowered not in seen and any(lowered in text for text in earlier):
                    return True
        seen += "\n" + call.encoded.lower()
    return False


def sequential_turns(turns: Sequence[ChatTurn], known: str = "") -> tuple[list[ChatTurn], int]:
    """``turns`` with each squashed turn split into one assistant turn per call, each followed by its result.

    Args:
        turns: a conversation as ``ChatTurn`` objects.
        known: what the model was shown before them (the system prompt, the opening turns).

    Returns:
        The turns, and how many were split. The first turn of a split keeps the text, the usage and
        nothing else changes.

    Example:
        >>> from prefbuild.io.importers.tool_steps import RawCall
        >>> calls = (RawCall(id="a", name="find", arguments={}, encoded="{}"),
        ...          RawCall(id="b", name="get", arguments={"id": "u_9620"}, encoded='{"id": "u_9620"}'))
        >>> turns = [ChatTurn("user", "Find me."), ChatTurn("assistant", "", calls=calls),
        ...          ChatTurn("tool", "u_9620", call_id="a"), ChatTurn("tool", "{...}", call_id="b")]
        >>> split, count = sequential_turns(turns)
        >>> count, [(turn.role, len(turn.calls), turn.call_id) for turn in split]
        (1, [('user', 0, None), ('assistant', 1, None), ('tool', 0, 'a'), ('assistant', 1, None), ('tool', 0, 'b')])
    """
    out: list[ChatTurn] = []
    shown: list[str] = [known]
    split = 0
    position = 0
    while position < len(turns):
        turn = turns[position]
        position += 1
        if turn.role == "assistant" and len(turn.calls) > 1:
            end = position
            while end < len(turns) and turns[end].role == "tool":
                end += 1
            after = list(turns[position:end])
            results = _results(turn, after)
            if results is not None and used_before_shown(turn, results, "\n".join([*shown, turn.content])):
                by_id = {result.call_id: result for result in after if result.call_id}
                used: list[ChatTurn] = []
                for index, call in enumerate(turn.calls):
                    part = replace(turn, calls=(call,)) if index == 0 else replace(
                        turn, content="", calls=(call,), usage=None, finish_reason=None
                    )
                    result = by_id[call.id] if by_id else after[index]
                    out.extend((part, result))
                    used.append(result)
                out.extend(result for result in after if all(result is not other for other in used))
                split += 1
                shown.extend([turn.content, *(call.encoded for call in turn.calls), *results])
                position = end
                continue
        out.append(turn)
        shown.append(turn.content)
        shown.extend(call.encoded for call in turn.calls)
    return out, split
