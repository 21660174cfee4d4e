"""Make ``data/``: BFCL v4 multi-turn result files written by bfcl-eval's own code.

``bfcl generate``'s own pipeline (``bfcl_eval._llm_response_generation.generate_results``: the
model handler's ``inference`` loop, ``multi_threaded_inference`` building each result entry,
``BaseHandler.write`` writing ``result/<model>/multi_turn/BFCL_v4_multi_turn_<category>_result.json``)
plays a handful of multi-turn entries against a scripted OpenAI-compatible server on 127.0.0.1
(this script's ``ScriptedServer``: it answers ``/v1/models``, ``/v1/completions`` and
``/v1/chat/completions`` with the next scripted turn of the entry the request belongs to).
The backends that run the calls, the decoding, the step limit and the file layout are bfcl-eval's.

Three handlers of the installed bfcl-eval, as ``bfcl generate --model`` builds them:

- ``Qwen/Qwen3-4B-Instruct-2507-FC`` (``QwenFCHandler``, a local model served over
  ``/v1/completions`` with ``--skip-server-setup``; the result steps are Qwen's text with
  ``<tool_call>`` blocks); its tokenizer is prefbuild's embedded SmolLM2 (``--local-model-path``),
  used only to count prompt tokens. Categories base, miss_func and miss_param.
- ``openbmb/MiniCPM-SALA-FC`` (``OpenAICompletionsHandler`` in FC mode, ``/v1/chat/completions``
  with structured ``tool_calls``; the result steps are lists of ``{function: json arguments}``).
- ``Qwen/Qwen3-4B-Instruct-2507`` (``QwenHandler``, prompting: the result steps are the text
  ``[func(a=1)]``).

The scripted episodes (``SCRIPTS``; what BFCL's checker makes of them is in README.md):

- base_12: every turn right (all three handlers).
- base_13: a wrong call (``cd`` into a folder that does not exist; the later calls fail too).
- base_11: a missing call (the second turn answers in words and never posts the tweet).
- base_7: an undecodable response in the last turn (arguments that are not a JSON object; for the
  prompting handler, a call list that is not Python): BFCL logs "Error decoding the model
  response" and ends the turn.
- base_9 (Qwen FC only): a ``<tool_call>`` without ``arguments``: QwenFCHandler's prompt
  formatting raises on the next request and ``bfcl generate`` records ``"result": "Error during
  inference: 'arguments'"`` with a traceback (an entry without responses).
- base_1: the same call 21 times in one turn: BFCL force-quits the entry after 20 steps.
- miss_func_30: the model says it cannot act until ``cd`` is revealed, then finishes.
- miss_param_12: the model asks for the missing file name, then finishes.

bfcl-eval's handler modules import packages the ``bfcl`` extra does not install: ``overrides``
(decorators only) and tree-sitter (the Java and JavaScript parsers of single-turn categories).
This script registers inert stand-ins for those before importing bfcl-eval, and a one-entry
``model_config`` holding the three models (bfcl-eval's real one imports every vendor SDK);
nothing of the inference loop, decoding, execution or writing is replaced.

Usage (a few seconds; rewrites ``data/``)::

    PYTHONPATH=. python tests/bfclimport/make_results.py
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import types
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.bfclimport.harness import MODELS, register_model_config, register_stand_ins

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
QWEN_FC, OPENAI_FC, QWEN_PROMPT = MODELS

Call = tuple[str, dict[str, Any]]
# A step: the calls of one model turn, a message (no calls), or raw text per handler kind.
Step = list[Call] | str | dict[str, Any]


def _ls() -> list[Call]:
    return [("ls", {"a": True})]


UNDECODABLE = {
    # Qwen FC: arguments that are a string, not JSON (convert_to_function_call's json.loads raises)
    QWEN_FC: '<tool_call>\n{"name": "cat", "arguments": "file_name=goals.txt"}\n</tool_call>',
    # OpenAI FC: arguments that are not JSON (convert_to_function_call's json.loads raises)
    OPENAI_FC: {"tool_calls": [("cat", '{"file_name": "goals.txt"')]},
    # prompting: a call list that is not Python
    QWEN_PROMPT: "[cat(file_name='goals.txt']",
}

SCRIPTS: dict[str, dict[str, list[Step]]] = {
    "multi_turn_base_12": {"turns": [
        [[("cd", {"folder": "Documents"}), ("touch", {"file_name": "summary.txt"})],
         "I created summary.txt in Documents."],
        [[("echo", {"content": "quantum computing", "file_name": "summary.txt"})], "summary.txt holds the topic now."],
        [[("wc", {"file_name": "summary.txt", "mode": "w"})], "summary.txt has 2 words."],
    ]},
    "multi_turn_base_13": {"turns": [
        [[("cd", {"folder": "docs"})], [("tail", {"file_name": "report.txt", "lines": 1})],
         "I could not find the report."],
        [[("diff", {"file_name1": "report.txt", "file_name2": "summary.txt"})], "I could not compare the files."],
    ]},
    "multi_turn_base_11": {"turns": [
        [_ls(), "The directory holds file1.txt and file2.txt."],
        ["Here is a draft: 'file1.txt, file2.txt #fileshowcase'. Shall I post it?"],
    ]},
    "multi_turn_base_7": {"turns": [
        [[("cd", {"folder": "academic_venture"}), ("mkdir", {"dir_name": "academic_hub"})], "Done."],
        [[("find", {"path": ".", "name": "goal"})], "I found the goals file."],
        [UNDECODABLE],
    ]},
    # Qwen FC only: a <tool_call> without "arguments" makes QwenFCHandler's own prompt formatting raise
    # KeyError on the next request; bfcl generate records "Error during inference: 'arguments'".
    "multi_turn_base_9": {"turns": [
        [{QWEN_FC: '<tool_call>\n{"name": "cd", "args": {"folder": "Documentation"}}\n</tool_call>'}],
        ["unreachable"],
    ]},
    "multi_turn_base_1": {"turns": [[_ls() for _ in range(21)]]},
    "multi_turn_miss_func_30": {"turns": [
        ["I cannot change into the project folder: no function for that is available to me."],
        [[("cd", {"folder": "project"}), ("cat", {"file_name": "test_results.json"})], "These are the test results."],
        [[("post_tweet", {"content": "{experiment: Apollo Test, result: Success, details: All systems operational.}"})],
         "The tweet is posted."],
    ]},
    "multi_turn_miss_param_12": {"turns": [
        [[("cd", {"folder": "Documents"}), ("touch", {"file_name": "summary.txt"})], "Done."],
        [[("echo", {"content": "quantum computing", "file_name": "summary.txt"})], "Done."],
        ["Which file should I count the words of?"],
        [[("wc", {"file_name": "summary.txt", "mode": "w"})], "summary.txt has 2 words."],
    ]},
}

# Which handler plays which entries.
PLAYS = {
    QWEN_FC: ["multi_turn_base_12", "multi_turn_base_13", "multi_turn_base_11", "multi_turn_base_7",
              "multi_turn_base_1", "multi_turn_base_9", "multi_turn_miss_func_30", "multi_turn_miss_param_12"],
    OPENAI_FC: ["multi_turn_base_12", "multi_turn_base_7"],
    QWEN_PROMPT: ["multi_turn_base_12", "multi_turn_base_11"],
}


def _python_value(value: Any) -> str:
    return repr(value)


def render_text(model: str, step: Step) -> str:
    """A step as the text a completions model writes (Qwen's ``<tool_call>`` blocks, or BFCL's
    prompting format ``[f(a=1)]``)."""
    if isinstance(step, dict):
        raw = step[model]
        assert isinstance(raw, str)
        return raw
    if isinstance(step, str):
        return step
    if model == QWEN_FC:
        return "\n".join(
            "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}) + "\n</tool_call>"
            for name, arguments in step
        )
    calls = ", ".join(f"{name}({', '.join(f'{k}={_python_value(v)}' for k, v in arguments.items())})"
                      for name, arguments in step)
    return f"[{calls}]"


def chat_message(step: Step, turn_id: str) -> dict[str, Any]:
    """A step as an OpenAI chat completion message (structured tool calls)."""
    if isinstance(step, dict):
        step = step[OPENAI_FC]
    if isinstance(step, str):
        return {"role": "assistant", "content": step}
    if isinstance(step, dict):
        pairs = step["tool_calls"]
    else:
        pairs = [(name, json.dumps(arguments)) for name, arguments in step]
    calls = [{"id": f"call_{turn_id}_{index}", "type": "function", "function": {"name": name, "arguments": arguments}}
             for index, (name, arguments) in enumerate(pairs)]
    return {"role": "assistant", "content": None, "tool_calls": calls}


class Script:
    """The scripted turns of the entries one handler plays, found by the entry's first question."""

    def __init__(self, model: str, entries: dict[str, dict[str, Any]], entry_ids: list[str]) -> None:
        self.model = model
        self.steps: dict[str, list[Step]] = {}
        self.first_question: dict[str, str] = {}
        for entry_id in entry_ids:
            self.steps[entry_id] = [step for turn in SCRIPTS[entry_id]["turns"] for step in turn]
            self.first_question[entry_id] = entries[entry_id]["question"][0][0]["content"]

    def entry_of(self, text: str) -> str:
        found = [entry_id for entry_id, question in self.first_question.items() if question in text]
        if len(found) != 1:
            raise ValueError(f"request matches entries {found}")
        return found[0]

    def next_step(self, text: str, done: int) -> tuple[str, Step]:
        entry_id = self.entry_of(text)
        return entry_id, self.steps[entry_id][done]


class ScriptedServer:
    """An OpenAI-compatible server on 127.0.0.1 answering with the current ``Script``."""

    def __init__(self) -> None:
        self.script: Script | None = None
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return

            def _send(self, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._send({"object": "list", "data": [{"id": "scripted", "object": "model"}]})

            def do_POST(self) -> None:
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                self._send(outer.answer(self.path, request))

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]

    def answer(self, path: str, request: dict[str, Any]) -> dict[str, Any]:
        script = self.script
        assert script is not None
        usage = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
        base = {"id": "scripted", "created": int(time.time()), "model": request.get("model", ""), "usage": usage}
        if path.endswith("/chat/completions"):
            messages = request["messages"]
            text = "\n".join(str(message.get("content") or "") for message in messages)
            done = sum(message.get("role") == "assistant" for message in messages)
            entry_id, step = script.next_step(text, done)
            message = chat_message(step, f"{entry_id.rsplit('_', 1)[1]}_{done}")
            finish = "tool_calls" if message.get("tool_calls") else "stop"
            return {**base, "object": "chat.completion",
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}]}
        prompt = request["prompt"]
        done = len(re.findall(r"<\|im_start\|>assistant\n", prompt)) - 1  # the last one opens this turn
        _, step = script.next_step(prompt, done)
        return {**base, "object": "text_completion",
                "choices": [{"index": 0, "text": render_text(script.model, step), "finish_reason": "stop",
                             "logprobs": None}]}

    @contextmanager
    def running(self) -> Iterator[ScriptedServer]:
        thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.httpd.shutdown()
            self.httpd.server_close()


def generate(model: str, result_dir: Path) -> None:
    """``bfcl generate``'s pipeline for one model's entries, one category at a time (entries of two
    categories may open with the same question, and the server finds the entry by it)."""
    from prefbuild.teachers.embedded import ensure_embedded_model

    tokenizer_dir = ensure_embedded_model()
    os.environ["BFCL_PROJECT_ROOT"] = str(result_dir.parent)  # bfcl-eval's lock files
    server = ScriptedServer()
    os.environ["LOCAL_SERVER_ENDPOINT"] = "127.0.0.1"
    os.environ["LOCAL_SERVER_PORT"] = str(server.port)
    os.environ["OPENAI_BASE_URL"] = f"http://127.0.0.1:{server.port}/v1"
    os.environ["OPENAI_API_KEY"] = "scripted"
    register_stand_ins()
    register_model_config(MODELS)
    from bfcl_eval._llm_response_generation import generate_results
    from bfcl_eval.utils import load_dataset_entry

    categories = ("base", "miss_func", "miss_param")
    entries = {entry["id"]: entry for category in categories for entry in load_dataset_entry(f"multi_turn_{category}")}
    with server.running():
        for category in categories:
            chosen = [entry_id for entry_id in PLAYS[model] if entry_id.rsplit("_", 1)[0] == f"multi_turn_{category}"]
            if not chosen:
                continue
            server.script = Script(model, entries, chosen)
            args = types.SimpleNamespace(
                temperature=0.001, num_threads=1, result_dir=result_dir, run_ids=False, include_input_log=False,
                exclude_state_log=False, num_gpus=1, gpu_memory_utilization=0.9, backend="vllm",
                skip_server_setup=True, local_model_path=str(tokenizer_dir), lora_modules=None, enable_lora=False,
                max_lora_rank=None,
            )
            generate_results(args, model, [copy.deepcopy(entries[entry_id]) for entry_id in chosen])


def main(out: Path = DATA) -> None:
    """Each model in a process of its own, as separate ``bfcl generate`` runs: bfcl-eval keeps the
    backend instances of an entry in module globals keyed by model name and entry id, and two of the
    handlers share a model name."""
    work = Path(tempfile.mkdtemp(prefix="bfcl-generate-"))
    result_dir = work / "result"
    root = Path(__file__).resolve().parents[2]
    for model in PLAYS:
        subprocess.run([sys.executable, __file__, "--model", model, str(result_dir)], check=True, cwd=root,
                       stdout=subprocess.DEVNULL)
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(result_dir, out)
    shutil.rmtree(work)
    for path in sorted(out.rglob("*.json")):
        print(path.relative_to(HERE), sum(1 for _ in path.open()))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--model"]:
        generate(sys.argv[2], Path(sys.argv[3]))
    else:
        main(Path(sys.argv[1]) if len(sys.argv) > 1 else DATA)
