"""Prompt protocols of the household env (AgentBench, ReAct, ETO, tool calling).

Each protocol reproduces one benchmark harness: its prompt text to the character, its
observation post-processing, and how it turns a model's reply into the command it sends.
"""

from __future__ import annotations

from prefbuild.envs.base import Protocol
from prefbuild.envs.household.protocols.agentbench import AgentBenchProtocol
from prefbuild.envs.household.protocols.eto import EtoProtocol
from prefbuild.envs.household.protocols.react import ReActProtocol
from prefbuild.envs.household.protocols.toolcall import ToolCallProtocol

PROTOCOLS: dict[str, type[Protocol]] = {
    "agentbench": AgentBenchProtocol,
    "react": ReActProtocol,
    "eto": EtoProtocol,
    "toolcall": ToolCallProtocol,
}

__all__ = ["PROTOCOLS", "AgentBenchProtocol", "EtoProtocol", "ReActProtocol", "ToolCallProtocol"]
