"""Simulated household mistakes for the scripted teacher: searching implausible places and
naming objects that do not exist. Only the simulation uses this; the env knows nothing of it."""

from __future__ import annotations

import random

from prefbuild.envs.household import catalog, priors
from prefbuild.envs.household.env import HouseholdEnv


def failure_action(env: HouseholdEnv, mode: str, rng: random.Random) -> str | None:
    """A command from the current state that shows ``mode``: an implausible search place, or a
    command naming an object that does not exist. None for modes the household cannot show."""
    if mode == "implausible_location":
        return _implausible_location(env, rng)
    if mode == "invalid_action":
        return _hallucinated(env, rng)
    return None

def _needed_receptacles(env: HouseholdEnv) -> set[int]:
    e = env.engine
    goal = e.goal
    needed = set(e.dest_receptacles)
    needed.update(e.where[o] for o in (*e.target_objects, *e.lamps) if e.where[o] >= 0)
    if goal.state is not None:
        needed.update(e.c.receptacles_of_type(catalog.STATE_RULES[goal.state][1]))
    return needed

def _implausible_location(env: HouseholdEnv, rng: random.Random) -> str | None:
    """``go to``/``open`` a receptacle where the goal object is implausible and the task has no use."""
    e = env.engine
    c = e.c
    needed = _needed_receptacles(env)
    commands = []
    for r, r_type in enumerate(c.r_type):
        if r in needed or priors.is_plausible(e.goal.object_type, r_type):
            continue
        if c.r_loc[r] != e.loc:
            commands.append(c.cmd_goto[r])
        elif c.r_openable[r] and not e.opened[r]:
            commands.append(c.cmd_open[r])
    return rng.choice(sorted(commands)) if commands else None

def _hallucinated(env: HouseholdEnv, rng: random.Random) -> str:
    """A command naming an object that does not exist (``take knife 7 from countertop 1``)."""
    e = env.engine
    c = e.c
    kinds = sorted({e.goal.object_type, *catalog.ROOM_OBJECTS[c.scene.room]})
    kind = e.goal.object_type if rng.random() < 0.6 else rng.choice(kinds)
    fake = f"{kind} {len(c.objects_of_type(kind)) + rng.randint(1, 5)}"
    here = [c.r_name[r] for r in c.loc_receps[e.loc]] or [rng.choice(c.r_name)]
    recep = rng.choice(here)
    if e.held >= 0:
        return rng.choice(
            (f"examine {fake}", f"use {fake}", f"heat {fake} with {recep}", f"clean {fake} with {recep}")
        )
    put = f"move {fake} to {recep}" if e.modern else f"put {fake} in/on {recep}"
    return rng.choice((f"take {fake} from {recep}", f"take {fake} from {recep}", put, f"examine {fake}"))
