"""Labels of an agent serving a person (tau2's customer, BFCL's user): claims of work the grader
failed, answers it failed, figures nothing returned, courtesy that is not filler."""

from __future__ import annotations

from typing import Any

import pytest

from prefbuild.labelers import build_labelers, label_trajectory
from prefbuild.labelers.service_success import ServiceSuccessLabeler, tau2_failed_parts
from prefbuild.labelers.tools.answers import HallucinatedToolOutputLabeler, ToolWrongAnswerLabeler
from prefbuild.labelers.tools.calls import RepeatedToolCallLabeler
from prefbuild.labelers.tools.stated import read_sources, unsupported_statement
from prefbuild.labelers.verbose_filler import VerboseFillerLabeler
from prefbuild.records import Message, Step, StepFacts
from tests.tooluse.test_tool_labelers import call, results_of, tool_step, trajectory


def _verdict(breakdown: dict[str, float], untold: list[str] = ()) -> dict[str, Any]:
    checks = [{"info": info, "met": False} for info in untold]
    return {"tau2": {"reward_info": {"reward_breakdown": breakdown, "communicate_checks": checks}}}


def _last(text: str, info: dict[str, Any]) -> Step:
    return Step(index=1, observation="", raw_output=text, action=None, feedback="###STOP###", valid=True, done=True,
                info=info)


def _tau2(text: str, breakdown: dict[str, float], untold: list[str] = ()) -> Any:
    c = call({"code": "1"})
    return trajectory([tool_step(0, [c], ["1"]), _last(text, _verdict(breakdown, untold))], success=False, env="tau2")


@pytest.mark.parametrize(
    ("text", "labelled"),
    [
        ("All set! I've moved your trip to the 14th.", True),
        ("Thanks, John. Your bill is paid and your line is active again.", True),
        ("Ticket #7423 is now marked as resolved.", True),
        ("Your line will be reactivated once the bill is paid.", False),
        ("I'm sorry, I can't change a basic economy ticket under our policy.", False),
        ("I've updated the address; however, I was unable to process the refund.", False),
        ("Understood. Nothing has been changed on your reservation. Have a great day!", False),
        ("I have transferred you to a human agent. Please hold on.", False),
        ("Is your line active again?", False),
    ],
)
def test_a_claim_of_work_the_grader_failed_is_premature(text: str, labelled: bool) -> None:
    record = _tau2(text, {"DB": 0.0, "COMMUNICATE": 1.0})
    assert bool(ServiceSuccessLabeler().label(record)) is labelled


def test_a_claim_is_not_premature_where_only_what_was_told_failed() -> None:
    # The refund was made (DB passed); the amount told was wrong: tool_wrong_answer's, named once.
    text = "The price difference of $18.99 has been refunded to your gift card."
    record = _tau2(text, {"DB": 1.0, "COMMUNICATE": 0.0}, untold=["17.99"])
    assert ServiceSuccessLabeler().label(record) == []
    [label] = ToolWrongAnswerLabeler().label(record)
    assert label.step == 1 and "'17.99'" in label.evidence
    found = {label.mode for step in label_trajectory(record, build_labelers(None, "tau2")).steps
             for label in step.labels}
    assert "wrong_answer" in found and "premature_success" not in found
    # Where the work failed too, the claim is premature; and a passing conversation is never labelled.
    assert ServiceSuccessLabeler().label(_tau2(text, {"DB": 0.0, "COMMUNICATE": 0.0}))
    assert ToolWrongAnswerLabeler().label(_tau2(text, {"DB": 0.0, "COMMUNICATE": 1.0})) == []


def test_a_wrong_figure_is_labelled_where_it_was_told_not_on_the_closing_message() -> None:
    """A real run (tau2 leaderboard, gpt-oss-120b, retail task 2): "12 different variants" where tau2 wanted
    "10", then "You're all set!". The rejected side worth learning from is the message with the figure."""
    answer = Step(index=1, observation="", raw_output="Our T-shirt has 12 different variants.", valid=True,
                  action='{"message": "Our T-shirt has 12 different variants."}')
    closing = _last("You're all set! Your return request has been logged.", _verdict(
        {"DB": 1.0, "COMMUNICATE": 0.0}, untold=["10"])).model_copy(update={"index": 2})
    record = trajectory([tool_step(0, [call({"code": "1"})], ["1"]), answer, closing], success=False, env="tau2")
    [label] = ToolWrongAnswerLabeler().label(record)
    assert label.step == 1 and label.evidence.startswith("the message 'Our T-shirt has 12") and "'10'" in label.evidence
    # a missing piece in words: no message can be told apart as the answer, the closing one is labelled
    words = record.model_copy(update={"steps": [*record.steps[:2], closing.model_copy(
        update={"info": _verdict({"DB": 1.0, "COMMUNICATE": 0.0}, untold=["pending"])})]})
    assert [label.step for label in ToolWrongAnswerLabeler().label(words)] == [2]


def test_tau2_failed_parts_reads_older_results_without_a_breakdown() -> None:
    info = {"tau2": {"reward_info": {"db_check": {"db_match": False}, "communicate_checks": [{"met": True}]}}}
    assert tau2_failed_parts(_last("x", info)) == {"DB"}
    assert tau2_failed_parts(_last("x", {})) is None


def _turn_end(index: int, text: str, turn: int, valid: bool, *, final: bool = False) -> Step:
    verdict = {"turn": turn, "valid": valid, "scored": True, "error_type": None if valid else "state_mismatch"}
    return Step(index=index, observation="", raw_output=text, action=None, feedback="next", valid=True,
                done=final, facts=StepFacts(final=final, won=False if final else None),
                info={"turn": turn, "verdict": verdict})


def test_bfcl_labels_the_closing_claim_of_each_failed_turn_and_no_wrong_answer() -> None:
    c = call({"code": "1"})
    steps = [tool_step(0, [c], ["1"]),
             _turn_end(1, "The file is created.", 0, True),  # a passed turn claims what it did
             _turn_end(2, "Which folder should I use?", 1, False),  # a failed turn that claims nothing
             _turn_end(3, "Ticket #7423 is now marked as resolved.", 2, False, final=True)]
    record = trajectory(steps, success=False, env="bfcl")
    assert [label.step for label in ServiceSuccessLabeler().label(record)] == [3]
    # As deployed: the claim is premature_success, named once; BFCL has no wrong answers.
    labelled = label_trajectory(record, build_labelers(None, "bfcl"))
    assert {(step.index, label.mode) for step in labelled.steps for label in step.labels} == {(3, "premature_success")}


def test_bfcl_a_turn_failed_only_by_an_earlier_turn_claims_nothing_premature() -> None:
    # Seen on Qwen3-4B-Instruct-2507's BFCL results: a tweet posted wrongly in turn 2, then a correct
    # comment in turn 3 whose state check fails only on the tweet that turn 2 left.
    c = call({"code": "1"})
    carried = _turn_end(3, "The supportive comment 'Cheers!' has been added to it.", 1, False, final=True)
    carried.info["verdict"]["inherited"] = True
    steps = [tool_step(0, [c], ["1"]),
             _turn_end(1, "The summary has been successfully posted to your Twitter account.", 0, False),
             tool_step(2, [c], ["1"]), carried]
    record = trajectory(steps, success=False, env="bfcl")
    assert [label.step for label in ServiceSuccessLabeler().label(record)] == [1]


def test_bfcl_a_claim_in_a_turn_to_be_answered_without_calls_is_premature() -> None:
    # Seen on Qwen3-4B-Instruct-2507's BFCL miss_func results (multi_turn_miss_func_1): with `mv` held
    # out, the model copied the file and said it moved it. BFCL scores no such turn, but its ground truth
    # is empty (the work cannot be done with what is offered), so a closing claim that it was done is
    # false; a turn that made no call (it asked, or said it cannot) passed, whatever its words.
    c = call({"code": "1"})
    acted = _turn_end(1, "I have successfully moved one of the log.txt files into the archive directory.", 0, False)
    acted.info["verdict"].update(scored=False, error_type="multi_turn:irrelevance_error:decoder_success")
    asked = _turn_end(2, "I've created nothing: the copy tool is not available to me yet.", 1, True)
    asked.info["verdict"]["scored"] = False
    steps = [tool_step(0, [c], ["1"]), acted, asked,
             _turn_end(3, "Ticket #7423 is now marked as resolved.", 2, False, final=True)]
    record = trajectory(steps, success=False, env="bfcl")
    assert [label.step for label in ServiceSuccessLabeler().label(record)] == [1, 3]


@pytest.mark.parametrize(
    "text",
    [
        # Seen on Qwen3-4B-Instruct-2507's BFCL miss_param results (multi_turn_miss_param_5, turn 3): a
        # comment with invented content, in a turn whose comment text was withheld.
        "The tweet has been successfully commented on!  The achievement is now reinforced on your tweet.",
        "I've commented on your tweet with 'Great work!'.",
        "Your tweet has been retweeted.",
    ],
)
def test_bfcl_a_comment_or_retweet_said_done_is_a_claim(text: str) -> None:
    c = call({"code": "1"})
    acted = _turn_end(1, text, 0, False, final=True)
    acted.info["verdict"].update(scored=False, error_type="multi_turn:irrelevance_error:decoder_success")
    record = trajectory([tool_step(0, [c], ["1"]), acted], success=False, env="bfcl")
    assert [label.step for label in ServiceSuccessLabeler().label(record)] == [1]


def test_a_last_turn_that_tried_a_call_is_no_answer() -> None:
    broken = Step(index=1, observation="", raw_output='<tool_call>{"name": "f", <tool_call>', action=None,
                  format_ok=False, feedback="graded", valid=True, done=True,
                  facts=StepFacts(final=True, won=False, problems=["unclosed <tool_call>"]))
    record = trajectory([tool_step(0, [call({"code": "1"})], ["1"]), broken], success=False, env="code")
    assert ToolWrongAnswerLabeler().label(record) == []


RESULTS = [
    '{"order_id": "#W9300146", "items": [{"name": "Desk Lamp", "price": 153.23}, {"name": "Kettle", "price": 98.25}],'
    ' "payment_history": [{"amount": 251.48}], "delivered": "2024-04-28"}',
    '{"account_id": 12345, "balance": 10000.0, "binding_card": 1974202140965533}',
    '{"file_content": "Nothing important here. Yet another line."}',
]


@pytest.mark.parametrize(
    "message",
    [
        "Your order #W9300146 has the desk lamp at $153.23 and the kettle at $98.25, $251.48 in total.",
        "The lamp costs $54.98 more than the kettle.",  # a difference of two results
        "Your balance is $10,000.00 and the card on file ends in 5533.",
        "It was delivered on April 28, 2024.",
        "Two kettles would cost $196.50.",  # a product: 2 x 98.25
        "You told me your zip is 19031, thanks.",  # the person's own words
        'The file contains the line: "Nothing important here. Yet another line."',
        "I can offer a $50 certificate, as our policy allows.",  # the prompt's policy
        "Your request 2 of 3 is done.",  # short numbers are not read
        "The differences are $54.98 and $196.48, $251.46 in all.",  # a total of the message's own amounts
        "That is $55.00 more per passenger, $165.00 for the three of you.",  # a fee of the results, times 3
        "The refund comes to roughly $250.",  # an approximation is not read
        "You can still cancel until May 5.",  # the day after a booking's time: a 24-hour window
        'The screen shows "nothing important here, yet another line".',  # a light paraphrase of a result
        "Order #W9300146 is yours.",
        "It leaves at 3:00-5:00 PM, or 11:12 PM the night before.",  # a range's AM/PM; a time shown
    ],
)
def test_a_figure_the_agent_was_shown_or_computed_is_not_stated_from_nowhere(message: str) -> None:
    sources = read_sources([*RESULTS, "My zip is 19031.", "Policy: offer a $50 certificate per passenger.",
                            '{"created_at": "2024-05-04T23:12:06", "fee": 55.0}',
                            '{"departure": "15:00:00", "arrival": "17:00:00", "time": "23:12"}'])
    assert unsupported_statement(message, sources) is None


@pytest.mark.parametrize(
    ("message", "named"),
    [
        ("There is also a Mastercard ending in 8842 on file.", "'8842'"),
        ("The price difference of $18.99 is refunded.", "$18.99"),
        ("It was delivered on April 29, 2024, so the window ends May 28.", "April 29, 2024"),
        ('It contains the line: "This is a temporary file for testing purposes."', "This is a temporary file"),
        ("Your other order #W9300164 is pending.", "#W9300164"),  # two digits swapped
        ("The kettle is $58.25, so $6 more than the lamp's fee.", "$58.25"),  # 52.25 + a count is no money
        ("That would be a $15 restocking fee.", "$15"),
        ("Your flight departs at 7:30 AM.", "7:30 AM"),
    ],
)
def test_a_figure_nothing_returned_is_named(message: str, named: str) -> None:
    sources = read_sources([*RESULTS, "My zip is 19031."])
    stated = unsupported_statement(message, sources)
    assert stated is not None and named in stated


def test_a_stated_figure_is_labelled_once_and_only_in_messages_to_a_person() -> None:
    c = call({"code": "get_account()"})
    shown = results_of([c], [RESULTS[1]])
    invented = "There is also a Mastercard ending in 8842 on file."

    def message(index: int, text: str, shown: list[Message] | None = None) -> Step:
        return Step(index=index, observation="", observation_messages=shown, raw_output=text, action=None,
                    feedback="ok", valid=True)

    steps = [tool_step(0, [c], [RESULTS[1]]), message(1, invented, shown), message(2, "Again: " + invented)]
    record = trajectory(steps, success=False, env="tau2")
    found = HallucinatedToolOutputLabeler().label(record)
    assert [label.step for label in found] == [1] and "8842" in found[0].evidence
    assert HallucinatedToolOutputLabeler().label(trajectory(list(steps), success=False, env="code")) == []


def test_a_rerun_cell_that_fails_the_same_way_is_a_repeat() -> None:
    code = {"code": "from math import factorint"}
    trace = 'Traceback (most recent call last):\n  File "<cell {}>", line 1\nImportError: no factorint'
    steps = [tool_step(i, [call(code, id_=f"c{i}")], [trace.format(i + 1)], ok=False, error="ImportError")
             for i in range(2)]
    record = trajectory(steps, success=False, env="code")
    assert [label.step for label in RepeatedToolCallLabeler().label(record)] == [1]


def test_a_messages_courtesies_do_not_stack_into_filler() -> None:
    c = call({"code": "1"})

    def message(index: int, text: str) -> Step:
        return Step(index=index, observation="", raw_output=text, action=None, feedback="ok", valid=True)

    steps = [tool_step(0, [c], ["1"]),
             message(1, "Your service is back. Thank you for your patience, John, and have a great day!"),
             message(2, "Absolutely, I'd be more than happy to help you with that! Great choice! It costs $1.")]
    found = [label.step for label in VerboseFillerLabeler().label(trajectory(steps, success=False, env="tau2"))]
    assert found == [2]


def test_a_calls_arguments_are_not_words_of_the_turn() -> None:
    content = "Nothing important here. Yet another line of the file, copied over as it was."
    read = call({"code": "cat()"}, id_="c0")
    write = call({"code": content}, id_="c1")
    steps = [tool_step(0, [read], [content]), tool_step(1, [write], ["None"], native=False)]
    steps[1] = steps[1].model_copy(update={"observation": content})
    assert VerboseFillerLabeler().label(trajectory(steps, success=False, env="bfcl")) == []
