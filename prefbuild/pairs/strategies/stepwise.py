"""``stepwise``: the round-wise pairs people publish (messages, chosen, rejected, reason).

For every step a labeler marked as bad, the prompt is exactly what the model saw before
that step (``prompt_messages``: system prompt, few-shot turns, history, observation), the
rejected turn is what the model wrote, and the chosen turn performs the env oracle's
action at that state, written in the same protocol. DPO then pushes probability from the
bad turn to the expert turn in the very context where the model went wrong.

How the chosen turn is written (``chosen``):

- ``action``: the protocol's rendering of the expert action alone (``ACTION: open drawer 1``).
- ``template``: a short templated thought plus the action, for protocols that expect a thought.
- ``teacher``: the teacher writes a one-sentence thought ending in the expert action; a reply
  whose parsed action is not the expert action, or whose thought is not one short sentence,
  is regenerated up to ``max_attempts`` times and otherwise dropped (counted).

Which action the chosen turn performs (``expert``, see ``prefbuild.pairs.chosen_source``):
``searcher`` (default where the env has one, e.g. household) is the expert that acts only on
what the episode has seen; ``oracle`` is the recorded expert action, which may use hidden
knowledge (household's oracle walks straight to where the object is hidden).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from prefbuild.pairs.chosen_source import SOURCES, chosen_action, default_source
from prefbuild.pairs.common import (
    STYLE_MODES,
    Drafting,
    PairDraft,
    TeacherWriting,
    TrajectoryPrompts,
    assistant,
    draft_pair,
    mode_names,
    primary_label,
    same_action,
    source_for,
    trajectory_protocol,
)
from prefbuild.pairs.replay import ReplayCursor
from prefbuild.pairs.teacher_bridge import ThoughtJob, teacher_thought_turns
from prefbuild.records import FailureMode, Label, Step, Trajectory, assistant_turn, tools_at
from prefbuild.tooluse.actions import ToolAction, decode_action

CHOSEN_STYLES = ("action", "template", "teacher")

# Thought templates by the action's first word; ``{action}`` is the whole action, ``{rest}`` the words after the verb.
DEFAULT_TEMPLATES: dict[str, str] = {
    "go": "I should go to {target} next.",
    "take": "I should take {object} now.",
    "put": "I should put {object} there now.",
    "move": "I should move {object} there now.",
    "open": "I should open {rest} to look inside.",
    "close": "I should close {rest}.",
    "heat": "I should heat {object} now.",
    "cool": "I should cool {object} now.",
    "clean": "I should clean {object} now.",
    "use": "I should turn on {rest}.",
    "examine": "I should examine {rest}.",
    "look": "I should look around.",
    "inventory": "I should check what I am carrying.",
}
DEFAULT_TEMPLATE = "The next step is: {action}."

# Modes where the rejected action may equal the expert action and the pair still teaches something.
FORMAT_MODES: frozenset[FailureMode] = frozenset({FailureMode.format_violation})


def template_thought(action: str, templates: Mapping[str, str] | str | None = None) -> str | None:
    """A short thought for ``action`` from a template.

    ``{action}`` is the whole action, ``{rest}`` the words after the verb, ``{object}`` the
    first argument, ``{target}`` the destination of ``go to``. ``templates`` is one template
    for every action, or a mapping by verb merged over the defaults. A tool action gets
    "I should call <names> now." (its JSON encoding is never quoted), and one that only answers
    gets no thought (None).
    """
    tool = _tool_action(action)
    if tool is not None:
        # Tool-action JSON (encode_action) is an internal encoding, never text for a thought.
        names = [call.function.name for call in tool.calls]
        return f"I should call {', '.join(dict.fromkeys(names))} now." if names else None
    words = action.strip().split()
    verb = words[0].lower() if words else ""
    rest = " ".join(words[1:])
    target = rest[3:] if rest.startswith("to ") else rest
    obj = re.split(r" (?:from|in/on|in|on|to|with) ", rest, maxsplit=1)[0]
    if isinstance(templates, str):
        template = templates
    else:
        table = DEFAULT_TEMPLATES if templates is None else {**DEFAULT_TEMPLATES, **templates}
        template = table.get(verb, DEFAULT_TEMPLATE)
        if not rest and any(key in template for key in ("{rest}", "{object}", "{target}")):
            template = DEFAULT_TEMPLATE
    return template.format(action=action.strip(), rest=rest, object=obj, target=target)


def _tool_action(action: str) -> ToolAction | None:
    """The decoded tool action when ``action`` is ``encode_action`` JSON, else None."""
    if not action.lstrip().startswith("{"):
        return None
    decoded = decode_action(action)
    return None if decoded.problems and not decoded.calls else decoded


@dataclass(frozen=True)
class BadStep:
    """One labelled step that will become a pair, with the label that names its failure."""

    step: Step
    label: Label
    expert_action: str


class StepwiseStrategy(TeacherWriting, Drafting):
    name: ClassVar[str] = "stepwise"
    reads_structs: ClassVar[bool] = True
    PARAMS: ClassVar[tuple[str, ...]] = (
        "chosen",
        "expert",
        "modes",
        "min_confidence",
        "templates",
        *TeacherWriting.TEACHER_PARAMS,
    )

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.check_params(self.PARAMS)
        self.chosen_style: str = self.param("chosen", "action")
        if self.chosen_style not in CHOSEN_STYLES:
            raise ValueError(
                f"strategy 'stepwise': chosen must be one of {', '.join(CHOSEN_STYLES)}, not {self.chosen_style!r}"
            )
        self.expert: str | None = self.param("expert", None)
        if self.expert is not None and self.expert not in SOURCES:
            raise ValueError(f"strategy 'stepwise': expert must be one of {', '.join(SOURCES)}, not {self.expert!r}")
        self.experts_used: Counter[str] = Counter()  # chosen actions by the expert that gave them
        modes = self.param("modes", None)
        # Default: every registered failure mode (plug-in ones too) except those about style.
        self.modes: frozenset[str] | None = None if modes is None else mode_names(self.name, modes)
        self.min_confidence = float(self.param("min_confidence", 0.0))
        self.templates = self.param("templates", None)
        self.replays = ReplayCursor()  # bad steps come in order: each episode is replayed once
        self.setup_teacher_writing(needed=self.chosen_style == "teacher", what="chosen: teacher")

    def _wanted(self, mode: str) -> bool:
        return mode not in STYLE_MODES if self.modes is None else mode in self.modes

    # -- selecting steps -----------------------------------------------------------------

    def bad_steps(self, trajectory: Trajectory) -> Iterator[BadStep]:
        """Labelled steps this strategy turns into pairs; the others are counted in ``stats.skipped``."""
        source = self.expert or default_source(trajectory.env.name)
        for step in trajectory.steps:
            eligible = [
                label for label in step.labels if self._wanted(label.mode) and label.confidence >= self.min_confidence
            ]
            label = primary_label(eligible)
            if label is None:
                continue
            expert_action, used = (
                chosen_action(trajectory, step.index, source, self.replays) if step.expert_action else (None, "")
            )
            if not expert_action:
                self.stats.skip("no_expert_action")
                continue
            if label.mode not in FORMAT_MODES and same_action(step.action, expert_action):
                self.stats.skip("rejected_is_expert_action")
                continue
            self.experts_used[used] += 1
            yield BadStep(step=step, label=label, expert_action=expert_action.strip())

    # -- writing the chosen turn ---------------------------------------------------------

    def chosen_turns(self, trajectory: Trajectory, bad: list[BadStep]) -> list[str | None]:
        protocol = trajectory_protocol(trajectory)
        if self.chosen_style == "action":
            return [protocol.render(item.expert_action) for item in bad]
        if self.chosen_style == "template":
            return [
                protocol.render(item.expert_action, thought=template_thought(item.expert_action, self.templates))
                for item in bad
            ]
        return self._teacher_turns(trajectory, bad)

    def _teacher_turns(self, trajectory: Trajectory, bad: list[BadStep]) -> list[str | None]:
        assert self.runner is not None
        jobs = [
            ThoughtJob(trajectory=trajectory, step_index=item.step.index, action=item.expert_action) for item in bad
        ]
        turns = teacher_thought_turns(
            self.runner,
            trajectory_protocol(trajectory),
            jobs,
            sampling=self.sampling,
            max_attempts=self.max_attempts,
            max_thought_chars=self.max_thought_chars,
            seed=self.seed,
        )
        self.stats.skip("teacher_thought_rejected", sum(turn is None for turn in turns))
        return turns

    # -- pairs ---------------------------------------------------------------------------

    def drafts(self, trajectory: Trajectory) -> Iterator[PairDraft]:
        bad = list(self.bad_steps(trajectory))
        if not bad:
            return
        prompts = TrajectoryPrompts(trajectory)
        for item, chosen in zip(bad, self.chosen_turns(trajectory, bad), strict=True):
            if chosen is None:
                continue
            prompt = prompts.window(item.step.index)
            rejected = assistant_turn(item.step)
            yield from self.emit(
                lambda item=item, chosen=chosen, prompt=prompt, rejected=rejected: draft_pair(
                    self.name,
                    prompt=prompt,
                    chosen=[assistant(chosen)],
                    rejected=[rejected],
                    source=source_for(trajectory, item.step.index),
                    reason=item.label.mode,
                    evidence=item.label.evidence,
                    scores={"confidence": item.label.confidence},
                    tools=tools_at(trajectory, item.step.index),
                )
            )
