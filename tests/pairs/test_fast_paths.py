"""The pair stage's shortcuts give exactly what the plain computation gives.

Each shortcut is checked against an independent computation: the content hash against the
canonical JSON of ``model_dump`` written out with the standard library, the replay cursor
against a replay from reset at every step, the spooled bottom-k sample against an
in-memory sort by rank.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from prefbuild.pairs.common import content_hash, make_pair, source_for, validated_content_hash
from prefbuild.pairs.postprocess import BottomK, rank
from prefbuild.pairs.replay import ReplayCursor, replay
from prefbuild.records import FunctionCall, Message, Pair, Role, ToolCall, Trajectory
from tests.pairs.household import cached


def reference_hash(prompt: list[Message], chosen: list[Message], rejected: list[Message]) -> str:
    """``content_hash`` as its docstring defines it, from ``model_dump`` and ``json.dumps``."""
    payload = {
        name: [message.model_dump(mode="json", exclude_none=True) for message in turns]
        for name, turns in (("prompt", prompt), ("chosen", chosen), ("rejected", rejected))
    }
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    hasher = hashlib.blake2b(digest_size=16)
    hasher.update(text.encode("utf-8"))
    hasher.update(b"\x1f")
    return hasher.hexdigest()


def test_content_hash_matches_the_canonical_json_of_every_field():
    call = ToolCall(id="call_1", function=FunctionCall(name="lookup", arguments='{"q": "é \\"x\\""}'))
    prompt = [
        Message(role=Role.system, content="You are\ta helper.\u2028"),
        Message(role=Role.user, content="Bonjour, ça va? \x01 \\ \"quoted\"", name="alice"),
        Message(role=Role.assistant, content="", tool_calls=[call]),
        Message(role=Role.tool, content="{\"rows\": []}", tool_call_id="call_1", name="lookup"),
    ]
    chosen = [Message(role=Role.assistant, content="ACTION: look")]
    rejected = [Message(role=Role.assistant, content="ACTION: look around 🙂")]
    for _ in range(2):  # the second time, plain turns come from the cache
        assert content_hash(prompt, chosen, rejected) == reference_hash(prompt, chosen, rejected)
    assert content_hash(prompt, chosen, rejected) != content_hash(prompt, rejected, chosen)


@pytest.fixture(scope="module")
def episodes() -> tuple[Trajectory, ...]:
    return cached(tasks=6, samples=1, seed=7)


def test_replay_cursor_gives_the_env_of_a_replay_from_reset(episodes):
    cursor = ReplayCursor()
    longest = max(episodes, key=lambda t: len(t.steps))
    visits = [
        (longest, list(range(len(longest.steps)))),  # forward
        (longest, [3, 1, 4, 4, 0]),  # backwards and repeated
        *((t, [0, len(t.steps) - 1]) for t in episodes),  # a new episode each time
    ]
    for trajectory, order in visits:
        for upto in order:
            if upto >= len(trajectory.steps):
                continue
            moved, fresh = cursor.at(trajectory, upto), replay(trajectory, upto)
            assert moved.expert_action() == fresh.expert_action()
            assert moved.engine.snapshot() == fresh.engine.snapshot()


def test_make_pair_hands_its_hash_to_the_pipeline_once(episodes):
    trajectory = episodes[0]
    prompt = [Message(role=Role.user, content=trajectory.steps[0].observation)]
    chosen, rejected = [Message(role=Role.assistant, content="a")], [Message(role=Role.assistant, content="b")]
    pair = make_pair("stepwise", prompt=prompt, chosen=chosen, rejected=rejected,
                     source=source_for(trajectory, 0), reason="loop")
    assert validated_content_hash(pair) == reference_hash(prompt, chosen, rejected)
    assert validated_content_hash(pair) is None  # taken: a second look validates again
    assert validated_content_hash(pair.model_copy()) is None


def pairs_for(count: int) -> list[Pair]:
    prompt = [Message(role=Role.user, content="Here is the task.")]
    return [
        Pair(id=f"pair-{number}", strategy="stepwise", prompt=prompt,
             chosen=[Message(role=Role.assistant, content=f"good {number}")],
             rejected=[Message(role=Role.assistant, content=f"bad {number}")],
             reason="loop" if number % 3 else "invalid_action", scores={"confidence": number / 7},
             source={"trajectory_id": f"t{number}", "task_id": f"task{number}", "env": "household",
                     "teacher_model": "scripted-expert"})
        for number in range(count)
    ]


def test_spooled_bottom_k_keeps_the_smallest_ranks_in_arrival_order():
    pairs, k, seed = pairs_for(60), 7, 3
    balancer = BottomK(k, seed)
    fell = [balancer.offer(pair.reason, pair, arrival) for arrival, pair in enumerate(pairs, start=1)]
    kept = list(balancer.drain())
    expected: list[tuple[int, Pair]] = []
    for reason in ("loop", "invalid_action"):
        bucket = [(arrival, pair) for arrival, pair in enumerate(pairs, start=1) if pair.reason == reason]
        expected += sorted(bucket, key=lambda item: rank(item[1], seed))[:k]
    assert kept == sorted(expected, key=lambda item: item[0])  # equal records, read back from the spool
    assert sum(fell) == len(pairs) - 2 * k
