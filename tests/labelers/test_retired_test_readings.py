"""Readings added after the first blind test set was scored and retired into development data.

Each test pins one behaviour with a positive and the nearest negative, written from the
definitions in ``tests/labelers/blind_sets.md`` (not copied from the set's episodes).
"""

from __future__ import annotations

from typing import Any

from prefbuild.labelers.format_violation import FormatViolationLabeler
from prefbuild.labelers.loop import LoopLabeler
from prefbuild.labelers.premature_success import PrematureSuccessLabeler
from prefbuild.labelers.sql.answers import Observed, aggregates, judge_answer
from prefbuild.labelers.sql.labelers import SqlLoopLabeler, normalize_sql
from prefbuild.labelers.verbose_filler import VerboseFillerLabeler
from prefbuild.records import SqlFacts, Step
from tests.labelers.test_labelers import _trajectory

NOTHING = "Nothing happens."


def _labelled(labeler: Any, trajectory: Any) -> list[int]:
    return [label.step for label in labeler.label(trajectory)]


def test_guessing_object_numbers_is_a_loop_from_the_second_guess() -> None:
    turns = [
        {"action": "go to countertop 1", "feedback": "On the countertop 1, you see a apple 4, and a bread 6."},
        {"action": "take apple 1 from countertop 1", "feedback": NOTHING},
        {"action": "take apple 2 from countertop 1", "feedback": NOTHING},
        {"action": "take apple 3 from countertop 1", "feedback": NOTHING},
        {"action": "take apple 4 from countertop 1", "feedback": "You pick up the apple 4 from the countertop 1."},
    ]
    assert _labelled(LoopLabeler(), _trajectory(turns, goal="put a clean apple in diningtable.")) == [2, 3]


def test_a_failed_command_retried_elsewhere_after_a_walk_is_not_a_guess() -> None:
    turns = [
        {"action": "go to countertop 1", "feedback": "On the countertop 1, you see a bread 6."},
        {"action": "take apple 1 from countertop 1", "feedback": NOTHING},
        {"action": "go to countertop 2", "feedback": "On the countertop 2, you see a apple 1."},
        {"action": "take apple 1 from countertop 2", "feedback": "You pick up the apple 1 from the countertop 2."},
        # one slot varied, but the second try is not a failure: the variation found something
        {"action": "put apple 1 in/on cabinet 1", "feedback": NOTHING},
        {"action": "put apple 1 in/on countertop 2", "feedback": "You put the apple 1 in/on the countertop 2."},
    ]
    assert _labelled(LoopLabeler(), _trajectory(turns, goal="put a clean apple in diningtable.")) == []


def test_a_put_narrated_beside_a_walk_anywhere_is_a_plan_not_a_claim() -> None:
    goal = "cool some plate and put it in sidetable."
    walk = {"thought": "The plate is cool. Now I put it on the sidetable.", "action": "go to diningtable 1",
            "feedback": "On the diningtable 1, you see a bread 3."}
    look = {"thought": "Now I put the plate on the sidetable.", "action": "look", "feedback": "You are in the room."}
    assert _labelled(PrematureSuccessLabeler(), _trajectory([walk], goal=goal)) == []
    assert _labelled(PrematureSuccessLabeler(), _trajectory([walk, look], goal=goal)) == [1]


def test_years_are_not_averaged_into_an_answer() -> None:
    rows = (("1974", "Marta Oyelaran"), ("1978", "Marta Oyelaran"))
    assert 1976.0 not in aggregates(rows)
    seen = [Observed(0, "SELECT * FROM t", "[('1974', 'Marta Oyelaran'), ('1978', 'Marta Oyelaran')]", rows)]
    assert judge_answer(["1976"], seen) is not None
    assert judge_answer(["1978"], seen) is None
    # a column of ordinary numbers is still averaged ("what is the average score")
    scores = (("a", 12.0), ("b", 14.0))
    assert judge_answer(["13"], [Observed(0, "SELECT * FROM t", "[('a', 12), ('b', 14)]", scores)]) is None


def test_re_listing_the_rows_just_shown_is_filler() -> None:
    rows = "[('1974', 'Marta Oyelaran', 'Nigeria'), ('1978', 'Marta Oyelaran', 'Nigeria')]"
    restated = (
        "The result has two rows. The first row has Year 1974, Champion Marta Oyelaran and Country Nigeria. "
        "The second row has Year 1978, Champion Marta Oyelaran and Country Nigeria."
    )
    turns = [
        {"raw": "Action: Operation\n```sql\nSELECT * FROM t\n```", "action": "Operation: SELECT * FROM t",
         "feedback": rows},
        {"raw": restated + "\nAction: Operation\n```sql\nSELECT 1\n```", "thought": restated,
         "action": "Operation: SELECT 1", "feedback": "[(1,)]"},
        {"raw": "She won in 1978.\nAction: Answer\nFinal Answer: [\"1978\"]", "thought": "She won in 1978.",
         "action": 'Answer: ["1978"]'},
    ]
    trajectory = _trajectory(turns, goal="In which year did Marta Oyelaran win?", name="sql", protocol="dbbench")
    assert _labelled(VerboseFillerLabeler(), trajectory) == [1]


def test_several_statements_in_one_operation_are_a_format_violation() -> None:
    def operation(sql: str) -> dict[str, Any]:
        return {"raw": f"Action: Operation\n```sql\n{sql}\n```", "action": f"Operation: {sql}",
                "facts": {"sql": SqlFacts(turn="operation", executed=sql)}, "feedback": "[]"}

    turns = [
        operation("UPDATE t SET v = 'Ashton Gate' WHERE d = '12 March'; SELECT * FROM t;"),
        operation("SELECT v FROM t WHERE d = 'a;b';"),
        operation("SELECT v FROM t; -- checked"),
        operation("SELECT v FROM t WHERE d = 'unterminated;"),
    ]
    trajectory = _trajectory(turns, goal="Change the venue.", name="sql", protocol="dbbench")
    assert _labelled(FormatViolationLabeler(), trajectory) == [0]


def test_a_query_re_run_with_only_a_column_alias_added_is_a_repeat() -> None:
    aliased = normalize_sql("SELECT COUNT(*) AS total FROM `t` WHERE a = 1")
    assert aliased == normalize_sql("SELECT COUNT(*) FROM t WHERE a = 1")
    assert normalize_sql("SELECT CAST(x AS SIGNED) FROM t") != normalize_sql("SELECT x FROM t")

    def query(sql: str, reply: str) -> dict[str, Any]:
        return {"action": f"Operation: {sql}", "feedback": reply,
                "facts": {"sql": SqlFacts(turn="operation", statement="query", executed=sql)}}

    turns = [query("SELECT COUNT(*) FROM t", "[(14,)]"), query("SELECT COUNT(*) AS total FROM t", "[(14,)]")]
    trajectory = _trajectory(turns, goal="How many?", name="sql", protocol="dbbench")
    assert _labelled(SqlLoopLabeler(), trajectory) == [1]


# Readings added when the second blind test set was scored and retired.


def test_failures_of_spelling_are_not_guesses() -> None:
    turns = [
        {"raw": "ACTION: go to cabinet 1", "action": "go to cabinet 1", "feedback": NOTHING,
         "normalized": ["action tag 'ACTION:' dropped"], "facts": {"problems": ["unexpected action tag 'ACTION:'"]}},
        {"raw": "go to cabinet 2.", "action": "go to cabinet 2.", "feedback": NOTHING},
        {"raw": "go to cabinet 2", "action": "go to cabinet 2", "feedback": "On the cabinet 2, you see a pot 1."},
    ]
    trajectory = _trajectory(turns, goal="put some pot on stoveburner.", protocol="react")
    assert _labelled(LoopLabeler(), trajectory) == []


def _think(text: str) -> dict[str, Any]:
    return {"raw": f"think: {text}", "thought": text, "action": None, "feedback": "OK."}


def test_a_thought_repeated_at_each_new_place_reacts_to_it_and_a_replayed_one_is_a_loop() -> None:
    def go(place: str, seen: str) -> dict[str, Any]:
        return {"action": f"go to {place}", "feedback": f"On the {place}, you see {seen}."}

    lap = [go("shelf 1", "a book 1"), _think("The pen is not here."), go("shelf 2", "a cd 1"),
           _think("The pen is not here.")]
    turns = [*lap, *lap, _think("The pen is not here.")]
    assert _labelled(LoopLabeler(), _trajectory(turns, goal="put a pen in desk.", protocol="react")) == [4, 5, 6, 7, 8]


def test_a_put_claim_is_true_when_the_put_was_confirmed_though_the_object_was_not_processed() -> None:
    goal = "cool some apple and put it in countertop."
    turns = [
        {"action": "take apple 1 from diningtable 1", "feedback": "You pick up the apple 1 from the diningtable 1."},
        {"action": "go to countertop 1", "feedback": "On the countertop 1, you see a spoon 2."},
        {"action": "put apple 1 in/on countertop 1", "feedback": "You put the apple 1 in/on the countertop 1."},
        {"thought": "I put the apple on the countertop.", "action": "look", "feedback": "You are in the room."},
        {"thought": "I put the cool apple on the countertop.", "action": "look", "feedback": "You are in the room."},
    ]
    assert _labelled(PrematureSuccessLabeler(), _trajectory(turns, goal=goal)) == [4]


def test_a_first_turn_re_listing_the_room_is_filler_and_a_question_mention_is_not() -> None:
    room = ("You are in the middle of a room. Looking quickly around you, you see a bed 1, a desk 1, a drawer 2, "
            "a drawer 1, a dresser 1, a garbagecan 1, a laundryhamper 1, a shelf 2, a shelf 1, and a sidetable 1.\n"
            "Your task is to: put a pencil in shelf.")
    relisted = ("I am in the middle of a room. Looking around I see a bed 1, a desk 1, a drawer 2, a drawer 1, a "
                "dresser 1, a garbagecan 1, a laundryhamper 1, a shelf 2, a shelf 1, and a sidetable 1. My task is "
                "to put a pencil in a shelf.")
    first = {"observation": room, "thought": relisted, "raw": f"THOUGHT: {relisted}\nACTION: go to drawer 1",
             "action": "go to drawer 1"}
    household = _trajectory([first], goal="put a pencil in shelf.")
    assert _labelled(VerboseFillerLabeler(), household) == [0]
    question = ("Add the museum 'Harbour Gallery' in Bergen, opened in 2016, to the museums table.\nThe name of this "
                "table is museums, and the headers of this table are Name,City,Opened,Visitors.")
    mention = ("To add it I run an INSERT of Harbour Gallery, Bergen, 2016 into the museums table with Name, City, "
               "Opened.")
    sql = _trajectory([{"observation": question, "thought": mention, "raw": mention, "action": "Operation: SELECT 1"}],
                      goal=question, name="sql", protocol="dbbench")
    assert _labelled(VerboseFillerLabeler(), sql) == []


def test_protocols_report_an_invented_result_and_another_protocols_tags() -> None:
    from prefbuild.envs import cached_protocol

    dbbench = cached_protocol("sql", "dbbench")
    invented = dbbench.parse("Action: Operation\n```sql\nSELECT city FROM t WHERE y = 1;\n```\nResult: [('Oslo',)]")
    assert not invented.format_ok and "invented" in " ".join(invented.problems)
    plain = dbbench.parse("Let me look.\nAction: Operation\n```sql\nSELECT city FROM t;\n```")
    assert plain.format_ok and not plain.problems
    react = cached_protocol("household", "react")
    tagged = react.parse('<tool_call>{"name": "go_to", "arguments": {"target": "coffeetable 1"}}</tool_call>')
    assert not tagged.format_ok and "markup" in " ".join(tagged.problems)
    assert react.parse("> go to coffeetable 1").format_ok


# Readings added when the third blind test set was scored and retired.


def _sql_turn(sql: str | None = None, reply: str = "", *, answer: str | None = None, error: str | None = None,
              text: str = "") -> dict[str, Any]:
    if answer is not None:
        return {"raw": f"{text}\nAction: Answer\nFinal Answer: {answer}", "action": f"Answer: {answer}",
                "facts": {"sql": SqlFacts(turn="answer", answer=f" {answer}")}}
    kind = "query" if sql and sql.lstrip().upper().startswith("SELECT") else "mutation"
    return {"raw": f"Action: Operation\n```sql\n{sql}\n```", "action": f"Operation: {sql}", "feedback": error or reply,
            "facts": {"sql": SqlFacts(turn="operation", statement=kind, executed=sql, error=error,
                                      mutated=kind == "mutation" and error is None)}}


def test_a_comparison_answer_is_observed_when_the_question_names_it_and_a_query_looked_it_up() -> None:
    from prefbuild.labelers.sql.labelers import SqlWrongAnswerLabeler

    question = "Which line is longer, the Norrland Line or the Coastal Line?"
    coastal = _sql_turn("SELECT `Length (km)` FROM lines WHERE Line = 'Coastal Line'", "[('412',)]")
    norrland = _sql_turn("SELECT `Length (km)` FROM lines WHERE Line = 'Norrland Line'", "[('530',)]")
    both = _trajectory([coastal, norrland, _sql_turn(answer='["Norrland Line"]')], goal=question, name="sql",
                       protocol="dbbench")
    assumed = _trajectory([coastal, _sql_turn(answer='["Norrland Line"]')], goal=question, name="sql",
                          protocol="dbbench")
    assert _labelled(SqlWrongAnswerLabeler(), both) == []
    assert _labelled(SqlWrongAnswerLabeler(), assumed) == [1]


def test_a_mutation_claimed_in_words_of_the_new_state_after_a_failed_update_is_premature() -> None:
    from prefbuild.labelers.sql.labelers import SqlPrematureSuccessLabeler, claims_change

    failed = _sql_turn("UPDATE orders SET Status = 'Shipped' WHERE OrderID = '5531'",
                       error="1054 (42S22): Unknown column 'OrderID' in 'where clause'")
    look = _sql_turn("SELECT * FROM orders WHERE `Order ID` = '5531'", "[('5531', 'J. Brennan', 'Processing')]")
    claim = _sql_turn(answer='["Shipped"]', text="Order 5531 is now marked as Shipped.")
    trajectory = _trajectory([failed, look, claim], goal="Change the status of order 5531 to Shipped.", name="sql",
                             protocol="dbbench")
    trajectory = trajectory.model_copy(update={"task": trajectory.task.model_copy(update={"type": "UPDATE"})})
    assert _labelled(SqlPrematureSuccessLabeler(), trajectory) == [2]
    assert not claims_change(trajectory.steps[2].model_copy(update={"raw_output": "I could not update it now."}))


def test_a_put_that_worked_tried_again_with_nothing_in_hand_is_not_a_loop() -> None:
    turns = [
        {"action": "take soapbar 1 from countertop 1", "feedback": "You pick up the soapbar 1 from the countertop 1."},
        {"action": "go to cabinet 1", "feedback": "The cabinet 1 is open. In it, you see nothing."},
        {"action": "put soapbar 1 in/on cabinet 1", "feedback": "You put the soapbar 1 in/on the cabinet 1."},
        {"action": "go to countertop 1", "feedback": "On the countertop 1, you see a soapbar 2."},
        {"action": "take soapbar 1 from countertop 1", "feedback": NOTHING},
        {"action": "go to cabinet 1", "feedback": "The cabinet 1 is open. In it, you see a soapbar 1."},
        {"action": "put soapbar 1 in/on cabinet 1", "feedback": NOTHING},
    ]
    labelled = _labelled(LoopLabeler(), _trajectory(turns, goal="put two soapbar in cabinet.", protocol="react"))
    assert 6 not in labelled


def test_two_commands_joined_by_a_bare_comma_are_a_format_violation() -> None:
    from prefbuild.labelers.format_violation import two_commands

    assert two_commands("go to drawer 2, open drawer 2")
    assert not two_commands("take creditcard 1 from drawer 2")


# Readings added when the fourth blind test set was scored and retired.


def test_numbers_of_one_small_result_are_compared_side_by_side_but_years_are_not_added() -> None:
    seats = Observed(0, "SELECT Party, Seats FROM t", "[('Labour', '364'), ('Conservative', '253')]",
                     (("Labour", "364"), ("Conservative", "253")))
    assert judge_answer(["111"], [seats]) is None
    assert judge_answer(["112"], [seats]) is not None
    wins = Observed(0, "SELECT * FROM t", "[('1974', 'M'), ('1978', 'M')]", (("1974", "M"), ("1978", "M")))
    count = Observed(1, "SELECT COUNT(*) FROM t", "[(2,)]", ((2.0,),))
    assert judge_answer(["4"], [wins, count]) is None  # four years apart
    assert judge_answer(["1976"], [wins, count]) is not None  # 1974 + 2 is no year anybody won


def test_a_yes_with_an_invented_value_is_judged_on_the_value() -> None:
    empty = Observed(0, "SELECT Branch, Opened FROM t WHERE Branch IN ('Riverside', 'Hillcrest')", "[]", ())
    assert judge_answer(["Yes", "1962"], [empty]) is not None
    assert judge_answer(["Yes"], [empty]) is None


def test_a_candidate_counts_as_observed_only_when_a_query_looked_it_up_alone_or_a_result_shows_it() -> None:
    from prefbuild.labelers.sql.labelers import SqlWrongAnswerLabeler

    question = "Which stadium is older, Hampden Park or Celtic Park?"
    both = _sql_turn("SELECT Stadium, Opened FROM s WHERE Stadium IN ('Hampden Park', 'Celtic Park')",
                     "[('Hampden Park', '1903')]")
    trajectory = _trajectory([both, _sql_turn(answer='["Celtic Park"]')], goal=question, name="sql",
                             protocol="dbbench")
    assert _labelled(SqlWrongAnswerLabeler(), trajectory) == [1]


def test_a_position_counted_along_an_ordered_result_is_observed() -> None:
    from prefbuild.labelers.sql.labelers import SqlWrongAnswerLabeler

    ordered = _sql_turn("SELECT Team FROM g ORDER BY Points DESC", "[('Ghana',), ('Peru',), ('Norway',), ('Iraq',)]")
    def ask(answer: str) -> list[int]:
        trajectory = _trajectory([ordered, _sql_turn(answer=answer)], goal="In what position did Peru finish?",
                                 name="sql", protocol="dbbench")
        return _labelled(SqlWrongAnswerLabeler(), trajectory)

    assert ask('["2"]') == [] and ask('["2nd"]') == []
    assert ask('["5"]') == [1]


def test_a_run_ending_on_a_statement_outside_its_block_with_a_claim_is_premature_and_a_plan_is_not() -> None:
    from prefbuild.labelers.sql.labelers import SqlPrematureSuccessLabeler

    def final(raw: str) -> dict[str, Any]:
        return {"raw": raw, "action": "Invalid: Action: Operation without a ```sql block",
                "facts": {"sql": SqlFacts(turn="invalid")}}

    look = _sql_turn("SELECT * FROM g WHERE Team = 'Iraq'", "[('Iraq', 'B', '3', '1')]")
    for raw, expected in (
        ("Action: Operation\nDELETE FROM g WHERE Team = 'Iraq';\nThe Iraq row has been deleted.", [1]),
        ("I will update it with:\nAction: Operation\nUPDATE g SET Points = '2' WHERE Team = 'Iraq';", []),
    ):
        trajectory = _trajectory([look, final(raw)], goal="Remove the Iraq row.", name="sql", protocol="dbbench")
        trajectory = trajectory.model_copy(update={"task": trajectory.task.model_copy(update={"type": "DELETE"})})
        assert _labelled(SqlPrematureSuccessLabeler(), trajectory) == expected


def test_a_statement_retried_without_backquotes_that_now_fails_is_a_repeat_and_the_fix_is_not() -> None:
    ok = _sql_turn("SELECT COUNT(*) FROM `r` WHERE `To` = 'Central'", "[(0,)]")
    broken = _sql_turn("SELECT COUNT(*) FROM r WHERE To = 'Central'", error="1064 (42000): You have an error")
    as_written = _trajectory([ok, broken], goal="How many?", name="sql", protocol="dbbench")
    fixed = _trajectory([broken, ok], goal="How many?", name="sql", protocol="dbbench")
    assert _labelled(SqlLoopLabeler(), as_written) == [1]
    assert _labelled(SqlLoopLabeler(), fixed) == []


def test_react_markdown_is_a_format_problem_and_a_relisting_after_a_thought_is_filler() -> None:
    from prefbuild.envs import cached_protocol

    assert not cached_protocol("household", "react").parse("**go to countertop 1**").format_ok
    listing = ("On the countertop 1, you see a candle 1, a soapbottle 1, a spraybottle 1, a tissuebox 1, and a "
               "toiletpaper 1.")
    turns = [
        {"action": "go to countertop 1", "feedback": listing},
        _think("Great! The spraybottle is here."),
        _think("The countertop has a candle 1, a soapbottle 1, a spraybottle 1, a tissuebox 1 and a toiletpaper 1."),
    ]
    assert _labelled(VerboseFillerLabeler(), _trajectory(turns, goal="put some spraybottle on toilet.")) == [1, 2]


def test_a_take_without_a_number_claims_any_object_of_its_type() -> None:
    from prefbuild.labelers.phantom_object import PhantomObjectLabeler

    turns = [
        {"action": "go to countertop 1", "feedback": "On the countertop 1, you see a mug 2."},
        {"action": "take mug from countertop 1", "feedback": NOTHING},
        {"action": "go to microwave 1", "feedback": "The microwave 1 is closed."},
        {"action": "heat mug 2 with microwave 1", "feedback": NOTHING},
    ]
    assert _labelled(PhantomObjectLabeler(), _trajectory(turns, goal="put a hot mug in coffeemachine.")) == [3]


def test_a_goal_stated_then_done_and_an_invented_put_reply_are_claims() -> None:
    lamp = [
        {"action": "use desklamp 1", "feedback": "You turn on the desklamp 1."},
        {"thought": "The cd is under the desklamp, done.", "action": "inventory",
         "feedback": "You are not carrying anything."},
    ]
    assert _labelled(PrematureSuccessLabeler(), _trajectory(lamp, goal="look at cd under the desklamp.")) == [1]
    invented = [{"raw": "go to shelf 1\nYou put the cd 1 in/on the shelf 1.", "action": "go to shelf 1",
                 "feedback": "On the shelf 1, you see nothing."}]
    trajectory = _trajectory(invented, goal="put a cd in shelf.", protocol="react")
    assert _labelled(PrematureSuccessLabeler(), trajectory) == [0]


# Readings added when the fifth blind test set was scored and retired.


def test_more_interjections_and_a_short_listing_re_listed_at_length_are_filler() -> None:
    from prefbuild.labelers.verbose_filler import opening_interjection, restates

    openings = ("Great, let's begin.", "Great job! Found it.", "Thanks for the task! I look.", "Excellent, I have it.")
    for text in openings:
        assert opening_interjection(text)
    assert opening_interjection("Good, the apple is here.") is None
    listing = "On the countertop 1, you see a bread 1, a knife 1, and a saltshaker 1."
    relisted = ("On countertop 1 there is a bread 1, a knife 1, and a saltshaker 1. So the countertop has bread 1, "
                "knife 1 and saltshaker 1 on it.")
    assert restates(relisted, listing, 15, 0.8)
    assert not restates("I see bread, a knife and a saltshaker on the countertop; I take the bread to the table.",
                        listing, 15, 0.8)
    assert not restates("Now I put the first creditcard in dresser. Next, I need to take the second one from sofa 1.",
                        "You put the creditcard 2 in/on the dresser 1.", 15, 0.8)


def test_a_put_thought_is_a_plan_before_any_put_and_a_claim_once_one_was_tried() -> None:
    goal = "heat some egg and put it in garbagecan."
    egg = [
        {"action": "take egg 1 from countertop 2", "feedback": "You pick up the egg 1 from the countertop 2."},
        _think("Now I put the hot egg in the garbagecan."),
        {"action": "go to garbagecan 1", "feedback": "On the garbagecan 1, you see nothing."},
        {"action": "put egg 1 in garbagecan 1", "feedback": NOTHING},
        _think("Now I put the hot egg in the garbagecan."),
    ]
    assert _labelled(PrematureSuccessLabeler(), _trajectory(egg, goal=goal, protocol="react")) == [4]
    lamp = [
        {"action": "use desklamp 1", "feedback": "You turn on the desklamp 1."},
        {"thought": "The watch is under the lamp.", "action": "examine desk 1",
         "feedback": "On the desk 1, you see a pen 1."},
    ]
    assert _labelled(PrematureSuccessLabeler(), _trajectory(lamp, goal="look at watch under the desklamp.")) == [1]


# Readings added when the sixth blind test set was scored and retired.


def test_a_command_rewritten_in_another_format_after_doing_nothing_is_not_a_loop() -> None:
    shelf = "On the shelf 1, you see a vase 1."
    tags = {"raw": '<tool_call>{"name": "go_to"}</tool_call>', "action": "go to shelf 1", "feedback": NOTHING,
            "normalized": ["tags"]}
    prefixed = {"raw": "ACTION: go to shelf 1", "action": "go to shelf 1", "feedback": NOTHING,
                "normalized": ["prefix"]}
    bold = {"raw": "**go to shelf 1**", "action": "**go to shelf 1**", "feedback": NOTHING}
    plain = {"raw": "go to shelf 1", "action": "go to shelf 1", "feedback": shelf}
    goal = "put some vase on dresser."
    assert _labelled(LoopLabeler(), _trajectory([tags, prefixed, bold, plain], goal=goal, protocol="react")) == []
    # the same wrong format again is a repeat
    assert _labelled(LoopLabeler(), _trajectory([prefixed, bold, bold], goal=goal, protocol="react")) == [2]


def test_a_take_guessed_again_after_a_snap_onto_another_object_is_a_loop() -> None:
    turns = [
        {"action": "go to countertop 2", "feedback": "On the countertop 2, you see a spoon 1."},
        {"action": "take saltshaker 1 from countertop 2", "feedback": "You pick up the spoon 1 from the countertop 2.",
         "facts": {"executed_action": "take spoon 1 from countertop 2"}},
        {"action": "take saltshaker 2 from countertop 2", "feedback": "On the countertop 2, you see nothing.",
         "facts": {"executed_action": "examine countertop 2"}},
    ]
    assert _labelled(LoopLabeler(), _trajectory(turns, goal="put some saltshaker on shelf.")) == [2]
    # the number guessed is one the listing showed: a correction, not a refuted guess
    shown = [{**turns[0], "feedback": "On the countertop 2, you see a saltshaker 2, and a spoon 1."}, turns[1],
             {**turns[2], "feedback": "You pick up the saltshaker 2 from the countertop 2.", "facts": {}}]
    assert _labelled(LoopLabeler(), _trajectory(shown, goal="put some saltshaker on shelf.")) == []


def test_an_errand_without_a_number_after_a_failed_take_is_a_phantom_command() -> None:
    from prefbuild.labelers.phantom_object import PhantomObjectLabeler

    turns = [
        {"action": "go to countertop 1", "feedback": "On the countertop 1, you see a apple 1."},
        {"action": "take apple from countertop 1", "feedback": NOTHING},
        {"action": "go to fridge 1", "feedback": "The fridge 1 is closed."},
        {"action": "cool apple with fridge 1", "feedback": NOTHING},
    ]
    goal = "cool some apple and put it in diningtable."
    assert _labelled(PhantomObjectLabeler(), _trajectory(turns, goal=goal, protocol="react")) == [3]
    held = [turns[0], {"action": "take apple 1 from countertop 1",
                       "feedback": "You pick up the apple 1 from the countertop 1."}, turns[2], turns[3]]
    assert _labelled(PhantomObjectLabeler(), _trajectory(held, goal=goal, protocol="react")) == []


def test_thanks_for_anything_opens_as_filler_and_a_thought_that_only_narrates_is_filler() -> None:
    from prefbuild.labelers.verbose_filler import narrates, opening_interjection

    assert opening_interjection("Thanks for the table description. Inserting the course.")
    assert opening_interjection("Thank you for sharing the schema, now I query.")
    assert opening_interjection("Thanks to the listing I know where it is.") is None
    shown = ("You pick up the creditcard 1 from the sidetable 1. "
             "On the sidetable 1, you see a creditcard 1, and a watch 1.")
    story = ("On the sidetable 1 there was a creditcard 1 and a watch 1; I picked up the creditcard 1 from the "
             "sidetable 1 and now I carry it.")
    assert narrates(story, shown, 15)
    plan = ("On the sidetable 1 there was a creditcard 1 and a watch 1; I picked up the creditcard 1 and next I "
            "go to desk 1.")
    assert not narrates(plan, shown, 15)
    assert not narrates("I am not carrying anything, and the creditcard 1 is on sidetable 1, not on the desk.",
                        shown, 15)


def test_holding_the_object_under_the_lamp_is_a_look_claim() -> None:
    lamp = [
        {"action": "go to desk 1", "feedback": "On the desk 1, you see a desklamp 1."},
        {"action": "use desklamp 1", "feedback": "You turn on the desklamp 1."},
        {"thought": "I am holding the keychain under the lit desklamp, the task should be done.",
         "action": "inventory", "feedback": "You are not carrying anything."},
    ]
    goal = "look at keychain under the desklamp."
    assert _labelled(PrematureSuccessLabeler(), _trajectory(lamp, goal=goal)) == [2]
    plan = [*lamp[:2], {**lamp[2], "thought": "I need to be holding the keychain under the lit desklamp."}]
    assert _labelled(PrematureSuccessLabeler(), _trajectory(plan, goal=goal)) == []


# Readings added when the eighth and seventh blind test sets were scored and retired.


def test_values_of_a_small_result_named_or_added_up_are_used_and_a_long_result_re_listed_is_filler() -> None:
    from prefbuild.labelers.verbose_filler import restates

    two_rows = "[('Titans', '28'), ('Storm', '16')]"
    assert not restates("The Leopards scored 28 points against the Titans and 16 points against the Storm, so they "
                        "scored more against the Titans.", two_rows, 15, 0.8)
    points = "[('21',), ('17',), ('10',), ('24',)]"
    assert not restates("The Falcons scored 21, 17, 10 and 24 points in away games. Adding them: 21 + 17 = 38, "
                        "38 + 10 = 48, 48 + 24 = 74.", points, 15, 0.8)
    teams = "[('Ghana', '3'), ('Peru', '3'), ('Norway', '3'), ('Iraq', '3')]"
    assert restates("The result shows Ghana with 3 played, Peru with 3 played, Norway with 3 played and Iraq with "
                    "3 played.", teams, 15, 0.8)


def test_a_statement_that_fails_with_a_new_error_after_an_error_is_not_a_repeat() -> None:
    first = _sql_turn("SELECT Film FROM f WHERE `Year = 2000`", error="1054 (42S22): Unknown column 'Year = 2000'")
    moved = _sql_turn("SELECT Film FROM f WHERE `Year` = `2000`", error="1054 (42S22): Unknown column '2000'")
    same = _sql_turn("SELECT Film FROM f WHERE `Year` = `2000`", error="1054 (42S22): Unknown column 'Year = 2000'")
    assert _labelled(SqlLoopLabeler(), _trajectory([first, moved], goal="Which film?", name="sql",
                                                   protocol="dbbench")) == []
    assert _labelled(SqlLoopLabeler(), _trajectory([first, same], goal="Which film?", name="sql",
                                                   protocol="dbbench")) == [1]


def test_a_re_sweep_after_switching_the_lamp_on_is_a_loop_and_the_first_correct_use_is_not() -> None:
    shelf = {"action": "go to shelf 1", "feedback": "On the shelf 1, you see a book 2."}
    drawer = {"action": "go to drawer 1", "feedback": "The drawer 1 is closed."}
    lamp = {"action": "use desklamp 1", "feedback": "You turn on the desklamp 1."}
    sidetable = {"action": "go to sidetable 1", "feedback": "On the sidetable 1, you see a desklamp 1."}
    goal = "look at bowl under the desklamp."
    turns = [shelf, drawer, sidetable, lamp, shelf, drawer]
    assert _labelled(LoopLabeler(), _trajectory(turns, goal=goal)) == [4, 5]
    period = {"action": "use desklamp 1.", "raw": "use desklamp 1.", "feedback": NOTHING}
    fixed = {**lamp, "raw": "use desklamp 1"}
    assert _labelled(LoopLabeler(), _trajectory([sidetable, period, fixed], goal=goal, protocol="react")) == []


def test_a_snap_that_only_fills_in_a_left_out_number_is_the_command_written() -> None:
    from prefbuild.labelers.invalid_action import InvalidActionLabeler, numbers_filled_in

    assert numbers_filled_in("cool lettuce 1 with fridge", "cool lettuce 1 with fridge 1")
    assert not numbers_filled_in("take apple 1 from countertop 1", "take apple 2 from countertop 1")
    assert not numbers_filled_in("go to fridge 1", "go to fridge 1")
    fridge = {"action": "go to fridge 1", "feedback": "The fridge 1 is closed."}
    take = {"action": "take lettuce 1 from countertop 1",
            "feedback": "You pick up the lettuce 1 from the countertop 1."}
    look = {"action": "go to countertop 1", "feedback": "On the countertop 1, you see a lettuce 1."}
    cool = {"action": "cool lettuce 1 with fridge", "feedback": "You cool the lettuce 1 using the fridge 1.",
            "facts": {"executed_action": "cool lettuce 1 with fridge 1"}}
    goal = "cool some lettuce and put it in diningtable."
    assert _labelled(InvalidActionLabeler(), _trajectory([look, take, fridge, cool], goal=goal)) == []
    other = {**cool, "action": "cool lettuce 2 with fridge 1"}
    assert _labelled(InvalidActionLabeler(), _trajectory([look, take, fridge, other], goal=goal)) == [3]


def test_possession_claims_and_a_slices_knife_are_tracked_and_a_believed_type_covers_any_number() -> None:
    from prefbuild.labelers.phantom_object import PhantomObjectLabeler, claimed_take

    assert claimed_take("I found the tomato 3. I have the tomato 3 now, so I'll heat it.") == "tomato 3"
    assert claimed_take("I'm holding the soapbar 4, to the garbagecan.") == "soapbar 4"
    assert claimed_take("I have to take the tomato 3 first.") is None
    microwave = {"action": "go to microwave 1", "feedback": "The microwave 1 is closed."}
    heat = {"action": "heat tomato 3 with microwave 1", "feedback": NOTHING}
    claimed = {"thought": "I have the tomato 3 now.", "action": "go to diningtable 1",
               "feedback": "On the diningtable 1, you see a tomato 3."}
    goal = "heat some tomato and put it in countertop."
    assert _labelled(PhantomObjectLabeler(), _trajectory([claimed, microwave, heat], goal=goal)) == [2]
    took = {"action": "take tomato 3 from diningtable 1",
            "feedback": "You pick up the tomato 3 from the diningtable 1."}
    assert _labelled(PhantomObjectLabeler(), _trajectory([claimed, took, microwave, heat], goal=goal)) == []
    counter = {"action": "go to countertop 1", "feedback": "On the countertop 1, you see a apple 2, and a knife 1."}
    knife = {"action": "take knife 2 from countertop 1", "feedback": NOTHING}
    slice_ = {"action": "slice apple 2 with knife 2", "feedback": NOTHING}
    assert _labelled(PhantomObjectLabeler(), _trajectory([counter, knife, slice_], goal=goal)) == [2]
    bread = {"action": "take bread 1 from diningtable 1", "feedback": NOTHING}
    fridge = {"action": "go to fridge 1", "feedback": "The fridge 1 is closed."}
    cools = [{"action": f"cool bread {n} with fridge 1", "feedback": NOTHING} for n in (1, 2)]
    assert _labelled(PhantomObjectLabeler(), _trajectory([bread, fridge, *cools], goal=goal)) == [2, 3]


def test_a_listed_object_tried_after_another_number_is_a_hypothesis_not_a_guess() -> None:
    table = {"action": "go to diningtable 1", "feedback": "On the diningtable 1, you see a bread 2, and a fork 1."}
    fridge = {"action": "go to fridge 1", "feedback": "The fridge 1 is closed."}
    tries = [{"action": f"cool bread {n} with fridge 1", "feedback": NOTHING} for n in (1, 2, 3)]
    goal = "cool some bread and put it in countertop."
    assert _labelled(LoopLabeler(), _trajectory([table, fridge, *tries[:2]], goal=goal)) == []
    # bread 3 was never shown: guessing it after bread 2 is a refuted guess
    assert _labelled(LoopLabeler(), _trajectory([table, fridge, *tries[1:]], goal=goal)) == [3]


def test_fetching_back_what_a_snapped_put_moved_is_not_a_loop_but_a_written_toggle_is() -> None:
    desk = {"action": "go to desk 2", "feedback": "On the desk 2, you see a pencil 2."}
    take = {"action": "take pencil 2 from desk 2", "feedback": "You pick up the pencil 2 from the desk 2."}
    snapped = {"action": "put pencil 2 in/on shelf 1", "feedback": "You put the pencil 2 in/on the desk 2.",
               "facts": {"executed_action": "put pencil 2 in/on desk 2"}}
    shelf = {"action": "go to shelf 1", "feedback": "On the shelf 1, you see nothing."}
    inventory = {"action": "inventory", "feedback": "You are not carrying anything."}
    goal = "put some pencil on shelf."
    assert _labelled(LoopLabeler(), _trajectory([desk, take, snapped, shelf, inventory, desk, take], goal=goal)) == []
    put_back = {"action": "put pencil 2 in/on desk 2", "feedback": "You put the pencil 2 in/on the desk 2."}
    assert _labelled(LoopLabeler(), _trajectory([desk, take, put_back, take], goal=goal)) == [3]


def test_an_insert_claimed_after_a_negated_clause_is_a_claim_and_a_failure_is_not() -> None:
    from prefbuild.labelers.sql.labelers import SqlPrematureSuccessLabeler

    look = _sql_turn("SELECT * FROM films WHERE Title = 'Quiet Harbour'", "[]")
    for text, expected in (
        ("Okay, the title is not there yet, so the new record for Quiet Harbour has been inserted.", [1]),
        ("The title is not there yet and I could not insert it because of an error.", []),
        ("The record has not been inserted.", []),
    ):
        final = _sql_turn(answer='["Quiet Harbour"]', text=text)
        trajectory = _trajectory([look, final], goal="Add the film.", name="sql", protocol="dbbench")
        trajectory = trajectory.model_copy(update={"task": trajectory.task.model_copy(update={"type": "INSERT"})})
        assert _labelled(SqlPrematureSuccessLabeler(), trajectory) == expected, text


# Readings added when the tenth and ninth blind test sets were scored and retired.


def test_a_task_claim_after_a_narrated_put_still_claims() -> None:
    holding = {"action": "take peppershaker 3 from countertop 2",
               "feedback": "You pick up the peppershaker 3 from the countertop 2."}
    snapped = {"action": "put peppershaker 3 in drawer 1", "feedback": "The drawer 1 is closed.",
               "facts": {"executed_action": "examine drawer 1"}}
    goal = "put a peppershaker in drawer."
    for thought, expected in (
        ("I put the peppershaker in drawer 1. The task is complete.", [2]),
        ("I put the peppershaker in drawer 1.", []),  # beside a walk: the plan of the final step
    ):
        walk = {"thought": thought, "action": "go to drawer 2", "feedback": "The drawer 2 is closed."}
        assert _labelled(PrematureSuccessLabeler(), _trajectory([holding, snapped, walk], goal=goal)) == expected


def test_an_interjection_before_a_comma_is_lone_only_before_a_few_words() -> None:
    from prefbuild.labelers.verbose_filler import opening_interjection

    assert opening_interjection("Great, let's begin. I'll look in the hamper.")
    assert opening_interjection("Great, thanks! There are 16 positions.")
    assert opening_interjection("Great, there is a peppershaker 3 here.") is None
    assert opening_interjection("Excellent, the Beipan River Bridge is 565 m, so it is taller.") is None


def test_the_first_execution_after_a_spelling_that_did_nothing_is_not_a_loop() -> None:
    room = "You are in the middle of a room. Looking quickly around you, you see a drawer 1, and a desk 1."
    capital = {"action": "Go to drawer 1", "raw": "Go to drawer 1", "feedback": NOTHING, "observation": room}
    lower = {"action": "go to drawer 1", "raw": "go to drawer 1", "feedback": "The drawer 1 is closed."}
    goal = "look at cd under the desklamp."
    assert _labelled(LoopLabeler(), _trajectory([capital, lower], goal=goal, protocol="react")) == []
    assert _labelled(LoopLabeler(), _trajectory([lower, capital, lower], goal=goal, protocol="react")) == [1, 2]


def test_a_walk_back_for_a_first_errand_with_a_believed_held_object_is_purposeful() -> None:
    counter = {"action": "go to countertop 1", "feedback": "On the countertop 1, you see a potato 1."}
    take = {"action": "take egg 1 from countertop 2", "feedback": NOTHING}
    micro = {"action": "go to microwave 1", "feedback": "The microwave 1 is closed."}
    put = {"action": "put egg 1 in/on countertop 1", "feedback": NOTHING}
    goal = "put a hot egg in countertop."
    assert _labelled(LoopLabeler(), _trajectory([counter, take, micro, counter, put], goal=goal)) == []
    # the same walk and put again is a lap
    lap = [counter, take, micro, counter, put, micro, counter, put]
    assert _labelled(LoopLabeler(), _trajectory(lap, goal=goal)) == [5, 6, 7]


def test_two_rows_quoted_on_the_way_to_a_conclusion_are_used_and_a_plan_naming_the_room_is_not_narration() -> None:
    from prefbuild.labelers.verbose_filler import narrates, restates

    rows = "[('Beipan River Bridge', '565'), ('Millau Viaduct', '343')]"
    assert not restates("Excellent, the Beipan River Bridge is 565 m and the Millau Viaduct 343 m, so the Beipan "
                        "River Bridge is taller.", rows, 15, 0.8)
    assert restates("The result has two rows: the Beipan River Bridge with a height of 565 and the Millau Viaduct "
                    "with a height of 343.", rows, 15, 0.8)
    room = "You are in the middle of a room. Looking quickly around you, you see a desk 1, a dresser 1, a shelf 1."
    plan = {"action": "think: A creditcard is more likely to appear in desk 1, dresser 1, shelf 1 or a drawer.",
            "thought": "A creditcard is more likely to appear in desk 1, dresser 1, shelf 1 or a drawer.",
            "observation": room, "feedback": "OK."}
    assert _labelled(VerboseFillerLabeler(), _trajectory([plan], goal="put a creditcard in dresser.",
                                                         protocol="react")) == []
    assert not narrates("Desk 1 and dresser 1 are likely places for a creditcard, then shelf 1.", room, 10)


# Readings added when the twelfth and eleventh blind test sets were scored and retired.


def test_one_or_two_things_named_on_the_way_to_a_plan_are_not_re_listed() -> None:
    from prefbuild.labelers.verbose_filler import narrates, restates

    two = "On the countertop 2, you see a bread 1, and a lettuce 1."
    assert not restates("The countertop 2 has bread and lettuce, but still no potato. Leftover food is sometimes in "
                        "the microwave, so I'll check the microwave 1.", two, 15, 0.8)
    three = "On the countertop 1, you see a bread 1, a knife 1, and a saltshaker 1."
    assert restates("On countertop 1 there is a bread 1, a knife 1, and a saltshaker 1. So the countertop has bread 1, "
                    "knife 1 and saltshaker 1 on it, and I'll take the knife 1.", three, 15, 0.8)
    shown = "You pick up the apple 1 from the fridge 1. The fridge 1 is open. In it, you see a apple 1."
    assert not narrates("I'm holding the apple 1 and I'm already at the fridge 1, so I can cool it right here "
                        "without walking anywhere.", shown, 15)


def test_having_the_object_and_needing_to_put_it_claims_nothing() -> None:
    from prefbuild.labelers.household_text import parse_goal
    from prefbuild.labelers.success_claims import find_claim

    goal = parse_goal("put a spraybottle in toilet")
    assert find_claim("Now I have the spraybottle 2, and I need to put it in the toilet 1.", goal) is None
    assert find_claim("Now I have the spraybottle 2 in the toilet 1.", goal) is not None


def test_a_candidate_selected_as_a_column_condition_was_looked_up() -> None:
    from prefbuild.labelers.sql.answers import looked_up

    rows = (("31",),)
    seen = [Observed(1, "SELECT Points FROM `Eagles game log` WHERE Week = '5'", "[('31',)]", rows)]
    question = "Did the Eagles score more points in week 3 or in week 5?"
    assert looked_up("week 5", question, seen)
    assert not looked_up("week 3", question, seen)


def test_more_lone_interjections_and_a_difference_of_two_values_is_used() -> None:
    from prefbuild.labelers.verbose_filler import opening_interjection, restates

    lone = ("Sure! I go to the drawer.", "Got it, thanks! The scorers were Okafor.", "Sure, let's do this. A knife.")
    for text in lone:
        assert opening_interjection(text), text
    for text in ("OK, now to the sinkbasin to clean it.", "Alright, on to the microwave 1 then."):
        assert opening_interjection(text) is None, text
    rows = "[('Mont Velan', '3731'), ('Grand Combin de Tsessette', '3713')]"
    assert not restates("Mont Velan is 3731 m and Grand Combin de Tsessette 3713 m, difference 18 m, the answer.",
                        rows, 15, 0.8)


def test_a_long_thought_going_round_its_guesses_is_filler_and_a_long_plan_is_not() -> None:
    rambling = ("Hmm, nothing in cabinet 1. A bowl could be in a cabinet, or maybe on a countertop, or maybe in the "
                "fridge, or maybe in the sinkbasin, bowls can be in a lot of places in a kitchen really. It could be "
                "anywhere. I just have to keep looking for the bowl, because the bowl is somewhere in this kitchen.")
    plan = ("To solve the task, I need to find and take a bowl, then cool it with fridge 1, then put it in a cabinet. "
            "Bowls are usually in cabinets or the fridge; the fridge is where I cool it anyway, so I'll check cabinet "
            "1-3 first and end at the fridge, skipping the drawers since a bowl would not fit there.")
    turns = [{"thought": text, "action": "go to cabinet 2", "feedback": "The cabinet 2 is closed."}
             for text in (plan, rambling)]
    assert _labelled(VerboseFillerLabeler(), _trajectory(turns, goal="cool some bowl and put it in cabinet.")) == [1]


def test_looking_at_the_object_under_it_and_being_done_here_are_claims() -> None:
    from prefbuild.labelers.household_text import parse_goal
    from prefbuild.labelers.success_claims import find_claim

    look = parse_goal("look at cellphone under the desklamp")
    assert find_claim("The desklamp 1 is on, and I am looking at the cellphone under it.", look) is not None
    assert find_claim("The desklamp 1 is on, and I am looking for the cellphone under it.", look) is None
    put = parse_goal("put some tissuebox on tvstand")
    assert find_claim("The tissuebox is on the tvstand 1, so I am done here.", put) is not None
    assert find_claim("I am done here with the sidetable, next the tvstand 1.", put) is None


def test_a_slice_with_a_knife_never_held_is_a_phantom_command() -> None:
    from prefbuild.labelers.phantom_object import PhantomObjectLabeler

    table = {"action": "go to diningtable 1", "feedback": "On the diningtable 1, you see a knife 3, and a tomato 1."}
    tomato = {"action": "take tomato 1 from diningtable 1",
              "feedback": "You pick up the tomato 1 from the diningtable 1."}
    knife = {"action": "take knife 3 from diningtable 1", "feedback": "You pick up the knife 3 from the diningtable 1."}
    slice_ = {"action": "slice tomato 1 with knife 3", "feedback": NOTHING}
    goal = "put a hot tomato in countertop."
    assert _labelled(PhantomObjectLabeler(), _trajectory([table, tomato, slice_], goal=goal, protocol="react")) == [2]
    assert _labelled(PhantomObjectLabeler(), _trajectory([table, knife, slice_], goal=goal, protocol="react")) == []


def test_an_interjection_line_before_the_thought_is_filler_but_not_a_format_violation() -> None:
    raw = "Got it!\nTHOUGHT: I have to find a pencil.\n ACTION: go to drawer 1\n"
    turn = {"raw": raw, "thought": "Got it!\nTHOUGHT: I have to find a pencil.", "action": "go to drawer 1",
            "feedback": "The drawer 1 is closed.", "format_ok": False,
            "facts": {"problems": ["text before the action without a 'THOUGHT:' tag"]}}
    trajectory = _trajectory([turn], goal="put a pencil in desk.")
    assert _labelled(FormatViolationLabeler(), trajectory) == []
    assert _labelled(VerboseFillerLabeler(), trajectory) == [0]
    two = {**turn, "facts": {"problems": ["text before the action without a 'THOUGHT:' tag", "two action lines"]}}
    assert _labelled(FormatViolationLabeler(), _trajectory([two], goal="put a pencil in desk.")) == [0]


# Readings added when the thirteenth and fourteenth blind test sets were scored and retired.


def test_a_snapped_fetch_of_the_object_a_snap_moved_is_not_a_loop() -> None:
    table = {"action": "go to coffeetable 1", "feedback": "On the coffeetable 1, you see a box 3, and a vase 2."}
    take = {"action": "take vase 2 from coffeetable 1", "feedback": "You pick up the vase 2 from the coffeetable 1."}
    snapped_put = {"action": "put vase 2 in/on shelf 1", "feedback": "You put the vase 2 in/on the coffeetable 1.",
                   "facts": {"executed_action": "put vase 2 in/on coffeetable 1"}}
    fetch = {**table, "action": "take vase 2 from coffeetable 1",
             "facts": {"executed_action": "go to coffeetable 1"}}
    goal = "put some vase on shelf."
    assert _labelled(LoopLabeler(), _trajectory([table, take, snapped_put, fetch], goal=goal)) == []
    guess = {**table, "action": "take box 2 from coffeetable 1", "facts": {"executed_action": "go to coffeetable 1"}}
    assert _labelled(LoopLabeler(), _trajectory([table, take, snapped_put, guess], goal=goal)) == [3]


def test_look_elsewhere_is_not_a_repeat_and_a_walk_to_take_is_purposeful() -> None:
    shelf2 = {"action": "look", "feedback": "You are facing the shelf 2. Next to it, you see nothing."}
    shelf1 = {"action": "look", "feedback": "You are facing the shelf 1. Next to it, you see nothing."}
    walk = {"action": "go to shelf 1", "feedback": "On the shelf 1, you see a book 1."}
    goal = "put some vase on shelf."
    assert _labelled(LoopLabeler(), _trajectory([shelf2, walk, shelf1], goal=goal)) == []
    assert _labelled(LoopLabeler(), _trajectory([shelf1, walk, shelf1], goal=goal)) == [2]


def test_a_lap_differing_only_by_a_first_visit_explores_and_a_put_lap_does_not() -> None:
    room = "You are in the middle of a room. Looking quickly around you, you see a drawer 1, a drawer 4, a desk 1."
    drawers = [{"action": f"go to drawer {n}", "feedback": f"The drawer {n} is open. In it, you see nothing.",
                "observation": room} for n in (1, 2, 3)]
    think = {"action": "think: The pen is not here.", "thought": "The pen is not here.", "feedback": "OK."}
    new = {"action": "go to drawer 4", "feedback": "The drawer 4 is closed."}
    goal = "put a pen in desk."
    trajectory = _trajectory([*drawers, think, *drawers, think, new], goal=goal, protocol="react")
    assert _labelled(LoopLabeler(), trajectory) == [4, 5, 6, 7]


def test_mysql_rows_copied_as_the_answer_are_read_as_their_values() -> None:
    from prefbuild.labelers.sql.answers import answer_values

    assert answer_values("[('Stavanger',)]") == ["Stavanger"]
    assert answer_values('["Okafor", "Brennan"]') == ["Okafor", "Brennan"]


def test_format_attempts_in_different_markup_are_not_repeats() -> None:
    bold = {"raw": "**go to cabinet 1**", "action": "**go to cabinet 1**", "feedback": NOTHING}
    ticks = {"raw": "`go to cabinet 1`", "action": "`go to cabinet 1`", "feedback": NOTHING}
    goal = "put some dishsponge on cart."
    assert _labelled(LoopLabeler(), _trajectory([bold, ticks], goal=goal, protocol="react")) == []
    assert _labelled(LoopLabeler(), _trajectory([bold, bold], goal=goal, protocol="react")) == [1]


def test_now_i_run_the_update_is_a_plan_and_the_price_is_now_set_is_a_claim() -> None:
    from prefbuild.labelers.sql.labelers import claims_change

    plan = Step(index=0, observation="", raw_output="Now I run the update.\nAction: Operation\n```\nUPDATE t\n```")
    assert not claims_change(plan, in_words=True)
    done = Step(index=0, observation="", raw_output="The price is now 4.80.\nFinal Answer: []")
    assert claims_change(done)


def test_a_describe_re_listed_is_filler_and_a_miscounted_position_is_wrong() -> None:
    from prefbuild.labelers.sql.answers import is_position
    from prefbuild.labelers.verbose_filler import restates

    describe = ("[('No', 'text', 'YES', '', None, ''), ('Title', 'text', 'YES', '', None, ''), "
                "('Director', 'text', 'YES', '', None, ''), ('Rating', 'text', 'YES', '', None, '')]")
    assert restates("The table has four columns: No (text), Title (text), Director (text) and Rating (text). All of "
                    "them are text and nullable.", describe, 15, 0.8)
    rows = (("Eagles", "61"), ("Ravens", "58"), ("Owls", "55"), ("Falcons", "52"), ("Hawks", "47"))
    seen = [Observed(0, "SELECT Team, Points FROM t ORDER BY Points DESC", str(list(rows)), rows)]
    question = "In what position did the Falcons finish, ranked by points?"
    assert is_position(["4"], question, seen)
    assert not is_position(["3"], question, seen)


# Readings added when the fifteenth and sixteenth blind test sets were scored and retired.


def test_a_walk_back_where_nothing_changed_at_that_place_repeats_whatever_moved_elsewhere() -> None:
    drawer = {"action": "go to drawer 1", "feedback": "The drawer 1 is open. In it, you see nothing."}
    shelf = {"action": "go to shelf 1", "feedback": "On the shelf 1, you see a creditcard 1."}
    take = {"action": "take creditcard 1 from shelf 1", "feedback": "You pick up the creditcard 1 from the shelf 1."}
    dresser = {"action": "go to dresser 1", "feedback": "On the dresser 1, you see a vase 1."}
    put = {"action": "put creditcard 1 in/on dresser 1", "feedback": "You put the creditcard 1 in/on the dresser 1."}
    goal = "find two creditcard and put them in dresser."
    assert _labelled(LoopLabeler(), _trajectory([drawer, shelf, take, dresser, put, drawer], goal=goal)) == [5]
    # back where the first one was taken from: that place changed, the walk is not the same
    shelf_now = {**shelf, "feedback": "On the shelf 1, you see nothing."}
    assert _labelled(LoopLabeler(), _trajectory([drawer, shelf, take, dresser, put, shelf_now], goal=goal)) == []


def test_a_place_named_after_not_is_not_claimed_and_a_state_after_a_tried_put_is() -> None:
    from prefbuild.labelers.household_text import parse_goal
    from prefbuild.labelers.success_claims import find_claim

    mug = parse_goal("put a clean mug in coffeemachine")
    assert find_claim("The mug 1 was placed in the sinkbasin 1, not the coffeemachine.", mug) is None
    assert find_claim("The mug 1 was placed in the coffeemachine 1.", mug) is not None
    remote = parse_goal("put a remotecontrol in armchair")
    assert find_claim("The remotecontrol 1 is in the armchair 1.", remote) is None  # where it was found
    from prefbuild.labelers.success_claims import find_claims

    assert find_claims("The remotecontrol 1 is in the armchair 1.", remote, after_put=True)


def test_a_look_goal_needs_the_lit_lamp_where_the_agent_stands() -> None:
    turns = [
        {"action": "go to sidetable 2", "feedback": "On the sidetable 2, you see a desklamp 1."},
        {"action": "use desklamp 1", "feedback": "You turn on the desklamp 1."},
        {"action": "go to bed 1", "feedback": "On the bed 1, you see a book 1."},
        {"action": "take book 1 from bed 1", "feedback": "You pick up the book 1 from the bed 1."},
        {"thought": "I am now examining the book 1 under the desklamp 1.", "action": "look",
         "feedback": "You are facing the bed 1. Next to it, you see nothing."},
    ]
    goal = "examine the book with the desklamp."
    assert _labelled(PrematureSuccessLabeler(), _trajectory(turns, goal=goal)) == [4]
    back = [*turns[:4], {**turns[0], "thought": "I am now examining the book 1 under the desklamp 1."}]
    assert _labelled(PrematureSuccessLabeler(), _trajectory(back, goal=goal)) == []


def test_cool_cool_is_a_lone_interjection_and_odd_places_follow_the_coffee_machine_and_real_visits() -> None:
    from prefbuild.labelers.implausible_location import ImplausibleLocationLabeler
    from prefbuild.labelers.placement import placement
    from prefbuild.labelers.verbose_filler import opening_interjection

    assert opening_interjection("Cool, cool.")
    assert opening_interjection("Good, the egg 1 is hot now, it goes on the diningtable 1.") is None
    assert placement("tomato", "coffeemachine") == "odd"
    assert placement("mug", "coffeemachine") == "plausible"
    assert placement("kettle", "coffeemachine") != "odd"
    capital = {"action": "Go to laundryhamper 1", "raw": "Go to laundryhamper 1", "feedback": NOTHING}
    lower = {"action": "go to laundryhamper 1", "feedback": "On the laundryhamper 1, you see a cloth 1."}
    goal = "put a candle in cabinet."
    trajectory = _trajectory([capital, lower], goal=goal, protocol="react")
    assert _labelled(ImplausibleLocationLabeler(), trajectory) == [1]


# Readings added when the seventeenth blind test set was scored and retired.


def test_a_candidate_looked_up_by_the_second_statement_of_a_block_was_not_looked_up_there() -> None:
    from prefbuild.labelers.sql.answers import looked_up

    both = "SELECT Built FROM t WHERE Name = 'Kerrin Point'; SELECT Built FROM t WHERE Name = 'Sable Head'"
    seen = [Observed(0, both, "[('1841',)]", (("1841",),)),
            Observed(1, "SELECT Built FROM t WHERE Name = 'Sable Head'", "[('1867',)]", (("1867",),))]
    question = "Which lighthouse is older, Kerrin Point or Sable Head?"
    assert looked_up("Kerrin Point", question, seen)
    assert looked_up("Sable Head", question, seen)
    assert not looked_up("Kerrin Point", question, seen[1:])


# Readings added when the eighteenth blind test set was scored and retired.


def test_more_claim_phrasings_are_claims() -> None:
    from prefbuild.labelers.household_text import parse_goal
    from prefbuild.labelers.success_claims import find_claim

    look = parse_goal("examine the alarmclock with the desklamp")
    assert find_claim("With the desklamp switched on and the alarmclock 2 in my hand, I am examining it under the "
                      "light now.", look) is not None
    book = parse_goal("look at book under the desklamp")
    assert find_claim("The lamp is lit, so I'm looking at the book under the desklamp now.", book) is not None
    assert find_claim("I'm looking for the book near the desklamp.", book) is None
    potato = parse_goal("heat some potato and put it in countertop")
    assert find_claim("Hot potato delivered to countertop 1; that's the job finished.", potato) is not None
    assert find_claim("Next the potato has to be delivered to countertop 1.", potato) is None


def test_puts_of_one_object_into_a_string_of_places_are_a_loop_from_the_second() -> None:
    turns = [
        {"action": "go to countertop 1", "feedback": "On the countertop 1, you see a apple 2."},
        {"action": "take apple 2 from countertop 1", "feedback": "You pick up the apple 2 from the countertop 1."},
        {"action": "put apple 2 in/on diningtable 1", "feedback": NOTHING},
        {"action": "put apple 2 in/on shelf 1", "feedback": NOTHING},
        {"action": "put apple 2 in/on countertop 2", "feedback": NOTHING},
        {"action": "go to diningtable 1", "feedback": "On the diningtable 1, you see a fork 1."},
        {"action": "put apple 2 in/on diningtable 1", "feedback": "You put the apple 2 in/on the diningtable 1."},
    ]
    trajectory = _trajectory(turns, goal="put some apple on diningtable.", protocol="react")
    assert _labelled(LoopLabeler(), trajectory) == [3, 4]


def test_a_short_thought_going_round_its_guesses_is_filler() -> None:
    rambling = ("It could be in one of the drawers, or maybe on the dresser, or perhaps somebody threw it in the "
                "garbage can, or it might be on the bed, honestly it could be anywhere in this bedroom.")
    turns = [{"thought": rambling, "action": "go to garbagecan 1", "feedback": "On the garbagecan 1, you see nothing."}]
    assert _labelled(VerboseFillerLabeler(), _trajectory(turns, goal="put a pen in desk.")) == [0]
    plan = ("The pen could be in a drawer, so I check drawer 1 to drawer 3 in order, then the dresser 1.")
    turns = [{"thought": plan, "action": "go to drawer 1", "feedback": "The drawer 1 is closed."}]
    assert _labelled(VerboseFillerLabeler(), _trajectory(turns, goal="put a pen in desk.")) == []


# Readings added when the nineteenth blind test set was scored and retired.


def test_a_goal_claim_and_a_task_claim_in_one_sentence_and_having_put_are_claims() -> None:
    from prefbuild.labelers.household_text import parse_goal
    from prefbuild.labelers.success_claims import find_claim, find_claims

    bread = parse_goal("heat some bread and put it in countertop")
    kinds = [claim.kind for claim in find_claims("The bread 2 is heated and now placed on the countertop 1, so the "
                                                 "task is done.", bread)]
    assert kinds == ["goal", "task"]
    pencils = parse_goal("find two pencil and put them in dresser")
    claim = find_claim("I am not carrying anything, which matches having put both pencils away in the dresser 1.",
                       pencils)
    assert claim is not None and claim.count == 2
    assert find_claim("Hmm, nothing indicates the task finished, and there is no desklamp here.", bread) is None


# Readings added when the twentieth blind test set was scored and retired.


def test_under_its_light_claims_a_comma_then_runs_the_first_command_and_an_order_to_oneself_plans() -> None:
    from prefbuild.labelers.household_text import parse_goal
    from prefbuild.labelers.invalid_action import InvalidActionLabeler
    from prefbuild.labelers.success_claims import find_claim
    from prefbuild.labelers.verbose_filler import narrates

    clock = parse_goal("look at alarmclock under the desklamp")
    assert find_claim("The desklamp 1 is on now and I am looking at the alarmclock under its light, so the goal is "
                      "reached.", clock) is not None
    chained = {"action": "put vase 3 in/on coffeetable 1, then go to sidetable 2",
               "feedback": "You put the vase 3 in/on the coffeetable 1.",
               "facts": {"executed_action": "put vase 3 in/on coffeetable 1"}}
    held = {"action": "take vase 3 from shelf 1", "feedback": "You pick up the vase 3 from the shelf 1."}
    trajectory = _trajectory([held, chained], goal="put some vase on coffeetable.")
    assert _labelled(InvalidActionLabeler(), trajectory) == []
    shown = "On the countertop 1, you see a candle 1, and a soapbottle 3. On the toilet 1, you see a soapbottle 1."
    assert not narrates("One soapbottle is on the toilet 1; the soapbottle 3 is still here. Take it to the toilet.",
                        shown, 15)


# Readings added when the twenty-first blind test set was scored and retired.


def test_a_thought_about_nothing_here_repeated_into_a_replay_is_a_loop_and_one_about_here_reacts() -> None:
    def think(text: str) -> dict[str, Any]:
        return {"action": f"think: {text}", "thought": text, "feedback": "OK."}

    cabinet = [
        {"action": "go to cabinet 1", "feedback": "The cabinet 1 is closed."},
        {"action": "open cabinet 1",
         "feedback": "You open the cabinet 1. The cabinet 1 is open. In it, you see nothing."},
    ]
    second = [
        {"action": "go to cabinet 2", "feedback": "The cabinet 2 is closed."},
        {"action": "open cabinet 2",
         "feedback": "You open the cabinet 2. The cabinet 2 is open. In it, you see nothing."},
    ]
    back = {"action": "go to cabinet 1", "feedback": "The cabinet 1 is open. In it, you see nothing."}
    goal = "heat some cup and put it in cabinet."
    generic = [think("I need to find a cup."), *cabinet, think("I need to find a cup."), *second,
               think("I need to find a cup."), back]
    # 3 follows an empty cabinet into a new place (a reaction); 6 leads into a replay of cabinet 1
    assert _labelled(LoopLabeler(), _trajectory(generic, goal=goal, protocol="react")) == [6, 7]
    here = [think("The cup is not here."), *cabinet, think("The cup is not here."), *second,
            think("The cup is not here."), back]
    assert 6 not in _labelled(LoopLabeler(), _trajectory(here, goal=goal, protocol="react"))


def test_an_object_the_env_listed_in_the_goal_place_is_truly_there_and_which_completes_claims() -> None:
    from prefbuild.labelers.household_text import parse_goal
    from prefbuild.labelers.success_claims import find_claim

    sofa = {"action": "go to sofa 1", "feedback": "On the sofa 1, you see a pillow 1, and a remotecontrol 2."}
    already = {"thought": "The pillow 1 is already on the sofa 1. I only need one more.", "action": "look",
               "feedback": "You are facing the sofa 1. Next to it, you see nothing."}
    goal = "find two pillow and put them in sofa."
    assert _labelled(PrematureSuccessLabeler(), _trajectory([sofa, already], goal=goal)) == []
    book = parse_goal("look at book under the desklamp")
    assert find_claim("I am now examining the book 2 under the desklamp, which completes the task.", book)


# Readings added when the twenty-second blind test set was scored and retired.


def test_sitting_and_sits_on_are_state_claims_and_a_list_of_years_excuses_no_miscount() -> None:
    from prefbuild.labelers.household_text import parse_goal
    from prefbuild.labelers.sql.answers import aggregates
    from prefbuild.labelers.success_claims import find_claim

    egg = parse_goal("heat some egg and put it in countertop")
    assert find_claim("The heated egg is sitting on the countertop 1 now.", egg) is not None
    lettuce = parse_goal("clean some lettuce and put it in diningtable")
    assert find_claim("Done: the clean lettuce 1 now sits on the diningtable 1.", lettuce) is not None
    assert find_claim("The lettuce 1 sits on the diningtable 1 where I saw it.", lettuce) is None
    films = (("Night Train", "2012"), ("The Harbor", "2014"), ("Glass Fields", "2017"), ("Red Orchard", "2019"))
    assert 5.0 not in aggregates(films) and 4.0 in aggregates(films)
    assert 4.0 in aggregates((("1974", "x"), ("1978", "y")))  # two years compared: years apart
