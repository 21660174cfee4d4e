"""Expert trajectories of the tau2 env against tau2's own evaluator, per domain.

Plays every task of a package split with the env's expert and the scripted user, and prints
per domain: tasks, tasks with an expert, expert successes, and each exception with tau2's
reward breakdown. As a check that the verdicts discriminate, it also plays each task with a
"null agent" that closes the conversation at once, and prints how many of those pass (only
tasks whose expected actions are empty should).
Usage: python bench/tau2_expert_verdicts.py [split] [domain ...]
"""

from __future__ import annotations

import sys
import time

from prefbuild.envs.tau2.env import Tau2Env
from prefbuild.envs.tau2.goals import CLOSING
from prefbuild.envs.tau2.package import DOMAINS
from prefbuild.tooluse.actions import encode_action

MAX_TURNS = 80


def play(env: Tau2Env, task) -> dict | None:
    env.reset(task)
    for _ in range(MAX_TURNS):
        action = env.expert_action()
        if action is None:
            return None
        result = env.step(action)
        if result.done:
            return result.info["tau2"]
    return {"success": False, "termination": "turn limit", "reward_info": {}}


def play_null(env: Tau2Env, task) -> bool:
    env.reset(task)
    result = env.step(encode_action(message=CLOSING))
    return bool(result.done and result.info["tau2"]["success"])


def main() -> None:
    split = sys.argv[1] if len(sys.argv) > 1 else "base"
    domains = sys.argv[2:] or list(DOMAINS)
    for domain in domains:
        env = Tau2Env(domain=domain)
        start = time.perf_counter()
        tasks = list(env.tasks(split, 10_000, 0))
        with_expert = successes = null_passes = no_action_tasks = 0
        exceptions = []
        for task in tasks:
            null_passes += play_null(env, task)
            no_action_tasks += task.info.meta["expected_actions"] == 0
            verdict = play(env, task)
            if verdict is None:
                exceptions.append((task.info.id, "no expert (evaluation_criteria.actions is None)"))
                continue
            with_expert += 1
            if verdict["success"]:
                successes += 1
            else:
                info = verdict["reward_info"]
                exceptions.append((task.info.id, f"reward {verdict.get('reward')} {verdict['termination']} "
                                   f"breakdown={info.get('reward_breakdown')} info={info.get('info')}"))
        elapsed = time.perf_counter() - start
        print(f"{domain}/{split}: {len(tasks)} tasks, {with_expert} with expert, {successes} expert successes, "
              f"null agent passes {null_passes} (tasks without expected actions: {no_action_tasks}), "
              f"{elapsed / max(len(tasks), 1):.2f} s/task (both plays)")
        for task_id, why in exceptions:
            print(f"  exception {task_id}: {why[:600]}")


if __name__ == "__main__":
    main()
