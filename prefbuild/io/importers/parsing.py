"""Reading agent turns of external logs with the env's own protocol parser.

External logs carry only text, so each turn is parsed exactly as a rollout would have
parsed it (``Protocol.parse`` of the household or sql env): the labels on an imported
AgentBench log then mean the same as the labels on prefbuild's own trajectories.
"""

from __future__ import annotations

from typing import Any

from prefbuild.envs import cached_protocol
from prefbuild.envs.base import ParsedOutput, Protocol
from prefbuild.records import StepFacts


def protocol(env: str, name: str) -> Protocol:
    """The protocol instance ``name`` of ``env`` (shared: parsers are stateless)."""
    return cached_protocol(env, name)


def parse_turn(env: str, name: str, text: str) -> ParsedOutput:
    return protocol(env, name).parse(text)


def step_fields(parsed: ParsedOutput) -> dict[str, Any]:
    """The Step fields a parse result fills; the parser's problems and final flag are step facts."""
    return {
        "thought": parsed.thought,
        "action": parsed.action,
        "format_ok": parsed.format_ok,
        "normalized": list(parsed.normalized),
        "facts": StepFacts(problems=list(parsed.problems), final=parsed.final),
    }
