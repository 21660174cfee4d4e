"""Success claims in agent text, read against a household goal.

Real agents rarely write the benchmark's ``Task succeeded.``; they assert the task or its
final step done in their own words:

* the task: "I have completed the task.", "The task is complete.", "Done!", "All done.",
  "The goal has been achieved.", "Task succeeded.";
* the goal state: "Done, the apple is now in the fridge.", "The hot egg has been placed on
  the diningtable.", "Both soapbars are now in the garbagecan.";
* the final step: "Now I put the apple in diningtable 1.", "I have put two soapbars in the
  garbagecan.", "I've heated the egg and placed it on the diningtable.", "Placed the mug
  in the coffeemachine.";
* for ``look at X under the lamp``: "Now I look at the cd under the desklamp." (the final
  step), "I have turned on the desklamp." (only the lamp: judged by whether the env turned
  one on).

A plan, a condition or a question naming the final step ("Next, I need to put it in the
fridge.", "Once the apple is in the fridge, the task is done.", "Did I put it in the
fridge?") is not a claim. Whether a claim is *premature* is decided by the labeler from what
the env confirmed (``household_state``); this module only reads text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from prefbuild.labelers.household_text import Goal

TASK = "task"  # the task as a whole is said to be done
GOAL = "goal"  # the goal state, or the goal's final step, is said to be done
LAMP = "lamp"  # the final step of a look-at-under-the-lamp goal is said to be done
LAMP_ON = "lamp_on"  # only the lamp is said to be on ("I have turned on the desklamp.")


@dataclass(frozen=True)
class Claim:
    """One sentence asserting success: its ``kind`` (task, goal, lamp or lamp_on) and the goal objects it
    says were put (2 for "two soapbars", else 1)."""

    sentence: str
    kind: str
    count: int = 1


# Splits at whitespace after a sentence mark and at line breaks: ``(?<=[.!?。！？])\s+|\n+``, written so that
# every match starts with a whitespace character (the same splits, cheaper to scan for).
_SENTENCE_SPLIT = re.compile(r"\s(?:(?<=[.!?。！？]\s)\s*|(?<=\n)\n*)")
# A sentence can only claim the whole task done when it holds one of these words (cheap pre-check);
# a goal claim names the goal receptacle, a look claim the lamp.
_TASK_WORDS = re.compile(
    r"task|goal|objective|mission|done|complet|accomplish|succe|finish|everything|タスク", re.IGNORECASE
)


# The characters that IGNORECASE matching or lower() may read as ASCII letters (the long s, the dotless i, the
# Kelvin sign, ligatures, ...; the tests check the list against the Unicode tables).
_FOLDS_TO_ASCII = re.compile("[\u00df\u0130\u0131\u0149\u017f\u01f0\u1e96-\u1e9a\u1e9e\u212a\ufb00-\ufb06]")


def _word_view(text: str) -> str | None:
    """``text.lower()`` when the ASCII words an IGNORECASE pattern matches in ``text`` are exactly the
    substrings of it (ASCII text, or text with none of ``_FOLDS_TO_ASCII``: the other characters never
    match an ASCII letter and lower to no ASCII character); else None."""
    if text.isascii() or _FOLDS_TO_ASCII.search(text) is None:
        return text.lower()
    return None


def _holds_task_word(view: str) -> bool:
    """``view`` (a ``_word_view``) holds one of ``_TASK_WORDS``; a substring test per word is cheaper than
    the alternation."""
    return (
        "task" in view
        or "goal" in view
        or "objective" in view
        or "mission" in view
        or "done" in view
        or "complet" in view
        or "accomplish" in view
        or "succe" in view
        or "finish" in view
        or "everything" in view
        or "タスク" in view
    )


def _has_task_word(text: str) -> bool:
    """``_TASK_WORDS.search(text)`` finds something."""
    view = _word_view(text)
    return _TASK_WORDS.search(text) is not None if view is None else _holds_task_word(view)


# Words before a claim, anywhere in its sentence, that make it a plan or a condition ("I will put",
# "next", "once it is in the fridge, the task is done").
_PLAN_BEFORE = re.compile(
    r"\b(?:need|needs|will|would|should|must|can|could|going\s+to|in\s+order|how|whether|to\s+make\s+sure|"
    r"check|next|later|let\s+me|let's|plan|want|wants|try|trying|tries|i'll|we'll|shall|may|might|"
    r"until|once|before|when|if|unless|maybe|perhaps|probably|supposed)\b",
    re.IGNORECASE,
)
# Words that negate a claim or make it conditional within its own clause ("I could not find it, but now
# I have put it ..." is a claim; "after heating the egg, I placed it ..." too).
_CONDITION_BEFORE = re.compile(r"\b(?:not|never|no|nothing|after|without|yet)\b|n't\b", re.IGNORECASE)
_PLAN_START = re.compile(r"^\W*(?:and\s+)?(?:then|first|second|finally,\s*i\s+will)\b", re.IGNORECASE)
_HEDGES_AFTER = re.compile(r"^\W*(?:yet|once|when|after|if|until|unless|next|later|soon)\b", re.IGNORECASE)
_CLAUSE_BREAK = re.compile(r"[,;:]|\bbut\b|\bso\b", re.IGNORECASE)

# "The task is complete.", "I have completed the task.", "Mission accomplished."
_TASK_CLAIM = re.compile(
    r"\b(?:task|goal|objective|mission|job)\s+(?:has\s+(?:now\s+)?been\s+|have\s+been\s+|is\s+(?:now\s+)?|was\s+|'s\s+)?"
    r"(?:now\s+)?(?:successfully\s+)?(?:succeeded|completed|complete|done|finished|accomplished|solved|achieved|met)\b"
    r"|\b(?:i|we)\s*(?:(?:have|'ve)\s+)?(?:now\s+)?(?:successfully\s+)?(?:completed|finished|accomplished|solved|achieved)"
    r"\s+(?:all\s+)?(?:the|this|my|our)\s+(?:task|goal|objective|mission|steps)\b"
    r"|\beverything\s+(?:is\s+|has\s+been\s+)?(?:now\s+)?(?:done|complete|completed|finished)\b"
    r"|\b(?:i|we)\s*(?:am|'m|are|'re)\s+(?:all\s+)?(?:done|finished)(?:\s+(?:here|now|with\s+(?:the|this|my)\s+task))?"
    r"(?=\W*$)"
    r"|\b(?:successfully\s+completed|mission\s+accomplished|task\s+success(?:ful)?)\b"
    r"|\b(?:this|that|which)\s+(?:completes|finishes|accomplishes)\s+the\s+(?:task|goal)\b"
    r"|タスク(?:は|を)?(?:完了|達成|成功)",
    re.IGNORECASE,
)
# "Done.", "Done!", "All done.", "Done, ..." at the start of a sentence.
_DONE_OPENING = re.compile(r"^\W*(?:all\s+)?(?:done|finished|completed)\b\s*(?P<sep>[,.!:;-]|$)", re.IGNORECASE)
# "..., done." closing a sentence that states the goal ("The cd is under the desklamp, done.")
_DONE_CLOSING = re.compile(
    r"[,;:\u2013\u2014-]\s*(?:all\s+)?(?:done|finished|complete|completed)\s*[.!]*\s*$", re.IGNORECASE
)

_ADVERBS = r"(?:(?:have|has|had|'ve|just|now|successfully|finally|already|then|also|carefully|finished|done)\s+)*"
# The processing steps that may precede the final put in one claim ("heated the egg and placed it ...").
_PROCESSED = (
    r"(?:heat|heated|warm|warmed|microwaved|cool|cooled|chill|chilled|refrigerated|clean|cleaned|wash|washed|rinse|"
    r"rinsed|take|taken|took|pick\s+up|picked\s+up|grab|grabbed|found|fetched|carried|brought)"
)
_PUT_VERBS = r"(?:put|placed|moved|dropped|delivered|set|placing|putting)"
# "I (have) put ...", "I've heated the egg and placed it ..."
_AGENT_PUT = re.compile(
    rf"\b(?:i|we)\s*{_ADVERBS}(?:{_PROCESSED}\b[^.!?\n]{{0,60}}?\b(?:and|,)\s+(?:then\s+)?{_ADVERBS})?{_PUT_VERBS}\b"
    r"(?P<rest>[^.!?\n]*)",
    re.IGNORECASE,
)
# "..., which matches having put both pencils away in the dresser 1."
_HAVING_PUT = re.compile(
    r"\bhaving\s+(?:just\s+|now\s+|already\s+|successfully\s+)*(?:put|placed|moved|dropped)\b(?P<rest>[^.!?\n]*)",
    re.IGNORECASE,
)
# "Placed the mug in the coffeemachine." (a past participle opening the sentence)
_BARE_PUT = re.compile(
    r"^\W*(?:(?:now|finally|ok(?:ay)?|great|good)\W+)?(?:successfully\s+)?(?:placed|moved|dropped)\b(?P<rest>[^.!?\n]*)",
    re.IGNORECASE,
)
# "Knife cleaned and placed in drawer 1." (a subject and a participle, no verb)
_ELLIPTIC = re.compile(
    r"^\W*(?:now\W+)?(?P<target>(?:the\s+)?(?:[a-z]+\s+){0,2}?[a-z]+(?:\s+\d+)?)\s+"
    r"(?:(?:heated|cooled|cleaned|washed|rinsed)\s+and\s+)?(?:placed|put|moved|dropped|delivered)\b(?P<rest>[^.!?\n]*)",
    re.IGNORECASE,
)
_AUXILIARY = re.compile(
    r"\b(?:be|been|being|is|are|was|were|should|will|would|must|can|could|to|need|needs|i|we|you)\b", re.IGNORECASE
)
# "<subject> is now in ...", "<subject> has been placed on ...", "<subject> was put in ..."
_STATE_VERBS = r"is|are|was|were|has\s+been|have\s+been|'s|'re|sits|lies|rests|stands"
_STATE_ADVERB = r"(?:now|successfully|finally|already|safely|correctly|properly)"
_POSTURE = r"(?:sitting|lying|resting|standing)"
_STATE_ADJECTIVE = r"(?:hot|heated|warm|cool|cooled|cold|chilled|clean|cleaned|washed)"
_PROCESSED_PARTICIPLE = r"(?:heated|cooled|cleaned|washed)"
_PLACED_PARTICIPLE = r"(?:put|placed|moved|set|dropped|stored)"
_STATE_PREPOSITION = r"(?:in/on|inside|into|onto|in|on|at)"
_STATE = re.compile(
    rf"\b(?P<verb>{_STATE_VERBS})\s+"
    rf"(?P<adverbs>(?:{_STATE_ADVERB}\s+)*)"
    rf"(?:{_POSTURE}\s+)?"
    rf"(?:{_STATE_ADJECTIVE}\s+and\s+(?:now\s+)?)?"
    rf"(?P<participle>(?:{_PROCESSED_PARTICIPLE}\s+and\s+)?{_PLACED_PARTICIPLE}\s+)?"
    rf"{_STATE_PREPOSITION}\b(?P<rest>[^.!?\n]*)",
    re.IGNORECASE,
)
# What a _STATE match starts with, in lowered text: its verb, then the first of the optional parts or the
# preposition (exact pre-test: built from the same parts).
_STATE_START = re.compile(
    rf"(?:{_STATE_VERBS})\s+(?:{_STATE_ADVERB}|{_POSTURE}|{_STATE_ADJECTIVE}|{_PROCESSED_PARTICIPLE}|"
    rf"{_PLACED_PARTICIPLE}|{_STATE_PREPOSITION})"
)
_PREPOSITION = re.compile(r"\b(?:in/on|inside|into|onto|in|on|to|at)\b", re.IGNORECASE)
# "Now I have a clean knife in drawer 1."
_HAVE_IN = re.compile(
    r"\b(?:i|we)\s*(?:now\s+)?(?:have|'ve\s+got|got)\s+(?P<target>(?:a|an|the|two|both|some)\b[^.!?\n,;]{0,40}?)\s+"
    r"(?:in/on|inside|in|on)\b(?P<rest>[^.!?\n]*)",
    re.IGNORECASE,
)
# "I put the apple in the fridge, but nothing happened." reports a failed attempt.
_FAILED_AFTER = re.compile(
    r"\b(?:but|however|though|yet)\b[^.!?\n]*\b(?:nothing|fail\w*|not|n't|didn|wasn|unable|no)\b|\bwrong\b",
    re.IGNORECASE,
)
_PRONOUN = re.compile(r"\b(?:it|they|them|both)\b", re.IGNORECASE)
_NOW = re.compile(r"\bnow\b", re.IGNORECASE)
# "Now I look at the cd under the desklamp.", "I have turned on the desklamp."
_LOOK_CLAIM = re.compile(
    rf"\b(?:i|we)\s*{_ADVERBS}(?:{_PROCESSED}\b[^.!?\n]{{0,60}}?\b(?:and|,)\s+(?:then\s+)?{_ADVERBS})?"
    r"(?P<verb>looked\s+at|look\s+at|(?:am|'m)\s+(?:now\s+)?(?:looking\s+at|examining)|examined|"
    r"turned\s+on|switched\s+on|used)\b"
    r"(?P<rest>[^.!?\n]*)",
    re.IGNORECASE,
)
# "two soapbars", "2 soapbars", "the second soapbar"; not "soapbar 2" (an instance name).
_TWO = re.compile(r"\b(?:two|both|second|all)\b|(?<![a-z] )\b2\b(?!\s*\))", re.IGNORECASE)
_ONE = re.compile(r"\b(?:first|one|1st|another)\b", re.IGNORECASE)
# Words people use for a receptacle type besides its name ("table" for diningtable).
RECEPTACLE_ALIASES: dict[str, tuple[str, ...]] = {
    "diningtable": ("table",),
    "coffeetable": ("table",),
    "sidetable": ("table",),
    "countertop": ("counter",),
    "sinkbasin": ("sink",),
    "bathtubbasin": ("bathtub", "tub"),
    "garbagecan": ("trash", "bin", "garbage"),
    "stoveburner": ("stove", "burner"),
    "coffeemachine": ("coffee machine",),
}


def _compact(text: str) -> str:
    return re.sub(r"[\s/]+", "", text.lower())


_ALIAS_PATTERNS: dict[str, re.Pattern[str]] = {
    receptacle: re.compile(r"\b(?:" + "|".join(map(re.escape, aliases)) + r")\b")
    for receptacle, aliases in RECEPTACLE_ALIASES.items()
}


def _names_receptacle(text: str, receptacle: str) -> bool:
    lowered = text.lower()
    if receptacle in lowered or receptacle in lowered.replace(" ", "").replace("/", ""):
        return True
    alias = _ALIAS_PATTERNS.get(receptacle)
    if alias is None or not any(name in lowered for name in RECEPTACLE_ALIASES[receptacle]):
        return False  # exact: the alias pattern matches one of the aliases as it is written
    return alias.search(lowered) is not None


def _negated(text: str, receptacle: str) -> bool:
    """Every mention of the receptacle in ``text`` is negated ("..., not the coffeemachine", "instead of the
    fridge")."""
    names = "|".join(re.escape(name) for name in (receptacle, *RECEPTACLE_ALIASES.get(receptacle, ())))
    mentions = re.findall(rf"(\b(?:not|n't|instead\s+of|rather\s+than)\s+(?:\w+\s+){{0,2}})?\b(?:{names})", text,
                          re.IGNORECASE)
    return bool(mentions) and all(mentions)


def _hedged(sentence: str, start: int) -> bool:
    """The words before ``start`` make the claim a plan, a question, a condition or a negation."""
    before = sentence[:start]
    if _PLAN_BEFORE.search(before) or _PLAN_START.search(before):
        return True
    clause = _CLAUSE_BREAK.split(before)[-1]
    return bool(_CONDITION_BEFORE.search(clause))


def _count(text: str, goal: Goal) -> int:
    if _ONE.search(text):
        return 1
    if _TWO.search(text) or (goal.kind == "puttwo" and goal.obj + "s" in _compact(text)):
        return 2
    return 1


def _task_claim(sentence: str) -> Claim | None:
    opening = _DONE_OPENING.match(sentence)
    if opening is not None:
        rest = sentence[opening.end() :].strip()
        if not rest or not re.search(r"[a-z]", rest, re.IGNORECASE):
            return Claim(sentence, TASK)
    match = _TASK_CLAIM.search(sentence)
    if match and not _hedged(sentence, match.start()) and not _HEDGES_AFTER.search(sentence[match.end() :]):
        return Claim(sentence, TASK)
    closing = _DONE_CLOSING.search(sentence)
    if closing is not None and not _hedged(sentence, closing.start()):
        return Claim(sentence, TASK)
    return None


def _read_task_claim(sentence: str) -> Claim | None:
    """``_task_claim(sentence)`` if the sentence holds a task word (``_has_task_word``), else None."""
    lowered = _word_view(sentence)
    if lowered is None:
        return _task_claim(sentence) if _TASK_WORDS.search(sentence) is not None else None
    if not (
        "タスク" in lowered
        or "done" in lowered
        or "complet" in lowered
        or "finish" in lowered
        or "succe" in lowered
        or "accomplish" in lowered
        or "everything" in lowered
        or (
            ("solved" in lowered or "achieved" in lowered or "met" in lowered)
            and ("task" in lowered or "goal" in lowered or "objective" in lowered or "mission" in lowered)
        )
    ):
        # exact: each task-claim pattern needs one of the words above, and task, goal, objective or mission
        # (the other task words) claim only beside solved, achieved or met (the words are task words)
        return None
    return _task_claim(sentence)


# Filler sentences repeat within a text and across texts; short ones are cached (memory stays bounded).
_CACHED_SENTENCE = 512
_sentence_task_claim = lru_cache(maxsize=4096)(_read_task_claim)


# Words one of which each pattern needs, searched in the lowered ASCII sentence (exact pre-tests: a
# sentence without them cannot match). The put patterns need a put verb (``_PUT_VERBS``, or placed,
# moved, dropped: ``_has_put_word``), ``_HAVE_IN`` needs have or got, ``_HAVING_PUT`` having, ``_STATE`` what
# ``_STATE_START`` finds.
def _has_put_word(lowered: str) -> bool:
    """``lowered`` holds put, placed, moved, dropped, delivered, set or placing."""
    return (
        "put" in lowered
        or "placed" in lowered
        or "moved" in lowered
        or "dropped" in lowered
        or "delivered" in lowered
        or "set" in lowered
        or "placing" in lowered
    )


def _has_look_word(lowered: str) -> bool:
    """A look claim says the object is under the lamp, or names one of ``_LOOK_CLAIM``'s verbs."""
    return (
        "under" in lowered
        or "look" in lowered
        or "examin" in lowered
        or "turned" in lowered
        or "switched" in lowered
        or "used" in lowered
    )


def _may_claim_goal(text: str, goal: Goal) -> bool:
    """``text`` holds a word that a goal claim (``_goal_claim``) or a look claim (``_lamp_claim``) of
    ``goal`` needs; text without a ``_word_view`` is always read in full."""
    lowered = _word_view(text)
    if lowered is None:
        return True
    if goal.kind == "examine":
        return _has_look_word(lowered)
    return (
        _has_put_word(lowered)
        or "have" in lowered
        or "got" in lowered
        or _STATE_START.search(lowered) is not None
    )


def _plain(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """``pattern`` without IGNORECASE. Its letters are lower-case, so on the lowered form of an ASCII text it
    matches where ``pattern`` matches on the text, with the same group spans (ASCII case folding is lower(),
    which keeps every offset), several times cheaper."""
    return re.compile(pattern.pattern, pattern.flags & ~re.IGNORECASE)


_PLAIN = {pattern: _plain(pattern) for pattern in (_AGENT_PUT, _BARE_PUT, _HAVE_IN, _ELLIPTIC, _HAVING_PUT, _STATE)}


def _group(sentence: str, match: re.Match[str], name: str) -> str:
    """The text of group ``name`` of ``match`` (found in ``sentence`` or its lowered form) in ``sentence``."""
    return sentence[match.start(name) : match.end(name)]


def _goal_claim(sentence: str, goal: Goal, after_put: bool = False) -> Claim | None:
    """The sentence asserts a goal object put into a goal receptacle (agentive, bare or as a state). Once a
    put was tried (``after_put``), a plain state ("The remotecontrol 1 is in the armchair 1.") says it
    got there."""
    view = _word_view(sentence)  # None: no pre-test
    put_word = view is None or _has_put_word(view)
    have_word = view is None or "have" in view or "got" in view
    having_word = put_word and (view is None or "having" in view)
    lowered = view if sentence.isascii() else None  # ASCII text is matched lowered (see _plain)
    for pattern, needed in (
        (_AGENT_PUT, put_word),
        (_BARE_PUT, put_word),
        (_HAVE_IN, have_word),
        (_ELLIPTIC, put_word),
        (_HAVING_PUT, having_word),
    ):
        if not needed:
            continue  # the pattern needs a word the sentence lacks
        match = pattern.search(sentence) if lowered is None else _PLAIN[pattern].search(lowered)
        if match is None:
            continue
        # the checks below only filter (any order gives the same claim): the cheap target test first
        rest = _group(sentence, match, "rest")
        named = pattern is _HAVE_IN or pattern is _ELLIPTIC  # the object comes before the verb
        target = _group(sentence, match, "target") if named else _PREPOSITION.split(rest, 1)[0]
        if goal.obj not in _compact(target) and (named or not _PRONOUN.search(target)):
            continue
        if _hedged(sentence, match.start()):
            continue
        if _HEDGES_AFTER.search(rest) or _FAILED_AFTER.search(rest) or not _names_receptacle(rest, goal.receptacle):
            continue
        if _negated(rest, goal.receptacle):
            continue  # "placed in the sinkbasin 1, not the coffeemachine" says where it did not go
        if pattern is _ELLIPTIC and (not _PREPOSITION.match(rest.strip()) or _AUXILIARY.search(target)):
            continue  # "Knife placed in drawer 1", not "Knife put aside" nor "The knife should be placed ..."
        return Claim(sentence, GOAL, _count(sentence[: match.end()], goal))
    if view is not None and _STATE_START.search(view) is None:
        return None  # _STATE cannot match
    for match in _STATE.finditer(sentence) if lowered is None else _PLAIN[_STATE].finditer(lowered):
        clause = _CLAUSE_BREAK.split(sentence[: match.start()])[-1]
        if goal.obj not in _compact(clause) and not _PRONOUN.search(clause):
            continue
        rest = _group(sentence, match, "rest")
        if not _names_receptacle(rest, goal.receptacle) or _HEDGES_AFTER.search(rest) or _FAILED_AFTER.search(rest):
            continue
        if _negated(rest, goal.receptacle):
            continue
        # "The apple is in the fridge" may describe where it was found; a claim says it got there, or
        # names the state the goal asks for ("The hot potato is on the diningtable 1.", "Both pencils are ...").
        settled = (
            after_put
            or match.group("participle")
            or match.group("adverbs").strip()
            or _NOW.search(rest)
            or _NOW.search(clause)
            or _goal_state_named(clause, goal)
        )
        if not settled or _hedged(sentence, match.start()):
            continue
        return Claim(sentence, GOAL, _count(clause, goal))
    return None


_STATE_WORDS = {
    "heat": re.compile(r"\b(?:hot|heated|warm|warmed)\b", re.IGNORECASE),
    "cool": re.compile(r"\b(?:cool|cooled|cold|chilled)\b", re.IGNORECASE),
    "clean": re.compile(r"\b(?:clean|cleaned|washed)\b", re.IGNORECASE),
    "puttwo": re.compile(r"\b(?:two|both)\b", re.IGNORECASE),
}


def _goal_state_named(subject: str, goal: Goal) -> bool:
    """The subject names the state the goal asks for: "the hot potato", "both pencils"."""
    pattern = _STATE_WORDS.get(goal.kind)
    return bool(pattern and pattern.search(subject))


def _lamp_claim(sentence: str, goal: Goal) -> Claim | None:
    if not _may_claim_goal(sentence, goal):
        return None
    obj = re.escape(goal.obj)
    under = re.search(
        rf"\b{obj}\b[^.!?\n]*?\b(?:is|are|'s)\s+(?:now\s+)?under\s+the\s+(?:\w+\s+)?\w*lamp\b"
        rf"|\b(?:holding|hold|held)\s+(?:the\s+|a\s+|an\s+)?{obj}\b[^.!?\n]{{0,20}}?\bunder\s+the\s+(?:\w+\s+)?\w*lamp\b",
        sentence,
        re.IGNORECASE,
    )  # "The watch is under the lamp.", "I am holding the keychain under the lit desklamp."
    if under is not None and not _hedged(sentence, under.start()):
        return Claim(sentence, LAMP)
    match = _LOOK_CLAIM.search(sentence)
    if match is None or _hedged(sentence, match.start()):
        return None
    rest = match.group("rest")
    # "The desklamp 1 is on, and I am looking at the cellphone under it": the lamp named before, "it" after
    lamp_named = "lamp" in _compact(rest) or (
        "lamp" in sentence.lower()
        and re.search(r"\bunder\s+(?:it|its\s+light|the\s+(?:\w+\s+)?light)\b", rest, re.IGNORECASE)
    )
    if _HEDGES_AFTER.search(rest) or _FAILED_AFTER.search(rest) or not lamp_named:
        return None
    verb = match.group("verb").lower()
    if verb.startswith(("turned", "switched", "used")) and goal.obj not in _compact(rest):
        return Claim(sentence, LAMP_ON)
    return Claim(sentence, LAMP)


def find_claim(text: str | None, goal: Goal | None) -> Claim | None:
    """The first sentence of ``text`` that asserts the task, the goal or its final step done.

    Args:
        text: a thought, a ReAct ``think:`` line or a free-text action.
        goal: the parsed household goal; without it only whole-task claims are found.

    Returns:
        The claim, or None when no sentence asserts success (plans, conditions, questions
        and negations are not claims).

    Example:
        >>> from prefbuild.labelers.household_text import parse_goal
        >>> heat = parse_goal("heat some egg and put it in diningtable")
        >>> find_claim("I've heated the egg and placed it on the diningtable.", heat).kind
        'goal'
        >>> find_claim("Next, I need to put it on the diningtable.", heat) is None
        True
    """
    claims = find_claims(text, goal)
    return claims[0] if claims else None


def find_claims(text: str | None, goal: Goal | None, *, after_put: bool = False) -> tuple[Claim, ...]:
    """Every sentence of ``text`` that asserts the task, the goal or its final step done, in order
    ("I put the peppershaker in drawer 1. The task is complete." holds a goal claim and a task claim).

    Args:
        text: a thought, a ReAct ``think:`` line or a free-text action.
        goal: the parsed household goal; without it only whole-task claims are found.
        after_put: a put was tried earlier in the episode; a plain state ("The mug 1 is in the
            coffeemachine 1.") then claims the put instead of describing where the object was found.

    Returns:
        The claims, one or two per sentence, in text order.

    Example:
        >>> from prefbuild.labelers.household_text import parse_goal
        >>> goal = parse_goal("put a peppershaker in drawer")
        >>> [claim.kind for claim in find_claims("I put the peppershaker in drawer 1. The task is complete.", goal)]
        ['goal', 'task']
    """
    if not text:
        return ()
    words = _claim_words(text)
    if not words:
        return ()  # the commonest case: no word that any claim needs
    if words & _TASK_WORD:
        return _find_claims(text, goal, after_put)
    if (
        goal is None
        or not words & (_LOOK_CLAIM_WORD if goal.kind == "examine" else _GOAL_CLAIM_WORD)
        or not _names_receptacle(text, _named(goal))
    ):
        return ()  # no sentence can hold a task claim, nor a goal claim (both needs hold per sentence)
    return _find_claims(text, goal, after_put)


_TASK_WORD = 1  # _has_task_word
_GOAL_CLAIM_WORD = 2  # _may_claim_goal of a goal that is not a look task
_LOOK_CLAIM_WORD = 4  # _may_claim_goal of a look task


# Thoughts and actions repeat across steps and episodes; a bounded cache keeps memory flat.
@lru_cache(maxsize=8192)
def _claim_words(text: str) -> int:
    """Which claims ``text`` holds the words of, as bits: a task word (then the others are not needed), else
    a goal claim's or a look claim's (``_may_claim_goal``)."""
    lowered = _word_view(text)
    if lowered is None:
        return _TASK_WORD if _TASK_WORDS.search(text) else _GOAL_CLAIM_WORD | _LOOK_CLAIM_WORD  # read in full
    if _holds_task_word(lowered):
        return _TASK_WORD
    words = _LOOK_CLAIM_WORD if _has_look_word(lowered) else 0
    if _has_put_word(lowered) or "have" in lowered or "got" in lowered or _STATE_START.search(lowered):
        words |= _GOAL_CLAIM_WORD
    return words


def _named(goal: Goal) -> str:
    """What a goal claim must name: the receptacle, or the lamp of a look task."""
    return "lamp" if goal.kind == "examine" else goal.receptacle


@lru_cache(maxsize=4096)
def _find_claims(text: str, goal: Goal | None, after_put: bool = False) -> tuple[Claim, ...]:
    found: list[Claim] = []
    for sentence in _SENTENCE_SPLIT.split(text):
        sentence = sentence.strip()
        if not sentence or sentence.endswith("?"):
            continue
        if goal is not None and _names_receptacle(sentence, _named(goal)):
            claim = _lamp_claim(sentence, goal) if goal.kind == "examine" else _goal_claim(sentence, goal, after_put)
            if claim is not None:
                found.append(claim)
        # "The bread 2 is heated and now placed on the countertop 1, so the task is done.": both claims
        task = _sentence_task_claim(sentence) if len(sentence) <= _CACHED_SENTENCE else _read_task_claim(sentence)
        if task is not None:
            found.append(task)
    return tuple(found)


__all__ = ["GOAL", "LAMP", "LAMP_ON", "RECEPTACLE_ALIASES", "TASK", "Claim", "find_claim", "find_claims"]
