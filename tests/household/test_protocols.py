"""Household prompt protocols: exact prompt strings, parsers on literal replies, harness rules."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefbuild.envs.base import EnvTask, ParsedOutput
from prefbuild.envs.household.protocols import PROTOCOLS
from prefbuild.envs.household.protocols.agentbench import INSTRUCTION as AGENTBENCH_INSTRUCTION
from prefbuild.envs.household.protocols.agentbench import AgentBenchProtocol
from prefbuild.envs.household.protocols.bleu import bleu_score, snap_to_admissible
from prefbuild.envs.household.protocols.common import benchmark_intro, strip_arrival, task_kind
from prefbuild.envs.household.protocols.eto import INSTRUCTION as ETO_INSTRUCTION
from prefbuild.envs.household.protocols.eto import EtoProtocol
from prefbuild.envs.household.protocols.react import ReActProtocol
from prefbuild.envs.household.protocols.toolcall import INSTRUCTION as TOOLCALL_INSTRUCTION
from prefbuild.envs.household.protocols.toolcall import ToolCallProtocol
from prefbuild.records import TaskInfo

RAW_INTRO = (
    "-= Welcome to TextWorld, ALFRED! =-\n\n"
    "You are in the middle of a room. Looking quickly around you, you see a cabinet 2, a cabinet 1, "
    "a countertop 1, a fridge 1, and a microwave 1.\n\n"
    "Your task is to: heat some apple and put it in countertop."
)
BENCH_INTRO = (
    "You are in the middle of a room. Looking quickly around you, you see a cabinet 2, a cabinet 1, "
    "a countertop 1, a fridge 1, and a microwave 1.\n"
    "Your task is to: heat some apple and put it in countertop."
)
ADMISSIBLE = ["go to cabinet 1", "go to cabinet 2", "go to countertop 1", "go to fridge 1", "inventory", "look"]
TASK = EnvTask(info=TaskInfo(id="t0", type="pick_heat_then_place_in_recep", goal="heat some apple", split="train"))


def test_registry_maps_all_four_names() -> None:
    assert set(PROTOCOLS) == {"agentbench", "react", "eto", "toolcall"}
    for name, protocol_class in PROTOCOLS.items():
        assert protocol_class.name == name


# --------------------------------------------------------------------------------------
# shared text conventions


def test_benchmark_intro_drops_banner_and_is_idempotent() -> None:
    assert benchmark_intro(RAW_INTRO) == BENCH_INTRO
    assert benchmark_intro(BENCH_INTRO) == BENCH_INTRO


def test_strip_arrival_only_touches_the_classic_prefix() -> None:
    assert strip_arrival("You arrive at loc 8. On the countertop 1, you see a apple 1.") == (
        "On the countertop 1, you see a apple 1."
    )
    modern = "You arrive at countertop 1. On the countertop 1, you see nothing."
    assert strip_arrival(modern) == modern


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("pick_and_place_simple", "put"),
        ("pick_two_obj_and_place", "puttwo"),
        ("look_at_obj_in_light", "examine"),
        ("json_2.1.1/valid_unseen/pick_cool_then_place_in_recep-Pan-None-StoveBurner-20/trial_T1", "cool"),
        ("heat", "heat"),
    ],
)
def test_task_kind(name: str, kind: str) -> None:
    assert task_kind(name) == kind


def test_task_kind_rejects_unknown_names() -> None:
    with pytest.raises(ValueError, match="unknown household task type"):
        task_kind("slice_then_juggle")


# --------------------------------------------------------------------------------------
# AgentBench v0.2


def test_agentbench_instruction_is_verbatim() -> None:
    assert AGENTBENCH_INSTRUCTION.startswith("Interact with a household to solve a task. Imagine you are")
    assert 'format:"THOUGHT: your thoughts.\n ACTION: your next action\n"; If you choose "ACTION"' in (
        AGENTBENCH_INSTRUCTION
    )
    assert AGENTBENCH_INSTRUCTION.endswith(
        "will be regarded as illegal. \n2. Think when necessary, try to act directly more in the process.\n\n"
    )
    assert len(AGENTBENCH_INSTRUCTION) == 1334
    digest = hashlib.sha256(AGENTBENCH_INSTRUCTION.encode()).hexdigest()
    assert digest == "45929e9d559a3203522a9577663bb229d668a8a6d0eca07eb6224dca7177c6c6"


def test_agentbench_turns_and_history_cut() -> None:
    protocol = AgentBenchProtocol()
    first = protocol.observation_turn(RAW_INTRO, first=True, task=TASK, admissible=ADMISSIBLE)
    assert first == "Here is your task. " + BENCH_INTRO + " AVAILABLE ACTIONS: " + "\n".join(ADMISSIBLE) + "\n"
    later = protocol.observation_turn(
        "You arrive at loc 3. The fridge 1 is closed.", first=False, task=TASK, admissible=["open fridge 1"]
    )
    assert later == "The fridge 1 is closed. AVAILABLE ACTIONS: open fridge 1\n"
    # The harness keeps everything before the marker, including the space.
    assert protocol.history_turn(later) == "The fridge 1 is closed. "
    assert protocol.history_turn(first) == "Here is your task. " + BENCH_INTRO + " "


def test_agentbench_prefix_without_fewshot() -> None:
    messages = AgentBenchProtocol(fewshot=False).prefix_messages(TASK)
    assert [m.role.value for m in messages] == ["user", "assistant"]
    assert messages[0].content == AGENTBENCH_INSTRUCTION
    assert messages[1].content == "OK. I'll follow your instructions and try my best to solve the task."


@pytest.mark.parametrize(
    ("text", "thought", "action", "format_ok", "problems"),
    [
        ("ACTION: go to fridge 1", None, "go to fridge 1", True, ()),
        ("ACTION: go to fridge 1\n", None, "go to fridge 1", True, ()),
        ("THOUGHT: I need an apple.\n ACTION: go to fridge 1\n", "I need an apple.", "go to fridge 1", True, ()),
        ("Action: go to fridge 1", None, "go to fridge 1", False, ("wrong action tag 'Action:'",)),
        ("action: go to fridge 1", None, "go to fridge 1", False, ("wrong action tag 'action:'",)),
        ("Act: go to fridge 1", None, "go to fridge 1", False, ("wrong action tag 'Act:'",)),
        ("ACTION: go to fridge 1\nACTION: open fridge 1", None, "go to fridge 1", False, ("2 action lines",)),
        ("I will go.", "I will go.", None, False, ("no action line",)),
        ("```\nACTION: go to fridge 1\n```", None, "go to fridge 1", False, ("markdown fence",)),
        ("ACTION:", None, None, False, ("empty action",)),
        (
            "Let me think.\nACTION: look",
            "Let me think.",
            "look",
            False,
            ("text before the action without a 'THOUGHT:' tag",),
        ),
        ("Thought: hmm\nACTION: look", "hmm", "look", False, ("wrong thought tag 'Thought:'",)),
        ("ACTION: look\nThis is my reasoning.", None, "look", False, ("text after the action line",)),
    ],
)
def test_agentbench_parse(
    text: str, thought: str | None, action: str | None, format_ok: bool, problems: tuple[str, ...]
) -> None:
    parsed = AgentBenchProtocol().parse(text)
    assert (parsed.thought, parsed.action, parsed.format_ok, parsed.problems) == (thought, action, format_ok, problems)


def test_agentbench_tolerances_are_recorded() -> None:
    parsed = AgentBenchProtocol().parse("ACTION: > go to fridge 1.")
    assert parsed.action == "go to fridge 1"
    assert parsed.format_ok
    assert parsed.normalized == ("leading '> '", "trailing period")
    lower = AgentBenchProtocol().parse("action: look")
    assert "action tag 'action:' read as 'ACTION:'" in lower.normalized


@pytest.mark.parametrize("text", ["ACTION: Task succeeded.", "ACTION: task succeeded", "ACTION: TASK SUCCEEDED!"])
def test_agentbench_completion_claim_is_final(text: str) -> None:
    assert AgentBenchProtocol().parse(text).final


def test_agentbench_final_turn_and_render_round_trip() -> None:
    protocol = AgentBenchProtocol()
    final = protocol.final_turn()
    assert final == "ACTION: Task succeeded."
    assert protocol.parse(final).final
    rendered = protocol.render("open fridge 1", "The fridge is closed.")
    assert rendered == "THOUGHT: The fridge is closed.\n ACTION: open fridge 1"
    parsed = protocol.parse(rendered)
    assert (parsed.thought, parsed.action, parsed.format_ok) == ("The fridge is closed.", "open fridge 1", True)
    assert protocol.render("look") == "ACTION: look"


def test_agentbench_executed_action_snaps_like_the_harness() -> None:
    protocol = AgentBenchProtocol()
    assert protocol.executed_action("Go To Fridge 1", ADMISSIBLE) == "go to fridge 1"
    assert protocol.executed_action("go to the fridge 1", ADMISSIBLE) == "go to fridge 1"
    assert protocol.executed_action("go to cabinet 3", ADMISSIBLE) == "go to cabinet 1"  # first of the ties
    # No shared word at all: BLEU is 0, the lower-cased text is sent (and yields Nothing happens.).
    assert protocol.executed_action("Task succeeded.", ADMISSIBLE) == "task succeeded."
    assert protocol.executed_action("Open Fridge 1", None) == "open fridge 1"
    assert protocol.unparsed_reply(protocol.parse("no tag")) is None


def test_agentbench_stop_rule_needs_more_than_three_turns() -> None:
    protocol = AgentBenchProtocol()
    assert protocol.stop_reason(["ACTION: look"] * 3) is None
    assert protocol.stop_reason(["ACTION: inventory"] + ["ACTION: look"] * 3) is not None
    assert protocol.stop_reason(["ACTION: look", "ACTION: look", "ACTION: inventory", "ACTION: look"]) is None


# Reference values computed with NLTK 3.10.4: sentence_bleu([ref.split()], cand.split(),
# smoothing_function=SmoothingFunction().method4) -- the call AgentBench makes.
NLTK_BLEU = [
    ("go to fridge 1", "go to fridge 1", 1.0),
    ("go to fridge 1", "go to the fridge 1", 0.17141814854755813),
    ("look", "task succeeded.", 0.0),
    ("take apple 1 from countertop 1", "take apple from countertop", 0.14429214010467267),
    ("go to cabinet 10", "go to cabinet 1", 0.43146827293898643),
    ("inventory", "check inventory", 0.06754436142034707),
    ("put mug 1 in/on coffeemachine 1", "put mug 1 in coffeemachine 1", 0.293945703509473),
    ("go to fridge 1", "", 0.0),
    ("examine mug 1", "mug", 0.1353352832366127),
    ("take in/on the sinkbasin", "examine take", 0.02484818193359921),
    ("in/on use with cabinet", "use with a examine 3 to", 0.09717716588732002),
    ("look look 1 with put", "mug mug 1 to examine look", 0.044706344276931285),
    ("go use the countertop with put close", "task countertop cabinet sinkbasin", 0.028830051881449627),
]


@pytest.mark.parametrize(("reference", "candidate", "expected"), NLTK_BLEU)
def test_bleu_matches_nltk_method4(reference: str, candidate: str, expected: float) -> None:
    assert bleu_score(reference, candidate) == expected


def test_snap_threshold_is_strict() -> None:
    # "inventory" vs "check inventory" scores 0.0675 > 0.01: snapped. A higher threshold keeps the text.
    assert snap_to_admissible("check inventory", ["inventory", "look"]) == "inventory"
    assert snap_to_admissible("check inventory", ["inventory", "look"], threshold=0.07) == "check inventory"


# --------------------------------------------------------------------------------------
# ReAct


def test_react_turns() -> None:
    protocol = ReActProtocol()
    assert protocol.observation_turn(RAW_INTRO, first=True, task=TASK) == "Here is the task.\n" + BENCH_INTRO
    assert protocol.observation_turn("You arrive at loc 2. The fridge 1 is closed.", first=False, task=TASK) == (
        "The fridge 1 is closed."
    )
    prefix = ReActProtocol(fewshot=False).prefix_messages(TASK)
    assert [(m.role.value, m.content) for m in prefix] == [
        ("system", "Interact with a household to solve a task. Here are two examples.\n")
    ]


@pytest.mark.parametrize(
    ("text", "thought", "action", "format_ok", "normalized"),
    [
        ("go to fridge 1", None, "go to fridge 1", True, ()),
        (" go to fridge 1", None, "go to fridge 1", True, ()),
        ("> go to fridge 1", None, "go to fridge 1", True, ("leading '> '",)),
        ("go to fridge 1.", None, "go to fridge 1", True, ("trailing period",)),
        ("think: First I need to find an apple.", "First I need to find an apple.", None, True, ()),
        ("> think: plan", "plan", None, True, ("leading '> '",)),
        ("Think: plan", "plan", None, False, ("thought tag 'Think:' read as 'think:'",)),
        ("Action: open fridge 1", None, "open fridge 1", False, ("action tag 'Action:' dropped",)),
    ],
)
def test_react_parse(
    text: str, thought: str | None, action: str | None, format_ok: bool, normalized: tuple[str, ...]
) -> None:
    parsed = ReActProtocol().parse(text)
    assert (parsed.thought, parsed.action, parsed.format_ok, parsed.normalized) == (
        thought,
        action,
        format_ok,
        normalized,
    )


def test_react_reads_only_the_first_line_and_answers_thoughts_with_ok() -> None:
    protocol = ReActProtocol()
    parsed = protocol.parse("think: I need the fridge.\n> go to fridge 1")
    assert parsed.thought == "I need the fridge." and parsed.action is None
    assert parsed.problems == ("2 lines; ReAct reads only the first",)
    assert protocol.unparsed_reply(parsed) == "OK."
    assert protocol.unparsed_reply(protocol.parse("")) == "Nothing happens."
    assert protocol.render("go to fridge 1", "ignored") == "go to fridge 1"
    assert protocol.render_thought("plan") == "think: plan"
    assert protocol.executed_action("go to fridge 1", ADMISSIBLE) == "go to fridge 1"


# --------------------------------------------------------------------------------------
# ETO


def test_eto_instruction_keeps_its_typos() -> None:
    assert len(ETO_INSTRUCTION) == 1249
    assert "2. task {obj} from {recep}\n" in ETO_INSTRUCTION
    assert "6. toggle {obj} {recep}\n" in ETO_INSTRUCTION
    assert 'format:"Thought: your thoughts.\\nAction: your next action".' in ETO_INSTRUCTION
    assert ETO_INSTRUCTION.endswith("Thought: <your thoughts>\nAction: <your next action>")


def test_eto_turns() -> None:
    protocol = EtoProtocol()
    assert protocol.observation_turn(RAW_INTRO, first=True, task=TASK) == BENCH_INTRO
    assert protocol.observation_turn("You arrive at loc 2. The fridge 1 is closed.", first=False, task=TASK) == (
        "Observation: The fridge 1 is closed."
    )
    prefix = EtoProtocol(fewshot=False).prefix_messages(TASK)
    assert [(m.role.value, m.content) for m in prefix] == [("user", ETO_INSTRUCTION), ("assistant", "OK")]


@pytest.mark.parametrize(
    ("text", "thought", "action", "format_ok", "problems"),
    [
        (
            "Thought: The fridge may hold it.\nAction: go to fridge 1",
            "The fridge may hold it.",
            "go to fridge 1",
            True,
            (),
        ),
        ("Action: go to fridge 1", None, "go to fridge 1", False, ("missing 'Thought:'",)),
        (
            "THOUGHT: x\nACTION: look",
            "x",
            "look",
            False,
            ("wrong thought tag 'THOUGHT:'", "wrong action tag 'ACTION:'"),
        ),
        ("Thought: x\nAct: look", "x", "look", False, ("wrong action tag 'Act:'",)),
        ("Thought: only thinking", "only thinking", None, False, ("no action line",)),
        ("Thought: x\nAction: look\nAction: inventory", "x", "look", False, ("2 action lines",)),
        (
            "**Thought:** x\n**Action:** look",
            "x",
            "look",
            False,
            ("wrong thought tag '**Thought:**'", "wrong action tag '**Action:**'"),
        ),
    ],
)
def test_eto_parse(
    text: str, thought: str | None, action: str | None, format_ok: bool, problems: tuple[str, ...]
) -> None:
    parsed = EtoProtocol().parse(text)
    assert (parsed.thought, parsed.action, parsed.format_ok, parsed.problems) == (thought, action, format_ok, problems)


def test_eto_error_reply_and_render() -> None:
    protocol = EtoProtocol()
    assert protocol.unparsed_reply(protocol.parse("I am lost")) == (
        "Observation: Error Input. Your input must contains 'Action: '"
    )
    rendered = protocol.render("open fridge 1", "It is closed.")
    assert rendered == "Thought: It is closed.\nAction: open fridge 1"
    assert protocol.parse(rendered).format_ok


# --------------------------------------------------------------------------------------
# AgentBench function calling


def test_toolcall_prompt_and_tools() -> None:
    protocol = ToolCallProtocol()
    assert protocol.observation_role == "tool"
    prefix = protocol.prefix_messages(TASK)
    assert [(m.role.value, m.content) for m in prefix] == [("system", TOOLCALL_INSTRUCTION)]
    assert "to complete) the task goal" in TOOLCALL_INSTRUCTION
    tools = protocol.tools()
    assert tools is not None and len(tools) == 1
    function = tools[0]["function"]
    assert function["name"] == "take_action"
    assert function["parameters"]["properties"]["action"]["type"] == "string"
    assert function["parameters"]["required"] == ["action"]
    first = protocol.observation_turn(RAW_INTRO, first=True, task=TASK, admissible=ADMISSIBLE)
    assert first.startswith("Here is your task. " + BENCH_INTRO + " AVAILABLE ACTIONS: go to cabinet 1\n")
    later = protocol.observation_turn("Nothing happens.", first=False, task=TASK, admissible=["look"])
    assert later == "Nothing happens. AVAILABLE ACTIONS: look\n"
    assert protocol.history_turn(later) == later


@pytest.mark.parametrize(
    ("text", "action", "format_ok", "problems"),
    [
        (
            '<tool_call>\n{"name": "take_action", "arguments": {"action": "go to fridge 1"}}\n</tool_call>',
            "go to fridge 1",
            True,
            (),
        ),
        ('<tool_call>{"name": "take_action", "arguments": {"action": "look"}}</tool_call>', "look", True, ()),
        (
            '<tool_call>{"name": "take_action", "arguments": {"action": "look"}}',
            "look",
            False,
            ("unclosed <tool_call>",),
        ),
        (
            '{"name": "take_action", "arguments": {"action": "look"}}',
            "look",
            False,
            ("tool call without <tool_call> tags",),
        ),
        ('<tool_call>{"name": "take_action", "arguments": "{\\"action\\": \\"look\\"}"}</tool_call>', "look", True, ()),
        (
            '<tool_call>{"name": "act", "arguments": {"command": "look"}}</tool_call>',
            "look",
            False,
            ("unknown tool 'act'", "argument 'command' instead of 'action'"),
        ),
        ("<tool_call>{not json}</tool_call>", None, False, ("tool call is not valid JSON", "no tool call")),
        ("I will look around.", None, False, ("no tool call",)),
        (
            '<tool_call>{"name": "take_action", "arguments": {"action": "look"}}</tool_call>'
            '<tool_call>{"name": "take_action", "arguments": {"action": "inventory"}}</tool_call>',
            "look",
            False,
            ("2 tool calls",),
        ),
    ],
)
def test_toolcall_parse(text: str, action: str | None, format_ok: bool, problems: tuple[str, ...]) -> None:
    parsed = ToolCallProtocol().parse(text)
    assert (parsed.action, parsed.format_ok, parsed.problems) == (action, format_ok, problems)


def test_toolcall_thinking_render_and_replies() -> None:
    protocol = ToolCallProtocol()
    call = '<tool_call>\n{"name": "take_action", "arguments": {"action": "go to fridge 1"}}\n</tool_call>'
    text = "<think>\nThe apple may be in the fridge.\n</think>\n\n" + call
    parsed = protocol.parse(text)
    assert (parsed.thought, parsed.action, parsed.format_ok) == (
        "The apple may be in the fridge.",
        "go to fridge 1",
        True,
    )
    opened_by_template = protocol.parse(
        'plan first</think>\n<tool_call>{"name": "take_action", "arguments": {"action": "look"}}</tool_call>'
    )
    assert (opened_by_template.thought, opened_by_template.action) == ("plan first", "look")
    rendered = protocol.render("open fridge 1", "It is closed.")
    assert (
        rendered
        == 'It is closed.\n<tool_call>\n{"name": "take_action", "arguments": {"action": "open fridge 1"}}\n</tool_call>'
    )
    assert protocol.parse(rendered).action == "open fridge 1"
    assert protocol.unparsed_reply(protocol.parse("hi")) == "No executable tool calls found. Please call a tool instead"
    assert protocol.executed_action("Go to the fridge 1", ADMISSIBLE) == "go to fridge 1"
    assert protocol.final_turn() is None


def test_toolcall_stop_rule_compares_call_arguments() -> None:
    protocol = ToolCallProtocol()
    same = [protocol.render("look", f"thought {i}") for i in range(4)]
    assert protocol.stop_reason(same) is not None  # different thoughts, same action argument
    assert protocol.stop_reason(same[:3]) is None
    assert protocol.stop_reason([*same[:3], protocol.render("inventory")]) is None
    assert protocol.stop_reason([*same[:3], "no call"]) is None


# --------------------------------------------------------------------------------------
# every parser, every string


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
@settings(deadline=None, max_examples=150)
@given(
    text=st.text(alphabet=st.characters(codec="utf-8"), max_size=200)
    | st.sampled_from(
        ["ACTION:", "Action:\n", "<tool_call>", "<tool_call></tool_call>", "```", "> ", "think:", "\x00ACTION: \x00"]
    )
)
def test_parsers_never_raise(name: str, text: str) -> None:
    protocol = PROTOCOLS[name]()
    parsed = protocol.parse(text)
    assert isinstance(parsed, ParsedOutput)
    assert parsed.format_ok == (not parsed.problems)
    if parsed.action is None:
        assert protocol.unparsed_reply(parsed) is None or isinstance(protocol.unparsed_reply(parsed), str)
    else:
        assert parsed.action == parsed.action.strip() and parsed.action
        protocol.executed_action(parsed.action, ADMISSIBLE)


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
@settings(deadline=None, max_examples=60)
@given(action=st.sampled_from([*ADMISSIBLE, "put apple 1 in/on countertop 1", "take mug 2 from cabinet 3"]))
def test_render_parse_round_trip(name: str, action: str) -> None:
    protocol = PROTOCOLS[name]()
    thought = None if name == "react" else "I know what to do."
    parsed = protocol.parse(protocol.render(action, thought))
    assert parsed.action == action
    assert parsed.format_ok
    assert not parsed.final
