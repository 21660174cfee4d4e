"""The cached word tests of success-claim reading and of the premature-success labeler give what the
full readings they stand for give, in any case or script."""

from __future__ import annotations

import re

import pytest

from prefbuild.labelers import premature_success, success_claims
from prefbuild.labelers.household_text import parse_goal
from prefbuild.labelers.text import HOUSEHOLD_VERBS, canonical_command, is_completion_claim

FRIDGE = parse_goal("put an apple in fridge.")
LAMP_CD = parse_goal("look at cd under the desklamp.")

SENTENCES = [
    "The task is complete.",
    "THE TASK IS COMPLETE.",
    "The goal has been met.",
    "The goal HAS BEEN MET",
    "Objective achieved.",
    "The mission is solved.",
    "Problem solved.",  # no task word: never read
    "The job is met.",  # no task word: never read
    "Job done.",
    "Done!",
    "All done.",
    "The cd is under the desklamp, done.",
    "Everything is finished now.",
    "Mission Accomplished!",
    "Task success.",
    "This completes the goal.",
    "We are done here",
    "The goal is to put an apple in the fridge.",
    "Next, I need to finish the task.",
    "I have successfully completed the task.",
    "タスクは完了しました。",
    "The taſk is complete.",  # long s: IGNORECASE reads it as s
    "The goal ıs met.",  # dotless i
    "The goal İs met.",
    "Next I should go to fridge 1.",
    "Something metallic is on the table.",
]


@pytest.mark.parametrize("sentence", SENTENCES)
def test_the_task_claim_pre_test_reads_what_the_task_word_test_reads(sentence: str) -> None:
    reference = success_claims._task_claim(sentence) if success_claims._TASK_WORDS.search(sentence) else None
    assert success_claims._read_task_claim(sentence) == reference
    assert success_claims._sentence_task_claim(sentence) == reference


@pytest.mark.parametrize("text", [*SENTENCES, "I have put the apple in the fridge 1.", "Now I look at the cd.", "ok"])
def test_the_claim_word_bits_agree_with_the_word_tests(text: str) -> None:
    words = success_claims._claim_words(text)
    assert bool(words & success_claims._TASK_WORD) == success_claims._has_task_word(text)
    if not words & success_claims._TASK_WORD:
        assert FRIDGE is not None and LAMP_CD is not None
        assert bool(words & success_claims._GOAL_CLAIM_WORD) == success_claims._may_claim_goal(text, FRIDGE)
        assert bool(words & success_claims._LOOK_CLAIM_WORD) == success_claims._may_claim_goal(text, LAMP_CD)


_BARE = re.compile(rf"^{HOUSEHOLD_VERBS}\b")
_VERBS = ["go to", "open", "close", "take", "put", "move", "heat", "cool", "clean", "use", "slice", "examine",
          "inventory", "look", "help", "think", "done", "stop", "task", "final answer"]
ACTIONS = [
    None,
    "",
    "Task succeeded.",
    "think: The apple is now in the fridge 1.",
    "Think: done",
    "I put the apple in the fridge.",
    "put apple 1 in/on fridge 1",
    "Move apple 1 to fridge 1.",
    *(f"{before}{verb}{after}" for verb in _VERBS for before in ("", "> ", ">", " ", "\t", "'") for after in
      ("", " fridge 1", ".", ":", "\nYou put the apple 1 in/on the fridge 1.", "x", "-1", "*")),
    *(f"{before}{verb.upper()}{after}" for verb in _VERBS for before in ("", "> ") for after in ("", " 1", ".")),
    "ta\u212ae apple 1 from fridge 1",  # Kelvin sign: lower() gives k
]


@pytest.mark.parametrize("action", ACTIONS)
def test_the_action_facts_are_the_readings_they_stand_for(action: str | None) -> None:
    if action and action.strip().lower().startswith("think:"):
        text: str | None = action.split(":", 1)[1]
    elif action and not re.match(rf"^(?:{HOUSEHOLD_VERBS}|think)\b", canonical_command(action) or ""):
        text = action
    else:
        text = None
    assert premature_success._action_facts(action) == (is_completion_claim(action), text)
    if action and _BARE.match(action.lstrip("> ").lower()):
        assert text is None  # the labeler's old early exit for a bare command beside no thought


def test_the_characters_that_fold_to_ascii_are_all_listed() -> None:
    letters = re.compile(r"[a-z]|" + "|".join("abcdefghijklmnopqrstuvwxyz"), re.IGNORECASE)
    missing = []
    for code in range(0x80, 0x110000):
        if 0xD800 <= code <= 0xDFFF:
            continue
        char = chr(code)
        folds = char.lower() + char.upper() + char.casefold()
        if (letters.match(char) or any(c.isascii() for c in folds)) and (
            success_claims._FOLDS_TO_ASCII.match(char) is None
        ):
            missing.append(f"U+{code:04X}")
    assert missing == []


@pytest.mark.parametrize("text", [*SENTENCES, "少々お待ちください。 I have put the apple in the fridge 1.",
                                  "もちろんです！ The task is done.", "Ｔhe task ıs done.", "The ﬁnal step is done."])
def test_the_word_view_reads_the_words_the_patterns_read(text: str) -> None:
    view = success_claims._word_view(text)
    if view is not None:
        assert success_claims._holds_task_word(view) == (success_claims._TASK_WORDS.search(text) is not None)


def test_the_sentence_split_splits_where_the_plain_pattern_splits() -> None:
    import random

    plain = re.compile(r"(?<=[.!?。！？])\s+|\n+")
    rng = random.Random(7)
    alphabet = ["a", ".", "!", "?", "。", "！", "？", "\n", " ", "\t", "\u3000", "\r", "\x85", "b"]
    for _ in range(20000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        assert success_claims._SENTENCE_SPLIT.split(text) == plain.split(text), repr(text)


@pytest.mark.parametrize("pattern", list(success_claims._PLAIN))
def test_the_plain_patterns_have_lower_case_letters_only(pattern: re.Pattern[str]) -> None:
    # escapes (\W, \s) and group names aside, an upper-case letter would match nothing in lowered text
    letters = re.sub(r"\\.|\(\?P<\w+>", "", pattern.pattern)
    assert letters == letters.lower()
    assert pattern.flags & re.IGNORECASE
