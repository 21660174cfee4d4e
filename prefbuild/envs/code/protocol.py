"""The ``code`` env's protocol: a math/code agent with one Hermes tool, ``code_interpreter``.

The setting of the seed model card (a Qwen3-4B-Instruct-2507 agent trained with GRPO and a
tool-call reward): the user turn is the problem, the model may call ``code_interpreter``
over up to 16 turns, tool results come back as ``tool`` turns, and a turn without a call is
the final answer (``\\boxed{}`` for math, a fenced Python program for code problems).
"""

from __future__ import annotations

from typing import Any, ClassVar

from prefbuild.tooluse.protocol import ToolUseProtocol

TOOL_NAME = "code_interpreter"
CODE_INTERPRETER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": TOOL_NAME,
        "description": (
            "Run Python 3 code in a sandboxed interpreter and return its stdout, stderr and any exception. State "
            "(variables, imports, functions) persists across calls like a notebook; the value of a final "
            "expression is shown. No network access; only the working directory is writable; calls time out."
        ),
        "parameters": {
            "type": "object",
            "properties": {"code": {"type": "string", "description": "The Python code to run."}},
            "required": ["code"],
            "additionalProperties": False,
        },
    },
}
SYSTEM_PROMPT = (
    "You are a helpful assistant that solves math and programming problems by reasoning step by step and using a "
    "Python code interpreter when it helps. Call the code_interpreter tool to compute, check a conjecture or test "
    "a program; use it deliberately rather than for every step, and keep your reasoning concise. You may make up "
    "to 16 turns. When you are done, reply without a tool call: for a math problem, put the final answer in "
    "\\boxed{}; for a programming problem, give the complete solution as one ```python code block."
)


class CodeInterpreterProtocol(ToolUseProtocol):
    """Hermes tool calls to ``code_interpreter``; a message without a call is the final answer.

    Example:
        >>> protocol = CodeInterpreterProtocol()
        >>> protocol.tools()[0]["function"]["name"]
        'code_interpreter'
    """

    name: ClassVar[str] = "hermes"
    message_is_final: ClassVar[bool] = True

    def __init__(self, system_prompt: str = SYSTEM_PROMPT) -> None:
        super().__init__(tools=[CODE_INTERPRETER_TOOL], system_prompt=system_prompt)
