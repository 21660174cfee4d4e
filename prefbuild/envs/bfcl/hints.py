"""Actionable hints for failed calls, in the spirit of environment tuning: what went wrong and
what would be valid instead. Hints read the backend state from a copy, never from the live
instance, so giving a hint can never change the episode's state.
"""

from __future__ import annotations

import copy
import difflib
import re
from collections.abc import Iterable
from typing import Any

AUTH_MARKERS = ("logged in", "token", "authenticat", "login")
LOOKUP_PREFIXES = ("list", "get", "view", "display", "find", "ls", "pwd", "check")


def signature(tool: dict[str, Any]) -> str:
    """A tool's call signature as the hint shows it.

    Args:
        tool: an OpenAI tool definition.

    Returns:
        ``name(required: type, optional: type = default)``.

    Example:
        >>> signature({"type": "function", "function": {"name": "mv", "parameters": {"type": "object",
        ...     "properties": {"source": {"type": "string"}}, "required": ["source"]}}})
        'mv(source: string)'
    """
    function = tool["function"]
    parameters = function.get("parameters", {})
    required = set(parameters.get("required", []))
    parts = []
    for key, schema in parameters.get("properties", {}).items():
        text = f"{key}: {schema.get('type', 'string')}"
        if key not in required:
            text += f" = {schema['default']!r}" if "default" in schema else " (optional)"
        parts.append(text)
    return f"{function['name']}({', '.join(parts)})"


def unknown_function_hint(name: str, available: Iterable[str]) -> str:
    """Hint for a call of a function that is not offered.

    Args:
        name: the name called.
        available: names of the functions offered now.

    Returns:
        The hint text.

    Example:
        >>> unknown_function_hint("mkdirs", ["mkdir", "ls"])
        "Hint: 'mkdirs' is not an available function. Did you mean 'mkdir'? Available functions: ls, mkdir."
    """
    names = sorted(available)
    close = difflib.get_close_matches(name, names, n=1)
    suggestion = f" Did you mean {close[0]!r}?" if close else ""
    return f"Hint: {name!r} is not an available function.{suggestion} Available functions: {', '.join(names)}."


def invalid_arguments_hint(problem: str, tool: dict[str, Any]) -> str:
    """Hint for arguments that do not match the tool's schema.

    Args:
        problem: what is wrong (from schema validation or argument binding).
        tool: the tool definition.

    Returns:
        The hint text with the valid signature.

    Example:
        >>> invalid_arguments_hint("'folder' is a required property", {"type": "function", "function":
        ...     {"name": "cd", "parameters": {"properties": {"folder": {"type": "string"}}, "required": ["folder"]}}})
        "Hint: invalid arguments ('folder' is a required property). Call it as cd(folder: string)."
    """
    return f"Hint: invalid arguments ({problem}). Call it as {signature(tool)}."


def _file_system_state(instance: Any) -> str | None:
    snapshot = copy.deepcopy(instance)
    try:
        where = snapshot.pwd().get("current_working_directory")
        contents = snapshot.ls(a=True).get("current_directory_content")
    except Exception:
        # handled: boundary: a hint is optional; BFCL's file-system class may raise anything on an odd state
        return None
    return f"You are in {where!r}; it contains: {', '.join(contents) if contents else '(nothing)'}."


def execution_error_hint(
    error: str, tool: dict[str, Any], class_name: str, instance: Any, class_tools: Iterable[str]
) -> str:
    """Hint for a call that ran but failed (an exception or an ``{"error": ...}`` result).

    Args:
        error: the backend's error text.
        tool: the called tool's definition.
        class_name: the backend class that owns the tool.
        instance: the live backend instance (read through a copy only).
        class_tools: names of the class's offered functions.

    Returns:
        The hint: the current directory for the file system, the login function for
        authentication errors, lookup functions for missing ids, else the valid signature.

    Example:
        >>> execution_error_hint("No user is currently logged in.", {"type": "function", "function":
        ...     {"name": "post_tweet", "parameters": {}}}, "TwitterAPI", None, ["authenticate_twitter", "post_tweet"])
        'Hint: this needs an authenticated session first; call authenticate_twitter.'
    """
    names = sorted(class_tools)
    lowered = error.lower()
    if class_name == "GorillaFileSystem":
        state = _file_system_state(instance)
        if state:
            return f"Hint: {state} Paths are relative to the current directory, one folder level at a time."
    if any(marker in lowered for marker in AUTH_MARKERS):
        logins = [
            name
            for name in names
            if any(marker in name for marker in ("login", "authenticate")) and "status" not in name
        ]
        if logins:
            return f"Hint: this needs an authenticated session first; call {' or '.join(logins)}."
    if "not found" in lowered or "no such" in lowered or "not present" in lowered:
        lookups = [name for name in names if name.startswith(LOOKUP_PREFIXES)]
        if lookups:
            return f"Hint: look up valid values first with {', '.join(lookups)}."
    related = _related_functions(error, names, tool["function"]["name"])
    helpers = f" Functions that may help: {', '.join(related)}." if related else ""
    described = tool["function"].get("description", "").split("Tool description: ", 1)[-1]
    described = described.split(" Note that the provided function is in ", 1)[0]
    return f"Hint: check the preconditions and arguments.{helpers} Valid call: {signature(tool)}: {described}".rstrip()


def _words(text: str) -> set[str]:
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    return {word for word in re.split(r"[^a-z]+", spaced.lower()) if len(word) >= 4}


def _related_functions(error: str, names: Iterable[str], called: str) -> list[str]:
    """Functions whose names share a word with the error ("Brake pedal ..." -> pressBrakePedal)."""
    wanted = _words(error)
    return [name for name in names if name != called and wanted & _words(name)]
