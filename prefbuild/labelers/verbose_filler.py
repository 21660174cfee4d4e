"""Verbose filler: words that cost tokens and latency without moving the agent.

What it finds in one turn, each a reason of the same label:

* conversational filler and meta talk from the phrase lists ("Certainly!", "As an AI",
  承知いたしました) — one strong phrase is enough; weak politeness words ("please",
  "thanks") only count from ``min_weak_hits`` on, so one polite word in a terse thought
  is not labelled;
* degenerate repetition: the same sentence ``repeat_min`` times in one thought, the most
  common verbosity of small models;
* a thought over ``max_thought_tokens``, or a long one that goes round its guesses ("it could be
  ..., or maybe ..., it could be anywhere") without deciding;
* restating the task again after an earlier thought already did;
* a lone interjection addressed to the environment opening the turn ("Great!", "Thanks for
  the response."): agents in text environments talk to a program, not to a person;
* restating the previous observation at length (re-listing what the env just showed);
* optionally (``multiple_actions``) more than one action line in a turn; off by default,
  because the benchmark parser rejects such a turn and format_violation reports it.

A one-line mention of the goal is not filler. In envs where the agent talks with a person
(``user_envs``: tau2's customer, BFCL's user), a turn without a tool call is a message to that
person: a courtesy ("Thanks, John.", "Have a great day!"), a polite word, or the results it
reports are what such a message is for, so there only stacked filler (two strong phrases or more:
"Absolutely! I'd be happy to help! Great question!"), degenerate repetition and rambling count;
its length is ``overlong``'s to judge.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from operator import itemgetter
from typing import ClassVar

from prefbuild.labelers.base import Labeler
from prefbuild.labelers.phrases import PhraseMatcher, PhraseMatchers, ascii_words, bundled_lists
from prefbuild.labelers.service_success import is_message
from prefbuild.labelers.text import normalize_text, short, task_observation, token_count
from prefbuild.records import FailureMode, Label, Trajectory

_SENTENCES = re.compile(r"[^.!?。！？\n]+")
_ACTION_LINE = re.compile(r"(?im)^[ \t>*]*(?:action|act)[ \t]*:")
_WORDS = re.compile(r"\w+")
_CALL_BLOCK = re.compile(r"<tool_call>.*?(?:</tool_call>|$)", re.DOTALL)
_NGRAM = 8
_THANKS = (  # "Thanks for the response.", "Thank you for sharing the schema.": to the end of the sentence
    r"thanks?(?:\s+you)?(?:\s+(?:so|very)\s+much)?"
    r"(?:\s+for\s+(?:the|your|this|that|these|all|sharing|providing|showing|confirming)\b[^.!?\n,]{0,60})?"
)
_INTERJECTION = re.compile(
    r"^\W*(?:(?:great|perfect|excellent|awesome|wonderful|nice|good|cool|alright|got\s+it|sure|"
    r"(?:great|good|nice|excellent)\s+(?:job|work)|well\s+done|" + _THANKS + r")\s*[!.]"
    # "Great, let's begin.", "Excellent, I have it.": the strong ones before a comma and at most three
    # words make a sentence that is all interjection ("Great, there is a mug 1 here." reports a find)
    r"|(?:great|perfect|excellent|awesome|wonderful|cool|nice|good|got\s+it|sure|alright|" + _THANKS
    + r")\s*,(?:\s*[\w']+){0,3}"
    r"\s*(?:[.!?\n]|$))",
    re.IGNORECASE,
)
_INTERJECTION_INITIALS = "gpeawncstGPEAWNCST"
_ASCII_NON_WORD = "".join(chr(code) for code in range(128) if not (chr(code).isalnum() or chr(code) == "_"))
_NAMED = re.compile(r"\b([a-z]+) (\d+)\b")  # household objects and receptacles: "creditcard 1"
# Words of a plan, an inference or a negation: a thought holding one does more than narrate.
_REASONING = re.compile(
    r"\b(?:need|needs|will|should|next|let'?s|let me|going to|plan|must|have to|try|find|search|look for|"
    r"check|go to|head|then|goal|task|want|can|could|might|maybe|probably|perhaps|likely|if|so|because|since|not|"
    r"in order to|to (?:look at|examine|use|turn on|see))\b|"  # a purpose: "... the desklamp 1 to look at it"
    r"n't\b|'ll\b",
    re.IGNORECASE,
)
_COMPUTES = re.compile(r"[+=]|\b(?:adding|add up|sum|summing|total|minus|plus|difference|because)\b", re.IGNORECASE)
_CONCLUDES = re.compile(r"[+=<>]|\b(?:so|therefore|thus|hence|than|because|which means|based on)\b", re.IGNORECASE)
# Guesses that go round without deciding ("it could be ..., or maybe ..., or maybe ..., it could be anywhere").
_HEDGE = re.compile(
    r"\b(?:maybe|could|might|perhaps|possibly|anywhere|somewhere|not sure|hard to say)\b", re.IGNORECASE
)
_HEDGE_WORDS = ("maybe", "could", "might", "perhaps", "possibly", "anywhere", "somewhere", "not sure", "hard to say")


def _token_count(text: str) -> int:
    """token_count: an ASCII text has no CJK character, and its words are what split() finds."""
    return len(text.split()) if text.isascii() else token_count(text)


def _hedge_bound(text: str) -> int:
    """At least ``len(_HEDGE.findall(text))`` for an ASCII ``text``: each guess is an occurrence of its words."""
    lowered = text.lower()
    return sum(lowered.count(word) for word in _HEDGE_WORDS)


# A sentence that opens with a command to itself ("Take it to the toilet.") plans.
_ORDER = re.compile(r"(?:^|[.;!]\s+)(?:take|bring|carry|put|go|head|fetch|pick|open|check|grab)\b", re.IGNORECASE)
_CONTENT_WORD = re.compile(r"[a-z][a-z0-9_]{2,}|\d{2,}(?:\.\d+)?")  # words and numbers (cells re-listed)
_STOP_WORDS = frozenset(
    {"you", "the", "and", "see", "yes", "none", "null", "true", "false", "are", "with", "this", "that", "there",
     "not", "for", "from", "its", "into", "have", "has", "was", "were", "which", "can", "also"}
)


def opening_interjection(text: str) -> str | None:
    """The interjection that opens ``text`` ("Great!", "Thanks for the response."), if any.

    Example:
        >>> opening_interjection("Thanks for the response. The task is to put a fork in a drawer.")
        'Thanks for the response.'
    """
    if text.isascii():
        # Exact pre-test: every interjection starts with one of these letters (any case), after the non-word
        # characters opening the text (of an ASCII text, the ASCII ones).
        opening = text.lstrip(_ASCII_NON_WORD)[:1]
        if not opening or opening not in _INTERJECTION_INITIALS:
            return None
    match = _INTERJECTION.match(text)
    return match.group(0).strip() if match else None


def _last_observations(trajectory: Trajectory, index: int, count: int = 1) -> list[str]:
    """What the env last showed before step ``index``, latest first: the replies to the last ``count``
    commands (a thought's ``OK.`` shows nothing), or for the first turn the room description."""
    shown: list[str] = []
    for earlier in range(index - 1, -1, -1):
        step = trajectory.steps[earlier]
        if step.action is not None or not step.thought:
            shown.append(step.feedback)
            if len(shown) == count:
                return shown
    if not shown and trajectory.steps:
        room = _room(trajectory.steps[0].observation)
        return [room] if room else []
    return shown


def first_command(trajectory: Trajectory) -> int:
    """The index of the first step that ran a command (a ``think:`` line is not one); the steps before it
    have only the scene the env set, nothing it replied."""
    return next(
        (step.index for step in trajectory.steps if step.action and not step.action.lower().startswith("think")),
        len(trajectory.steps),
    )


def _room(first_observation: str) -> str:
    """The household room description a first turn may re-list (a question or a task prompt is a goal,
    whose mention is not filler)."""
    room = task_observation(first_observation)
    return room if room.lower().startswith("you are in the middle of a room") else ""


@lru_cache(maxsize=4096)  # observations and thoughts repeat across steps and episodes
def _content_words(text: str) -> frozenset[str]:
    return frozenset(word for word in _CONTENT_WORD.findall(text.lower()) if word not in _STOP_WORDS)


def restates(thought: str, observation: str, min_words: int, coverage: float) -> bool:
    """The thought re-lists the observation: it holds ``coverage`` of the observation's content
    words (at least five of them) and is at least ``min_words`` words long; a short observation
    (three or four content words) is re-listed when the thought holds all of them and is half as
    long again as the observation ("... So the countertop has bread 1, knife 1 and ..."). Naming the
    values of a result of one or two rows, or adding them up ("21 + 17 = 38"), uses them."""
    if len(thought) < 4 * min_words:
        return False
    words = len(thought.split())
    if words < min_words:
        return False
    shown = _content_words(observation)
    if len(shown) < 3:
        return False
    needed = len(shown) if len(shown) < 5 else coverage * len(shown)  # what either way to True below needs
    # Exact pre-test: a content word of the thought is a substring of its lower-cased text, so the shown
    # words found there are at least the covered ones.
    lowered = thought.lower()
    if sum(word in lowered for word in shown) < needed:
        return False
    covered = len(shown & _content_words(thought))
    if covered < needed:
        return False
    rows = observation.lstrip().startswith("[(")
    if rows and observation.count("(") < 3 and (_CONCLUDES.search(thought) or _COMPUTES.search(thought)):
        return False  # the values of one or two rows quoted on the way to a conclusion ("..., so A is taller")
    lowered = observation.lower()
    if "you see" in lowered and len(_NAMED.findall(lowered.split("you see", 1)[1])) <= 2 and _REASONING.search(thought):
        return False  # one or two things seen, named on the way to a plan ("..., but no potato; I'll check ...")
    if len(shown) < 5:  # only a listing is re-listed: a receptacle's, or a result of three rows or more
        listing = "you see" in lowered or (
            rows and observation.count("(") >= 3 and not _COMPUTES.search(thought)
        )
        # a listing re-listed at length: half as long again as the listing; rows printed with their empty
        # fields (a DESCRIBE) by their cells
        long_enough = words >= (max(12, 3 * len(shown)) if rows else 1.5 * len(observation.split()))
        return listing and covered == len(shown) and long_enough
    return covered >= coverage * len(shown)


def narrates(thought: str, shown: str, min_words: int) -> bool:
    """The thought only narrates what the env just showed: at least ``min_words`` words naming at least
    two things (``sidetable 1``, ``creditcard 1``), every one of them in ``shown``, with no plan,
    inference or negation ("On the shelf 2, I see a book 1. There is a book 1 on shelf 2, which is the
    only object on the shelf 2.").

    Example:
        >>> narrates("On the sidetable 1 there was a creditcard 1 and a watch 1; I picked up the creditcard 1 "
        ...          "and now I carry it.", "On the sidetable 1, you see a creditcard 1, and a watch 1.", 15)
        True
    """
    if len(thought) < 4 * min_words or len(thought.split()) < min_words:
        return False
    # The conditions are pure and all needed: the cheaper ones first.
    named = {f"{name} {number}" for name, number in _NAMED.findall(thought.lower())}
    if len(named) < 2:
        return False
    lowered = shown.lower()
    if not all(name in lowered for name in named):
        return False
    # no plan, inference or negation; no plan in the imperative ("... Take it to the toilet.")
    return not _REASONING.search(thought) and not _ORDER.search(thought)


def repeated_sentence(text: str, minimum: int) -> tuple[str, int] | None:
    """The most repeated sentence of at least three words (or six CJK characters) and its count."""
    if len(text) < 6 * minimum or (text.isascii() and text.count(" ") < 3 * minimum - 1):
        return None  # too short to hold `minimum` sentences of three words
    # The sentences are the runs between sentence ends: fewer than `minimum - 1` ends, fewer than `minimum`.
    ends = text.count(".") + text.count("!") + text.count("?") + text.count("\n")
    if not text.isascii():
        ends += text.count("。") + text.count("！") + text.count("？")
    if ends >= minimum - 1:
        counts: dict[str, int] = {}
        for raw in _SENTENCES.findall(text):
            words = raw.split()
            # normalize_text(raw), whose words these are (lower-casing makes no space)
            sentence = " ".join(words).lower()
            if len(words) >= 3 or (len(sentence) >= 6 and not sentence.isascii()):
                counts[sentence] = counts.get(sentence, 0) + 1
        if counts:
            sentence, count = max(counts.items(), key=itemgetter(1))  # the first most common, as most_common(1)
            if count >= minimum:
                return sentence, count
    if len(text) < 2 * _NGRAM * minimum - 1:
        return None  # `_NGRAM * minimum` words need twice as many characters less one
    lowered = text.lower()
    words = ascii_words(lowered) if lowered.isascii() else _WORDS.findall(lowered)
    # An n-gram counted `minimum` times puts each of its words `minimum` times in the text, at `_NGRAM + minimum - 1`
    # positions at least (its first and last occurrences span that many): exact pre-test on the word counts.
    if len(words) >= _NGRAM * minimum and sum(
        count for count in Counter(words).values() if count >= minimum
    ) >= _NGRAM + minimum - 1:
        grams = Counter(zip(*(words[i:] for i in range(_NGRAM)), strict=False))  # the n-grams in order
        gram, count = grams.most_common(1)[0]
        # Overlapping matches of one n-gram need a period of at least n to be real repeats.
        if count >= minimum * 2 or (count >= minimum and _spread(words, gram) >= minimum):
            return " ".join(gram), count
    return None


def _spread(words: list[str], gram: tuple[str, ...]) -> int:
    """Non-overlapping occurrences of ``gram`` in ``words``."""
    count, index = 0, 0
    while index <= len(words) - len(gram):
        if tuple(words[index : index + len(gram)]) == gram:
            count += 1
            index += len(gram)
        else:
            index += 1
    return count


class VerboseFillerLabeler(Labeler):
    """Labels turns with filler phrases, degenerate repetition, overlong thoughts or several actions."""

    name: ClassVar[str] = "verbose_filler"
    mode: ClassVar[str] = FailureMode.verbose_filler.value
    version: ClassVar[int] = 9
    defaults: ClassVar[dict[str, object]] = {
        "phrase_files": [],  # strong lists; empty = every bundled filler_*.txt
        "weak_phrase_files": [],  # weak lists; empty = every bundled polite_*.txt
        "phrases": [],  # extra strong phrases
        "weak_phrases": [],  # extra weak phrases
        "min_weak_hits": 2,
        "repeat_min": 3,
        "max_thought_tokens": 150,
        "restatement": True,
        "multiple_actions": False,
        "interjections": True,
        "restating_min_words": 15,  # a thought re-listing the last observation is filler from this length on
        "restating_coverage": 0.8,  # share of the observation's content words it repeats
        "rambling_min_tokens": 25,  # a thought from this length on ...
        "rambling_hedges": 5,  # ... holding this many guesses ("maybe", "could be", "anywhere") rambles
        "user_envs": ["tau2", "bfcl"],  # envs whose turns without a tool call are messages to a person
        # what a message to a person may hold without stacking filler: thanks, apologies, a closing wish, an offer
        "person_courtesies": [
            "thank you for your patience", "thanks for your patience", "have a great day", "have a nice day",
            "let me know if", "feel free to", "i apologize", "i apologise", "my apologies", "sorry for the confusion",
            "sorry about that", "apologies for", "rest assured", "i'm here to help", "i am here to help",
        ],
    }

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self._strong = PhraseMatcher(
            self.config["phrase_files"] or bundled_lists("filler_"), extra=self.config["phrases"]
        )
        self._weak = PhraseMatcher(
            self.config["weak_phrase_files"] or bundled_lists("polite_"), extra=self.config["weak_phrases"]
        )
        self._phrases = PhraseMatchers(self._strong, self._weak)
        courtesies = self.config["person_courtesies"]
        self._courtesies = frozenset(" ".join(str(phrase).lower().split()) for phrase in courtesies)
        # Turns repeat a lot ("ACTION: go to cabinet 1"); the text checks are pure, so cache them (bounded: about
        # 0.8 kB a turn, 6 MB in all; a scripted 10,000-task run has 19k distinct turns, recurring far apart).
        self._text_reasons = lru_cache(maxsize=8192)(self._text_reasons_uncached)

    def label(self, trajectory: Trajectory) -> list[Label]:
        config = self.config
        goal = normalize_text(trajectory.task.goal).rstrip(".")
        check_goal = bool(config["restatement"]) and len(goal) >= 12
        goal_seen = False
        min_words = int(config["restating_min_words"])
        coverage = float(config["restating_coverage"])
        ran_command = False  # a step before this one ran a command (see first_command)
        recent: list[str] = []  # what the env showed after the steps so far, latest first (_last_observations)
        room: list[str] | None = None
        labels: list[Label] = []
        text_reasons = self._text_reasons
        least = 4 * min_words  # restates and narrates both need a thought of this many characters at least
        with_person = trajectory.env.name in config["user_envs"]
        for step in trajectory.steps:  # steps[i].index == i (a Trajectory invariant)
            raw = step.raw_output
            if step.tool_calls and "<tool_call>" in raw:
                raw = _CALL_BLOCK.sub(" ", raw).strip()  # a call's arguments are data, not words of the turn
            own = step.thought
            thought = raw if own is None else own
            # A turn without calls that the protocol read as a message (a broken call is no message to anyone).
            to_person = with_person and is_message(step)
            reasons, confidence, opening, normal = text_reasons(raw, thought, to_person)
            if check_goal and len(thought) >= len(goal) and goal in normal:
                if goal_seen:
                    reasons = (*reasons, f"restates the task '{short(goal, 50)}' again")
                    confidence = max(confidence, 0.7)
                goal_seen = True
            if opening:
                reasons = (*reasons, opening)
                confidence = max(confidence, 0.8)
            if len(thought) >= least and not to_person:  # telling a person what a tool returned informs
                if recent:
                    shown = recent
                else:  # nothing replied yet: the room of the first observation
                    if room is None:
                        room = _last_observations(trajectory, 0, 2)
                    shown = room
                if shown and restates(thought, shown[0], min_words, coverage):
                    reasons = (*reasons, f"restates the previous observation '{short(shown[0], 50)}' at length")
                    confidence = max(confidence, 0.8)
                elif ran_command and own and narrates(own, " ".join(shown), min_words):
                    reasons = (*reasons, f"only narrates what the env just showed ('{short(shown[0], 50)}')")
                    confidence = max(confidence, 0.75)
            action = step.action
            if action is not None or not own:
                recent = [step.feedback, recent[0]] if recent else [step.feedback]
            if not ran_command and action and not action.lower().startswith("think"):
                ran_command = True
            if reasons:
                labels.append(self.make_label(step, confidence, "; ".join(reasons)))
        return labels

    def _text_reasons_uncached(
        self, text: str, thought: str, to_person: bool = False
    ) -> tuple[tuple[str, ...], float, str | None, str]:
        """Reasons found in one turn's text alone (everything except restating the task and the
        observation), the reason of an opening interjection, which comes after the task's, and
        ``normalize_text(thought)`` where the thought is long enough to hold a goal (12 characters).
        A message ``to_person`` is held only to stacked filler, repetition and rambling."""
        normal = normalize_text(thought) if len(thought) >= 12 else ""
        reasons: list[str] = []
        confidence = 0.0
        strong, weak = self._phrases.find(text)
        if to_person:  # a courtesy is what a message to a person is for: only the rest can stack up
            strong = [phrase for phrase in strong if " ".join(phrase.lower().split()) not in self._courtesies]
        distinct = dict.fromkeys(strong)
        if len(distinct) >= (2 if to_person else 1):
            reasons.append("filler " + ", ".join(f"'{short(p, 40)}'" for p in distinct))
            confidence = max(confidence, 0.9)
        if not to_person and len(weak) >= int(self.config["min_weak_hits"]):
            reasons.append(f"{len(weak)} politeness markers (" + ", ".join(f"'{p}'" for p in dict.fromkeys(weak)) + ")")
            confidence = max(confidence, 0.75)
        repeated = repeated_sentence(thought, int(self.config["repeat_min"]))
        if repeated:
            reasons.append(f"degenerate repetition: '{short(repeated[0], 60)}' {repeated[1]} times in one thought")
            confidence = max(confidence, 0.95)
        budget = int(self.config["max_thought_tokens"])
        tokens = _token_count(thought) if len(thought) > budget and not to_person else 0  # a token: one character+
        if tokens > budget:
            reasons.append(f"thought of {tokens} tokens (budget {self.config['max_thought_tokens']})")
            confidence = max(confidence, 0.8)
        elif (
            len(thought) >= 100
            and (not thought.isascii() or _hedge_bound(thought) >= int(self.config["rambling_hedges"]))
            and _token_count(thought) >= int(self.config["rambling_min_tokens"])
        ):
            hedges = len(_HEDGE.findall(thought))
            if hedges >= int(self.config["rambling_hedges"]):
                reasons.append(f"rambling thought: {hedges} guesses ('maybe', 'could be', ...) without a decision")
                confidence = max(confidence, 0.75)
        if self.config["multiple_actions"] and text.lower().count("act") > 1:
            actions = len(_ACTION_LINE.findall(text))
            if actions > 1:
                reasons.append(f"{actions} actions in one turn")
                confidence = max(confidence, 0.9)
        opening = opening_interjection(thought) if self.config["interjections"] and not to_person else None
        if not opening:
            return tuple(reasons), confidence, None, normal
        addressed = f"opens with the interjection '{short(opening, 40)}' addressed to the environment"
        return tuple(reasons), confidence, addressed, normal
