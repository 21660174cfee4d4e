"""The ``scripted`` teacher: a deterministic noisy expert. A simulation, never a real model.

It plays the env's oracle (``env.expert_action()`` rendered by the protocol) and, at
configured per-failure-mode rates, misbehaves the way real teachers do, so the whole
pipeline (labelers, pair strategies, exports) can be exercised and measured without a model:

``loop``                 repeats its previous output verbatim
``premature_success``    declares the task done (``protocol.final_turn()``)
``implausible_location`` searches where the object cannot be (the env's mistake maker)
``invalid_action``       emits a command the env rejects (the env's mistake maker)
``sql_error``, tool modes shown by the env's mistake maker (``prefbuild.simulation``)
``verbose_filler``       pads the thought with conversational filler (English, Japanese) or
                         degenerate repetition of one sentence
``format_violation``     drops the action tag, adds a second action line or wraps the turn in
                         markdown fences; the result is checked with the protocol's parser

At most one failure mode applies per step: one uniform draw is compared with the cumulative
rates, in the order above. When a mode cannot be shown at this state (nothing to repeat at
step 0, an env whose mistake maker cannot show it, a protocol without a final turn), the
expert's turn is returned instead; ``ScriptedCompletion.simulated`` always says what was
really done, which makes it ground truth for measuring labelers.

Every random choice comes from ``random.Random`` seeded with (seed, episode, step, sample),
never from global state, so concurrent episodes give the same outputs in any order.
Token counts are whitespace-separated words: plausible, cheap and deterministic; latency is
always 0.0, so the same recipe gives byte-identical trajectory files.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from prefbuild.simulation import failure_action
from prefbuild.teachers.base import Completion, EnvView, Teacher, TeacherError, TeacherRequest
from prefbuild.teachers.config import FAILURE_MODES, TeacherConfig
from prefbuild.tooluse.actions import decode_action

__all__ = ["ENGLISH_FILLER", "JAPANESE_FILLER", "EnvView", "ScriptedCompletion", "ScriptedTeacher"]

EXPERT = "expert"

ENGLISH_FILLER: tuple[str, ...] = (
    "Sure! I'd be happy to help you with that.",
    "Great question!",
    "Let me think about this carefully, step by step.",
    "As an AI assistant, I will do my very best to complete this task for you.",
    "Thank you so much for your patience.",
    "Absolutely, let's get started right away!",
    "I hope this helps!",
    "Please let me know if there is anything else I can do for you.",
)
JAPANESE_FILLER: tuple[str, ...] = (
    "かしこまりました。",
    "もちろんです！喜んでお手伝いします。",
    "少々お待ちください。",
    "ご質問ありがとうございます。",
    "お役に立てれば幸いです。",
    "それでは、順番に考えてみましょう。",
)
THOUGHTS: tuple[str, ...] = (
    "Next I should {action}.",
    "To make progress, I will {action}.",
    "The next step is to {action}.",
    "I need to {action} now.",
)


@dataclass(frozen=True)
class ScriptedCompletion(Completion):
    """A scripted completion, with the behaviour it simulates (``expert`` or a failure mode)."""

    simulated: str = EXPERT
    detail: str = ""


def _words(text: str) -> int:
    return len(text.split())


class ScriptedTeacher(Teacher):
    """A deterministic noisy expert for envs with an oracle. Clearly a simulation."""

    backend = "scripted"
    reads_env_state = True
    simulated = True

    def __init__(self, rates: Mapping[str, float] | None = None, *, model: str = "scripted-expert") -> None:
        rates = dict(rates or {})
        unknown = sorted(set(rates) - set(FAILURE_MODES))
        if unknown:
            known = ", ".join(FAILURE_MODES)
            raise TeacherError(f"scripted teacher: unknown failure mode {unknown[0]!r}; known: {known}")
        if any(not 0.0 <= rate <= 1.0 for rate in rates.values()) or sum(rates.values()) > 1.0 + 1e-9:
            raise TeacherError(f"scripted teacher: rates must be in [0, 1] and add up to at most 1, got {rates}")
        self.rates = {mode: float(rates.get(mode, 0.0)) for mode in FAILURE_MODES}
        self.model = model

    def __repr__(self) -> str:
        active = {mode: rate for mode, rate in self.rates.items() if rate}
        return f"ScriptedTeacher(rates={active})"

    async def complete(self, request: TeacherRequest) -> list[Completion]:
        context = request.env_view
        if context is None:
            raise TeacherError(
                "the scripted teacher plays the env's oracle: it needs TeacherRequest.env_view (the live env and "
                "protocol), which the rollout passes to teachers with reads_env_state"
            )
        prompt_tokens = sum(_words(message.content) for message in request.messages)
        return [self._sample(context, sample, prompt_tokens) for sample in range(request.sampling.n)]

    def choose_mode(self, rng: random.Random) -> str:
        """One draw against the cumulative rates: a failure mode, or ``expert``."""
        draw, cumulative = rng.random(), 0.0
        for mode in FAILURE_MODES:
            cumulative += self.rates[mode]
            if draw < cumulative:
                return mode
        return EXPERT

    def _sample(self, context: EnvView, sample: int, prompt_tokens: int) -> ScriptedCompletion:
        rng = random.Random(f"prefbuild-scripted:{context.seed}:{context.episode_id}:{context.step_index}:{sample}")
        mode = self.choose_mode(rng)
        expert = context.env.expert_action()
        if expert is None:
            raise TeacherError(
                f"scripted teacher: env {type(context.env).__name__} gives no expert action at step "
                f"{context.step_index} (the episode is over, or the env has no oracle to imitate)"
            )
        simulated, detail, text = mode, "", None
        if mode != EXPERT:
            # The env's own mistake for this mode first (an SQL loop repeats the statement, a
            # household invalid action names a missing object); else the generic behaviour.
            text, detail = _env_failure(mode)(context, rng, expert)
            if text is None and mode in _MISBEHAVIOURS:
                text, detail = _MISBEHAVIOURS[mode](context, rng, expert)
        if text is None:
            simulated, detail = EXPERT, (f"{mode} not possible here" if mode != EXPERT else "")
            text = context.protocol.render(expert, _thought(rng, expert))
        return ScriptedCompletion(
            text=text,
            finish_reason="stop",
            prompt_tokens=prompt_tokens,
            completion_tokens=_words(text),
            latency_s=0.0,  # no model ran; a measured time would break byte-identical reruns
            simulated=simulated,
            detail=detail,
        )


def _thought(rng: random.Random, action: str) -> str:
    return rng.choice(THOUGHTS).format(action=described(action))


def described(action: str) -> str:
    """The action in words, for a thought: a tool action (``encode_action`` JSON) as the functions it
    calls or ``answer``; any other action as written.

    Example:
        >>> described('{"tool_calls": [{"id": "c0", "name": "get_order", "arguments": {}}]}'), described("look")
        ('call get_order', 'look')
    """
    if not action.startswith("{"):
        return action
    decoded = decode_action(action)
    if decoded.calls:
        return "call " + ", ".join(dict.fromkeys(call.function.name for call in decoded.calls))
    return action if decoded.message == action else "answer"


Outcome = tuple[str | None, str]


def _loop(context: EnvView, rng: random.Random, expert: str) -> Outcome:
    if not context.previous_outputs:
        return None, ""
    return context.previous_outputs[-1], "repeated the previous output"


def _premature_success(context: EnvView, rng: random.Random, expert: str) -> Outcome:
    return context.protocol.final_turn(), "declared success early"


def _env_failure(mode: str) -> Any:
    def misbehave(context: EnvView, rng: random.Random, expert: str) -> Outcome:
        action = failure_action(context.env, mode, rng)
        if action is None:
            return None, ""
        return context.protocol.render(action, _thought(rng, action)), f"action {action!r}"

    return misbehave


def _verbose_filler(context: EnvView, rng: random.Random, expert: str) -> Outcome:
    style = rng.choice(("english", "japanese", "repetition"))
    if style == "english":
        filler = " ".join(rng.sample(ENGLISH_FILLER, rng.randint(2, 4)))
    elif style == "japanese":
        filler = "".join(rng.sample(JAPANESE_FILLER, rng.randint(2, 4)))
    else:
        filler = " ".join([rng.choice(ENGLISH_FILLER + JAPANESE_FILLER)] * rng.randint(5, 12))
    thought = f"{filler} {_thought(rng, expert)}"
    text = context.protocol.render(expert, thought)
    if filler not in text:  # the protocol renders no thought (one command per line): no room for filler
        return None, ""
    return text, f"{style} filler"


def _format_violation(context: EnvView, rng: random.Random, expert: str) -> Outcome:
    protocol = context.protocol
    variants = ["drop_tag", "second_action", "fences"]
    rng.shuffle(variants)
    for variant in variants:
        if variant == "drop_tag":
            rendered = protocol.render(expert)
            position = rendered.rfind(expert)
            text = rendered[position:] if position > 0 else None
        elif variant == "second_action":
            admissible = context.env.admissible_actions() or [expert]
            other = rng.choice(admissible)
            text = f"{protocol.render(expert, _thought(rng, expert))}\n{protocol.render(other)}"
        else:
            text = f"```\n{protocol.render(expert, _thought(rng, expert))}\n```"
        if text is not None and not protocol.parse(text).format_ok:
            return text, variant
    return None, ""


_MISBEHAVIOURS = {
    "loop": _loop,
    "premature_success": _premature_success,
    "verbose_filler": _verbose_filler,
    "format_violation": _format_violation,
}


def scripted_teacher(config: TeacherConfig) -> ScriptedTeacher:
    """The registry's factory for backend ``scripted`` (rates from ``teacher.scripted``)."""
    return ScriptedTeacher(config.scripted, model=config.model or "scripted-expert")
