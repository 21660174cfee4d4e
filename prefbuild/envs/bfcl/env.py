"""``bfcl``: BFCL v4 multi-turn tasks on the real ``bfcl-eval`` backends and checker.

An episode plays one task. Each user turn shows one BFCL question; the model answers with tool
calls (run on the episode's own backend instances, results as ``tool`` messages) until it writes
a turn without calls, which ends the user turn: BFCL's per-turn checks then compare the backend
state and the call results with the ground truth, and the next question (or, in ``miss_func``,
the announcement of the newly revealed functions) follows. The episode is won when every scored
turn passes, as BFCL scores it.

Options: ``hints`` (``off`` | ``actionable``) adds what went wrong and what would be valid to
failed calls; ``max_steps_per_turn`` is BFCL's force-quit limit (20).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar, Literal

from prefbuild.envs.base import Env, EnvTask, Protocol, StepResult
from prefbuild.envs.bfcl.backend import ERROR_PREFIX, BfclBackend, CallOutcome
from prefbuild.envs.bfcl.calls import CallRejected, CallSpec, json_call
from prefbuild.envs.bfcl.checker import TurnChecker, TurnVerdict
from prefbuild.envs.bfcl.data import CATEGORIES, BfclEntry, load_entries, load_ground_truth
from prefbuild.envs.bfcl.expert import TURN_DONE, as_tool_call, asking_message, expert_batch, ground_truth_calls
from prefbuild.envs.bfcl.hints import unknown_function_hint
from prefbuild.envs.bfcl.protocol import BfclHermesProtocol, BfclPythonProtocol
from prefbuild.envs.bfcl.tools import entry_tools
from prefbuild.records import Message, Role, StepFacts, TaskInfo, ToolCall, ToolCallFacts
from prefbuild.tooluse.actions import decode_action, encode_action
from prefbuild.tooluse.dispatch import ToolReply, joined_observation

SPLIT = "test"  # every entry of the chosen categories: what BFCL itself scores
TRAIN, HELDOUT = "train", "heldout"  # a fixed half of each category, and the other half
SPLITS = (SPLIT, TRAIN, HELDOUT)
MAX_STEPS_PER_TURN = 20  # BFCL's MAXIMUM_STEP_LIMIT
HintMode = Literal["off", "actionable"]


def new_functions_turn(tools: list[dict[str, Any]]) -> str:
    """The user turn that reveals held-out functions: BFCL's prompting-style text (the new
    definitions, then ``DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC``), so a text protocol
    sees them too; native tool plumbing reads the full list from ``StepResult.info["tools"]``.

    Args:
        tools: OpenAI definitions of the revealed functions.

    Returns:
        The user turn text.
    """
    from bfcl_eval.constants.default_prompts import DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC

    lines = "\n".join(json.dumps(tool, ensure_ascii=False) for tool in tools)
    return f"<tools>\n{lines}\n</tools>\n{DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC}"


def split_entries(entries: Sequence[BfclEntry], split: str) -> list[BfclEntry]:
    """The entries of one category that belong to ``split``, in their order.

    BFCL ships one set of tasks. ``train`` is a fixed half of each category (the entries whose
    ids hash lowest: the same for every seed; a release that adds or removes entries of a category
    moves the cut, so build pairs and evaluate with the same ``bfcl-eval``) and ``heldout`` the
    other half, so pairs built on ``train`` never meet an evaluation on ``heldout``; ``test`` is
    every entry.

    Example:
        >>> entries = load_entries("base")
        >>> train, heldout = split_entries(entries, "train"), split_entries(entries, "heldout")
        >>> len(train) + len(heldout) == len(entries) and not {e.id for e in train} & {e.id for e in heldout}
        True
    """
    if split == SPLIT:
        return list(entries)
    by_hash = sorted(entries, key=lambda entry: hashlib.sha256(entry.id.encode("utf-8")).hexdigest())
    half = len(by_hash) // 2
    chosen = {entry.id for entry in (by_hash[:half] if split == TRAIN else by_hash[half:])}
    return [entry for entry in entries if entry.id in chosen]


def task_of(
    entry: BfclEntry, seed: int | None = None, options: dict[str, Any] | None = None, split: str = SPLIT
) -> EnvTask:
    """The ``EnvTask`` for a BFCL entry.

    Args:
        entry: the BFCL task.
        seed: the sampling seed that chose it.
        options: env options the episode is played with (``hints``, ``max_steps_per_turn``);
            recorded in ``info.meta`` so a replay from the trajectory alone plays it the same way.
        split: the split it was drawn from.

    Returns:
        The task; ``info.type`` is the category, ``info.goal`` the first question.
    """
    first = " ".join(message.content for message in entry.question[0])
    meta = {"category": entry.category, "involved_classes": list(entry.involved_classes), "turns": len(entry.question)}
    meta.update(options or {})
    info = TaskInfo(id=entry.id, type=entry.category, goal=first, split=split, seed=seed, meta=meta)
    return EnvTask(info=info, payload=entry)


class BfclEnv(Env):
    """BFCL v4 multi-turn (``base``, ``miss_func``, ``miss_param``, ``long_context``).

    Args:
        hints: ``off`` (BFCL's own tool results) or ``actionable`` (failed calls also say what
            went wrong and what would be valid; ``ToolCallFacts.hinted`` marks them).
        max_steps_per_turn: model turns with calls allowed per user turn; one more force-quits, as in BFCL.

    Example:
        >>> env = BfclEnv()
        >>> task = next(env.tasks("test", 1, 0, ["base"]))
        >>> observation, info = env.reset(task)
        >>> env.step(env.expert_action()).facts.tools[0].ok
        True
    """

    name: ClassVar[str] = "bfcl"
    task_types: ClassVar[tuple[str, ...]] = CATEGORIES
    default_split: ClassVar[str] = SPLIT
    protocols: ClassVar[dict[str, type[Protocol]]] = {"hermes": BfclHermesProtocol, "python": BfclPythonProtocol}

    def __init__(self, hints: HintMode = "off", max_steps_per_turn: int = MAX_STEPS_PER_TURN) -> None:
        if hints not in ("off", "actionable"):
            raise ValueError(f"bfcl env: hints must be 'off' or 'actionable', got {hints!r}")
        if max_steps_per_turn < 1:
            raise ValueError(f"bfcl env: max_steps_per_turn must be at least 1, got {max_steps_per_turn}")
        self.hints = hints
        self.max_steps_per_turn = max_steps_per_turn
        self._entry: BfclEntry | None = None
        self._done = True

    # -- tasks ----------------------------------------------------------------------------

    def tasks(self, split: str, n: int, seed: int, task_types: Sequence[str] | None = None) -> Iterator[EnvTask]:
        """``n`` tasks of the chosen categories (all four by default), in a seeded order.

        Args:
            split: ``test`` (every entry, as BFCL scores), ``train`` or ``heldout`` (the two
                fixed halves of each category, see ``split_entries``).
            n: how many tasks.
            seed: the shuffle seed.
            task_types: categories to draw from.

        Returns:
            An iterator of tasks.
        """
        if split not in SPLITS:
            raise ValueError(f"bfcl env: unknown split {split!r}; known: {', '.join(SPLITS)}")
        categories = list(task_types or CATEGORIES)
        unknown = [category for category in categories if category not in CATEGORIES]
        if unknown:
            raise ValueError(f"bfcl env: unknown task types {unknown}; known: {', '.join(CATEGORIES)}")
        entries = [entry for category in categories for entry in split_entries(load_entries(category), split)]
        random.Random(seed).shuffle(entries)
        options = {"hints": self.hints, "max_steps_per_turn": self.max_steps_per_turn}
        for entry in entries[:n]:
            yield task_of(entry, seed, options, split)

    # -- episode --------------------------------------------------------------------------

    def reset(self, task: EnvTask) -> tuple[str, dict[str, Any]]:
        """Start ``task``; options recorded in its ``info.meta`` (by ``tasks``) win over the
        constructor's, so replaying a recorded trajectory gives the same tool results."""
        entry = task.payload if isinstance(task.payload, BfclEntry) else self._entry_by_id(task.info.id)
        self.hints = task.info.meta.get("hints", self.hints)
        self.max_steps_per_turn = int(task.info.meta.get("max_steps_per_turn", self.max_steps_per_turn))
        offered, held_out = entry_tools(entry)
        self._entry = entry
        self._held_out = held_out
        self._ground_truth = load_ground_truth(entry.category)[entry.id].ground_truth
        if len(self._ground_truth) != len(entry.question):
            raise ValueError(
                f"bfcl env: {entry.id}: {len(entry.question)} turns but ground truth for {len(self._ground_truth)}"
            )
        self._backend = BfclBackend(
            entry, [tool["function"]["name"] for tool in offered], hints=self.hints == "actionable"
        )
        self._tools = list(offered)
        self._checker = TurnChecker(entry, self._ground_truth)
        self._expert_calls = [ground_truth_calls(texts) for texts in self._ground_truth]
        self._turn = 0
        self._turn_steps = 0
        self._turn_results: list[str] = []
        self._expert_done = 0
        self._verdicts: list[TurnVerdict] = []
        self._hinted_turns: set[int] = set()
        self._calls = 0
        self._done = False
        self._force_quit = False
        self._won = False
        observation = self._question(0)
        return observation, {"turn": 0, "turns": len(entry.question), "tools": self.current_tools()}

    @staticmethod
    def _entry_by_id(task_id: str) -> BfclEntry:
        category = task_id.rsplit("_", 1)[0].removeprefix("multi_turn_")
        for entry in load_entries(category):
            if entry.id == task_id:
                return entry
        raise ValueError(f"bfcl env: unknown task id {task_id!r}")

    def _question(self, turn: int) -> str:
        assert self._entry is not None
        if turn in self._held_out:
            revealed = self._held_out[turn]
            self._backend.offer(tool["function"]["name"] for tool in revealed)
            self._tools.extend(revealed)
            return new_functions_turn(revealed)
        return "\n".join(message.content for message in self._entry.question[turn])

    def current_tools(self) -> list[dict[str, Any]]:
        """The OpenAI tool definitions offered now (grows when held-out functions are revealed)."""
        return json.loads(json.dumps(self._tools))

    def step(self, action: str) -> StepResult:
        if self._done or self._entry is None:
            facts = StepFacts(won=self._won, final=True, problems=["the episode is over"], progress=self.progress())
            return StepResult("The episode is over.", 0.0, True, {"won": self._won}, facts=facts, valid=False)
        decoded = decode_action(action)
        if decoded.calls:
            return self._run_calls(decoded.calls, list(decoded.problems))
        return self._end_turn(list(decoded.problems))

    def _outcome(self, call: ToolCall) -> tuple[CallSpec | None, CallOutcome]:
        try:
            spec = json_call(call.function.name, json.loads(call.function.arguments))
        except (CallRejected, ValueError, RecursionError) as error:
            text = f"rejected call: {error}"
            hint = (
                unknown_function_hint(call.function.name, self._backend.offered) if self.hints == "actionable" else None
            )
            return None, CallOutcome(call.function.name, None, ERROR_PREFIX + text, False, False, text, hint)
        return spec, self._backend.call(spec)

    def _run_calls(self, calls: list[ToolCall], problems: list[str]) -> StepResult:
        replies: list[ToolReply] = []
        for call in calls:
            spec, outcome = self._outcome(call)
            self._note_expert_progress(spec)
            self._turn_results.append(outcome.result)
            self._calls += 1
            if outcome.hint:
                self._hinted_turns.add(self._turn)
            message = Message(role=Role.tool, content=outcome.content, tool_call_id=call.id, name=call.function.name)
            fact = ToolCallFacts(
                call_id=call.id,
                name=call.function.name,
                arguments=outcome.arguments,
                ok=outcome.ok,
                error=outcome.error,
                hinted=outcome.hint is not None,
                # The tools sit in the system prompt, not in the record: say what the labelers cannot see.
                offered=call.function.name in self._backend.offered,
                schema_error=self._backend.schema_problem(spec) if spec is not None and outcome.executed else None,
                changed_state=outcome.changed,
            )
            replies.append(ToolReply(message=message, facts=fact))
        self._turn_steps += 1
        messages = [reply.message for reply in replies]
        facts = [reply.facts for reply in replies]
        observation = joined_observation(replies)
        info: dict[str, Any] = {"won": False, "turn": self._turn}
        stop = None
        reward = 0.0
        if self._turn_steps > self.max_steps_per_turn:
            # BFCL counts a step with calls after running them and force-quits once the count passes
            # MAXIMUM_STEP_LIMIT; the entry then lacks its later turns and fails, except when this was its
            # last turn: BFCL's checker scores that entry as usual.
            stop = f"force quit: more than {self.max_steps_per_turn} steps in turn {self._turn}"
            assert self._entry is not None
            if self._turn == len(self._entry.question) - 1:
                ended = self._end_turn(problems)
                info.update(ended.info)
                reward = ended.reward
            self._done = True
            self._force_quit = True
            info["stop"] = stop
        step_facts = StepFacts(
            won=self._won if self._done else False,
            problems=problems,
            stop=stop,
            progress=self.progress(),
            tools=facts,
            final=self._done,
        )
        valid = all(fact.ok for fact in facts)
        return StepResult(
            observation, reward, self._done, info, facts=step_facts, valid=valid, messages=messages,
            truncated=stop is not None,
        )

    def _end_turn(self, problems: list[str]) -> StepResult:
        verdict = self._checker.check(self._turn, self._backend, self._turn_results)
        self._verdicts.append(verdict)
        self._turn += 1
        self._turn_steps = 0
        self._turn_results = []
        self._expert_done = 0
        info: dict[str, Any] = {"turn": self._turn - 1, "verdict": verdict.__dict__}
        assert self._entry is not None
        if self._turn >= len(self._entry.question):
            self._done = True
            self._won = all(item.valid for item in self._verdicts if item.scored)
            info.update(won=self._won, hinted_turns=sorted(self._hinted_turns))
            facts = StepFacts(won=self._won, final=True, problems=problems, progress=self.progress())
            observation = (
                "All requests are handled."
                if self._won
                else f"Not all requests were handled: {_failures(self._verdicts)}"
            )
            return StepResult(observation, 1.0 if self._won else 0.0, True, info, facts=facts, valid=True, messages=[])
        question = self._question(self._turn)
        info.update(won=False, tools=self.current_tools() if self._turn in self._held_out else None)
        facts = StepFacts(won=False, problems=problems, progress=self.progress())
        user_turn = [Message(role=Role.user, content=question)]
        return StepResult(question, 0.0, False, info, facts=facts, valid=True, messages=user_turn)

    # -- expert and progress --------------------------------------------------------------

    def _note_expert_progress(self, spec: CallSpec | None) -> None:
        """Advance the expert past a ground-truth call the episode just made (same name and
        arguments), whether or not it succeeded: the expert never repeats a call."""
        expected = self.turn_ground_truth(self._turn)
        if (
            spec is not None
            and self._expert_done < len(expected)
            and self._same_call(spec, expected[self._expert_done])
        ):
            self._expert_done += 1

    def _same_call(self, left: CallSpec, right: CallSpec) -> bool:
        try:
            return left.name == right.name and (
                self._backend.named_arguments(left) == self._backend.named_arguments(right)
            )
        except (TypeError, KeyError, CallRejected):
            # handled: a call whose arguments cannot be named is not the expert's call
            return False

    def expert_action(self) -> str | None:
        """The next ground-truth calls of this turn, or the turn's closing message (a question
        when the turn has no ground truth). Consecutive calls of one function go out together as
        parallel calls, so long ground truths fit BFCL's step limit."""
        if self._done or self._entry is None:
            return None
        expected = self.turn_ground_truth(self._turn)
        if not expected:
            return encode_action(message=asking_message(self._entry.category))
        if self._expert_done >= len(expected):
            return encode_action(message=TURN_DONE)
        batch = expert_batch(expected[self._expert_done :], self.max_steps_per_turn - 1 - self._turn_steps)
        calls = []
        for offset, call in enumerate(batch):
            try:
                arguments = self._backend.named_arguments(call)
            except (TypeError, KeyError, CallRejected):
                # handled: no expert call for a gold call that cannot be named; the expert hook is optional
                return None
            calls.append(as_tool_call(f"call_{self._turn}_{self._expert_done + offset}", call.name, arguments))
        return encode_action(calls)

    def progress(self) -> float | None:
        """Fraction of the task's turn goals reached so far (BFCL's per-turn check passed; a turn
        without ground truth is reached when the model asked instead of calling)."""
        if self._entry is None:
            return None
        return sum(verdict.valid for verdict in self._verdicts) / len(self._entry.question)

    # -- read-only views (scripted mistakes, tests) ----------------------------------------

    @property
    def entry(self) -> BfclEntry | None:
        """The task being played."""
        return self._entry

    @property
    def turn(self) -> int:
        """The current user turn index."""
        return self._turn

    @property
    def finished(self) -> bool:
        """The episode is over."""
        return self._done

    @property
    def force_quit(self) -> bool:
        """The episode was cut at BFCL's per-turn step limit (a truncation, not the agent's end)."""
        return self._force_quit

    @property
    def offered_functions(self) -> list[str]:
        """Names of the functions the model may call now."""
        return sorted(self._backend.offered) if self._entry is not None else []

    def turn_ground_truth(self, turn: int) -> list[CallSpec]:
        """The ground-truth calls of ``turn`` (empty past the last turn)."""
        if self._entry is None or turn >= len(self._expert_calls):
            return []
        return list(self._expert_calls[turn])

    def remaining_expert_calls(self) -> list[CallSpec]:
        """The current turn's ground-truth calls the episode has not made yet."""
        return self.turn_ground_truth(self._turn)[self._expert_done :]

    def named_arguments(self, call: CallSpec) -> dict[str, Any]:
        """``call``'s arguments by parameter name (``BfclBackend.named_arguments``)."""
        return self._backend.named_arguments(call)

    @property
    def hinted_turns(self) -> list[int]:
        """User turns in which at least one tool result carried a hint."""
        return sorted(self._hinted_turns)


def _failures(verdicts: list[TurnVerdict]) -> str:
    failed = [
        f"turn {verdict.turn}: {verdict.error_type}" for verdict in verdicts if verdict.scored and not verdict.valid
    ]
    return "; ".join(failed) or "none"
