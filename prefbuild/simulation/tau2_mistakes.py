"""Simulated mistakes of a tau2 agent, for the scripted teacher.

``failure_action(env, mode, rng)`` returns a tool-action JSON string showing ``mode`` from the
env's current state, or None when the mode cannot be shown here (no expert, nothing left to
do). Modes:

``invalid_action``     a call the tools reject before running anything: a tool name that does
                       not exist (a near miss of the expert's tool) or the expert's call with a
                       required argument left out
``wrong_arguments``    the expert's next call with one identifier changed (``#4OG6T3`` -> ``#4OG6T4``):
                       well-formed, but the domain answers ``Error: ... not found``
``premature_success``  a closing message to the customer while expected actions remain: the
                       scripted customer ends the talk and tau2's evaluator fails the task

Example:
    >>> failure_action(env, "invalid_action", random.Random(0))  # doctest: +SKIP
    '{"tool_calls": [{"id": "call_mistake", "name": "get_user_detail", "arguments": {...}}]}'
"""

from __future__ import annotations

import json
import random
import string
from typing import Any

from prefbuild.envs.tau2.goals import CLOSING
from prefbuild.records import FunctionCall, ToolCall
from prefbuild.tooluse.actions import decode_action, encode_action

MODES: tuple[str, ...] = ("invalid_action", "wrong_arguments", "premature_success")
MISTAKE_ID = "call_mistake"


def _expert_call(env: Any) -> tuple[str, dict[str, Any]] | None:
    expert = env.expert_action()
    if expert is None:
        return None
    decoded = decode_action(expert)
    if not decoded.calls:
        return None
    call = decoded.calls[0]
    return call.function.name, json.loads(call.function.arguments)


def _call(name: str, arguments: dict[str, Any]) -> str:
    function = FunctionCall(name=name, arguments=json.dumps(arguments))
    return encode_action(calls=[ToolCall(id=MISTAKE_ID, function=function)])


def _required(env: Any, name: str) -> list[str]:
    for tool in env.tool_definitions():
        function = tool.get("function", tool)
        if function.get("name") == name:
            return list((function.get("parameters") or {}).get("required") or [])
    return []


def _near_miss(name: str, rng: random.Random) -> str:
    variants = [name.rstrip("s") if name.endswith("s") else f"{name}s", name.replace("_", "", 1), f"{name}_v2"]
    if name.startswith("get_"):
        variants.append("fetch_" + name[len("get_"):])
    return rng.choice([variant for variant in variants if variant != name])


def _perturb(value: str, rng: random.Random) -> str:
    position = rng.randrange(len(value))
    char = value[position]
    alphabet = string.digits if char.isdigit() else string.ascii_uppercase if char.isupper() else string.ascii_lowercase
    replacement = rng.choice([other for other in alphabet if other != char])
    return value[:position] + replacement + value[position + 1 :]


def failure_action(env: Any, mode: str, rng: random.Random) -> str | None:
    """A tool action showing ``mode`` (one of ``MODES``) from ``env``'s state, or None.

    Args:
        env: a reset ``Tau2Env``.
        mode: the failure mode to show.
        rng: the scripted teacher's seeded random source.

    Returns:
        The action JSON string, or None where the mode cannot be shown now.
    """
    if mode == "premature_success":
        expert = env.expert_action()
        if expert is None or CLOSING in (decode_action(expert).message or ""):
            return None  # nothing left to skip: closing now is correct
        return encode_action(message=CLOSING)
    call = _expert_call(env)
    if call is None:
        return None
    name, arguments = call
    if mode == "invalid_action":
        required = sorted(set(_required(env, name)) & set(arguments))
        if required and rng.random() < 0.5:
            dropped = rng.choice(required)
            return _call(name, {key: value for key, value in arguments.items() if key != dropped})
        return _call(_near_miss(name, rng), arguments)
    if mode == "wrong_arguments":
        identifiers = sorted(
            key for key, value in arguments.items() if key.endswith("_id") and isinstance(value, str) and value
        )
        if not identifiers:
            return None
        key = rng.choice(identifiers)
        return _call(name, {**arguments, key: _perturb(arguments[key], rng)})
    return None
