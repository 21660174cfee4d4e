"""The DBBench prompt protocol (AgentBench v0.2, spec sections 3-5).

The dialogue is: the instruction as a user turn, an injected ``Ok.`` from the agent, then
``description + "\\n" + add_description``; every later user turn is a raw result. Parsing
follows the benchmark's regular expressions exactly (section 4), so a turn the benchmark
would reject is rejected here too; the tolerances it applies (a ``Final Answer`` without
``Action: Answer``, a multi-line SQL block) are accepted and listed in ``normalized``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from prefbuild.envs.base import EnvTask, ParsedOutput, Protocol
from prefbuild.envs.sql import actions
from prefbuild.records import Message, Role

INSTRUCTION = """
I will ask you a question, then you should help me operate a MySQL database with SQL to answer the question.
You have to explain the problem and your solution to me and write down your thoughts.
After thinking and explaining thoroughly, every round you can choose to operate or to answer.
your operation should be like this:
Action: Operation
```sql
SELECT * FROM table WHERE condition;
```
You MUST put SQL in markdown format without any other comments. Your SQL should be in one line.
Every time you can only execute one SQL statement. I will only execute the statement in the first SQL code block. \
Every time you write a SQL, I will execute it for you and give you the output.
If you are done operating, and you want to commit your final answer, then write down:
Action: Answer
Final Answer: ["ANSWER1", "ANSWER2", ...]
DO NOT write this pattern unless you are sure about your answer. I expect an accurate and correct answer.
Your answer should be accurate. Your answer must be exactly the same as the correct answer.
If the question is about modifying the database, then after done operation, your answer field can be anything.
If your response cannot match any pattern I mentioned earlier, you will be judged as FAIL immediately.
Your input will be raw MySQL response, you have to deal with it by yourself.
"""
AGENT_ACK = "Ok."

# The benchmark's own patterns (AgentBench v0.2 dbbench task).
ACTION_RE = re.compile(r"Action: (.*?)\n")
SQL_BLOCK_RE = re.compile(r"```sql\n([\s\S]*?)\n```")
FINAL_ANSWER_RE = re.compile(r"\nFinal Answer:(.*)")
# A reply the agent wrote itself after its SQL: "Result: [('Madrid',)]", "Output: ...", a bare row list.
INVENTED_RESULT_RE = re.compile(
    r"^[ \t]*(?:(?:result|results|output|observation|response|mysql)[ \t]*:|\[\(|\+-{3,})", re.IGNORECASE | re.MULTILINE
)

DEFAULT_OPERATION_THOUGHT = "I will run a SQL statement to get the information I need."
DEFAULT_ANSWER_THOUGHT = "I have the information I need, so I will commit my final answer."
DEFAULT_INVALID_THOUGHT = "I am not sure how to continue."


class DBBenchProtocol(Protocol):
    """AgentBench DBBench v0.2: ``Action: Operation`` + a sql block, or ``Action: Answer`` + ``Final Answer:``."""

    name: ClassVar[str] = "dbbench"
    observation_role: ClassVar[str] = "user"

    def prefix_messages(self, task: EnvTask) -> list[Message]:
        return [Message(role=Role.user, content=INSTRUCTION), Message(role=Role.assistant, content=AGENT_ACK)]

    def observation_turn(
        self, observation: str, *, first: bool, task: EnvTask, admissible: Sequence[str] | None = None
    ) -> str:
        # The first observation already is description + "\n" + add_description; results are raw.
        return observation

    def parse(self, text: str) -> ParsedOutput:
        action_match = ACTION_RE.search(text)
        word = action_match.group(1) if action_match else None
        thought = _thought(text, action_match)
        problems: list[str] = []
        normalized: list[str] = []
        if len(ACTION_RE.findall(text)) > 1:
            problems.append("several 'Action:' lines; only the first counts")
        if word == "Operation":
            blocks = SQL_BLOCK_RE.findall(text)
            beside = FINAL_ANSWER_RE.search(text)  # read by the env only on the turn after the last operation
            final_answer = beside.group(1) if beside else None
            if not blocks:
                return ParsedOutput(
                    thought=thought,
                    action=actions.invalid("Action: Operation without a ```sql block", final_answer),
                    format_ok=False,
                    problems=(*problems, "'Action: Operation' without a ```sql block"),
                )
            sql = blocks[0].strip()
            if "\n" in sql:
                normalized.append("newlines in the SQL replaced by spaces")
            if len(blocks) > 1:
                problems.append("several ```sql blocks; only the first is executed")
            after_block = text[SQL_BLOCK_RE.search(text).end() :]  # type: ignore[union-attr]  # blocks is not empty
            if INVENTED_RESULT_RE.search(after_block):
                problems.append("a result written after the SQL block (the env's reply is invented)")
            if FINAL_ANSWER_RE.search(text):
                problems.append("a Final Answer in an Operation turn is ignored (unless no operation is left)")
            if not sql:
                problems.append("empty ```sql block")
            return ParsedOutput(
                thought=thought,
                action=actions.operation(sql, final_answer),
                format_ok=not problems and not normalized,
                normalized=tuple(normalized),
                problems=tuple(problems),
            )
        answer_match = FINAL_ANSWER_RE.search(text)
        if answer_match is None:
            reason = "no 'Final Answer:' line" if word is not None else "no 'Action:' line and no 'Final Answer:' line"
            return ParsedOutput(
                thought=thought, action=actions.invalid(reason), format_ok=False, problems=(*problems, reason)
            )
        if word is None:
            normalized.append("'Final Answer:' without 'Action: Answer'")
        elif word != "Answer":
            normalized.append(f"action word {word!r} read as Answer")
        return ParsedOutput(
            thought=thought,
            action=actions.answer(answer_match.group(1)),
            format_ok=not problems and not normalized,
            normalized=tuple(normalized),
            problems=tuple(problems),
            final=True,
        )

    def render(self, action: str, thought: str | None = None) -> str:
        parsed = actions.parse_action(action)
        if parsed.kind == "operation":
            return f"{thought or DEFAULT_OPERATION_THOUGHT}\nAction: Operation\n```sql\n{parsed.text}\n```"
        if parsed.kind == "answer":
            return f"{thought or DEFAULT_ANSWER_THOUGHT}\nAction: Answer\nFinal Answer:{parsed.text}"
        return thought or DEFAULT_INVALID_THOUGHT

    def final_turn(self, answer: str | None = None) -> str | None:
        """``Action: Answer`` with ``answer`` as the text after ``Final Answer: `` (``[]`` when None)."""
        raw = " []" if answer is None else " " + answer.strip().split("\n", 1)[0]
        return self.render(actions.answer(raw))


def _thought(text: str, action_match: re.Match[str] | None) -> str | None:
    if action_match is not None:
        head = text[: action_match.start()]
    else:
        answer_match = FINAL_ANSWER_RE.search(text)
        head = text[: answer_match.start()] if answer_match else text
    head = head.strip()
    return head or None
