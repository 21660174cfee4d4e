"""Running bfcl-eval's own handler and checker code where the ``bfcl`` extra is installed.

bfcl-eval's handler modules import packages the ``bfcl`` extra does not install: ``overrides``
(two decorators and a metaclass base) and tree-sitter (the Java and JavaScript parsers of
single-turn categories), and its ``model_config`` imports every vendor SDK. ``register_stand_ins``
puts inert stand-ins for the first two in ``sys.modules``; ``register_model_config`` a
``model_config`` holding only the models the fixture uses, with bfcl-eval's own handler classes.
Nothing of the inference loop, decoding, execution, checking or writing is replaced. Call both
before importing any ``bfcl_eval.model_handler`` or ``bfcl_eval.eval_checker.eval_runner`` module,
in a process of its own (``make_results.py``, ``verdicts.py``).
"""

from __future__ import annotations

import sys
import types
from typing import Any

# The three models of the fixture, as bfcl-eval's model_config names them (registry names).
MODELS = ("Qwen/Qwen3-4B-Instruct-2507-FC", "openbmb/MiniCPM-SALA-FC", "Qwen/Qwen3-4B-Instruct-2507")


def _module(name: str, **attributes: Any) -> None:
    stand_in = types.ModuleType(name)
    stand_in.__dict__.update(attributes)
    sys.modules[name] = stand_in


def _unavailable(*_: Any, **__: Any) -> Any:
    raise NotImplementedError("tree-sitter parsers (Java, JavaScript) are not installed")


def register_stand_ins() -> None:
    """Inert ``overrides`` and tree-sitter parser modules."""
    _module("overrides", final=lambda f: f, override=lambda f: f, EnforceOverrides=type("EnforceOverrides", (), {}))
    _module("bfcl_eval.model_handler.parser.java_parser", parse_java_function_call=_unavailable)
    _module("bfcl_eval.model_handler.parser.js_parser", parse_javascript_function_call=_unavailable)


def register_model_config(models: tuple[str, ...] = MODELS) -> dict[str, Any]:
    """A ``bfcl_eval.constants.model_config`` with the fixture's models (bfcl-eval's entries for
    them: model name, handler class, FC or prompting)."""
    from bfcl_eval.model_handler.api_inference.openai_completion import OpenAICompletionsHandler
    from bfcl_eval.model_handler.local_inference.qwen import QwenHandler
    from bfcl_eval.model_handler.local_inference.qwen_fc import QwenFCHandler

    def config(model_name: str, handler: type, is_fc_model: bool) -> Any:
        return types.SimpleNamespace(model_name=model_name, model_handler=handler, is_fc_model=is_fc_model)

    known = {
        MODELS[0]: config("Qwen/Qwen3-4B-Instruct-2507", QwenFCHandler, True),
        MODELS[1]: config("openbmb/MiniCPM-SALA-FC", OpenAICompletionsHandler, True),
        MODELS[2]: config("Qwen/Qwen3-4B-Instruct-2507", QwenHandler, False),
    }
    mapping = {name: known[name] for name in models}
    _module("bfcl_eval.constants.model_config", MODEL_CONFIG_MAPPING=mapping)
    return mapping
