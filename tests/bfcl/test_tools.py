"""Tool definitions match BFCL's own FC conversion, compiled from the installed package's source.

``bfcl_eval.model_handler.utils`` cannot be imported without tree-sitter, so the test compiles
just its ``_cast_to_openai_type`` and ``convert_to_tool`` functions from the package file.
"""

from __future__ import annotations

import ast
import copy
import json
import re
from importlib.resources import files

import pytest

from prefbuild.envs.bfcl.data import MULTI_TURN_CLASSES, class_function_docs, entry_function_docs, load_entries
from prefbuild.envs.bfcl.tools import openai_tools


def bfcl_convert_to_tool():
    from bfcl_eval.constants.enums import ModelStyle
    from bfcl_eval.constants.type_mappings import GORILLA_TO_OPENAPI

    source = (files("bfcl_eval") / "model_handler" / "utils.py").read_text(encoding="utf-8")
    wanted = {"_cast_to_openai_type", "convert_to_tool"}
    module = ast.parse(source)
    module.body = [node for node in module.body if isinstance(node, ast.FunctionDef) and node.name in wanted]
    assert {node.name for node in module.body} == wanted
    namespace = {
        "copy": copy,
        "json": json,
        "re": re,
        "ModelStyle": ModelStyle,
        "GORILLA_TO_OPENAPI": GORILLA_TO_OPENAPI,
    }
    exec(compile(module, "bfcl_eval/model_handler/utils.py", "exec"), namespace)  # trusted package code, test only
    return lambda docs: namespace["convert_to_tool"](docs, GORILLA_TO_OPENAPI, ModelStyle.OPENAI_COMPLETIONS)


@pytest.mark.parametrize("class_name", MULTI_TURN_CLASSES)
def test_tools_equal_bfcl_conversion(class_name: str) -> None:
    from bfcl_eval.utils import _func_doc_language_specific_pre_processing

    docs = class_function_docs(class_name)
    expected = bfcl_convert_to_tool()(
        _func_doc_language_specific_pre_processing(copy.deepcopy(docs), "multi_turn_base")
    )
    assert openai_tools(docs) == expected
    assert openai_tools(docs) != openai_tools([])  # non-trivial


def test_held_out_functions_are_removed_as_bfcl_does() -> None:
    from bfcl_eval.utils import populate_test_cases_with_predefined_functions

    for entry in load_entries("miss_func")[:20]:
        raw = entry.model_dump()
        populate_test_cases_with_predefined_functions([raw])
        offered, later = entry_function_docs(entry)
        assert offered == raw["function"]
        assert {int(turn): docs for turn, docs in raw["missed_function"].items()} == later


def test_ground_truth_calls_fit_the_tool_schemas_but_one_task() -> None:
    """Why hints never block a call: one ground-truth call passes a string where the doc says integer
    (and the backend accepts it), so schema checks only shape the hint of a call that failed."""
    from prefbuild.envs.bfcl.backend import BfclBackend
    from prefbuild.envs.bfcl.calls import parse_python_calls
    from prefbuild.envs.bfcl.data import load_ground_truth

    misfits = []
    for entry in load_entries("base"):
        backend = BfclBackend(entry)
        for turn in load_ground_truth("base")[entry.id].ground_truth:
            for text in turn:
                problem = backend.schema_problem(parse_python_calls(text)[0])
                if problem:
                    misfits.append((entry.id, text, problem))
    assert misfits == [
        (
            "multi_turn_base_173",
            "close_ticket(ticket_id='ticket_001')",
            "ticket_id: 'ticket_001' is not of type 'integer'",
        )
    ]
