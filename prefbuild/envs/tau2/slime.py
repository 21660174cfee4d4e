"""The tau2 protocols of the slime framework's tau2 pipeline ("Tau2-RL-Pipeline"): one action a
turn, as a Qwen3 ``<tool_call>`` (protocol ``slime``) or a legacy ``[ACTION]`` block
(``slime-action``); see ``prefbuild.tooluse.slime`` for the text.

They exist to read that pipeline's trajectories (``prefbuild label`` imports them, see
``io.importers.slime``) and to write turns in the same form (the ``style`` strategy's chosen
turns). Both read either form, as the pipeline's parser does; they differ in how they write.
``respond(content=...)`` is a message to the customer (the action ``{"message": content}``, as a
turn without calls is in the ``hermes`` protocol); ``done()`` ends the episode: the message
``###STOP###`` that tau2's own agent makes of its ``done`` call, a final turn. The prompt and tools
are tau2's (``Tau2Protocol``): a recipe may name these protocols, but tau2's agent prompt teaches
the model neither form.
"""

from __future__ import annotations

import json
from typing import ClassVar

from prefbuild.envs.base import ParsedOutput
from prefbuild.envs.tau2.protocol import Tau2Protocol
from prefbuild.records import FunctionCall, ToolCall
from prefbuild.tooluse.actions import decode_action, encode_action
from prefbuild.tooluse.slime import AGENT_STOP, DONE, LEGACY, NATIVE, RESPOND, parse_slime_turn, render_slime_turn


def parsed_output(text: str) -> ParsedOutput:
    """One turn of the pipeline's formats as the action a tau2 env takes.

    Args:
        text: the turn as the model wrote it.

    Returns:
        The action (calls, a message, or ``###STOP###`` for ``done()``), the reasoning as the
        thought, and the parser's problems (a call that cannot be read has no action).

    Example:
        >>> parsed_output('[ACTION]\\nrespond(content="Your line is active.")\\n[/ACTION]').action
        '{"message": "Your line is active."}'
        >>> done = '<tool_call>\\n{"name": "done", "arguments": {}}\\n</tool_call>'
        >>> parsed = parsed_output(f"<think>\\nok\\n</think>\\n{done}")
        >>> (parsed.action, parsed.final, parsed.thought)
        ('{"message": "###STOP###"}', True, 'ok')
    """
    turn = parse_slime_turn(text)
    problems, normalized = list(turn.problems), list(turn.normalized)
    final = False
    action: str | None = None
    if turn.name == RESPOND:
        content = turn.arguments.get("content")
        if isinstance(content, str) and content.strip():
            action = encode_action(message=content)
            if set(turn.arguments) != {"content"}:
                normalized.append("respond's arguments other than content ignored")
        else:
            problems.append("arguments of 'respond' are not a message: it needs a non-empty content text")
    elif turn.name == DONE:
        action, final = encode_action(message=AGENT_STOP), True
        if turn.arguments:
            normalized.append("done's arguments ignored")
    elif turn.name is not None:
        encoded = json.dumps(turn.arguments, ensure_ascii=False)
        action = encode_action([ToolCall(id="call_0", function=FunctionCall(name=turn.name, arguments=encoded))])
    return ParsedOutput(turn.thought, action, not problems and action is not None, tuple(normalized), final,
                        tuple(problems))


class SlimeProtocol(Tau2Protocol):
    """tau2 over the pipeline's native turns (one ``<tool_call>`` a turn, ``respond`` / ``done`` as
    calls); reads legacy ``[ACTION]`` turns too.

    Example:
        >>> protocol = SlimeProtocol()
        >>> print(protocol.render('{"message": "Hello."}', thought="Greet."))
        <think>
        Greet.
        </think>
        <tool_call>
        {"name": "respond", "arguments": {"content": "Hello."}}
        </tool_call>
    """

    name: ClassVar[str] = "slime"
    form: ClassVar[str] = NATIVE

    def parse(self, text: str) -> ParsedOutput:
        return parsed_output(text)

    def render(self, action: str, thought: str | None = None) -> str:
        decoded = decode_action(action)
        if decoded.calls:
            first = decoded.calls[0]
            reasoning = "\n".join(part for part in (thought, decoded.message) if part) or None
            return render_slime_turn(first.function.name, _arguments(first.function.arguments), reasoning,
                                     form=self.form)
        message = decoded.message or ""
        if message.strip() == AGENT_STOP:
            return render_slime_turn(DONE, {}, thought, form=self.form)
        return render_slime_turn(RESPOND, {"content": message}, thought, form=self.form)

    def final_turn(self, answer: str | None = None) -> str | None:
        return render_slime_turn(DONE, {}, form=self.form)


class SlimeActionProtocol(SlimeProtocol):
    """tau2 over the pipeline's legacy turns (``[ACTION]\\nname(key=value)\\n[/ACTION]``); reads native
    ``<tool_call>`` turns too.

    Example:
        >>> SlimeActionProtocol().render('{"tool_calls": [{"id": "c", "name": "get_user", "arguments": {"id": 7}}]}')
        '[ACTION]\\nget_user(id=7)\\n[/ACTION]'
    """

    name: ClassVar[str] = "slime-action"
    form: ClassVar[str] = LEGACY


def _arguments(encoded: str) -> dict[str, object]:
    """A call's JSON arguments as an object; ``{}`` where an action carries text that is not one."""
    try:
        value = json.loads(encoded)
    except (ValueError, RecursionError):  # handled: arguments that are no JSON object are written as none
        return {}
    return value if isinstance(value, dict) else {}
