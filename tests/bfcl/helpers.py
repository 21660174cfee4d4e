"""Drive the bfcl env directly and score its trajectories with BFCL's own checker."""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from prefbuild.envs.base import StepResult
from prefbuild.envs.bfcl.data import BfclEntry, load_ground_truth
from prefbuild.envs.bfcl.env import BfclEnv, task_of
from prefbuild.simulation.bfcl_mistakes import failure_action
from prefbuild.tooluse.actions import decode_action

Policy = Callable[[BfclEnv, int], str | None]


@dataclass
class Episode:
    """What a driven episode did: the actions, results and, per user turn, the calls of each step."""

    actions: list[str] = field(default_factory=list)
    results: list[StepResult] = field(default_factory=list)
    turns: list[list[list[str]]] = field(default_factory=lambda: [[]])

    @property
    def last(self) -> StepResult:
        return self.results[-1]


def bfcl_call_text(name: str, arguments: dict) -> str:
    """A JSON tool call as BFCL's FC decoder writes it (``convert_to_function_call``)."""
    return f"{name}({','.join(f'{key}={value!r}' for key, value in arguments.items())})"


def expert_policy(env: BfclEnv, index: int) -> str | None:
    return env.expert_action()


def mistake_policy(mode: str, at: int, seed: int = 0) -> Policy:
    """The expert, except at step ``at`` (or the first later step where ``mode`` applies)."""
    rng = random.Random(seed)
    state = {"done": False}

    def policy(env: BfclEnv, index: int) -> str | None:
        if not state["done"] and index >= at:
            action = failure_action(env, mode, rng)
            if action is not None:
                state["done"] = True
                return action
        return env.expert_action()

    return policy


def play(env: BfclEnv, entry: BfclEntry, policy: Policy, limit: int = 400) -> Episode:
    """Reset ``env`` to ``entry`` and step it with ``policy`` until done."""
    episode = Episode()
    env.reset(task_of(entry))
    for index in range(limit):
        action = policy(env, index)
        assert action is not None, f"{entry.id}: no action at step {index}"
        result = env.step(action)
        episode.actions.append(action)
        episode.results.append(result)
        decoded = decode_action(action)
        if decoded.calls:
            episode.turns[-1].append(
                [bfcl_call_text(call.function.name, json.loads(call.function.arguments)) for call in decoded.calls]
            )
        elif not result.done:
            episode.turns.append([])
        if result.done:
            return episode
    raise AssertionError(f"{entry.id}: not done after {limit} steps")


def bfcl_verdict(entry: BfclEntry, episode: Episode) -> dict:
    """BFCL's own ``multi_turn_checker`` (its ``eval`` executor included) on the episode's calls.

    Test-only: it replays trusted, already-validated call text, as BFCL's evaluation does.
    """
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker

    ground_truth = load_ground_truth(entry.category)[entry.id].ground_truth
    if len(episode.turns) != len(ground_truth):
        return {"valid": False, "error_type": "multi_turn:force_terminated"}
    test_entry = entry.model_dump()
    model_name = f"prefbuild_test_{uuid.uuid4().hex}"
    try:
        return multi_turn_checker(episode.turns, ground_truth, test_entry, f"multi_turn_{entry.category}", model_name)
    finally:
        # BFCL keeps its instances in its module globals; drop this run's.
        for key in [key for key in vars(multi_turn_utils) if key.startswith(model_name)]:
            delattr(multi_turn_utils, key)
