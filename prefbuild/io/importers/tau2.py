"""tau2-bench results files (what ``tau2 run`` saves) as tau2 Trajectory records.

A results file is one JSON object, tau2's ``tau2.data_model.simulation.Results``::

    {"timestamp": ..., "info": {"agent_info": {"implementation": "llm_agent", "llm": ..., "llm_args": ...},
                                "environment_info": {"domain_name": "airline", "policy": ..., "tool_defs": null},
                                "user_info": ..., "max_steps": ..., "max_errors": ..., ...},
     "tasks": [{"id": ..., "user_scenario": {"instructions": ...}, "evaluation_criteria": ...}, ...],
     "simulations": [{"id", "task_id", "trial", "seed", "termination_reason", "skipped",
                      "reward_info": {"reward", "db_check", "action_checks", ...},
                      "messages": [{"role": "assistant", "content", "tool_calls": [{"id", "name",
                                    "arguments": {...}, "requestor"}], "usage", "raw_data"},
                                   {"role": "tool", "id", "content", "requestor", "error": bool}, ...]}]}

Each simulation becomes one trajectory that reads like one prefbuild's own ``tau2`` env
records (env ``tau2``, protocol ``hermes``): the prefix is tau2's ``LLMAgent`` system prompt
(its instructions and the domain policy) and the orchestrator's greeting; every assistant
message is one step (a turn of structured tool calls, or a message to the customer); the
customer's message or the tool results that follow it are the next step's observation. Only
what tau2's agent sees is kept: the customer's own device calls (telecom, ``requestor:
"user"``) and their results are left out, as tau2 leaves them out of the agent's prompt.

Success is tau2's pass (reward 1). Progress is the share of tau2's own checks that passed
(``reward_info``: database, environment assertions, expected actions, communicated
information, judged assertions). tau2 does not save the tool definitions (``tau2 run`` writes
``tool_defs: null``); when a file has them they become ``Trajectory.tools``; else, where tau2 is
installed, the domain's agent tools as the installed tau2 hands them to the model (``tau2 run``
offered the same list, unless another tau2 version played the run), so exports carry the tools
the model was given and the tool labelers check arguments against their schemas. Without either,
the trajectories carry no tools (warned once) and the tool labelers rely on tau2's error texts
(``Tool 'x' not found.``, ``missing 1 required positional argument``). The importer reads the JSON
itself; tau2 need not be installed. The steps are built by ``tool_steps``, as those of chat logs of
tool-calling agents (``tool_chat``) are.
"""

from __future__ import annotations

import copy
import json
import logging
import re
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import Any

from prefbuild.io.importers.located import JsonPath, Locate, fail, get_field
from prefbuild.io.importers.parsing import protocol
from prefbuild.io.importers.squashed import sequential_turns
from prefbuild.io.importers.tool_steps import ChatTurn, Offered, RawCall, conversation_steps, message_of, usage_of
from prefbuild.records import (
    EXTERNAL_SPLIT,
    EnvInfo,
    Message,
    Outcome,
    Role,
    Step,
    StopReason,
    TaskInfo,
    TeacherInfo,
    Trajectory,
    UsageTotals,
)

logger = logging.getLogger(__name__)

# tau2's ``LLMAgent`` prompt (tau2/agent/llm_agent.py, AGENT_INSTRUCTION and SYSTEM_PROMPT), kept
# here so that reading a results file needs no tau2; tests compare it with the package's.
AGENT_INSTRUCTION = """\
You are a customer service agent that helps the user according to the <policy> provided below.
In each turn you can either:
- Send a message to the user.
- Make a tool call.
You cannot do both at the same time.

Try to be helpful and always follow the policy. Always make sure you generate valid JSON only."""
SYSTEM_PROMPT = "<instructions>\n{agent_instruction}\n</instructions>\n<policy>\n{domain_policy}\n</policy>"
LLM_AGENT = "llm_agent"  # the agent implementation whose prompt is SYSTEM_PROMPT

ROLES = ("user", "assistant", "tool")
_PASS = 1e-6  # tau2's pass: reward 1 (prefbuild's tau2 env compares the same way)
_NOT_FOUND = re.compile(r"^Error: Tool '(?P<name>.*)' not found\.?$")
# Sampling settings of ``agent_info.llm_args`` worth recording (never keys, URLs, headers).
SAMPLING_KEYS = ("temperature", "top_p", "top_k", "max_tokens", "max_completion_tokens", "seed", "stop",
                 "presence_penalty", "frequency_penalty", "reasoning_effort")
_STOP = {
    "user_stop": StopReason.agent_finished,
    "agent_stop": StopReason.agent_finished,
    # prefbuild's own tau2 env ends such a conversation as finished too; facts.stop says why
    "too_many_errors": StopReason.agent_finished,
    "max_steps": StopReason.max_steps,
    # the orchestrator's stop rules: a judge found the agent repeating itself; the agent broke
    # the communication protocol (text and calls in one turn, an empty turn)
    "judge_stop": StopReason.protocol_stop,
    "agent_error": StopReason.protocol_stop,
    "user_error": StopReason.error,
}


def is_tau2_results(record: Any) -> bool:
    """Is ``record`` (a decoded JSON value) a tau2 results file: ``simulations``, or ``info`` with
    tau2's ``environment_info``?

    Example:
        >>> is_tau2_results({"info": {"environment_info": {}}, "tasks": []})
        True
        >>> is_tau2_results({"messages": []})
        False
    """
    if not isinstance(record, dict) or "steps" in record:
        return False
    info = record.get("info")
    return "simulations" in record or (isinstance(info, dict) and "environment_info" in info)


def tau2_trajectories(record: dict[str, Any], *, source: str, model: str, locate: Locate) -> Iterator[Trajectory]:
    """The trajectories of one tau2 results file, one per simulation, in the file's order.

    Args:
        record: the decoded results file.
        source: the prefix of the trajectory ids (``<folder>/<file stem>``); ids are ``<source>#<index>``.
        model: the model name to record when ``info.agent_info.llm`` names none (``unknown``), or
            the name to record instead of it.
        locate: ``file:line`` of a JSON path in the file (for error messages).

    Returns:
        An iterator of Trajectory records.

    Raises:
        ExternalLogError: a field is missing or not what tau2 writes, naming ``file:line field``.

    Example:
        >>> results = json.loads(Path("results.json").read_text())  # doctest: +SKIP
        >>> [t.outcome.success for t in tau2_trajectories(results, source="runs/r", model="unknown",
        ...                                                   locate=lambda path: "results.json:1")]  # doctest: +SKIP
        [True, False]
    """
    info = get_field(record, "info", dict, locate, ())
    environment = get_field(info, "environment_info", dict, locate, ("info",))
    domain = get_field(environment, "domain_name", str, locate, ("info", "environment_info"))
    policy = get_field(environment, "policy", str, locate, ("info", "environment_info"))
    tools = openai_tools(environment.get("tool_defs"), locate)
    if tools is None:
        tools = installed_domain_tools(domain)
    agent = get_field(info, "agent_info", dict, locate, ("info",), required=False) or {}
    tasks = _tasks(get_field(record, "tasks", list, locate, ()), locate)
    simulations = get_field(record, "simulations", list, locate, ())
    prefix = _system_prefix(agent, policy)
    teacher = _teacher(agent, model)
    squashed: list[int] = []  # per simulation, its messages read as calls made one after another
    for index, simulation in enumerate(simulations):
        path: JsonPath = ("simulations", index)
        if not isinstance(simulation, dict):
            raise fail(locate, path, f"expected an object, got {type(simulation).__name__}")
        task_id = str(get_field(simulation, "task_id", (str, int), locate, path))
        if task_id not in tasks:
            raise fail(locate, (*path, "task_id"), f"task {task_id!r} is not in the file's 'tasks'")
        yield simulation_trajectory(
            simulation, tasks[task_id], f"{source}#{index}", domain=domain, prefix=prefix, tools=tools,
            teacher=teacher, locate=locate, path=path, squashed=squashed,
        )
    if any(squashed):
        logger.warning(
            "%s: %d assistant message(s) in %d simulation(s) call a tool with an id that only an earlier call of the "
            "same message returned (the agent ran them one after another and the log joined them): read as one "
            "step per call", locate(()), sum(squashed), sum(1 for count in squashed if count),
        )


def not_found_tool(content: str) -> str | None:
    """The tool a tau2 result says does not exist (``Error: Tool 'x' not found.``), or None.

    Example:
        >>> not_found_tool("Error: Tool 'get_flight_info' not found."), not_found_tool("Error: User not found")
        ('get_flight_info', None)
    """
    match = _NOT_FOUND.match(content.strip())
    return match.group("name") if match else None


def installed_domain_tools(domain: str) -> list[dict[str, Any]] | None:
    """The agent's tools of ``domain`` as the installed tau2 hands them to the model (``Tool.openai_schema``
    each), or None where tau2 is not installed or has no such domain (warned once per domain). Each call
    gets its own copy: trajectories do not share tool definitions.

    Example:
        >>> [tool["function"]["name"] for tool in installed_domain_tools("mock")][:2]  # doctest: +SKIP
        ['create_task', 'get_users']
    """
    tools = _installed_domain_tools(domain)
    return copy.deepcopy(tools) if tools is not None else None


@lru_cache(maxsize=16)  # tau2 has a handful of domains; a file naming many unknown ones stays bounded
def _installed_domain_tools(domain: str) -> list[dict[str, Any]] | None:
    from prefbuild.envs.tau2.package import Tau2Unavailable, new_environment
    from prefbuild.envs.tau2.package import openai_tools as domain_tools

    try:
        return domain_tools(new_environment(domain))
    except (Tau2Unavailable, ValueError) as error:
        logger.warning(
            "tau2 episodes of domain %r: the file holds no tool definitions and they cannot be taken from tau2 (%s); "
            "the trajectories carry no tools, so exports lack them and unknown tools and bad arguments are read "
            "from tau2's error texts", domain, error,
        )
        return None


def _tasks(tasks: list[Any], locate: Locate) -> dict[str, dict[str, Any]]:
    """The file's tasks by id."""
    found: dict[str, dict[str, Any]] = {}
    for position, task in enumerate(tasks):
        if not isinstance(task, dict):
            raise fail(locate, ("tasks", position), f"expected an object, got {type(task).__name__}")
        found[str(get_field(task, "id", (str, int), locate, ("tasks", position)))] = task
    return found


def openai_tools(tool_defs: Any, locate: Locate) -> list[dict[str, Any]] | None:
    """tau2's ``tool_defs`` (name -> ``ToolSignature``: ``name``, ``doc``, ``params``) as OpenAI tool
    definitions; None when the file has none (``tau2 run`` saves none).

    ``params`` is the JSON Schema tau2 sends as ``parameters``; the description is the
    signature's ``doc`` (tau2 sends a shorter description it does not save).

    Example:
        >>> openai_tools({"get_users": {"name": "get_users", "doc": "Get users.", "params": None}}, str)
        [{'type': 'function', 'function': {'name': 'get_users', 'description': 'Get users.',
          'parameters': {'type': 'object', 'properties': {}}}}]
    """
    if tool_defs is None:
        return None
    path: JsonPath = ("info", "environment_info", "tool_defs")
    if not isinstance(tool_defs, dict):
        raise fail(locate, path, f"expected an object of tool signatures, got {type(tool_defs).__name__}")
    tools = []
    for name, signature in tool_defs.items():
        if not isinstance(signature, dict):
            raise fail(locate, (*path, name), f"expected a tool signature object, got {type(signature).__name__}")
        parameters = signature.get("params")
        if not isinstance(parameters, dict):
            parameters = {"type": "object", "properties": {}}
        function = {"name": str(signature.get("name") or name), "description": str(signature.get("doc") or ""),
                    "parameters": parameters}
        tools.append({"type": "function", "function": function})
    return tools


def _system_prefix(agent: dict[str, Any], policy: str) -> list[Message]:
    """tau2's ``LLMAgent`` system prompt; none for other agent implementations (their prompts
    hold what the file does not, e.g. the ground-truth agent's resolution steps)."""
    implementation = agent.get("implementation", LLM_AGENT)
    if implementation != LLM_AGENT:
        logger.warning("tau2 agent %r: its system prompt is not rebuilt (only %r's is)", implementation, LLM_AGENT)
        return []
    text = SYSTEM_PROMPT.format(agent_instruction=AGENT_INSTRUCTION, domain_policy=policy)
    return [Message(role=Role.system, content=text)]


def _teacher(agent: dict[str, Any], model: str) -> TeacherInfo:
    """The agent's model (``--model`` when it names one) and its sampling settings (no keys or URLs)."""
    recorded = agent.get("llm")
    name = model if model != "unknown" or not recorded else str(recorded)
    arguments = agent.get("llm_args") if isinstance(agent.get("llm_args"), dict) else {}
    sampling = {key: arguments[key] for key in SAMPLING_KEYS if key in arguments}
    return TeacherInfo(backend="external", model=name, sampling=sampling)


def task_info(task: dict[str, Any], domain: str, simulation: dict[str, Any]) -> TaskInfo:
    """The task as prefbuild's tau2 env records it (id ``tau2-<domain>-<task id>``, type = domain,
    goal = the customer's instructions or reason for calling), with the run's facts in ``meta``.

    Example:
        >>> task = {"id": "t1", "user_scenario": {"instructions": "Cancel my flight."}}
        >>> task_info(task, "airline", {"trial": 0}).id
        'tau2-airline-t1'
    """
    scenario = task.get("user_scenario") if isinstance(task.get("user_scenario"), dict) else {}
    instructions = scenario.get("instructions")
    goal = instructions.get("reason_for_call") if isinstance(instructions, dict) else instructions
    criteria = task.get("evaluation_criteria") if isinstance(task.get("evaluation_criteria"), dict) else None
    actions = (criteria or {}).get("actions") or []
    reward_info = simulation.get("reward_info") if isinstance(simulation.get("reward_info"), dict) else None
    meta = {
        "source": "tau2",
        "domain": domain,
        "tau2_task_id": str(task["id"]),
        "simulation_id": simulation.get("id"),
        "trial": simulation.get("trial"),
        "termination_reason": simulation.get("termination_reason"),
        "reward_basis": list((criteria or {}).get("reward_basis") or ["DB", "COMMUNICATE"]) if criteria else [],
        "expected_actions": len(actions),
        "user_actions": sum(isinstance(a, dict) and a.get("requestor") == "user" for a in actions),
        "nl_assertions": len((criteria or {}).get("nl_assertions") or []),
        "outcome_known": reward_info is not None and not simulation.get("skipped", False),
    }
    seed = simulation.get("seed")
    return TaskInfo(
        id=f"tau2-{domain}-{task['id']}",
        type=domain,
        goal=str(goal or "").strip(),
        split=EXTERNAL_SPLIT,
        seed=seed if isinstance(seed, int) and not isinstance(seed, bool) else None,
        meta=meta,
    )


def simulation_trajectory(
    simulation: dict[str, Any],
    task: dict[str, Any],
    trajectory_id: str,
    *,
    domain: str,
    prefix: list[Message],
    tools: list[dict[str, Any]] | None,
    teacher: TeacherInfo,
    locate: Locate,
    path: JsonPath,
    squashed: list[int] | None = None,
) -> Trajectory:
    """One ``SimulationRun`` as a Trajectory (see the module doc for the layout); ``squashed`` gets how many of
    its messages were read as calls made one after another (``squashed.sequential_turns``)."""
    messages = get_field(simulation, "messages", list, locate, path)
    visible = _agent_view(messages, locate, (*path, "messages"))
    opening = _opening_length(task, messages)
    cut = _prefix_end(visible, opening)
    termination = str(simulation.get("termination_reason") or "")
    outcome = simulation_outcome(simulation, locate, path)
    prompt = [*prefix, *(_message(m) for _, m in visible[:cut])]
    steps, split = _steps(visible, cut, tools, prompt)
    if squashed is not None:
        squashed.append(split)
    steps = _closed(steps, outcome, termination, simulation.get("reward_info"))
    usage = UsageTotals()
    for _, message in visible[cut:]:
        if message["role"] == "assistant":
            usage.add(usage_of(message.get("usage")))
    return Trajectory(
        id=trajectory_id,
        task=task_info(task, domain, simulation),
        env=EnvInfo(name="tau2", protocol="hermes", options={"domain": domain}),
        teacher=teacher,
        sample_index=_trial(simulation),
        messages=prompt,
        tools=tools,
        steps=steps,
        outcome=outcome,
        usage=usage,
    )


def _trial(simulation: dict[str, Any]) -> int:
    trial = simulation.get("trial")
    return trial if isinstance(trial, int) and not isinstance(trial, bool) and trial >= 0 else 0


def _agent_view(messages: list[Any], locate: Locate, path: JsonPath) -> list[tuple[int, dict[str, Any]]]:
    """``(position, message)`` of the messages tau2's agent sees (tau2's ``is_valid_agent_history_message``):
    assistant messages, customer messages without calls, tool results of the agent's calls."""
    seen = []
    for position, message in enumerate(messages):
        where = (*path, position)
        if not isinstance(message, dict):
            raise fail(locate, where, f"expected a message object, got {type(message).__name__}")
        role = message.get("role")
        if role not in ROLES:
            known = ", ".join(ROLES)
            raise fail(locate, (*where, "role"), f"unknown role {role!r} (a tau2 simulation has {known} messages)")
        _check_message(message, locate, where)
        if role == "user" and message.get("tool_calls"):
            continue  # the customer's device calls (telecom): never shown to the agent
        if role == "tool" and message.get("requestor", "assistant") != "assistant":
            continue
        seen.append((position, message))
    return seen


def _check_message(message: dict[str, Any], locate: Locate, where: JsonPath) -> None:
    """The fields the importer reads have tau2's types."""
    get_field(message, "content", str, locate, where, required=False)
    if message["role"] == "tool":
        get_field(message, "error", bool, locate, where, required=False)
        return
    calls = get_field(message, "tool_calls", list, locate, where, required=False) or []
    for position, call in enumerate(calls):
        call_path = (*where, "tool_calls", position)
        if not isinstance(call, dict):
            raise fail(locate, call_path, f"expected a tool call object, got {type(call).__name__}")
        name = get_field(call, "name", str, locate, call_path)
        if not name:
            raise fail(locate, (*call_path, "name"), "empty tool name")
        get_field(call, "arguments", dict, locate, call_path)


def _opening_length(task: dict[str, Any], messages: list[Any]) -> int:
    """How many leading messages the orchestrator put there before the episode started: the
    task's message history, else its greeting (an assistant message without calls)."""
    state = task.get("initial_state") if isinstance(task.get("initial_state"), dict) else {}
    history = state.get("message_history") if isinstance(state.get("message_history"), list) else []
    if history:
        return len(history)
    first = messages[0] if messages else None
    greeting = isinstance(first, dict) and first.get("role") == "assistant" and not first.get("tool_calls")
    return 1 if greeting else 0


def _prefix_end(visible: list[tuple[int, dict[str, Any]]], opening: int) -> int:
    """How many visible messages form the fixed prefix: the opening up to its last assistant
    message (customer or tool turns after it are what the first step answers)."""
    cut = 0
    for count, (position, message) in enumerate(visible, start=1):
        if position >= opening:
            break
        if message["role"] == "assistant":
            cut = count
    return cut


def _turn(message: dict[str, Any]) -> ChatTurn:
    """A tau2 message as a conversation turn: the calls' ids kept (an empty id gets ``call_<n>``), a
    tool result's ``error`` flag and first line, tau2's ``Tool 'x' not found.`` as a tool not offered."""
    content = message.get("content") or ""
    if message["role"] == "tool":
        failed = bool(message.get("error"))
        return ChatTurn(
            role="tool", content=content, call_id=str(message.get("id") or "") or None, failed=failed,
            error=content.split("\n", 1)[0] if failed else None,
            not_offered=failed and not_found_tool(content) is not None,
        )
    calls = tuple(
        RawCall(id=str(call.get("id") or f"call_{position}"), name=call["name"], arguments=call["arguments"],
                encoded=json.dumps(call["arguments"], ensure_ascii=False))
        for position, call in enumerate(message.get("tool_calls") or [])
    )
    raw = message.get("raw_data") if isinstance(message.get("raw_data"), dict) else {}
    finish_reason = raw.get("finish_reason")
    return ChatTurn(role=message["role"], content=content, calls=calls, usage=usage_of(message.get("usage")),
                    finish_reason=finish_reason if isinstance(finish_reason, str) else None)


def _message(message: dict[str, Any]) -> Message:
    """A tau2 message as a prefbuild Message (as prefbuild's tau2 env converts them)."""
    return message_of(_turn(message))


def _steps(
    visible: list[tuple[int, dict[str, Any]]], cut: int, tools: list[dict[str, Any]] | None, prompt: list[Message]
) -> tuple[list[Step], int]:
    """One step per assistant message after the prefix (the messages before it are its observation), a
    message whose calls were made one after another split into one step per call; and how many were."""
    names = frozenset(tool["function"]["name"] for tool in tools) if tools else None
    turns, split = sequential_turns([_turn(message) for _, message in visible[cut:]],
                                    "\n".join(message.content for message in prompt))
    return conversation_steps(turns, protocol("tau2", "hermes"), Offered(names=names), text_calls=False), split


def _closed(steps: list[Step], outcome: Outcome, termination: str, reward_info: Any) -> list[Step]:
    """The last step as prefbuild's tau2 env ends an episode: why it stopped, tau2's verdict in
    ``info["tau2"]``, done and rewarded when the conversation ended (not cut at max_steps)."""
    if not steps:
        return steps
    last = steps[-1]
    ended = termination in ("user_stop", "agent_stop", "too_many_errors") or outcome.success
    # The agent ended it (its ``###STOP###``): the step is final, as an agent's own finish is, so the
    # labelers read it as the agent's end, not as one its customer chose.
    facts = last.facts.model_copy(update={"stop": termination or None, "won": outcome.success,
                                          "progress": outcome.progress,
                                          "final": last.facts.final or termination == "agent_stop"})
    verdict = {"termination": termination, "reward": outcome.reward, "success": outcome.success,
               "reward_info": reward_info}
    steps[-1] = last.model_copy(update={
        "facts": facts, "done": ended, "reward": outcome.reward if ended else 0.0,
        "info": {**last.info, "tau2": verdict},
    })
    return steps


def simulation_outcome(simulation: dict[str, Any], locate: Locate, path: JsonPath) -> Outcome:
    """tau2's verdict: success = reward 1; the stop reason from ``termination_reason``; progress =
    the share of ``reward_info``'s checks that passed.

    Example:
        >>> simulation_outcome({"termination_reason": "max_steps", "reward_info": {"reward": 0.0}}, str, ()).stop_reason
        <StopReason.max_steps: 'max_steps'>
    """
    termination = get_field(simulation, "termination_reason", str, locate, path)
    if termination not in _STOP:
        known = ", ".join(_STOP)
        message = f"unknown termination reason {termination!r}; tau2 writes {known}"
        raise fail(locate, (*path, "termination_reason"), message)
    reward_info = get_field(simulation, "reward_info", dict, locate, path, required=False)
    reward = 0.0
    if reward_info is not None:
        reward = float(get_field(reward_info, "reward", (int, float), locate, (*path, "reward_info")))
    if simulation.get("skipped"):
        error = "tau2 skipped this simulation after an error (skip_failed_samples)"
        return Outcome(success=False, reward=0.0, stop_reason=StopReason.error, error=error)
    if abs(reward - 1.0) < _PASS:
        return Outcome(success=True, reward=1.0, progress=1.0, stop_reason=StopReason.success)
    reason = _STOP[termination]
    error = f"tau2 ended the simulation with {termination}" if reason is StopReason.error else None
    return Outcome(success=False, reward=reward, progress=checks_passed(reward_info), stop_reason=reason, error=error)


def checks_passed(reward_info: dict[str, Any] | None) -> float | None:
    """The share of tau2's checks in ``reward_info`` that passed: the database match (where the
    reward counts it), environment assertions, expected actions, communicated information and
    judged assertions; None when there are none.

    Example:
        >>> checks_passed({"reward_basis": ["DB"], "db_check": {"db_match": False},
        ...                "action_checks": [{"action_match": True}]})
        0.5
    """
    if not reward_info:
        return None
    met: list[bool] = []
    db = reward_info.get("db_check")
    if isinstance(db, dict) and "DB" in (reward_info.get("reward_basis") or ["DB"]):
        met.append(bool(db.get("db_match")))
    for key, flag in (("env_assertions", "met"), ("action_checks", "action_match"),
                      ("communicate_checks", "met"), ("nl_assertions", "met")):
        met += [bool(check.get(flag)) for check in _checks(reward_info.get(key))]
    return sum(met) / len(met) if met else None


def _checks(value: Any) -> Sequence[dict[str, Any]]:
    return [check for check in value if isinstance(check, dict)] if isinstance(value, list) else []
