"""Both bfcl protocols: BFCL's own prompts, and expert episodes through render -> parse -> step."""

from __future__ import annotations

import ast
import copy
import json
from importlib.resources import files

import pytest

from prefbuild.envs.bfcl.data import CATEGORIES, entry_function_docs, load_entries
from prefbuild.envs.bfcl.env import BfclEnv, task_of
from prefbuild.envs.bfcl.protocol import BfclHermesProtocol, BfclPythonProtocol, bfcl_system_prompt


def bfcl_formulate_system_prompt():
    """BFCL's ``formulate_system_prompt`` and helpers, compiled from the installed package (test only:
    the module itself imports tree-sitter parsers)."""
    import bfcl_eval.constants.default_prompts as prompts

    source = (files("bfcl_eval") / "model_handler" / "utils.py").read_text(encoding="utf-8")
    wanted = {
        "formulate_system_prompt",
        "parse_prompt_variation_params",
        "format_function_doc",
        "_generate_function_doc_xml",
        "_generate_function_doc_python",
    }
    module = ast.parse(source)
    module.body = [node for node in module.body if isinstance(node, ast.FunctionDef) and node.name in wanted]
    namespace = {name: getattr(prompts, name) for name in dir(prompts) if not name.startswith("__")}
    namespace.update({"json": json, "re": __import__("re")})
    exec(compile(module, "bfcl_eval/model_handler/utils.py", "exec"), namespace)  # trusted package code, test only
    return lambda docs: namespace["formulate_system_prompt"](prompts.DEFAULT_SYSTEM_PROMPT_FORMAT, docs)


def test_python_protocol_system_prompt_is_bfcls_default() -> None:
    from bfcl_eval.utils import _func_doc_language_specific_pre_processing

    for entry in (load_entries("base")[0], load_entries("miss_func")[3]):
        offered, _ = entry_function_docs(entry)
        expected = bfcl_formulate_system_prompt()(
            _func_doc_language_specific_pre_processing(copy.deepcopy(offered), "multi_turn_base")
        )
        assert bfcl_system_prompt(offered) == expected
        assert BfclPythonProtocol().prefix_messages(task_of(entry))[0].content == expected


@pytest.mark.parametrize("protocol", [BfclHermesProtocol(), BfclPythonProtocol()], ids=["hermes", "python"])
@pytest.mark.parametrize("category", CATEGORIES)
def test_expert_turns_survive_render_and_parse(protocol, category: str) -> None:
    for entry in load_entries(category)[:3]:
        env = BfclEnv()
        env.reset(task_of(entry))
        while not env.finished:
            action = env.expert_action()
            parsed = protocol.parse(protocol.render(action))
            assert parsed.format_ok and not parsed.final, (entry.id, parsed.problems)
            assert json.loads(parsed.action).keys() == json.loads(action).keys()
            result = env.step(parsed.action)
        assert result.won, entry.id


def test_python_protocol_reads_bad_call_text_as_a_message() -> None:
    protocol = BfclPythonProtocol()
    for text in ("[cd('x')]", "[os.system('id')]", "[ls(a=__import__('os'))]"):
        parsed = protocol.parse(text)
        assert json.loads(parsed.action) == {"message": text} and not parsed.format_ok
    assert json.loads(protocol.parse("Which file do you mean?").action) == {"message": "Which file do you mean?"}
