"""What a service agent tells its user about the work (tau2's customer, BFCL's user): the words
that say it is done ("All set!", "I've moved your trip", "has been cancelled"), read apart from
questions, negations, hypotheticals, hand-overs and messages that admit a failure."""

from __future__ import annotations

import re

# A service agent telling its user the work is done ("All set!", "I've moved your trip", "has been cancelled").
_DONE_VERBS = (
    r"(?:cancell?ed|moved|processed|updated|booked|rebooked|changed|modified|exchanged|returned|refunded|issued|"
    r"sent|applied|upgraded|added|removed|reset|enabled|disabled|fixed|resolved|completed|submitted|placed|"
    r"transferred|credited|charged|created|deleted|copied|renamed|restored|reactivated|resumed|activated|paid|"
    r"unlocked|replaced|reinstated|renewed|closed|posted|commented|retweeted|sorted|saved|stored|written|shared)"
)
# What is now so ("is now resolved", "is active again", "is now marked as resolved", "is back on").
_STATES = (
    r"(?:cancell?ed|booked|confirmed|updated|active|fixed|resolved|on|off|restored|reactivated|resumed|paid|"
    r"closed|unlocked|working)"
)
_WORK_DONE = re.compile(
    r"\b(?:all set|all done|"
    rf"(?:i|we)(?:'ve| have)\s+(?:now\s+|also\s+|just\s+|successfully\s+){{0,2}}{_DONE_VERBS}|"
    rf"(?:has|have)\s+(?:now\s+)?been\s+(?:successfully\s+)?{_DONE_VERBS}|"
    rf"(?:is|are)\s+now\s+(?:marked\s+as\s+)?{_STATES}|"
    rf"(?:is|are)\s+(?:marked\s+as\s+)?{_STATES}\s+again|"
    rf"(?:is|are)\s+(?:now\s+)?(?:fully\s+)?(?:restored|reactivated|resumed|paid)|"
    r"(?:is|are)\s+(?:now\s+)?back\s+(?:on|up|online|to\s+normal))\b",
    re.IGNORECASE,
)


def work_done_claim(text: str) -> str | None:
    """The words of ``text`` that tell its user the work is done, if any.

    Example:
        >>> work_done_claim("All set! I've moved your ATL to PHL trip.")
        'All set'
        >>> work_done_claim("I'm sorry, I can't cancel this reservation under our policy.") is None
        True
        >>> work_done_claim("I understand. Nothing has been changed on your reservation.") is None
        True
        >>> work_done_claim("I've updated the address; however, I was unable to process the refund.") is None
        True
    """
    if _FAILURE_SAID.search(text):
        return None  # "I updated the address, but I was unable to process the refund": no finished task claimed
    for match in _WORK_DONE.finditer(text):
        clause = text[: match.start()]
        clause = clause[max(clause.rfind(mark) for mark in _CLAUSE_MARKS) + 1 :]
        end = _SENTENCE_END.search(text, match.end())
        if (end is not None and end.group(0) == "?") or _NOT_A_CLAIM.search(clause):
            continue  # a question, a negated or hypothetical statement, a hand-over: no work said done
        if match.group(0).lower().endswith("transferred") and _HANDED_OVER.match(text, match.end()):
            continue
        return match.group(0)
    return None


_CLAUSE_MARKS = ".!?;:,\n"
# A failure said anywhere in the message takes a claim back, as for DBBench's final turn.
_FAILURE_SAID = re.compile(
    r"\b(?:unable to|not able to|couldn't|could not|can't|cannot|can not|wasn't able|was not able|"
    r"weren't able|failed to|won't be able|isn't possible|is not possible)\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"[.!?\n]")
# Within a clause, just before the claim: a negation ("nothing has been changed", "no refund has been
# issued"), a modal ("the order will have been cancelled") or a condition ("once the bill is paid").
_NOT_A_CLAIM = re.compile(
    r"(?:\b(?:no|not|nothing|none|never|neither|nor)\b|n't\b)(?:\s+[\w'-]+){0,4}\s*$"
    r"|\b(?:will|would|should|could|might|must|may|can|to)\s+$"
    # a condition or a time to come: "... once the bill is paid", "when your line is active again"
    r"|\b(?:once|when|whenever|after|until|unless|if|before|as\s+soon\s+as)\b(?:\s+[\w'#-]+){0,5}\s*$",
    re.IGNORECASE,
)
# "I have transferred you to a human agent": a hand-over, not the work done.
_HANDED_OVER = re.compile(
    r"\s+(?:you|your\s+(?:call|chat|case|conversation|request)|(?:you\s+)?to\s+an?\s)", re.IGNORECASE
)
