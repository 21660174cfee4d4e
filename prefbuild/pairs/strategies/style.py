"""``style``: the same good action, written concisely (chosen) versus verbosely (rejected).

For steps labelled ``verbose_filler`` or ``overlong`` whose action was good (parsed,
accepted by the env, no action-level label), the rejected turn is the original text and
the chosen turn performs the identical action with a concise thought. Both turns are
parsed again with the trajectory's protocol and must yield that same action, so the pair
teaches brevity and nothing else.

``rewrite``:

- ``trim`` (default): drop filler sentences ("Certainly!", "I hope this helps.") and keep one
  whole remaining sentence of at most ``max_thought_words`` words (20), preferably the one
  naming the action; with none, the turn is the bare action where the protocol allows it
  (a chosen turn that breaks the protocol, ETO without a thought, is skipped and counted).
- ``teacher``: the teacher rewrites the thought as one short sentence ending in the action
  (validated; regenerated up to ``max_attempts`` times; dropped and counted otherwise).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import Any, ClassVar

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
from prefbuild.pairs.teacher_bridge import ThoughtJob, teacher_thought_turns
from prefbuild.records import Step, Trajectory, assistant_turn, structured_calls, tools_at

REWRITES = ("trim", "teacher")

# Sentences that carry no information for the agent; matched at the start of a sentence.
DEFAULT_FILLER: tuple[str, ...] = (
    r"certainly",
    r"sure",
    r"of course",
    r"absolutely",
    r"great",
    r"okay",
    r"ok",
    r"alright",
    r"no problem",
    r"i can help( you)? with that",
    r"i(?:'d| would) be (?:happy|glad) to help",
    r"happy to help",
    r"let me think",
    r"let's get started",
    r"i hope this helps",
    r"have a (?:nice|great|good) day",
    r"thank you",
    r"thanks",
    r"as an ai",
)

# Sentence ends in Latin and CJK punctuation; CJK sentences need no space after the mark.
_SENTENCES = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])\s*")


class Filler:
    """Recognises filler sentences: the start patterns above plus the labelers' filler phrase lists.

    Sharing the ``verbose_filler`` labeler's lists (``prefbuild/labelers/data/filler_*.txt``)
    means what the labeler flags is what the rewrite removes, in every language it knows.
    """

    def __init__(self, extra: Iterable[str] = ()) -> None:
        alternatives = "|".join((*DEFAULT_FILLER, *(re.escape(phrase) for phrase in extra)))
        self.start = re.compile(rf"^\W*(?:{alternatives})(?!\w)", re.IGNORECASE)
        from prefbuild.labelers.phrases import PhraseMatcher, bundled_lists

        self.phrases = PhraseMatcher(bundled_lists("filler_"), extra=extra)
        # A pure test of one sentence; thoughts repeat their sentences across a run (a scripted
        # 10,000-task run asks 30,000 times about 2,000 sentences), so answers are kept (bounded).
        self.match = lru_cache(maxsize=8192)(self._match)

    def _match(self, sentence: str) -> bool:
        """Whether ``sentence`` is filler (``match`` is this, cached)."""
        return bool(self.start.match(sentence) or self.phrases.find(sentence))


def filler_pattern(extra: Iterable[str] = ()) -> Filler:
    return Filler(extra)


def concise_thought(thought: str | None, *, max_words: int, filler: Filler, action: str | None = None) -> str | None:
    """One whole informative sentence of ``thought``, at most ``max_words`` words; None if none is left.

    Filler sentences are dropped. Of the rest that fit in ``max_words``, the first one that names a
    word of ``action`` (the sentence that motivates the action) is kept, else the first one. A
    sentence is never cut: a truncated sentence would teach the model to stop mid-sentence.

    Example:
        >>> concise_thought("Great! I see a mug 1 here. I will take the mug 1 now.", max_words=20,
        ...                 filler=filler_pattern(), action="take mug 1 from countertop 1")
        'I see a mug 1 here.'
    """
    if not thought:
        return None
    sentences = [s.strip() for s in _SENTENCES.split(" ".join(thought.split())) if s.strip()]
    informative = [s for s in dict.fromkeys(sentences) if len(s.split()) <= max_words and not filler.match(s)]
    if not informative:
        return None
    action_words = {w for w in re.findall(r"\w+", (action or "").lower()) if len(w) > 2 and not w.isdigit()}
    about_action = [s for s in informative if action_words & set(re.findall(r"\w+", s.lower()))]
    return (about_action or informative)[0]


class StyleStrategy(TeacherWriting, Drafting):
    name: ClassVar[str] = "style"
    reads_structs: ClassVar[bool] = True
    PARAMS: ClassVar[tuple[str, ...]] = (
        "rewrite",
        "modes",
        "max_thought_words",
        "filler",
        *TeacherWriting.TEACHER_PARAMS,
    )

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.check_params(self.PARAMS)
        self.rewrite: str = self.param("rewrite", "trim")
        if self.rewrite not in REWRITES:
            raise ValueError(f"strategy 'style': rewrite must be one of {', '.join(REWRITES)}, not {self.rewrite!r}")
        modes = self.param("modes", None)
        self.modes: frozenset[str] = STYLE_MODES if modes is None else mode_names(self.name, modes)
        self.max_words = int(self.param("max_thought_words", 20))
        self.filler = filler_pattern(self.param("filler", ()))
        self.setup_teacher_writing(needed=self.rewrite == "teacher", what="rewrite: teacher")

    def _candidates(self, trajectory: Trajectory) -> Iterator[Step]:
        for step in trajectory.steps:
            if not any(label.mode in self.modes for label in step.labels):
                continue
            if step.action is None or step.valid is False:
                self.stats.skip("action_not_good")
                continue
            if any(label.mode not in STYLE_MODES for label in step.labels):
                self.stats.skip("action_labelled_bad")
                continue
            yield step

    def drafts(self, trajectory: Trajectory) -> Iterator[PairDraft]:
        steps = list(self._candidates(trajectory))
        if not steps:
            return
        protocol = trajectory_protocol(trajectory)
        if self.rewrite == "teacher":
            assert self.runner is not None
            jobs = [
                ThoughtJob(trajectory=trajectory, step_index=step.index, action=step.action or "") for step in steps
            ]
            turns = teacher_thought_turns(
                self.runner,
                protocol,
                jobs,
                sampling=self.sampling,
                max_attempts=self.max_attempts,
                max_thought_chars=self.max_thought_chars,
                seed=self.seed,
            )
            self.stats.skip("teacher_thought_rejected", sum(turn is None for turn in turns))
        else:
            turns = [
                protocol.render(
                    step.action or "",
                    thought=concise_thought(
                        step.thought, max_words=self.max_words, filler=self.filler, action=step.action
                    ),
                )
                for step in steps
            ]
        prompts = TrajectoryPrompts(trajectory)
        for step, chosen in zip(steps, turns, strict=True):
            if chosen is None:
                continue
            parsed = protocol.parse(chosen)
            if not same_action(parsed.action, step.action):
                self.stats.skip("chosen_action_mismatch")
                continue
            if not parsed.format_ok:  # ETO needs a thought: a turn without one is itself a format violation
                self.stats.skip("chosen_format_violation")
                continue
            if not same_action(protocol.parse_completion(step.raw_output, structured_calls(step)).action, step.action):
                self.stats.skip("rejected_action_mismatch")
                continue
            if len(chosen) >= len(step.raw_output):
                self.stats.skip("not_shorter")
                continue
            label = primary_label(label for label in step.labels if label.mode in self.modes)
            assert label is not None
            prompt = prompts.window(step.index)
            yield from self.emit(
                lambda step=step, chosen=chosen, label=label, prompt=prompt: draft_pair(
                    self.name,
                    prompt=prompt,
                    chosen=[assistant(chosen)],
                    rejected=[assistant_turn(step)],
                    source=source_for(trajectory, step.index),
                    reason=label.mode,
                    evidence=label.evidence,
                    scores={"chosen_chars": float(len(chosen)), "rejected_chars": float(len(step.raw_output))},
                    tools=tools_at(trajectory, step.index),
                )
            )
