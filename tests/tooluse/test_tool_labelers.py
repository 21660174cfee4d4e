"""Tool labelers on hand-built records: each fires on its failure with checkable evidence and
stays quiet on the clean counterpart (native structured calls and Hermes text alike)."""

from __future__ import annotations

import json

import pytest

from prefbuild.labelers import build_labelers, label_trajectory
from prefbuild.labelers.base import Labeler, ParamError
from prefbuild.labelers.tools.calls import RepeatedToolCallLabeler
from prefbuild.labelers.tools.length import OverlongLabeler
from prefbuild.records import (
    EnvInfo,
    FunctionCall,
    Label,
    Message,
    Outcome,
    Step,
    StepFacts,
    TaskInfo,
    TeacherInfo,
    ToolCall,
    ToolCallFacts,
    Trajectory,
    Usage,
)
from prefbuild.tooluse.hermes import render_tool_turn

TOOLS = [{"type": "function", "function": {"name": "code_interpreter", "parameters": {
    "type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"],
    "additionalProperties": False}}}]


def call(code: object, *, id_: str = "c0", name: str = "code_interpreter") -> ToolCall:
    return ToolCall(id=id_, function=FunctionCall(name=name, arguments=json.dumps(code)))


def tool_step(index: int, calls: list[ToolCall], results: list[str], *, ok=True, error=None, native=True,
              shown: list[Message] | None = None) -> Step:
    facts = [ToolCallFacts(call_id=c.id, name=c.function.name, arguments=json.loads(c.function.arguments),
                           ok=ok, error=error) for c in calls]
    return Step(index=index, observation="", observation_messages=shown, raw_output="" if native else
                render_tool_turn(calls), tool_calls=calls, native_tool_calls=native, facts=StepFacts(tools=facts),
                feedback="\n".join(results), valid=ok)


def results_of(calls: list[ToolCall], texts: list[str]) -> list[Message]:
    return [Message(role="tool", content=text, tool_call_id=c.id, name=c.function.name)
            for c, text in zip(calls, texts, strict=True)]


def answer_step(index: int, text: str, *, won: bool, shown: list[Message] | None = None) -> Step:
    return Step(index=index, observation="" if shown else "task", observation_messages=shown, raw_output=text,
                facts=StepFacts(final=True, won=won), done=True, valid=True, feedback="graded")


def trajectory(steps: list[Step], *, success: bool, env: str = "code") -> Trajectory:
    steps[0] = steps[0].model_copy(update={"observation": "Compute 6*7.", "observation_messages": None})
    return Trajectory(
        id="t", task=TaskInfo(id="x", type="arithmetic", goal="6*7", split="train"),
        env=EnvInfo(name=env, protocol="hermes"), teacher=TeacherInfo(backend="openai", model="m"),
        tools=TOOLS, steps=steps,
        outcome=Outcome(success=success, stop_reason="success" if success else "agent_finished"),
    )


def labels(record: Trajectory) -> dict[int, dict[str, str]]:
    labelled = label_trajectory(record, build_labelers(None, record.env.name))
    return {s.index: {label.mode: label.evidence for label in s.labels} for s in labelled.steps if s.labels}


def test_clean_native_episode_has_no_labels() -> None:
    c = call({"code": "print(6*7)"})
    steps = [tool_step(0, [c], ["42"]), answer_step(1, "The answer is \\boxed{42}.", won=True,
                                                     shown=results_of([c], ["42"]))]
    assert labels(trajectory(steps, success=True)) == {}


def test_unknown_tool_invalid_arguments_and_tool_error() -> None:
    unknown, bad, raises = call({"code": "1"}, name="python"), call({"script": "1"}, id_="c1"), call({"code": "x"})
    steps = [
        tool_step(0, [unknown], ["Error: unknown tool 'python'"], ok=False, error="unknown tool 'python'; available"),
        tool_step(1, [bad], ["Error"], ok=False, error="arguments: 'code' is a required property"),
        tool_step(2, [raises], ["NameError"], ok=False, error="NameError: name 'x' is not defined"),
        answer_step(3, "\\boxed{42}", won=True),
    ]
    found = labels(trajectory(steps, success=True))
    assert set(found[0]) == {"unknown_tool"} and "'python'" in found[0]["unknown_tool"]
    assert "code_interpreter" in found[0]["unknown_tool"]  # the offered tools are named
    assert set(found[1]) == {"invalid_arguments"} and "'code' is a required property" in found[1]["invalid_arguments"]
    assert set(found[2]) == {"tool_error"} and "NameError" in found[2]["tool_error"]


def test_schema_is_checked_even_when_the_env_accepted_the_call() -> None:
    loose = call({"code": "print(1)", "timeout": 5})
    steps = [tool_step(0, [loose], ["1"]), answer_step(1, "\\boxed{1}", won=True)]
    found = labels(trajectory(steps, success=True))
    assert "Additional properties" in found[0]["invalid_arguments"]


def test_repeated_call_needs_the_same_result_again() -> None:
    first, again = call({"code": "print(6*7)"}, id_="a"), call({"code": "print(6 * 7)"}, id_="b")
    same = call({"code": "print(6*7)"}, id_="c")
    steps = [tool_step(0, [first], ["42"]), tool_step(1, [again], ["42"], shown=results_of([first], ["42"])),
             tool_step(2, [same], ["42"], shown=results_of([again], ["42"])),
             answer_step(3, "\\boxed{42}", won=True, shown=results_of([same], ["42"]))]
    found = labels(trajectory(steps, success=True))
    assert set(found) == {2} and "repeats step 0" in found[2]["repeated_tool_call"]


def test_a_call_asked_again_after_the_state_changed_is_no_repeat() -> None:
    # Seen on Qwen3-4B-Instruct-2507's BFCL miss_param results (multi_turn_miss_param_6): pwd() in
    # turn 0, files written since, pwd() again five turns later to check where a write went. The env had
    # changed since the first answer, so the same answer again is news; a repeat with nothing changed
    # in between is still one.
    pwd, write, again, last = (call({"code": "pwd"}, id_=i) for i in ("a", "b", "c", "d"))
    written = tool_step(1, [write], ["None"], shown=results_of([pwd], ["/gorilla"]))
    written.facts.tools[0].changed_state = True
    steps = [tool_step(0, [pwd], ["/gorilla"]), written,
             tool_step(2, [again], ["/gorilla"], shown=results_of([write], ["None"])),
             tool_step(3, [last], ["/gorilla"], shown=results_of([again], ["/gorilla"])),
             answer_step(4, "\\boxed{42}", won=True, shown=results_of([last], ["/gorilla"]))]
    found = RepeatedToolCallLabeler().label(trajectory(steps, success=True))
    assert [(label.step, "repeats step 2" in label.evidence) for label in found] == [(3, True)]


def test_malformed_hallucinated_no_tool_use_and_wrong_answer() -> None:
    broken = Step(index=0, observation="", raw_output='<tool_call>\n{"name": "code_interpreter", "arguments": {"code"',
                  facts=StepFacts(problems=["unclosed <tool_call>", "tool call is not valid JSON"]), format_ok=False,
                  valid=False, feedback="No executable tool calls found.")
    made_up = answer_step(1, "<tool_response>\n41\n</tool_response>\nThe answer is \\boxed{41}.", won=False)
    found = labels(trajectory([broken, made_up], success=False))
    assert "unclosed <tool_call>" in found[0]["malformed_tool_call"]
    assert "tool response itself" in found[1]["hallucinated_tool_output"]
    assert "without a single tool call" in found[1]["no_tool_use"]
    assert "graded wrong" in found[1]["wrong_answer"]
    # A quoted result that no tool returned.
    c = call({"code": "print(6*7)"})
    quoted = answer_step(1, "The code printed 43, so the answer is \\boxed{43}.", won=False,
                         shown=results_of([c], ["42"]))
    found = labels(trajectory([tool_step(0, [c], ["42"]), quoted], success=False))
    assert "'43'" in found[1]["hallucinated_tool_output"] and "no_tool_use" not in found[1]


def test_a_bfcl_response_that_tried_calls_and_could_not_be_decoded_is_a_malformed_call() -> None:
    # Seen on Qwen3-4B-Instruct-2507's BFCL prompting results (multi_turn_base_3): three call lists on
    # three lines; BFCL logged "Error decoding the model response" and ended the turn. The bfcl importer
    # records that problem only where the response attempted calls, so it names a broken call, the
    # narrow mode, not a generic format violation.
    raw = ('[mkdir(dir_name="backup_tests")]  \n[cp(source="test_image1.jpg", destination="backup_tests")]  \n'
           '[cp(source="test_document.txt", destination="backup_tests")]')
    problem = "Error decoding the model response: invalid syntax (<unknown>, line 2)"
    undecoded = Step(index=0, observation="q", raw_output=raw, format_ok=False, valid=True,
                     facts=StepFacts(problems=[problem]))
    found = labels(trajectory([undecoded], success=False, env="bfcl"))
    assert set(found) == {0} and set(found[0]) == {"malformed_tool_call"}
    assert "no call could be read" in found[0]["malformed_tool_call"]
    # A plain-text answer BFCL could not decode either carries no such problem (the importer reads it
    # as a message): nothing to label.
    answer = Step(index=0, observation="q", raw_output="The files are in ./projects/photography.", valid=True)
    assert labels(trajectory([answer], success=False, env="bfcl")) == {}


def test_no_tool_use_only_where_the_recipe_requires_tools() -> None:
    found = labels(trajectory([answer_step(0, "\\boxed{42}", won=True)], success=True))
    assert set(found) == {0} and set(found[0]) == {"no_tool_use"} and "(correct)" in found[0]["no_tool_use"]
    assert labels(trajectory([answer_step(0, "\\boxed{42}", won=True)], success=True, env="bfcl")) == {}


def test_overlong_grades_the_soft_buffer() -> None:
    labeler = OverlongLabeler(budget_tokens=100, buffer_tokens=20)

    def grade(tokens: int, finish: str = "stop") -> float | None:
        step = Step(index=0, observation="q", raw_output="x", usage=Usage(completion_tokens=tokens),
                    facts=StepFacts(finish_reason=finish))
        found = labeler.label(trajectory([step], success=False))
        return found[0].confidence if found else None

    assert [grade(n) for n in (70, 80, 90, 95, 100, 400)] == [None, None, 0.5, 0.75, 1.0, 1.0]
    assert grade(10, "length") == 1.0
    with pytest.raises(ParamError, match="buffer_tokens"):
        OverlongLabeler(budget_tokens=10, buffer_tokens=10)


def test_a_trajectory_edited_between_two_labellings_is_scanned_again() -> None:
    record = trajectory([answer_step(0, "go to drawer 1", won=False), answer_step(1, "done", won=False)],
                        success=False, env="household")
    record.tools = None
    first = label_trajectory(record, build_labelers(None, "household"))
    assert "unknown_tool" not in {label.mode for step in first.steps for label in step.labels}
    unknown = call({"code": "1"}, name="python")
    record.steps[0].tool_calls = [unknown]  # the same object, now with a call to a tool nobody offered
    record.steps[0].facts = StepFacts(tools=[ToolCallFacts(call_id="c0", name="python", arguments={"code": "1"},
                                                           ok=False, error="unknown tool 'python'")])
    relabelled = label_trajectory(record, build_labelers(None, "household"))
    assert "unknown_tool" in {label.mode for label in relabelled.steps[0].labels}


class _Generic(Labeler):
    name = "generic_probe"
    mode = "invalid_action"

    def label(self, trajectory: Trajectory) -> list[Label]:
        return [self.make_label(step, 0.9, "generic") for step in trajectory.steps]


class _Narrow(Labeler):
    name = "narrow_probe"
    mode = "tool_error"
    narrows = ("invalid_action",)

    def label(self, trajectory: Trajectory) -> list[Label]:
        return [self.make_label(0, 0.9, "narrow")]


def test_a_mistake_is_named_once_by_its_narrowest_mode() -> None:
    c = call({"code": "x"})
    record = trajectory([tool_step(0, [c], ["NameError"], ok=False, error="NameError"),
                         answer_step(1, "\\boxed{42}", won=True)], success=True)
    both = label_trajectory(record, [_Generic(), _Narrow()])
    assert [[label.mode for label in step.labels] for step in both.steps] == [["tool_error"], ["invalid_action"]]
    alone = label_trajectory(record, [_Generic()])  # without the narrower labeler the generic label stays
    assert [[label.mode for label in step.labels] for step in alone.steps] == [["invalid_action"], ["invalid_action"]]


def test_every_tool_mode_that_narrows_names_a_generic_mode() -> None:
    from prefbuild.labelers import BUILTIN_LABELERS, available_labelers

    generic = {cls.mode for cls in BUILTIN_LABELERS.values()}
    narrowing = {cls.name: cls.narrows for cls in available_labelers().values() if cls.narrows}
    assert narrowing == {
        "malformed_tool_call": ("format_violation",), "unknown_tool": ("invalid_action",),
        "invalid_arguments": ("invalid_action",), "tool_error": ("invalid_action",),
        "repeated_tool_call": ("loop",), "tool_wrong_answer": ("premature_success",),
        "overlong": ("verbose_filler",),
    }
    assert all(set(modes) <= generic for modes in narrowing.values())


def test_a_call_of_a_tool_not_yet_offered_is_unknown_even_when_the_env_ran_it() -> None:
    # BFCL runs a held-out function called before its turn; the tools of each step say what was offered.
    later = {"type": "function", "function": {"name": "sort", "parameters": {"type": "object"}}}
    early_sort, sort_again = call({}, name="sort", id_="a"), call({"file": "b"}, name="sort", id_="b")
    steps = [tool_step(0, [early_sort], ["sorted"]), tool_step(1, [sort_again], ["sorted"]),
             answer_step(2, "\\boxed{42}", won=True)]
    steps[1] = steps[1].model_copy(update={"offered_tools": [*TOOLS, later]})
    steps = [steps[0].model_copy(update={"offered_tools": TOOLS}), *steps[1:]]
    record = trajectory(steps, success=True).model_copy(update={"tools": [*TOOLS, later]})
    found = labels(record)
    assert set(found) == {0} and "not offered (the env ran it)" in found[0]["unknown_tool"]
    assert "offered: code_interpreter" in found[0]["unknown_tool"]


def _message(index: int, text: str) -> Step:
    return Step(index=index, observation="", raw_output=text, action=None, feedback="ok", valid=True)


def test_courtesy_to_a_person_is_not_filler_but_stacked_filler_is() -> None:
    from prefbuild.labelers.verbose_filler import VerboseFillerLabeler

    c = call({"code": "1"})
    steps = [tool_step(0, [c], ["1"]), _message(1, "Thanks, John. Your order is cancelled. Have a great day!"),
             _message(2, "Absolutely! I'd be happy to help! Great question! Your refund is on its way.")]
    for env, expected in (("tau2", [2]), ("code", [1, 2])):  # code's answers go to a grader, not a person
        record = trajectory(list(steps), success=False, env=env)
        found = [label.step for label in VerboseFillerLabeler().label(record)]
        assert found == expected, env
    # A preface to a tool call is not a message to the person.
    preface = tool_step(0, [c], ["1"]).model_copy(update={"raw_output": "Great! " + render_tool_turn([c])})
    record = trajectory([preface], success=False, env="tau2")
    assert [label.step for label in VerboseFillerLabeler().label(record)] == [0]


def test_the_same_lookup_after_a_change_is_no_loop() -> None:
    from prefbuild.labelers.loop import LoopLabeler

    pending, cancelled = '{"status": "pending"}', '{"status": "cancelled"}'
    lookup = '{"name": "code_interpreter", "arguments": {"code": "print(status)"}}'
    cancel = '{"name": "code_interpreter", "arguments": {"code": "cancel()"}}'
    replies = [(lookup, pending), (cancel, cancelled), (lookup, cancelled), (lookup, cancelled)]
    steps = [tool_step(i, [call({"code": "x"}, id_=f"c{i}")], [reply]).model_copy(update={"action": action})
             for i, (action, reply) in enumerate(replies)]
    found = [label.step for label in LoopLabeler(k=2).label(trajectory(steps, success=False, env="tau2"))]
    # The lookup after the cancel reads a changed order (though the cancel had shown it); the next one
    # brings the same JSON as the lookup before it.
    assert found == [3]


def test_a_failed_conversation_its_user_ended_is_premature_only_where_the_agent_said_it_was_done() -> None:
    from prefbuild.labelers.premature_success import PrematureSuccessLabeler

    c = call({"code": "1"})
    for text, labelled in (("All set! I've moved your trip to the 14th.", True),
                           ("I'm sorry, I can't change a basic economy ticket under our policy.", False),
                           ("Your reservation has been cancelled and the refund is on its way.", True),
                           ("I've updated the address; however, I was unable to process the refund.", False),
                           # the customer declined: the agent says so, it claims no work done
                           ("Understood. Nothing has been changed on your reservation. Have a great day!", False),
                           ("No refund has been issued, as the ticket is non-refundable.", False),
                           ("Are you all set?", False),
                           ("I have transferred you to a human agent. Please hold on.", False)):
        last = Step(index=1, observation="", raw_output=text, action=None, feedback="###STOP###", valid=True, done=True)
        record = trajectory([tool_step(0, [c], ["1"]), last], success=False, env="tau2")
        found = PrematureSuccessLabeler().label(record)
        assert bool(found) is labelled, text


def test_a_broken_tool_call_is_no_message_to_the_person() -> None:
    from prefbuild.envs.tau2.protocol import Tau2Protocol
    from prefbuild.labelers.verbose_filler import VerboseFillerLabeler

    # A Hermes call the parser could not read: no tool_calls, but the turn was a call, not a message
    # (tau2 never shows it to the customer; the model is told the turn was unreadable).
    text = 'Great! <tool_call>{"name": "code_interpreter", "arguments": {"code": </tool_call>'
    parsed = Tau2Protocol().parse(text)
    assert parsed.problems and not parsed.format_ok
    broken = Step(index=0, observation="", raw_output=text, thought=parsed.thought, action=parsed.action,
                  format_ok=parsed.format_ok, feedback="Error: no tool call", valid=False,
                  facts=StepFacts(problems=list(parsed.problems)))
    record = trajectory([broken], success=False, env="tau2")
    assert [label.step for label in VerboseFillerLabeler().label(record)] == [0]
