"""ETO household protocol (Song et al., "Trial and Error"), the DPO-on-agents reference setup.

Chat layout (ETO's ``icl_format: conversation``): the instruction as the first user turn,
the agent's ``OK``, one fixed in-context episode (a "put" task, whatever the task's kind)
with ``Thought: ...\\nAction: ...`` agent turns and ``Observation: ...`` user turns, then
the task intro as a user turn. A reply without ``Action:`` gets ETO's error observation and
costs a step. The instruction keeps ETO's own typos (``task {obj} from {recep}``,
``toggle {obj} {recep}``): the env still accepts only the real commands.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from prefbuild.envs.base import EnvTask, ParsedOutput, Protocol
from prefbuild.envs.household.protocols.common import benchmark_intro, strip_arrival
from prefbuild.envs.household.protocols.tagged import TagStyle, parse_tagged
from prefbuild.records import Message, Role

INSTRUCTION = (
    "Interact with a household to solve a task. Imagine you are an intelligent agent in a household environment "
    "and your target is to perform actions to complete the task goal. At the beginning of your interactions, you "
    "will be given the detailed description of the current environment and your goal to accomplish. \n"
    "For each of your turn, you will be given the observation of the last turn. You should first think about the "
    "current condition and plan for your future actions, and then output your action in this turn. Your output "
    'must strictly follow this format:"Thought: your thoughts.\\nAction: your next action".\n\n'
    "The available actions are:\n"
    "1. go to {recep}\n"
    "2. task {obj} from {recep}\n"
    "3. put {obj} in/on {recep}\n"
    "4. open {recep}\n"
    "5. close {recep}\n"
    "6. toggle {obj} {recep}\n"
    "7. clean {obj} with {recep}\n"
    "8. heat {obj} with {recep}\n"
    "9. cool {obj} with {recep}\n"
    "where {obj} and {recep} correspond to objects and receptacles.\n"
    "After your each turn, the environment will give you immediate feedback based on which you plan your next few "
    'steps. if the envrionment output "Nothing happened", that means the previous action is invalid and you should '
    "try more options.\n\n"
    "Your response should use the following format:\n\n"
    "Thought: <your thoughts>\n"
    "Action: <your next action>"
)
ACKNOWLEDGEMENT = "OK"
OBSERVATION_PREFIX = "Observation: "
ERROR_REPLY = "Observation: Error Input. Your input must contains 'Action: '"
STYLE = TagStyle(action="Action:", thought="Thought:", thought_required=True)


class EtoProtocol(Protocol):
    """ETO's ``Thought:`` / ``Action:`` / ``Observation:`` chat."""

    name: ClassVar[str] = "eto"

    def __init__(self, dialect: str = "classic", fewshot: bool = True) -> None:
        self.dialect = dialect
        self.fewshot = fewshot

    def prefix_messages(self, task: EnvTask) -> list[Message]:
        messages = [Message(role=Role.user, content=INSTRUCTION), Message(role=Role.assistant, content=ACKNOWLEDGEMENT)]
        if self.fewshot:
            from prefbuild.envs.household.fewshot import eto_example

            messages.extend(eto_example(self.dialect))
        return messages

    def observation_turn(
        self, observation: str, *, first: bool, task: EnvTask, admissible: Sequence[str] | None = None
    ) -> str:
        if first:
            return benchmark_intro(observation)
        return OBSERVATION_PREFIX + strip_arrival(observation)

    def parse(self, text: str) -> ParsedOutput:
        return parse_tagged(text, STYLE)

    def unparsed_reply(self, parsed: ParsedOutput) -> str | None:
        return ERROR_REPLY

    def render(self, action: str, thought: str | None = None) -> str:
        """ETO asks for a thought every turn; without one the turn is bare ``Action: ...``, which
        parses with a "missing 'Thought:'" problem (a format violation, as it is in ETO)."""
        return f"Thought: {thought}\nAction: {action}" if thought else f"Action: {action}"
