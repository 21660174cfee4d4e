"""Household env throughput: environment steps per second on one core.

Usage: ``python bench/env_steps.py [--tasks 300] [--walk 40] [--seed 0]``

* random walk: each step asks for the admissible commands and plays one at random;
* expert: each step asks the oracle for its command and plays it (episodes run to the win);
* searching: the same with the handcoded-style searching expert.

Task generation is timed separately and not counted in the step rates.
"""

from __future__ import annotations

import argparse
import random
import time

from prefbuild.envs.household.env import HouseholdEnv


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=300)
    parser.add_argument("--walk", type=int, default=40, help="random-walk steps per task")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    env = HouseholdEnv()
    started = time.perf_counter()
    tasks = list(env.tasks("train", args.tasks, args.seed))
    print(f"generate: {len(tasks)} tasks in {time.perf_counter() - started:.2f}s")

    rng = random.Random(args.seed)
    steps, started = 0, time.perf_counter()
    for task in tasks:
        env.reset(task)
        for _ in range(args.walk):
            env.step(rng.choice(env.admissible_actions()))
            steps += 1
    elapsed = time.perf_counter() - started
    print(f"random walk: {steps} steps in {elapsed:.2f}s = {steps / elapsed:,.0f} steps/s (resets included)")

    for kind in ("oracle", "searching"):
        env = HouseholdEnv(expert=kind)
        steps, wins, started = 0, 0, time.perf_counter()
        for task in tasks:
            env.reset(task)
            for _ in range(200):
                result = env.step(env.expert_action() or "look")
                steps += 1
                if result.done:
                    wins += 1
                    break
        elapsed = time.perf_counter() - started
        print(
            f"{kind} expert: {steps} steps in {elapsed:.2f}s = {steps / elapsed:,.0f} steps/s, "
            f"won {wins}/{len(tasks)} (resets and the initial plan length included)"
        )


if __name__ == "__main__":
    main()
