"""BFCL v4 multi-turn result files (what ``bfcl generate`` writes) as bfcl trajectories.

``bfcl generate`` writes ``result/<model>/multi_turn/BFCL_v4_multi_turn_<category>_result.json``,
one JSON object per line::

    {"id": "multi_turn_base_12",
     "result": [[step response, ...] per turn],            # the model's raw responses
     "input_token_count": [[...]], "output_token_count": [[...]], "latency": [[...]],
     "inference_log": [state_info list, {"begin_of_turn_query": [...], "step_0": [
         {"role": "assistant", "content": ...},
         {"role": "handler_log", "content": "Successfully decoded model response.", "model_response_decoded": [...]},
         {"role": "tool", "content": "..."}, ...], ...}, state_info list, ...],
     "reasoning_content": [[...]]}                          # reasoning models only

Each entry is looked up by id in bfcl-eval's own data and *replayed* through prefbuild's ``bfcl``
env (``envs/bfcl/env.py``): reset on the entry, each recorded step stepped with its decoded calls,
a step without calls ending the user turn. The tool results, errors, offered tools (held-out
functions revealed in ``miss_func``), per-turn verdicts of BFCL's checker and the outcome are
therefore the real backends' and checker's, exactly as for a played episode; the trajectory is
shaped like one (env ``bfcl``; protocol ``hermes`` for FC handlers, ``python`` for prompting ones).

Decoding: the handler's own decoding, as the ``inference_log`` records it, wins; without a log the
response is decoded by its shape (``bfcl_decode``). A step BFCL could not decode ends the turn, as
BFCL does; it counts as a malformed call (``format_ok`` false, a problem on the step) when it
attempted one (a list of calls, a ``<tool_call>`` block, text shaped like ``[f(...)]``), and as the
model's message otherwise: FC handlers log every plain-text answer as a decoding error, whether
recorded as a string (OpenAI, Mistral) or as the list of its text blocks (Claude, Gemini, Nova).

The tool results the log recorded are compared with the replay's; where they differ (a backend
that is not deterministic) the replay's are kept, since the backend state, the checker's verdicts
and the later steps follow from them, the step's ``info["bfcl"]["logged_results"]`` holds the
logged ones, and one warning per file counts them. An entry whose inference failed
(``"result": "Error during inference: ..."``) has no steps to replay: it is skipped with a warning.
Single-turn BFCL result files are refused: only multi-turn ones are read. Reading needs bfcl-eval
(the ``bfcl`` extra): its data, backends and checker are what the replay runs.
"""

from __future__ import annotations

import importlib.util
import logging
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from prefbuild.envs.bfcl.data import CATEGORIES, BfclEntry, load_entries
from prefbuild.envs.bfcl.env import MAX_STEPS_PER_TURN, BfclEnv, task_of
from prefbuild.envs.bfcl.expert import as_tool_call
from prefbuild.envs.bfcl.protocol import BfclHermesProtocol, BfclPythonProtocol
from prefbuild.io.importers.bfcl_decode import Decoded, decode_response, entry_kind, logged_calls, response_kind
from prefbuild.io.importers.located import JsonPath, Locate, fail, get_field
from prefbuild.records import (
    EXTERNAL_SPLIT,
    EnvInfo,
    Message,
    Outcome,
    Role,
    Step,
    StepFacts,
    StopReason,
    TeacherInfo,
    ToolCall,
    Trajectory,
    Usage,
    UsageTotals,
)
from prefbuild.tooluse.actions import encode_action

logger = logging.getLogger(__name__)

ERROR_DECODING = "Error decoding the model response"
INFERENCE_ERROR = "Error during inference"
OPTIONS = {"hints": "off", "max_steps_per_turn": MAX_STEPS_PER_TURN}  # what BFCL itself plays


def is_bfcl_result(record: Any) -> bool:
    """Is ``record`` (a decoded JSON value) an entry of a BFCL result file: an ``id`` and a ``result``
    beside BFCL's bookkeeping (``inference_log``, token counts, or an inference ``traceback``)?

    Example:
        >>> is_bfcl_result({"id": "multi_turn_base_0", "result": [[]], "inference_log": []})
        True
        >>> is_bfcl_result({"id": "x", "messages": []})
        False
    """
    if not isinstance(record, dict) or not isinstance(record.get("id"), str) or "result" not in record:
        return False
    if {"steps", "messages", "conversations", "simulations", "output"} & record.keys():
        return False
    return bool({"inference_log", "input_token_count", "output_token_count", "latency", "traceback"} & record.keys())


def bfcl_trajectory(record: dict[str, Any], *, source: str, model: str, locate: Locate) -> Trajectory | None:
    """The trajectory of one BFCL result entry, replayed through prefbuild's ``bfcl`` env.

    Args:
        record: the decoded entry (one line of the result file).
        source: the prefix of the trajectory id (``<folder>/<file stem>``); the id is ``<source>#<entry id>``.
        model: the model name to record (``unknown`` when neither ``--model`` nor the result folder names one).
        locate: ``file:line`` of a JSON path in the entry (for error messages).

    Returns:
        The trajectory, or None for an entry whose inference failed (warned).

    Raises:
        ExternalLogError: a field is not what ``bfcl generate`` writes, the id is no multi-turn entry
            of the installed bfcl-eval, or the responses do not fit the entry (turns, steps).

    Example:
        >>> line = Path("BFCL_v4_multi_turn_base_result.json").read_text().splitlines()[0]  # doctest: +SKIP
        >>> bfcl_trajectory(json.loads(line), source="r/base", model="qwen",
        ...                 locate=lambda path: "result.json:1").outcome.success  # doctest: +SKIP
        True
    """
    entry_id = get_field(record, "id", str, locate, ())
    entry = _entry(entry_id, locate)
    result = record.get("result")
    if isinstance(result, str) and result.startswith(INFERENCE_ERROR):
        logger.warning("%s: BFCL entry %s has no responses (%s); skipped", locate(()), entry_id, result[:200])
        return None
    turns = _turns(result, entry, locate)
    log = _turn_logs(record.get("inference_log"), locate)
    family = entry_kind(turns)
    replay = _Replay(entry, "python" if family == "prompting" else "hermes", family, locate)
    for turn, responses in enumerate(turns):
        for step, response in enumerate(responses):
            replay.step(turn, step, response, _step_log(log, turn, step), _recorded(record, turn, step))
        replay.check_turn_end(turn, len(responses))
    return replay.trajectory(f"{source}#{entry_id}", model, len(turns))


def _entry(entry_id: str, locate: Locate) -> BfclEntry:
    """The bfcl-eval entry of ``entry_id`` (a multi-turn category prefbuild's env plays)."""
    if not entry_id.startswith("multi_turn_"):
        raise fail(locate, ("id",), f"{entry_id!r} is a single-turn BFCL entry: only multi-turn result files "
                                    "(BFCL_v4_multi_turn_*_result.json) are read")
    category = entry_id.rsplit("_", 1)[0].removeprefix("multi_turn_")
    if category not in CATEGORIES:
        raise fail(locate, ("id",), f"BFCL category {category!r} is not one prefbuild's bfcl env plays "
                                    f"({', '.join(CATEGORIES)})")
    if importlib.util.find_spec("bfcl_eval") is None:
        raise fail(locate, (), "reading BFCL result files needs bfcl-eval (its tasks, backends and checker replay "
                               "the run): install the 'bfcl' extra (see the Makefile: pip install --no-deps "
                               "bfcl-eval, then pip install 'prefbuild[bfcl]')")
    for entry in load_entries(category):
        if entry.id == entry_id:
            return entry
    raise fail(locate, ("id",), f"no BFCL entry {entry_id!r} in the installed bfcl-eval's {category} data")


def _turns(result: Any, entry: BfclEntry, locate: Locate) -> list[list[Any]]:
    """``result`` checked: one list of step responses per turn, no more turns than the entry has."""
    if not isinstance(result, list) or not all(isinstance(turn, list) for turn in result):
        kind = type(result).__name__
        raise fail(locate, ("result",), f"expected a list of turns (each a list of step responses), got {kind}")
    if len(result) > len(entry.question) or not result:
        raise fail(locate, ("result",), f"{len(result)} turns recorded but entry {entry.id} has "
                                        f"{len(entry.question)}")
    for turn, steps in enumerate(result):
        if not steps:
            raise fail(locate, ("result", turn), "a turn without responses (BFCL records at least one step a turn)")
    return result


def _turn_logs(log: Any, locate: Locate) -> list[dict[str, Any]] | None:
    """The per-turn objects of ``inference_log`` (its state snapshots left out); None without a log."""
    if log is None:
        return None
    if not isinstance(log, list):
        raise fail(locate, ("inference_log",), f"expected a list, got {type(log).__name__}")
    return [item for item in log if isinstance(item, dict)]


def _step_log(log: list[dict[str, Any]] | None, turn: int, step: int) -> list[dict[str, Any]] | None:
    if log is None or turn >= len(log):
        return None
    items = log[turn].get(f"step_{step}")
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else None


def _recorded(record: dict[str, Any], turn: int, step: int) -> dict[str, Any]:
    """Token counts, latency and reasoning of one step, where the file has them."""
    found: dict[str, Any] = {}
    for key in ("input_token_count", "output_token_count", "latency", "reasoning_content"):
        value = record.get(key)
        try:
            found[key] = value[turn][step]  # type: ignore[index]
        except (TypeError, IndexError, KeyError):  # handled: a count the file lacks is unknown
            continue
    return found


def _text_parts(response: Any) -> list[str] | None:
    """The text parts of an FC handler's text answer: Claude, Gemini and Nova FC handlers record a
    response without calls as the list of its text blocks (``["Done."]``, ``[]`` for none); None for
    any other response.

    Example:
        >>> _text_parts(["Done."]), _text_parts([]), _text_parts([{"ls": "{}"}]), _text_parts("Done.")
        (['Done.'], [], None, None)
    """
    if isinstance(response, list) and all(isinstance(part, str) for part in response):
        return list(response)
    return None


def _response_text(response: Any) -> str:
    """The words of a response: a text answer as such, an FC handler's text blocks joined, else ''.

    Example:
        >>> _response_text("Done."), _response_text(["Moved it.", " Done."]), _response_text([{"ls": "{}"}])
        ('Done.', 'Moved it. Done.', '')
    """
    if isinstance(response, str):
        return response
    parts = _text_parts(response)
    return "".join(parts) if parts else ""


def _looks_like_calls(response: Any) -> bool:
    """Did a response BFCL could not decode attempt calls (rather than answer in words)? The
    family's decoding is left aside: an FC handler fails on every plain-text answer, whether it
    records it as a string or as a list of text blocks (Claude, Gemini, Nova).

    Example:
        >>> _looks_like_calls(["I moved the file."]), _looks_like_calls([{"ls": "{}"}]), _looks_like_calls("[ls()]")
        (False, True, True)
    """
    parts = _text_parts(response)
    if parts is not None:
        response = "".join(parts)
    if response_kind(response) != "prompting":
        return True
    text = str(response).strip("`\n ")
    return text.startswith("[") or ("(" in text and text.endswith(")"))


def _count(value: Any) -> int:
    """A recorded token count; Cohere's FC handler records counts as floats (``2923.0``). A flag, a
    negative or fractional number, or text is no count (0).

    Example:
        >>> _count(12), _count(2923.0), _count(1.5), _count(True), _count(-1), _count(float("inf"))
        (12, 2923, 0, 0, 0, 0)
    """
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _seconds(value: Any) -> float | None:
    """A recorded latency in seconds; None for one that is no finite duration (a flag, a negative or
    overflowing number, text).

    Example:
        >>> _seconds(1.5), _seconds(True), _seconds(10**400), _seconds(-1)
        (1.5, None, None, None)
    """
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    try:
        seconds = float(value)
    except OverflowError:  # handled: an integer past a float's range is no duration
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


@dataclass
class _Replay:
    """One entry played again through the env, step by step, building the trajectory's steps."""

    entry: BfclEntry
    protocol: str
    family: str
    locate: Locate
    steps: list[Step] = field(default_factory=list)
    usage: UsageTotals = field(default_factory=UsageTotals)
    mismatches: int = 0
    native: bool = False

    def __post_init__(self) -> None:
        self.env = BfclEnv(**OPTIONS)  # type: ignore[arg-type]
        self.task = task_of(self.entry, None, dict(OPTIONS), EXTERNAL_SPLIT)
        self.task.info.meta["source"] = "bfcl"
        observation, info = self.env.reset(self.task)
        self.turn_text = observation
        self.role = Role.user
        self.turn_messages: list[Message] | None = None
        self.tools: list[dict[str, Any]] = list(info["tools"])
        self.offered: list[list[dict[str, Any]]] = []
        self.turn_ended = False

    def step(self, turn: int, index: int, response: Any, log: list[dict[str, Any]] | None,
             recorded: dict[str, Any]) -> None:
        path: JsonPath = ("result", turn, index)
        if self.env.finished:
            raise fail(self.locate, path, "a response after the entry ended (BFCL plays no further step)")
        if self.turn_ended:
            raise fail(self.locate, path, "a response after a step that ended the turn")
        decoded, source = self._decoded(response, log)
        problems = list(decoded.problems)
        malformed = decoded.error is not None and _looks_like_calls(response)
        if malformed:
            problems.append(f"{ERROR_DECODING}: {decoded.error}")
        calls = [_tool_call(f"call_{turn}_{index}_{n}", name, arguments)
                 for n, (name, arguments) in enumerate(decoded.calls)] if decoded.error is None else []
        text = _response_text(response)
        native = isinstance(response, list | dict)
        self.native = self.native or native
        action = encode_action(calls) if calls else encode_action(message=text)
        expert = self.env.expert_action()
        self.offered.append(self.env.current_tools())
        result = self.env.step(action)
        facts = result.facts or StepFacts()
        facts = facts.model_copy(update={"problems": [*problems, *facts.problems]})
        info = dict(result.info)
        bfcl_info: dict[str, Any] = {"turn": turn, "step": index, "decoded_by": source}
        if isinstance(response, list | dict):
            bfcl_info["response"] = response  # the handler's raw record of the structured calls
        logged = [str(item.get("content")) for item in log or [] if item.get("role") == "tool"]
        replayed = [message.content for message in result.messages or [] if message.role is Role.tool]
        if log is not None and calls and logged != replayed:
            self.mismatches += 1
            bfcl_info["logged_results"] = logged
        info["bfcl"] = bfcl_info
        usage = Usage(prompt_tokens=_count(recorded.get("input_token_count")),
                      completion_tokens=_count(recorded.get("output_token_count")))
        self.usage.add(usage)
        latency = recorded.get("latency")
        reasoning = recorded.get("reasoning_content")
        self.steps.append(Step(
            index=len(self.steps),
            observation=self.turn_text,
            observation_role=self.role.value,
            observation_messages=self.turn_messages,
            raw_output=text,
            tool_calls=calls or None,
            native_tool_calls=native and bool(calls),
            thought=reasoning if isinstance(reasoning, str) and reasoning else None,
            action=action,
            format_ok=not malformed,
            valid=bool(result.valid) if result.valid is not None else True,
            expert_action=expert,
            feedback=result.observation,
            reward=result.reward,
            done=result.done,
            usage=usage,
            latency_s=_seconds(latency),
            facts=facts,
            info=info,
        ))
        if isinstance(result.info.get("tools"), list):
            self.tools = list(result.info["tools"])
        self.turn_ended = not calls
        self.turn_text = result.observation
        self.turn_messages = list(result.messages) if result.messages else None
        if self.turn_messages:
            self.role = Role.tool if self.turn_messages[0].role is Role.tool else Role.user

    def _decoded(self, response: Any, log: list[dict[str, Any]] | None) -> tuple[Decoded, str]:
        """The step's calls: the handler's logged decoding where the log has it, else by shape."""
        for item in log or []:
            if item.get("role") != "handler_log":
                continue
            content = str(item.get("content", ""))
            if content.startswith(ERROR_DECODING):
                return Decoded(error=str(item.get("error") or "undecodable")), "inference_log"
            decoded = item.get("model_response_decoded")
            if isinstance(decoded, list):
                return logged_calls(decoded), "inference_log"
        return decode_response(response, self.family), "response"

    def check_turn_end(self, turn: int, count: int) -> None:
        """A recorded turn ends with a step without calls, or with BFCL's force quit."""
        if not self.turn_ended and not self.env.finished:
            raise fail(self.locate, ("result", turn, count - 1), "the turn's last step made calls: BFCL ends a turn "
                                                                 "only on a step without calls or after "
                                                                 f"{MAX_STEPS_PER_TURN} steps")
        self.turn_ended = False

    def trajectory(self, trajectory_id: str, model: str, recorded_turns: int) -> Trajectory:
        if not self.env.finished:
            raise fail(self.locate, ("result",), f"{recorded_turns} turns recorded but entry {self.entry.id} has "
                                                 f"{len(self.entry.question)} (BFCL records fewer only after a "
                                                 "force quit)")
        if self.mismatches:
            logger.warning("%s: %d step(s) of %s got other tool results on replay than the log recorded; the "
                           "replay's are kept (the logged ones are in the step's info['bfcl'])",
                           self.locate(()), self.mismatches, self.entry.id)
        last = self.steps[-1]
        won = bool(last.facts.won)
        if won:
            outcome = Outcome(success=True, reward=last.reward, progress=1.0, stop_reason=StopReason.success)
        else:
            stop = StopReason.max_steps if self.env.force_quit else StopReason.agent_finished
            outcome = Outcome(success=False, reward=last.reward, progress=self.env.progress(), stop_reason=stop)
        tools = self.tools if self.native else None
        if tools is not None:
            for step, offered in zip(self.steps, self.offered, strict=True):
                if offered != tools:
                    step.offered_tools = offered
        protocol = BfclHermesProtocol(tools_in_prompt=not self.native) if self.protocol == "hermes" \
            else BfclPythonProtocol()
        self.task.info.meta["recorded_turns"] = recorded_turns
        return Trajectory(
            id=trajectory_id,
            task=self.task.info,
            env=EnvInfo(name="bfcl", protocol=self.protocol, options=dict(OPTIONS)),
            teacher=TeacherInfo(backend="external", model=model),
            messages=protocol.prefix_messages(self.task),
            tools=tools,
            steps=self.steps,
            outcome=outcome,
            usage=self.usage,
        )


def _tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> ToolCall:
    """A decoded call as a ToolCall; arguments JSON cannot hold (a set, bytes) are kept as their
    Python text, which the env rejects as it rejects any arguments that are not a JSON object."""
    try:
        return as_tool_call(call_id, name, arguments)
    except (TypeError, ValueError):  # handled: such a call is replayed as a rejected one
        from prefbuild.records import FunctionCall

        return ToolCall(id=call_id, function=FunctionCall(name=name, arguments=repr(arguments)))


def bfcl_trajectories(record: Any, *, source: str, model: str, locate: Locate) -> Iterator[Trajectory]:
    """``bfcl_trajectory`` as an iterator of zero or one trajectory (for the streaming reader)."""
    if not isinstance(record, dict):
        raise fail(locate, (), f"expected a BFCL result object, got {type(record).__name__}")
    trajectory = bfcl_trajectory(record, source=source, model=model, locate=locate)
    if trajectory is not None:
        yield trajectory
