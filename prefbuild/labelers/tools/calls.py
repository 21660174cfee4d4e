"""Labelers of the calls themselves: broken, unknown, badly argued, failing, repeated."""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar

from prefbuild.labelers.base import Labeler
from prefbuild.labelers.text import short
from prefbuild.labelers.tools.facts import call_results, canonical_call, toolbox
from prefbuild.records import FailureMode, FunctionCall, Label, Step, ToolCall, ToolCallFacts, Trajectory

# Parser problems that mean a call was broken (not merely that a turn had no call). BFCL's handlers log
# "Error decoding the model response" for a response they could not decode; the bfcl importer records
# it as a problem only where the response attempted calls (a plain-text answer is a message).
_BROKEN_CALL = re.compile(
    r"tool_call|tool call (?:is not|without)|arguments of .* are not|\.name is missing|tool_calls\[|tool_calls is"
    r"|error decoding the model response",
    re.IGNORECASE,
)
# A call written in a turn's text: Hermes tags or JSON keys, the slime tau2 pipeline's [ACTION] block, or
# BFCL's prompting format, a Python call list ``[f(a=1)]``.
_CALL_TEXT = re.compile(
    r"<\s*/?\s*tool_call|\"name\"\s*:|\"arguments\"\s*:|\[/?ACTION\]|\[\s*[A-Za-z_][\w.]*\s*\(", re.IGNORECASE
)
_UNKNOWN = re.compile(r"unknown (?:tool|function)|not a plain function name|no such tool", re.IGNORECASE)
# A code kernel names each run in its tracebacks ('File "<cell 2>"'): the same failure of a re-run reads
# the same once the name is dropped.
_CELL_NAME = re.compile(r"<cell \d+>")
_ARGUMENTS = re.compile(
    r"^argument|^arguments|missing \d* ?required|unexpected keyword|got an unexpected|not valid JSON|not a JSON object",
    re.IGNORECASE,
)


class ToolLabeler(Labeler):
    """Base of the tool labelers: they run on trajectories of tool envs or with tool calls
    (``Labeler.applies_to`` asks ``tools.scan.is_tool_trajectory`` for them)."""

    tool_trajectories_only: ClassVar[bool] = True


def broken_call_problems(step: Step) -> list[str]:
    """The parser's problems of ``step`` that say a call was tried in a broken form (not merely that the
    turn had no call)."""
    return [problem for problem in step.facts.problems if _BROKEN_CALL.search(problem)]


def _offered(trajectory: Trajectory, step: Step) -> list[str] | None:
    """Names of the tools offered at ``step``: its own list where the env grew the tools (BFCL
    reveals held-out functions), else the trajectory's; None where the record has none."""
    if step.offered_tools is not None:
        return [str((tool.get("function") or tool).get("name", "")) for tool in step.offered_tools]
    box = toolbox(trajectory)
    return box.names if box is not None else None


def _unknown(offered: list[str] | None, fact: ToolCallFacts) -> bool:
    """The call named a tool that was not offered: by the tools offered at its step where recorded
    (even when the env ran it, as BFCL runs a held-out function called before its turn), else by
    the env's error (``unknown tool 'x'``, BFCL's ``name 'x' is not defined``)."""
    if fact.offered is False or (offered is not None and fact.name not in offered):
        return True
    if fact.ok or fact.error is None:
        return False
    if offered is not None and not fact.error.lower().startswith("unknown tool"):
        return False
    return bool(_UNKNOWN.search(fact.error)) or f"{fact.name!r} is not defined" in fact.error


def schema_error(trajectory: Trajectory, fact: ToolCallFacts) -> str | None:
    """Where the call's arguments break its tool's JSON Schema: checked here against the trajectory's
    tools where recorded, else as the env checked them (``ToolCallFacts.schema_error``: BFCL writes
    its tools into the system prompt); None when they fit or nothing says."""
    box = toolbox(trajectory)
    if box is None or fact.name not in box.names or fact.arguments is None:
        return fact.schema_error
    arguments = json.dumps(fact.arguments, ensure_ascii=False)
    call = ToolCall(id=fact.call_id or "call", function=FunctionCall(name=fact.name, arguments=arguments))
    return box.check(call)[1]


class MalformedToolCallLabeler(ToolLabeler):
    """A turn that tried to call a tool in a broken form: unparseable JSON, a missing name,
    broken or missing tags. Calls the parser could not read at all weigh more than repaired ones."""

    name: ClassVar[str] = "malformed_tool_call"
    mode: ClassVar[str] = FailureMode.malformed_tool_call.value
    version: ClassVar[int] = 2  # 2: a BFCL response that attempted calls and that BFCL could not decode
    narrows: ClassVar[tuple[str, ...]] = (FailureMode.format_violation.value,)
    defaults: ClassVar[dict[str, Any]] = {"broken_confidence": 0.95, "repaired_confidence": 0.7}

    def label(self, trajectory: Trajectory) -> list[Label]:
        labels: list[Label] = []
        for step in trajectory.steps:
            broken = broken_call_problems(step)
            if not broken:
                continue
            unread = not step.tool_calls and bool(_CALL_TEXT.search(step.raw_output))
            confidence = self.config["broken_confidence" if unread else "repaired_confidence"]
            what = "no call could be read" if unread else "the call was read only after repair"
            evidence = f"{'; '.join(dict.fromkeys(broken))}: {what}: '{short(step.raw_output, 90)}'"
            labels.append(self.make_label(step, confidence, evidence))
        return labels


class UnknownToolLabeler(ToolLabeler):
    """A call of a tool the model was not offered (named by the env's error or missing from the
    trajectory's tools)."""

    name: ClassVar[str] = "unknown_tool"
    mode: ClassVar[str] = FailureMode.unknown_tool.value
    narrows: ClassVar[tuple[str, ...]] = (FailureMode.invalid_action.value,)
    defaults: ClassVar[dict[str, Any]] = {"confidence": 0.95}

    def label(self, trajectory: Trajectory) -> list[Label]:
        labels: list[Label] = []
        for step in trajectory.steps:
            if not step.facts.tools:
                continue
            names = _offered(trajectory, step)
            unknown = [fact for fact in step.facts.tools if _unknown(names, fact)]
            if not unknown:
                continue
            offered = f"; offered: {', '.join(names)}" if names is not None else ""
            called = ", ".join(dict.fromkeys(repr(fact.name) for fact in unknown))
            error = short(unknown[0].error or "not offered (the env ran it)", 100)
            labels.append(self.make_label(step, self.config["confidence"], f"called {called}: {error}{offered}"))
        return labels


class InvalidArgumentsLabeler(ToolLabeler):
    """A call of a known tool whose arguments break the tool's JSON Schema (checked again here
    with ``jsonschema`` when the record has the schemas, else read from the env's error)."""

    name: ClassVar[str] = "invalid_arguments"
    mode: ClassVar[str] = FailureMode.invalid_arguments.value
    narrows: ClassVar[tuple[str, ...]] = (FailureMode.invalid_action.value,)
    defaults: ClassVar[dict[str, Any]] = {"schema_confidence": 0.95, "error_confidence": 0.85}

    def label(self, trajectory: Trajectory) -> list[Label]:
        labels: list[Label] = []
        for step in trajectory.steps:
            if not step.facts.tools:
                continue
            offered = _offered(trajectory, step)
            for fact in step.facts.tools:
                if _unknown(offered, fact):
                    continue
                problem = schema_error(trajectory, fact)
                if problem is not None:
                    evidence = f"{fact.name}({short(str(fact.arguments), 60)}) breaks its schema: {problem}"
                    labels.append(self.make_label(step, self.config["schema_confidence"], evidence))
                    break
                if not fact.ok and (fact.arguments is None or (fact.error and _ARGUMENTS.search(fact.error))):
                    evidence = f"{fact.name}: {short(fact.error or 'arguments could not be read', 120)}"
                    labels.append(self.make_label(step, self.config["error_confidence"], evidence))
                    break
        return labels


class ToolErrorLabeler(ToolLabeler):
    """A call of a known tool with acceptable arguments that failed when it ran (it raised, the
    program crashed, the backend refused the state)."""

    name: ClassVar[str] = "tool_error"
    mode: ClassVar[str] = FailureMode.tool_error.value
    narrows: ClassVar[tuple[str, ...]] = (FailureMode.invalid_action.value,)
    defaults: ClassVar[dict[str, Any]] = {"confidence": 0.8, "repeated_confidence": 0.9}

    def label(self, trajectory: Trajectory) -> list[Label]:
        labels: list[Label] = []
        failures = 0
        for step in trajectory.steps:
            if not step.facts.tools:
                continue
            offered = _offered(trajectory, step)
            for fact in step.facts.tools:
                if fact.ok or fact.arguments is None or _unknown(offered, fact):
                    continue
                if (fact.error and _ARGUMENTS.search(fact.error)) or schema_error(trajectory, fact) is not None:
                    continue  # the arguments' fault: invalid_arguments
                failures += 1
                confidence = self.config["repeated_confidence" if failures > 1 else "confidence"]
                hinted = " (the result carried a hint)" if fact.hinted else ""
                evidence = f"{fact.name} failed: {short(fact.error or '', 120)}{hinted}"
                labels.append(self.make_label(step, confidence, evidence))
                break
        return labels


class RepeatedToolCallLabeler(ToolLabeler):
    """The same call (name and arguments) made again after it already returned the very same result,
    and changing nothing: the model learned nothing from the first answer and did nothing new. A call
    that changed the env's state (``ToolCallFacts.changed_state``: BFCL's second ``cd ..``, a ``cd temp``
    after one, a tau2 write the database shows) did something, whatever it returned; where the env
    does not say, a call is read as changing nothing. Nor is a call asked again after a call in between
    changed the env's state a repeat: the first answer was about another state (BFCL's ``pwd()`` five
    turns and some writes later)."""

    name: ClassVar[str] = "repeated_tool_call"
    mode: ClassVar[str] = FailureMode.repeated_tool_call.value
    version: ClassVar[int] = 3  # 2: a call that changed the env's state is no repeat; 3: nor one after such a call
    narrows: ClassVar[tuple[str, ...]] = (FailureMode.loop.value,)
    defaults: ClassVar[dict[str, Any]] = {"confidence": 0.9}

    def label(self, trajectory: Trajectory) -> list[Label]:
        seen: dict[tuple[str, str], int] = {}
        labels: list[Label] = []
        for step in trajectory.steps:
            results = call_results(trajectory, step)
            for fact in step.facts.tools:
                result = results.get(fact.call_id or "")
                if result is None:
                    continue
                key = (canonical_call(fact), _CELL_NAME.sub("<cell>", result))
                first = seen.get(key)
                if first is not None and first != step.index and not fact.changed_state:
                    evidence = (
                        f"{short(key[0], 80)} repeats step {first} and got the same result again: "
                        f"'{short(result, 60)}'"
                    )
                    labels.append(self.make_label(step, self.config["confidence"], evidence))
                    break
                seen.setdefault(key, step.index)
            if any(fact.changed_state for fact in step.facts.tools):
                # the env is no longer what the earlier calls saw: asking it again is no repeat
                seen = {key: index for key, index in seen.items() if index == step.index}
        return labels


def tool_steps(trajectory: Trajectory) -> list[Step]:
    """Steps that made at least one call."""
    return [step for step in trajectory.steps if step.tool_calls or step.facts.tools]
