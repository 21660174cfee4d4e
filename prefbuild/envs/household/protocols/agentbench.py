"""AgentBench v0.2 household protocol (the "plan first" chat prompt of the AgentBench paper).

Chat layout: the instruction as the first user turn, the agent's fixed acknowledgement, a
one-shot example for the task's kind (first user turn prefixed ``Here is one example.\\n``),
then ``Here is your task. <intro> AVAILABLE ACTIONS: ...``. Each later user turn is the
observation plus the admissible list; once a turn is no longer the newest it is cut at
``AVAILABLE ACTIONS`` exactly as the harness does (``str.split(...)[0]``, so the space
before the marker stays). The harness snaps near-miss commands by BLEU (``executed_action``),
ends the episode on a turn without ``ACTION:`` and after three identical outputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from prefbuild.envs.base import EnvTask, ParsedOutput, Protocol
from prefbuild.envs.household.protocols.bleu import snap_to_admissible
from prefbuild.envs.household.protocols.common import available_actions, benchmark_intro, strip_arrival
from prefbuild.envs.household.protocols.tagged import TagStyle, parse_tagged
from prefbuild.records import Message, Role

INSTRUCTION = (
    "Interact with a household to solve a task. Imagine you are an intelligent agent in a household environment "
    "and your target is to perform actions to complete the task goal. At the beginning of your interactions, you "
    "will be given the detailed description of the current environment and your goal to accomplish. For each of "
    "your turn, you will be given a list of actions which you can choose one to perform in this turn. You should "
    'choose from two actions: "THOUGHT" or "ACTION". If you choose "THOUGHT", you should first think about the '
    "current condition and plan for your future actions, and then output your action in this turn. Your output "
    'must strictly follow this format:"THOUGHT: your thoughts.\n ACTION: your next action\n"; If you choose '
    '"ACTION", you should directly output the action in this turn. Your output must strictly follow this '
    'format:"ACTION: your next action\n". After your each turn, the environment will give you immediate feedback '
    'based on which you plan your next few steps. if the environment output "Nothing happened", that means the '
    "previous action is invalid and you should try more options.\n Reminder: \n1. the action must be chosen from "
    "the given available actions. Any actions except provided available actions will be regarded as illegal. \n"
    "2. Think when necessary, try to act directly more in the process.\n\n"
)
ACKNOWLEDGEMENT = "OK. I'll follow your instructions and try my best to solve the task."
EXAMPLE_PREFIX = "Here is one example.\n"
TASK_PREFIX = "Here is your task. "
FINAL_TURN = "ACTION: Task succeeded."
AVAILABLE_MARKER = "AVAILABLE ACTIONS"
REPEAT_WINDOW = 3
STYLE = TagStyle(action="ACTION:", thought="THOUGHT:", thought_required=False)


class AgentBenchProtocol(Protocol):
    """AgentBench v0.2 (``alfworld_multiturn_plan_first``) as a chat protocol."""

    name: ClassVar[str] = "agentbench"

    def __init__(self, dialect: str = "classic", fewshot: bool = True) -> None:
        self.dialect = dialect
        self.fewshot = fewshot

    def prefix_messages(self, task: EnvTask) -> list[Message]:
        messages = [Message(role=Role.user, content=INSTRUCTION), Message(role=Role.assistant, content=ACKNOWLEDGEMENT)]
        if self.fewshot:
            from prefbuild.envs.household.fewshot import agentbench_example

            messages.extend(agentbench_example(task.info.type, self.dialect))
        return messages

    def observation_turn(
        self, observation: str, *, first: bool, task: EnvTask, admissible: Sequence[str] | None = None
    ) -> str:
        listing = available_actions(list(admissible) if admissible is not None else None)
        if first:
            return TASK_PREFIX + benchmark_intro(observation) + listing
        return strip_arrival(observation) + listing

    def history_turn(self, turn: str) -> str:
        return turn.split(AVAILABLE_MARKER)[0]

    def parse(self, text: str) -> ParsedOutput:
        return parse_tagged(text, STYLE)

    def executed_action(self, action: str, admissible: Sequence[str] | None) -> str:
        return snap_to_admissible(action, list(admissible) if admissible is not None else None)

    def unparsed_reply(self, parsed: ParsedOutput) -> str | None:
        return None

    def render(self, action: str, thought: str | None = None) -> str:
        if thought:
            return f"THOUGHT: {thought}\n ACTION: {action}"
        return f"ACTION: {action}"

    def final_turn(self, answer: str | None = None) -> str | None:
        return FINAL_TURN

    def stop_reason(self, outputs: Sequence[str]) -> str | None:
        if len(outputs) > REPEAT_WINDOW and len(set(outputs[-REPEAT_WINDOW:])) == 1:
            return f"the last {REPEAT_WINDOW} outputs are identical"
        return None
