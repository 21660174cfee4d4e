"""BFCL function docs as OpenAI tool definitions, converted the way BFCL does for FC models.

BFCL appends a Python-syntax note to every description (``_func_doc_language_specific_pre_processing``)
and then runs ``convert_to_tool(functions, GORILLA_TO_OPENAPI, ModelStyle.OPENAI_COMPLETIONS)``.
That function lives in ``bfcl_eval.model_handler.utils``, whose module imports tree-sitter parsers
this env does not install, so the two steps are restated here; ``tests/bfcl/test_tools.py`` checks
the result against BFCL's own source, compiled from the installed package.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

PYTHON_HINT = " Note that the provided function is in Python 3 syntax."


def _openapi_types() -> dict[str, str]:
    from bfcl_eval.constants.type_mappings import GORILLA_TO_OPENAPI

    return GORILLA_TO_OPENAPI


def _cast_properties(properties: dict[str, Any], mapping: dict[str, str]) -> dict[str, Any]:
    """BFCL's ``_cast_to_openai_type``: Gorilla types to OpenAPI types, floats marked as such."""
    for value in properties.values():
        if "type" not in value:
            value["type"] = "string"
        else:
            gorilla_type = value["type"]
            if gorilla_type == "float":
                value["format"] = "float"
                value["description"] += " This is a float type value."
            value["type"] = mapping.get(gorilla_type, "string")
        if value["type"] in ("array", "object"):
            if "properties" in value:
                value["properties"] = _cast_properties(value["properties"], mapping)
            elif "items" in value:
                items = value["items"]
                items["type"] = mapping[items["type"]]
                if items["type"] == "array" and "items" in items:
                    items["items"]["type"] = mapping[items["items"]["type"]]
                elif items["type"] == "object" and "properties" in items:
                    items["properties"] = _cast_properties(items["properties"], mapping)
    return properties


def openai_tools(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI ``tools`` entries for BFCL function docs.

    Args:
        docs: BFCL function docs (``name``, ``description``, ``parameters`` with Gorilla types).

    Returns:
        ``[{"type": "function", "function": {...}}]`` with OpenAPI types, as BFCL sends them to
        OpenAI-compatible FC models (the ``response`` schema stays inside ``function``, as in BFCL).

    Example:
        >>> from prefbuild.envs.bfcl.data import class_function_docs
        >>> openai_tools(class_function_docs("MathAPI"))[0]["function"]["parameters"]["properties"]["number"]["type"]
        'number'
    """
    mapping = _openapi_types()
    tools = []
    for doc in copy.deepcopy(docs):
        doc["description"] = doc["description"] + PYTHON_HINT
        doc["name"] = doc["name"].replace(".", "_")
        doc["parameters"]["type"] = "object"
        doc["parameters"]["properties"] = _cast_properties(doc["parameters"]["properties"], mapping)
        tools.append({"type": "function", "function": doc})
    return tools


@cache
def class_tools(class_name: str) -> tuple[dict[str, Any], ...]:
    """``openai_tools`` of one backend class's docs, computed once (read-only: shared).

    Args:
        class_name: a backend class such as ``"MathAPI"``.

    Returns:
        The class's tool definitions.

    Example:
        >>> class_tools("MathAPI")[0]["function"]["name"]
        'absolute_value'
    """
    from prefbuild.envs.bfcl.data import class_function_docs

    return tuple(openai_tools(class_function_docs(class_name)))


def validation_schema(tool: dict[str, Any]) -> dict[str, Any]:
    """The JSON Schema a call's arguments must satisfy: the tool's parameters, with unknown
    argument names rejected (BFCL's docs list every parameter a backend method takes).

    Args:
        tool: one ``openai_tools`` entry.

    Returns:
        A JSON Schema (draft 2020-12) for the arguments object.

    Example:
        >>> validation_schema({"type": "function", "function": {"name": "f", "parameters":
        ...     {"type": "object", "properties": {}, "required": []}}})["additionalProperties"]
        False
    """
    schema = copy.deepcopy(tool["function"]["parameters"])
    schema["additionalProperties"] = False
    return schema


def entry_tools(entry: Any) -> tuple[list[dict[str, Any]], dict[int, list[dict[str, Any]]]]:
    """The tools offered from the first turn and those revealed later (``entry_function_docs``
    converted, in BFCL's order); the definitions are shared and must not be mutated.

    Args:
        entry: a ``data.BfclEntry``.

    Returns:
        ``(offered tools, {turn index: tools revealed at that turn})``.

    Example:
        >>> from prefbuild.envs.bfcl.data import load_entries
        >>> offered, later = entry_tools(load_entries("miss_func")[0])
        >>> [tool["function"]["name"] for tool in later[3]]
        ['sort']
    """
    from prefbuild.envs.bfcl.data import entry_function_docs

    by_name = {tool["function"]["name"]: tool for name in entry.involved_classes for tool in class_tools(name)}
    offered, held_out = entry_function_docs(entry)
    return [by_name[doc["name"]] for doc in offered], {
        turn: [by_name[doc["name"]] for doc in docs] for turn, docs in held_out.items()
    }
