"""Experts: the next good command from any reachable state of an ``Engine``.

* ``oracle`` knows where everything is. It recomputes its sub-goal from the state every step
  (like ALFWorld's handcoded expert), so it recovers from anything an agent did: it puts back a
  wrong object, re-heats an object that was cooled, keeps a half-finished "two objects" delivery.
  Its choices use location-independent tie-breaks, so it never oscillates between two targets.
* ``searching`` knows only what the agent has seen (``Engine.seen``) and otherwise searches
  like the handcoded expert (spec section 7): receptacles that can hold the wanted type first,
  in reverse intro order, opening closed ones and closing them again when the search moves on.

``plan_length`` plays an expert forward on a snapshot to count the steps it still needs.
"""

from __future__ import annotations

from collections.abc import Callable

from prefbuild.envs.household import catalog
from prefbuild.envs.household.engine import CompiledScene, Engine

ORACLE = "oracle"
SEARCHING = "searching"
EXPERTS: tuple[str, ...] = (ORACLE, SEARCHING)
DEFAULT_LIMIT = 400

_Known = Callable[[Engine, int], bool]


def expert_action(engine: Engine, kind: str = ORACLE, close_after_search: bool = True) -> str | None:
    """The expert's next command, or None once the task is won."""
    if engine.won:
        return None
    if kind == ORACLE:
        return _Planner(engine, None, close_after_search).next()
    if kind == SEARCHING:
        return _Planner(engine, _seen, close_after_search).next()
    raise ValueError(f"unknown household expert {kind!r}; known: {', '.join(EXPERTS)}")


def plan_length(engine: Engine, kind: str = ORACLE, limit: int = DEFAULT_LIMIT) -> int | None:
    """How many commands the expert needs from the current state to win (0 when won), or None
    when it does not win within ``limit`` steps. The engine is left exactly as it was."""
    if engine.won:
        return 0
    saved = engine.snapshot()
    try:
        for steps in range(1, limit + 1):
            command = expert_action(engine, kind)
            if command is None:
                return None
            _, valid = engine.step(command)
            if not valid:
                return None
            if engine.won:
                return steps
        return None
    finally:
        engine.restore(saved)


def _seen(engine: Engine, o: int) -> bool:
    r = engine.where[o]
    return r >= 0 and engine.seen[r]


def _search_order(c: CompiledScene, type_name: str) -> tuple[int, ...]:
    """Receptacles in the order the handcoded expert visits them looking for ``type_name``: the
    intro list with compatible receptacles moved to its end, visited from the end. Memoised on
    the compiled scene, so the memo lives exactly as long as the scene."""
    order = c.search_orders.get(type_name)
    if order is None:
        holders = catalog.receptacles_for(type_name)
        indices = range(len(c.r_name))
        ordered = [r for r in indices if c.r_type[r] not in holders] + [r for r in indices if c.r_type[r] in holders]
        order = c.search_orders[type_name] = tuple(reversed(ordered))
    return order


class _Planner:
    """One decision. ``known`` limits which object positions the expert may use (None: all)."""

    def __init__(self, engine: Engine, known: _Known | None, close_after_search: bool) -> None:
        self.e = engine
        self.c = engine.c
        self.known = known
        self.close_after_search = close_after_search

    # --- building blocks -----------------------------------------------------------------------------

    def is_known(self, o: int) -> bool:
        return self.e.where[o] >= 0 and (self.known is None or self.known(self.e, o))

    def reach(self, r: int) -> int:
        """Commands needed before receptacle ``r`` is here and visible."""
        cost = 0 if self.c.r_loc[r] == self.e.loc else 1
        if self.c.r_openable[r] and not self.e.opened[r]:
            cost += 1
        return cost

    def access(self, r: int) -> str | None:
        """The next command towards standing at ``r`` with it open, or None when already there."""
        if self.c.r_loc[r] != self.e.loc:
            return self.c.cmd_goto[r]
        if self.c.r_openable[r] and not self.e.opened[r]:
            return self.c.cmd_open[r]
        return None

    def put(self, o: int, r: int) -> str:
        if self.e.modern:
            return f"move {self.c.o_name[o]} to {self.c.r_name[r]}"
        return f"put {self.c.o_name[o]} in/on {self.c.r_name[r]}"

    def has_state(self, o: int) -> bool:
        state = self.e.goal.state
        if state is None:
            return True
        return {"clean": self.e.clean, "hot": self.e.hot, "cool": self.e.cool}[state][o]

    def pick_receptacle(self, candidates: list[int]) -> int:
        if self.known is None:
            return min(candidates, key=lambda r: (self.reach(r), r))
        # The handcoded expert takes the last receptacle of the type in intro order (lowest number).
        return min(candidates, key=lambda r: (self.c.r_loc[r] != self.e.loc, -r))

    def pick_tool(self, candidates: list[int]) -> int:
        # One here if possible, else the first of the type in intro order (as the handcoded expert).
        return min(candidates, key=lambda r: (self.c.r_loc[r] != self.e.loc, r))

    # --- sub-goals ---------------------------------------------------------------------------

    def next(self) -> str:
        task = self.e.goal.task_type
        if task == "look_at_obj_in_light":
            command = self.look()
        elif task == "pick_two_obj_and_place":
            command = self.put_two()
        else:
            command = self.place()
        if command is None:  # the searching expert has seen everything: fall back to full knowledge
            command = _Planner(self.e, None, self.close_after_search).next()
        return command

    def holds_target(self) -> bool:
        h = self.e.held
        return h >= 0 and self.c.o_type[h] == self.e.goal.object_type

    def drop(self) -> str:
        """Put a useless held object somewhere that accepts it (it came from one, so one exists)."""
        c, e = self.c, self.e
        h = e.held
        h_type = c.o_type[h]
        here = c.loc_receps[e.loc]
        for r in here:
            if e.visible(r) and h_type in c.r_can_contain[r]:
                return self.put(h, r)
        for r in here:
            if c.r_openable[r] and h_type in c.r_can_contain[r]:
                return c.cmd_open[r]
        holders = [r for r in range(len(c.r_name)) if h_type in c.r_can_contain[r]]
        return c.cmd_goto[min(holders, key=lambda r: (self.reach(r), r))]

    def fetch(self, skip_receptacle: int = -1) -> str | None:
        """Go to, open, or take the best reachable target object (none from ``skip_receptacle``)."""
        e, c = self.e, self.c
        candidates = [o for o in e.target_objects if self.is_known(o) and e.where[o] != skip_receptacle]
        if not candidates:
            return self.explore(self.e.goal.object_type)
        best = min(candidates, key=lambda o: (self.reach(e.where[o]) + (0 if self.has_state(o) else 2), o))
        r = e.where[best]
        return self.access(r) or f"take {c.o_name[best]} from {c.r_name[r]}"

    def explore(self, type_name: str | None) -> str | None:
        """Searching only: the next step of the handcoded search for ``type_name``."""
        if self.known is None or type_name is None:
            return None
        e, c = self.e, self.c
        if self.close_after_search:
            for r in c.loc_receps[e.loc]:
                if c.r_openable[r] and e.opened[r]:
                    return c.cmd_close[r]
        for r in _search_order(c, type_name):
            if e.seen[r]:
                continue
            if c.r_loc[r] != e.loc:
                return c.cmd_goto[r]
            if c.r_openable[r] and not e.opened[r]:
                return c.cmd_open[r]
            return c.cmd_examine_r[r]
        return None

    def place(self) -> str | None:
        """put / clean / heat / cool: fetch, apply the state if needed, deliver."""
        e, c, goal = self.e, self.c, self.e.goal
        if self.e.held < 0:
            return self.fetch()
        if not self.holds_target():
            return self.drop()
        h = e.held
        if not self.has_state(h):
            _, tool_type, verb = catalog.STATE_RULES[goal.state or ""]
            tool = self.pick_tool(c.receptacles_of_type(tool_type))
            if c.r_loc[tool] != e.loc:
                return c.cmd_goto[tool]
            return f"{verb} {c.o_name[h]} with {c.r_name[tool]}"
        dest = self.pick_receptacle(e.dest_receptacles)
        return self.access(dest) or self.put(h, dest)

    def put_two(self) -> str | None:
        """Two different objects into the same receptacle: fill the one that already has the most."""
        e = self.e
        targets = frozenset(e.target_objects)

        def count(r: int) -> int:
            if self.known is not None and not e.seen[r]:
                return 0
            return sum(1 for o in e.contents[r] if o in targets)

        if self.known is None:
            dest = min(e.dest_receptacles, key=lambda r: (-count(r), r))
        else:
            dest = min(e.dest_receptacles, key=lambda r: (-count(r), -r))
        if e.held < 0:
            return self.fetch(skip_receptacle=dest)
        if not self.holds_target():
            return self.drop()
        return self.access(dest) or self.put(e.held, dest)

    def look(self) -> str | None:
        """Hold the object, then stand by a lamp of the right type and switch it on."""
        e, c = self.e, self.c
        if e.held < 0:
            return self.fetch()
        if not self.holds_target():
            return self.drop()
        lamps = [lamp for lamp in e.lamps if self.is_known(lamp)]
        for lamp in lamps:
            if c.r_loc[e.where[lamp]] == e.loc:
                return f"use {c.o_name[lamp]}"
        if not lamps:
            return self.explore(e.goal.toggle_type)
        best = min(lamps, key=lambda lamp: (not e.toggled[lamp], lamp))
        return c.cmd_goto[e.where[best]]
