"""Pair drafts give exactly the pairs ``make_pair`` gives, and their shortcuts the plain results.

The built-in ``stepwise`` and ``style`` strategies hand the pipeline ``PairDraft`` objects: the
id, hash and checks of a pair, its records built only for the pairs kept. Each shortcut is held
to the computation it replaces: a draft's ``pair()`` to ``make_pair`` on ``prompt_messages``,
``plainly_valid`` to ``Pair`` itself (it may only vouch for what ``Pair`` accepts, unchanged),
the draft spool form to the draft's record, ``source_json`` to ``canonical_json``, and the
integer bottom-k rank to the byte tuples it replaced.
"""

from __future__ import annotations

import random

import pytest
from pydantic import ValidationError

from prefbuild.io.jsonl import JsonlWriter
from prefbuild.pairs.base import InvalidPair
from prefbuild.pairs.common import (
    PairDraft,
    PromptView,
    TrajectoryPrompts,
    canonical_json,
    draft_pair,
    make_pair,
    plainly_valid,
    source_json,
)
from prefbuild.pairs.postprocess import _neg, _spooled, _unspooled
from prefbuild.pairs.strategies.stepwise import StepwiseStrategy
from prefbuild.pairs.strategies.style import StyleStrategy
from prefbuild.records import (
    FailureMode,
    FunctionCall,
    Message,
    Pair,
    PairSource,
    Role,
    ToolCall,
    Trajectory,
    prompt_messages,
)
from tests.pairs.household import cached


@pytest.fixture(scope="module")
def episodes() -> tuple[Trajectory, ...]:
    return cached(tasks=8, samples=1, seed=11)


def _drafts(trajectories) -> list[tuple[Trajectory, PairDraft]]:
    found = []
    for strategy in (StepwiseStrategy(chosen="template"), StyleStrategy()):
        for trajectory in trajectories:
            found += [(trajectory, draft) for draft in strategy.drafts(trajectory)]
    return found


def _same(left: Pair, right: Pair) -> bool:
    return left.model_dump() == right.model_dump() and JsonlWriter.encode(left) == JsonlWriter.encode(right)


def test_drafts_build_what_make_pair_builds(episodes):
    drafts = _drafts(episodes)
    assert len({draft.strategy for _, draft in drafts}) == 2
    for trajectory, draft in drafts:
        built = draft.pair()
        expected = make_pair(
            built.strategy, prompt=prompt_messages(trajectory, built.source.step), chosen=built.chosen,
            rejected=built.rejected, source=built.source, reason=built.reason, evidence=built.evidence,
            scores=built.scores, tools=built.tools,
        )  # fmt: skip
        assert _same(built, expected) and draft.id == expected.id
        assert draft.pair() is built  # built once


def test_a_spooled_draft_reads_back_as_its_pair(episodes):
    for _, draft in _drafts(episodes)[:40]:
        data, form = _spooled(draft)
        assert form == "draft"
        assert _same(_unspooled(data, form), draft.pair())


def _view(messages: list[Message]) -> PromptView:
    return PromptView.of_messages(messages)


CALL = ToolCall(id="call_1", function=FunctionCall(name="lookup", arguments='{"q": "é \\"x\\""}'))
PROMPTS: dict[str, list[Message]] = {
    "plain": [Message(role=Role.system, content="Be brief."), Message(role=Role.user, content="Task é 🙂\x00\n")],
    "tools": [
        Message(role=Role.user, content="find it"),
        Message(role=Role.assistant, content="", tool_calls=[CALL]),
        Message(role=Role.tool, content='{"rows": []}', tool_call_id="call_1", name="lookup"),
    ],
    "ends_with_assistant": [Message(role=Role.user, content="hi"), Message(role=Role.assistant, content="x")],
    "tool_calls_off_assistant": [Message.model_construct(role=Role.user, content="u", tool_calls=[CALL])],
    "empty": [],
}
TURNS: dict[str, list[Message]] = {
    "one": [Message(role=Role.assistant, content="ACTION: go to desk 1")],
    "other": [Message(role=Role.assistant, content="ACTION: look")],
    "named": [Message(role=Role.assistant, content="ACTION: look", name="model")],
    "tool_call": [Message(role=Role.assistant, content="", tool_calls=[CALL])],
    "two": [Message(role=Role.assistant, content="a"), Message(role=Role.assistant, content="b")],
    "user": [Message(role=Role.user, content="ACTION: look")],
    "with_system": [Message(role=Role.assistant, content="a"), Message(role=Role.system, content="s"),
                    Message(role=Role.assistant, content="b")],
    "empty": [],
}  # fmt: skip
EXTRAS: list[dict] = [
    {},
    {"reason": FailureMode.loop},
    {"reason": "not_a_mode"},
    {"reason": None, "evidence": None, "scores": None},
    {"evidence": 3},
    {"scores": {"confidence": 1}},
    {"scores": {"confidence": float("nan")}},
    {"scores": {"confidence": -0.0, "margin": 1e300}},
    {"tools": [{"type": "function", "function": {"name": "f", "parameters": {"x": (1, 2.5)}}}]},
    {"tools": [{1: "x"}]},
    {"tools": ({"type": "function"},)},
]


def _cases():
    rng = random.Random(5)
    for prompt in PROMPTS:
        for chosen in TURNS:
            for rejected in rng.sample(list(TURNS), 3):
                yield prompt, chosen, rejected, rng.choice(EXTRAS)
    for extra in EXTRAS:
        yield "plain", "one", "other", extra


@pytest.mark.parametrize(("prompt", "chosen", "rejected", "extra"), list(_cases()))
def test_plainly_valid_vouches_only_for_what_pair_accepts(prompt, chosen, rejected, extra):
    source = PairSource(trajectory_id="t", step=2, task_id="k", env="household", teacher_model="m")
    fields = {"reason": "loop", "evidence": "seen", "scores": {"confidence": 0.5}, "tools": None, **extra}
    arguments = {"prompt": PROMPTS[prompt], "chosen": TURNS[chosen], "rejected": TURNS[rejected], "source": source,
                 **fields}  # fmt: skip
    try:
        expected: Pair | str = make_pair("stepwise", **arguments)
    except InvalidPair as refused:
        expected = refused.why
    try:
        draft = draft_pair("stepwise", **{**arguments, "prompt": _view(PROMPTS[prompt])})
    except InvalidPair as refused:
        assert refused.why == expected
        return
    assert isinstance(expected, Pair) and draft.id == expected.id
    assert _same(draft.pair(), expected)
    candidate = {"id": draft.id, "strategy": "stepwise", "chosen": TURNS[chosen], "rejected": TURNS[rejected],
                 "source": source, **fields}  # fmt: skip
    if plainly_valid(_view(PROMPTS[prompt]), candidate):
        Pair(prompt=PROMPTS[prompt], **candidate)  # must not raise


def test_plainly_valid_refuses_nothing_it_cannot_check():
    source = PairSource(trajectory_id="t", task_id="k", env="e", teacher_model="m")
    fields = {"id": "pair-1", "strategy": "stepwise", "chosen": TURNS["one"], "rejected": TURNS["other"],
              "source": source, "reason": "loop", "evidence": None, "scores": None, "tools": None}  # fmt: skip
    assert plainly_valid(_view(PROMPTS["plain"]), fields)
    for name, value in [("reason", "plugin_mode"), ("scores", {"x": 1}), ("chosen", TURNS["one"][0]),
                        ("source", source.model_dump()), ("strategy", "")]:  # fmt: skip
        assert not plainly_valid(_view(PROMPTS["plain"]), {**fields, name: value})
    with pytest.raises(ValidationError):
        Pair(prompt=PROMPTS["plain"], **{**fields, "strategy": ""})


@pytest.mark.parametrize(
    "values",
    [
        {},
        {"step": 0, "task_type": "pick", "chosen_trajectory_id": "t2"},
        {"trajectory_id": 'q"uote\\ \n\t\x00\x1f \u2028 é 中文 🙂', "env": "", "step": 10**20},
    ],
)
def test_source_json_is_canonical_json(values):
    source = PairSource(**{"trajectory_id": "t", "task_id": "k", "env": "e", "teacher_model": "m", **values})
    assert source_json(source) == canonical_json(source.model_dump())
    odd = PairSource.model_construct(**{**source.model_dump(), "step": True})  # not a plain int: the slow way
    assert source_json(odd) == canonical_json(odd.model_dump())


def test_integer_ranks_order_as_the_byte_tuples_they_replaced():
    rng = random.Random(3)
    ranks = [f"{rng.getrandbits(128):032x}" for _ in range(300)] + ["0" * 32, "f" * 32, "0" * 31 + "1"]
    by_bytes = sorted(ranks, key=lambda rank: tuple(-b for b in bytes.fromhex(rank)))
    assert sorted(ranks, key=_neg) == by_bytes


def test_window_json_and_last_role_follow_prompt_messages(episodes):
    for trajectory in episodes:
        prompts = TrajectoryPrompts(trajectory)
        for index in reversed(range(len(trajectory.steps))):
            view, expected = prompts.window(index), prompt_messages(trajectory, index)
            assert view.json == _view(expected).json and view.last_role == expected[-1].role and view.plain
            assert [m.model_dump() for m in view.messages()] == [m.model_dump() for m in expected]
