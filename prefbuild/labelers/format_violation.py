"""Format violations: the turn did not follow the env's protocol exactly once.

The protocol parser is the judge (no action line, several, a wrong tag, a missing
required ``Thought:``, a markdown fence where the protocol has none, text outside the
tags): rollouts and the external-log importers record its verdict in ``Step.format_ok``,
the tolerances it applied in ``Step.normalized`` and its complaints in
``Step.facts.problems``. This labeler reports them; with ``reparse`` it parses every
turn again with the env's current protocol, for trajectories written by an older or a
more lenient parser.

Some tolerances hide what the benchmark itself would misread: AgentBench matches the
command text as written, so ``**heat bread 1 with microwave 1**`` or a command in backticks
is not the command. Normalisations named in ``violating_normalizations`` (markdown by
default) are violations; harmless ones (a capital letter, a trailing period, ReAct's ``> ``
marker) are not, nor are the readings the benchmark's own parser makes too
(``accepted_normalizations``: DBBench finds ``Final Answer:`` without ``Action: Answer``).
Two commands written in one action line ("go to drawer 1 and open it") are a violation:
the benchmark runs at most the first. So are several ``;``-separated SQL statements in one
DBBench operation: its MySQL client runs one statement per turn.
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache
from typing import ClassVar

from prefbuild.envs import cached_protocol
from prefbuild.envs.base import ParsedOutput, Protocol
from prefbuild.envs.sql.dialect import tokenize
from prefbuild.envs.sql.mysql_errors import MySqlError
from prefbuild.errors import PrefbuildError
from prefbuild.labelers.base import Labeler
from prefbuild.labelers.text import HOUSEHOLD_VERBS
from prefbuild.records import FailureMode, Label, Step, Trajectory

logger = logging.getLogger(__name__)

# "go to drawer 1 and open it", "take mug 1 from shelf 1, then go to sinkbasin 1", "go to drawer 2, open drawer 2"
_TWO_COMMANDS = re.compile(
    rf"^{HOUSEHOLD_VERBS}\b.*?(?:\s*,?\s+and(?:\s+then)?|\s*,(?:\s*then)?|\s*;|\s*&&)\s+{HOUSEHOLD_VERBS}\b",
    re.IGNORECASE,
)
_BACKTICKED = re.compile(r"`[^`\n]+`")


def two_commands(action: str | None) -> bool:
    """The action line holds two household commands joined in words.

    Example:
        >>> two_commands("go to drawer 1 and open it"), two_commands("take apple 1 from countertop 1")
        (True, False)
    """
    if not action or not (" and " in action or "," in action or ";" in action or "&&" in action):
        return False
    return bool(_TWO_COMMANDS.match(action.strip()))


def several_statements(step: Step) -> bool:
    """The step's SQL operation holds more than one ``;``-separated statement (a trailing ``;`` is fine).

    Example:
        >>> from prefbuild.records import SqlFacts, StepFacts
        >>> def op(sql):
        ...     return Step(index=0, observation="", raw_output=sql, facts=StepFacts(sql=SqlFacts(executed=sql)))
        >>> several_statements(op("UPDATE t SET a = 1; SELECT * FROM t;"))
        True
        >>> several_statements(op("SELECT ';' FROM t; -- ok"))
        False
    """
    sql = step.facts.sql.executed if step.facts.sql is not None else None
    if not sql or ";" not in sql:
        return False
    try:
        tokens = [token for token in tokenize(sql) if token.significant]
    except MySqlError:
        # handled: an unterminated string cannot be split; MySQL reports it as a syntax error (sql_error)
        return False
    ends = [position for position, token in enumerate(tokens) if token.kind == "op" and token.text == ";"]
    return bool(ends) and any(not (token.kind == "op" and token.text == ";") for token in tokens[ends[0] + 1 :])


@lru_cache(maxsize=32)
def _protocol(env: str, name: str) -> Protocol | None:
    try:
        return cached_protocol(env, name)
    except (KeyError, ImportError, TypeError, ValueError, PrefbuildError) as error:
        # Not loadable here: judged by the recorded verdict, said once per protocol (the result is cached).
        logger.warning(
            "format_violation: protocol %r of env %r cannot be loaded here (%s); turns are judged by the recorded "
            "verdict, not parsed again", name, env, error,
        )
        return None


def reparse(trajectory: Trajectory, step: Step) -> ParsedOutput | None:
    """The env protocol's reading of ``step.raw_output`` today, or None where the protocol is unavailable."""
    protocol = _protocol(trajectory.env.name, trajectory.env.protocol)
    if protocol is None:
        return None
    return protocol.parse(step.raw_output)


class FormatViolationLabeler(Labeler):
    """Labels turns whose text the env protocol did not accept exactly as written."""

    name: ClassVar[str] = "format_violation"
    mode: ClassVar[str] = FailureMode.format_violation.value
    version: ClassVar[int] = 5
    defaults: ClassVar[dict[str, object]] = {
        "reparse": False,  # parse every turn again with the env's current protocol
        "normalized_is_violation": False,  # also label turns the parser accepted after normalising them
        "violating_normalizations": ["markdown"],  # normalisations (substrings) that are violations anyway
        # Readings the benchmark's own parser makes as well (substrings): not violations.
        "accepted_normalizations": [
            "'Final Answer:' without 'Action: Answer'",
            "read as Answer",
            "newlines in the SQL replaced by spaces",
        ],
        "two_commands": True,  # two commands written in one action line (or SQL statements in one operation)
        # Protocol complaints the benchmark's parser does not mind (substrings): AgentBench reads the command
        # after "ACTION:" whatever stands before it ("Got it!" before the THOUGHT line).
        "accepted_problems": ["text before the action without a"],
    }

    def label(self, trajectory: Trajectory) -> list[Label]:
        labels: list[Label] = []
        # A turn the parser took as written, with no reparse, is flagged only for two commands or statements.
        plain_ok = not self.config["reparse"]
        joined = bool(self.config["two_commands"])
        for step in trajectory.steps:
            if plain_ok and step.format_ok and not step.normalized:
                if not joined:
                    continue
                action = step.action
                # two_commands and several_statements's own first tests, inline: most turns hold one plain command
                if (not action or not (" and " in action or "," in action or ";" in action or "&&" in action)) and (
                    step.facts.sql is None
                ):
                    continue
                if not (two_commands(action) or several_statements(step)):
                    continue
            label = self._step(trajectory, step)
            if label is not None:
                labels.append(label)
        return labels

    def _step(self, trajectory: Trajectory, step: Step) -> Label | None:
        format_ok = step.format_ok
        normalized = list(step.normalized)
        recorded = step.facts.problems
        problems = [str(p) for p in recorded] if isinstance(recorded, list) else []
        parsed = reparse(trajectory, step) if (self.config["reparse"] or not format_ok) and not problems else None
        if parsed is not None:
            problems = list(parsed.problems)
            if self.config["reparse"]:
                format_ok = format_ok and parsed.format_ok
                normalized = list(dict.fromkeys([*normalized, *parsed.normalized]))
        serious = [
            note for note in normalized if any(part in note for part in self.config["violating_normalizations"])
        ]
        if "quoted action" in normalized and _BACKTICKED.search(step.raw_output):
            serious.append("command in markdown backticks")
            problems.append("command in markdown backticks")
        if self.config["two_commands"] and two_commands(step.action):
            problems.append("two commands in one action line")
            format_ok = False
        if self.config["two_commands"] and several_statements(step):
            problems.append("several SQL statements in one operation (the benchmark runs one statement per turn)")
            format_ok = False
        accepted = [
            note for note in normalized if any(part in note for part in self.config["accepted_normalizations"])
        ]
        if not format_ok and not problems and normalized and len(accepted) == len(normalized):
            format_ok = True  # the benchmark reads the turn the same way
        harmless = [note for note in problems if any(part in note for part in self.config["accepted_problems"])]
        if not format_ok and step.action is not None and problems and len(harmless) == len(problems) and (
            len(accepted) == len(normalized)
        ):
            format_ok = True  # only style the benchmark's parser ignores
        flagged = not format_ok or bool(serious) or (bool(normalized) and self.config["normalized_is_violation"])
        if not flagged:
            return None
        parts = [f"{trajectory.env.protocol} format: " + ("; ".join(problems) or "not the exact protocol format")]
        if normalized:
            parts.append("parser normalised: " + ", ".join(normalized))
        if step.action is None:
            parts.append("no action could be parsed")
        return self.make_label(step, 1.0 if not format_ok else 0.9, "; ".join(parts))
