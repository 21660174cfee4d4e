"""A tolerant reader for ``THOUGHT: ... ACTION: ...`` style turns (AgentBench, ETO).

The benchmark harnesses use one case-sensitive regex; models write ``Action:``, ``Act:``,
``**ACTION:**``, fenced blocks, several actions at once. The reader recovers the action
the model meant, records each tolerance in ``normalized`` and each departure from the exact
protocol in ``problems`` (``format_ok`` is True only when there is none), and never raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from prefbuild.envs.base import ParsedOutput
from prefbuild.envs.household.protocols.common import clean_action, is_completion_claim
from prefbuild.tooluse.hermes import strip_fence_lines

_ACTION_TAG = re.compile(r"(?<![\w*])(?P<tag>\*{0,2}(?:action|act)(?:\*{1,2})?\s*:(?:\*{1,2})?)", re.IGNORECASE)
_THOUGHT_TAG = re.compile(
    r"^[^\w*]{0,4}(?P<tag>\*{0,2}(?:thought|think|thinking|reasoning)(?:\*{1,2})?\s*:(?:\*{1,2})?)", re.IGNORECASE
)


@dataclass(frozen=True)
class TagStyle:
    """The exact tags one protocol asks for, e.g. ``ACTION:`` / ``THOUGHT:``."""

    action: str
    thought: str
    thought_required: bool


def _tag_note(written: str, exact: str, kind: str) -> str | None:
    written = written.replace(" ", "")
    if written == exact:
        return None
    return f"{kind} tag {written!r} read as {exact!r}"


def parse_tagged(text: str, style: TagStyle) -> ParsedOutput:
    """Read one model turn in ``style``; see the module docstring for the tolerances."""
    normalized: list[str] = []
    problems: list[str] = []
    if not isinstance(text, str) or not text.strip():
        return ParsedOutput(thought=None, action=None, format_ok=False, problems=("empty output",))
    body, fenced = strip_fence_lines(text)
    if fenced:
        normalized.append("markdown fence")
        problems.append("markdown fence")
    hits = list(_ACTION_TAG.finditer(body))
    before = body[: hits[0].start()] if hits else body
    thought = _read_thought(before, style, normalized, problems, has_action=bool(hits))
    if not hits:
        problems.append("no action line")
        return ParsedOutput(thought, None, False, tuple(normalized), False, tuple(problems))
    first = hits[0]
    note = _tag_note(first.group("tag"), style.action, "action")
    if note:
        normalized.append(note)
        problems.append(f"wrong action tag {first.group('tag').strip()!r}")
    line_end = body.find("\n", first.end())
    line_end = len(body) if line_end < 0 else line_end
    raw_action = body[first.end() : line_end]
    rest = body[line_end:]
    if not raw_action.strip() and rest.strip() and len(hits) == 1:
        # "ACTION:\ngo to fridge 1": the harness would read an empty action here.
        lines = rest.strip().split("\n")
        raw_action, rest = lines[0], "\n".join(lines[1:])
        normalized.append("action on the line after its tag")
        problems.append("action on the line after its tag")
    if len(hits) > 1:
        problems.append(f"{len(hits)} action lines")
    elif rest.strip():
        problems.append("text after the action line")
    cleaned = clean_action(raw_action.replace("**", "") if "**" in raw_action else raw_action)
    if "**" in raw_action or "**" in first.group("tag"):
        normalized.append("markdown emphasis")
    normalized.extend(cleaned.normalized)
    action: str | None = cleaned.action
    if not action:
        action = None
        problems.append("empty action")
    return ParsedOutput(
        thought=thought,
        action=action,
        format_ok=not problems,
        normalized=tuple(normalized),
        final=is_completion_claim(action),
        problems=tuple(problems),
    )


def _read_thought(
    before: str, style: TagStyle, normalized: list[str], problems: list[str], *, has_action: bool
) -> str | None:
    """The thought written before the action tag (or the whole text when there is no action)."""
    stripped = before.strip()
    match = _THOUGHT_TAG.match(stripped)
    if match:
        note = _tag_note(match.group("tag"), style.thought, "thought")
        if note:
            normalized.append(note)
            problems.append(f"wrong thought tag {match.group('tag').strip()!r}")
        return stripped[match.end() :].strip()
    if stripped:
        if has_action:
            problems.append(f"text before the action without a {style.thought!r} tag")
        return stripped
    if style.thought_required and has_action:
        problems.append(f"missing {style.thought!r}")
    return None
