"""The tool-use layer shared by tool-calling envs (code, bfcl, tau2).

- ``hermes``: read / write Hermes (Qwen3) ``<tool_call>`` text.
- ``actions``: the JSON action string a tool protocol hands to ``Env.step``.
- ``protocol``: ``ToolUseProtocol``, the base protocol of tool envs.
- ``dispatch``: check calls against JSON Schemas, run handlers, build ``ToolCallFacts``.
"""

from prefbuild.tooluse.actions import ToolAction, decode_action, encode_action
from prefbuild.tooluse.dispatch import ToolBox, ToolError, ToolOutput, ToolReply, joined_observation, run_calls
from prefbuild.tooluse.hermes import ToolTurn, parse_tool_turn, render_tool_turn
from prefbuild.tooluse.protocol import ToolUseProtocol

__all__ = [
    "ToolAction",
    "ToolBox",
    "ToolError",
    "ToolOutput",
    "ToolReply",
    "ToolTurn",
    "ToolUseProtocol",
    "decode_action",
    "encode_action",
    "joined_observation",
    "parse_tool_turn",
    "render_tool_turn",
    "run_calls",
]
