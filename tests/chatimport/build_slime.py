"""Write the slime tau2 trajectory fixtures of ``data/`` (see README.md): conversations of a tau2
agent kept the way the slime framework's tau2 pipeline ("Tau2-RL-Pipeline") keeps its SFT and RL
trajectories, in its two action formats, and ``slime_expected.json`` with the labels each episode
must get, written from the README's labeler definitions before the importer existed.

    PYTHONPATH=. .venv/bin/python tests/chatimport/build_slime.py

The layout, one record a line::

    {"task_id": "[airline]5[sample_0]", "prompt": [system, user, assistant, user, ...], "response": "",
     "metadata": {"domain": "airline", "tau2_task_id": "5", "success": true, "partial_score": 1.0,
                  "tool_sequence": ["get_user_details", ...]}}

Only the roles system / user / assistant occur. An assistant turn is one action: legacy
``<think>...</think>`` then ``[ACTION]\\nname(key="value")\\n[/ACTION]`` (a Python call with keyword
arguments), or native ``<tool_call>\\n{"name", "arguments"}\\n</tool_call>`` after an optional
``<think>`` / ``<thinking>`` block. ``respond(content=...)`` is a message to the customer, ``done()``
ends the episode. A tool result comes back as a user turn: ``[TOOL_RESULT]\\n<the call>\\n<output>\\n
[/TOOL_RESULT]`` (legacy) or ``Tool result for <the call>:\\n<output>`` (native, the call written as
``name(key=<JSON value>)``); a customer's reply that came with it is a user turn of its own.
Tool outputs are tau2's: JSON text, or ``Error: ...``.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"

# What the tools of the domains take (a few of tau2's, as the legacy prompt lists them: name(param:type)).
TOOL_LINES = {
    "airline": [
        "get_user_details(user_id:string): Get the details of a user.",
        "get_reservation_details(reservation_id:string): Get the details of a reservation.",
        "get_flight_status(flight_number:string, date:string): Get the status of a flight.",
        "cancel_reservation(reservation_id:string): Cancel the whole reservation.",
        "send_certificate(user_id:string, amount:integer): Send a certificate to a user.",
    ],
    "retail": [
        "find_user_id_by_email(email:string): Find a user id by email.",
        "get_order_details(order_id:string): Get the status and details of an order.",
        "return_delivered_order_items(order_id:string, item_ids:array, payment_method_id:string): Return items.",
    ],
    "telecom": [
        "get_customer_by_phone(phone_number:string): Find a customer by phone number.",
        "get_details_by_id(id:string): Get the details of a line, bill, plan or device.",
        "get_bills_for_customer(customer_id:string, limit?:integer): Get a customer's bills.",
        "enable_roaming(customer_id:string, line_id:string): Enable roaming on a line.",
    ],
}


def legacy_system(domain: str) -> dict[str, str]:
    """A system prompt of the legacy format: the tools as signature lines, the actions, the output form."""
    tools = "\n".join(f"- {line}" for line in TOOL_LINES[domain])
    text = (
        f"You are a customer service agent for {domain}. Help the customer within the policy.\n\n## Tools\n{tools}\n\n"
        '## Actions\n- respond(content="..."): send the customer a message\n- done(): end the conversation\n'
        "- any tool above, called with keyword arguments\n\n## Output format\n<think>\nreasoning\n</think>\n"
        '[ACTION]\nfunction_name(arg="value")\n[/ACTION]\n\nOne action per turn.'
    )
    return {"role": "system", "content": text}


def native_system(domain: str) -> dict[str, str]:
    """A system prompt of the native format: one <tool_call> per turn, respond and done as calls."""
    tools = "\n".join(f"- {line}" for line in TOOL_LINES[domain])
    text = (
        "## Output format\nEvery turn is exactly one call:\n<tool_call>\n"
        '{"name": "tool_name", "arguments": {"param": "value"}}\n</tool_call>\n'
        'Message the customer with respond ({"content": "..."}); call done ({}) when the task is complete.\n\n'
        f"You are a customer service agent for {domain}.\n\n## Available tools\n{tools}"
    )
    return {"role": "system", "content": text}


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, str]:
    return {"role": "assistant", "content": text}


def py_value(value: Any) -> str:
    """A Python literal of ``value`` (strings double-quoted, as models write them)."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(py_value(item) for item in value) + "]"
    return repr(value)


def py_call(name: str, **arguments: Any) -> str:
    """``name(key="value", n=3)``: the one line of an [ACTION] block."""
    return f"{name}(" + ", ".join(f"{key}={py_value(value)}" for key, value in arguments.items()) + ")"


def act(think: str, line: str) -> dict[str, str]:
    """A legacy assistant turn: reasoning, then one action line."""
    return assistant(f"<think>\n{think}\n</think>\n[ACTION]\n{line}\n[/ACTION]")


def legacy_result(line: str, output: str) -> dict[str, str]:
    return user(f"[TOOL_RESULT]\n{line}\n{output}\n[/TOOL_RESULT]")


def call(name: str, arguments: dict[str, Any], think: str | None = None, *, tag: str = "think",
         encoded: bool = False) -> dict[str, str]:
    """A native assistant turn; ``encoded`` writes the arguments as a JSON string (double-encoded)."""
    payload = {"name": name, "arguments": json.dumps(arguments) if encoded else arguments}
    head = f"<{tag}>\n{think}\n</{tag}>\n" if think is not None else ""
    return assistant(f"{head}<tool_call>\n{json.dumps(payload, ensure_ascii=False)}\n</tool_call>")


def native_result(name: str, arguments: dict[str, Any], output: str) -> dict[str, str]:
    """What the pipeline shows after a native call: the call with JSON values, then the output."""
    written = f"{name}(" + ", ".join(f"{key}={json.dumps(value)}" for key, value in arguments.items()) + ")"
    return user(f"Tool result for {written}:\n{output}")


def record(task_id: str, turns: list[dict[str, str]], *, success: bool | None, partial: float | None,
           key: str = "prompt", extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """One trajectory record; ``tool_sequence`` lists the tools called (not respond / done) in order."""
    domain, rest = task_id[1:].split("]", 1)
    tau2_id = rest.split("[sample_", 1)[0]
    sequence = []
    for turn in turns:
        text = turn["content"]
        if turn["role"] != "assistant":
            continue
        if "[ACTION]\n" in text:
            line = text.split("[ACTION]\n", 1)[1].split("\n", 1)[0]
            expression = ast.parse(line, mode="eval").body
            if not isinstance(expression, ast.Call) or expression.args:
                continue  # the harness cannot read it: no tool ran
            name = line.split("(", 1)[0]
        elif "<tool_call>" in text:
            body = text.split("<tool_call>\n", 1)[1].rsplit("\n</tool_call>", 1)[0]
            try:
                name = json.loads(body)["name"]
            except ValueError:
                continue
        else:
            continue
        if name not in ("respond", "done") and name.isidentifier():
            sequence.append(name)
    metadata: dict[str, Any] = {"domain": domain, "tau2_task_id": tau2_id}
    if success is not None:
        metadata["success"] = success
    if partial is not None:
        metadata["partial_score"] = partial
    metadata["tool_sequence"] = sequence
    metadata.update(extra or {})
    return {"task_id": task_id, key: turns, "response": "", "metadata": metadata}


MIA = json.dumps({"user_id": "mia_li_3668", "name": {"first_name": "Mia", "last_name": "Li"},
                  "email": "mia.li3818@example.com", "membership": "gold", "reservations": ["NO6JO3", "AIXC49"]})
NO6JO3 = json.dumps({"reservation_id": "NO6JO3", "user_id": "mia_li_3668", "origin": "JFK", "destination": "SEA",
                     "flight_type": "one_way", "cabin": "economy", "status": "active",
                     "flights": [{"flight_number": "HAT100", "date": "2024-05-20", "price": 152}]})
ORDER = json.dumps({"order_id": "#W2378156", "user_id": "yusuf_rossi_9620", "status": "delivered",
                    "items": [{"name": "Water Bottle", "item_id": "8310926033", "price": 54.04},
                              {"name": "Desk Lamp", "item_id": "7624783998", "price": 135.24}],
                    "payment_history": [{"transaction_type": "payment", "amount": 189.28,
                                         "payment_method_id": "credit_card_9513926"}]})


def legacy_episodes() -> list[dict[str, Any]]:
    """The legacy [ACTION] format under ``prompt``."""
    system = legacy_system("airline")
    reservation = py_call("get_reservation_details", reservation_id="NO6JO3")
    mia = py_call("get_user_details", user_id="mia_li_3668")
    return [
        # A clean episode: two lookups, the answer, done() once the customer has no more questions.
        record("[airline]5[sample_0]", [
            system, user("Hi, is my reservation still active? My user id is mia_li_3668."),
            act("The customer gave a user id. I look the user up first.", mia),
            legacy_result(mia, MIA),
            act("The user has two reservations; the customer means a flight booking. I check NO6JO3.", reservation),
            legacy_result(reservation, NO6JO3),
            act("The reservation is active.", py_call(
                "respond", content="Your reservation NO6JO3 from JFK to SEA on flight HAT100 is active.")),
            user("Great, that's all I needed."),
            act("The customer has no more questions.", "done()"),
        ], success=True, partial=1.0),
        # A call of a tool the domain does not have: tau2 answers "Tool 'x' not found."
        record("[airline]9[sample_1]", [
            system, user("Is flight HAT045 on 2024-05-15 on time?"),
            act("I check the flight.", py_call("get_flight_info", flight_number="HAT045")),
            legacy_result(py_call("get_flight_info", flight_number="HAT045"),
                          "Error: Tool 'get_flight_info' not found."),
            act("That tool does not exist; the status tool needs a date.",
                py_call("get_flight_status", flight_number="HAT045", date="2024-05-15")),
            legacy_result(py_call("get_flight_status", flight_number="HAT045", date="2024-05-15"), "delayed"),
            act("The flight is delayed.", py_call("respond", content="Flight HAT045 on 2024-05-15 is delayed.")),
        ], success=True, partial=1.0),
        # Bad arguments: tau2's schema wants an integer amount; tau2's own validation error comes back.
        record("[airline]14[sample_0]", [
            system, user("My flight was delayed and I was told I would get a certificate. I am mia_li_3668."),
            act("A gold member with a delayed flight gets a certificate of 50 per passenger.",
                py_call("send_certificate", user_id="mia_li_3668", amount="fifty")),
            legacy_result(py_call("send_certificate", user_id="mia_li_3668", amount="fifty"),
                          "Error: 1 validation error for Certificate\namount\n  Input should be a valid number, "
                          "unable to parse string as a number [type=float_parsing, input_value='fifty', "
                          "input_type=str]"),
            act("The amount must be a number.", py_call("send_certificate", user_id="mia_li_3668", amount=50)),
            legacy_result(py_call("send_certificate", user_id="mia_li_3668", amount=50),
                          "Certificate certificate_3221322 added to user mia_li_3668 with amount 50."),
            act("Tell the customer.", py_call(
                "respond", content="I have added a certificate of $50 to your account.")),
        ], success=True, partial=1.0),
        # A failing call (the order id the customer gave does not exist); the customer's correction arrives
        # with the result, as a user turn of its own.
        record("[retail]22[sample_0]", [
            legacy_system("retail"), user("Where is my order #W0000000?"),
            act("I look the order up.", py_call("get_order_details", order_id="#W0000000")),
            legacy_result(py_call("get_order_details", order_id="#W0000000"), "Error: Order #W0000000 not found"),
            user("Sorry, I mistyped it: the order is #W2378156."),
            act("The customer corrected the id.", py_call("get_order_details", order_id="#W2378156")),
            legacy_result(py_call("get_order_details", order_id="#W2378156"), ORDER),
            act("The order was delivered.", py_call("respond", content="Order #W2378156 was delivered.")),
        ], success=True, partial=1.0),
        # The identical failing call made again: the same error comes back.
        record("[retail]31[sample_2]", [
            legacy_system("retail"), user("I want to return an item. My email is yusuf.rossi@example.com."),
            act("I find the user by email.", py_call("find_user_id_by_email", email="yusuf.rossi@example.com")),
            legacy_result(py_call("find_user_id_by_email", email="yusuf.rossi@example.com"),
                          "Error: User not found"),
            act("Maybe it works on a second try.", py_call("find_user_id_by_email", email="yusuf.rossi@example.com")),
            legacy_result(py_call("find_user_id_by_email", email="yusuf.rossi@example.com"),
                          "Error: User not found"),
            act("The email is not on file.", py_call(
                "respond", content="I couldn't find an account with that email. Could you tell me your name "
                                   "and zip code instead?")),
        ], success=False, partial=0.0),
        # An [ACTION] block the harness cannot read (a positional argument), then the format error the
        # harness answers with and the corrected action.
        record("[airline]3[sample_0]", [
            system, user("Can you tell me the details of reservation NO6JO3?"),
            act("I look the reservation up.", 'get_reservation_details("NO6JO3")'),
            user("Format error: write exactly one action as [ACTION]\nfunction_name(arg=\"value\")\n[/ACTION] "
                 "with keyword arguments."),
            act("Keyword arguments only.", reservation),
            legacy_result(reservation, NO6JO3),
            act("Report it.", py_call(
                "respond", content="Reservation NO6JO3 is a one-way economy trip from JFK to SEA on HAT100.")),
            user("Thanks, bye."),
            act("Done.", "done()"),
        ], success=True, partial=1.0),
        # A message that states an amount no result gave (the order's prices are 54.04 and 135.24).
        record("[retail]40[sample_0]", [
            legacy_system("retail"), user("How much would I get back if I return the desk lamp from #W2378156?"),
            act("I need the order.", py_call("get_order_details", order_id="#W2378156")),
            legacy_result(py_call("get_order_details", order_id="#W2378156"), ORDER),
            act("The lamp's refund.", py_call(
                "respond", content="Returning the Desk Lamp would refund $212.50 to your credit card.")),
        ], success=False, partial=0.5),
        # A failed episode (the reservation was never cancelled) whose last message says it was; done() follows.
        record("[airline]18[sample_0]", [
            system, user("Please cancel my reservation AIXC49. My user id is mia_li_3668."),
            act("I check the user first.", mia),
            legacy_result(mia, MIA),
            act("AIXC49 belongs to the user. I confirm before cancelling.", py_call(
                "respond", content="Can you confirm that you want to cancel reservation AIXC49? (yes/no)")),
            user("Yes, please."),
            act("The customer confirmed.", py_call(
                "respond", content="Your reservation AIXC49 has been cancelled. The refund goes to your original "
                                   "payment method.")),
            user("Thank you!"),
            act("All done.", "done()"),
        ], success=False, partial=0.0),
        # Filler in the reasoning of a good call: the style strategy pairs it with a concise turn.
        record("[airline]21[sample_0]", [
            system, user("What is the status of flight HAT100 on 2024-05-20?"),
            act("Certainly! I'd be happy to help you with that. Great question! I hope this helps. "
                "I check the flight status.",
                py_call("get_flight_status", flight_number="HAT100", date="2024-05-20")),
            legacy_result(py_call("get_flight_status", flight_number="HAT100", date="2024-05-20"), "on time"),
            act("Report it.", py_call("respond", content="Flight HAT100 on 2024-05-20 is on time.")),
        ], success=True, partial=1.0),
    ]


CUSTOMER = json.dumps({"customer_id": "C1001", "full_name": "John Smith", "phone_number": "555-123-2002",
                       "line_ids": ["L1002"], "bill_ids": ["B1001", "B1002"]})
LINE = json.dumps({"line_id": "L1002", "phone_number": "555-123-2002", "status": "Active", "roaming_enabled": False})


def native_episodes() -> list[dict[str, Any]]:
    """The native format: under ``prompt``, and under ``messages`` as some of the pipeline's files keep it."""
    telecom, retail, airline = native_system("telecom"), native_system("retail"), native_system("airline")
    phone = {"phone_number": "555-123-2002"}
    roaming = {"customer_id": "C1001", "line_id": "L1002"}
    return [
        # A clean episode kept under "messages": <thinking> blocks, one call's arguments double-encoded.
        record("[telecom]roaming_2[sample_0]", [
            telecom, user("I'm abroad and my phone has no data. My number is 555-123-2002."),
            call("get_customer_by_phone", phone, "I find the customer by phone.", tag="thinking"),
            native_result("get_customer_by_phone", phone, CUSTOMER),
            call("get_details_by_id", {"id": "L1002"}, "I check the line.", encoded=True),
            native_result("get_details_by_id", {"id": "L1002"}, LINE),
            call("enable_roaming", roaming, "Roaming is off; the customer is abroad."),
            native_result("enable_roaming", roaming, "Roaming enabled successfully"),
            call("respond", {"content": "I've enabled roaming on your line L1002. Please restart your phone."}),
            user("It works now, thanks."),
            call("done", {}),
        ], success=True, partial=1.0, key="messages"),
        # A tool the domain does not have; no success recorded (the outcome is unknown).
        record("[retail]22[sample_3]", [
            retail, user("Where is my order #W2378156?"),
            call("lookup_order", {"order_id": "#W2378156"}, "I look the order up."),
            native_result("lookup_order", {"order_id": "#W2378156"}, "Error: Tool 'lookup_order' not found."),
            call("get_order_details", {"order_id": "#W2378156"}, "The right tool is get_order_details."),
            native_result("get_order_details", {"order_id": "#W2378156"}, ORDER),
            call("respond", {"content": "Order #W2378156 was delivered."}),
        ], success=None, partial=None),
        # Bad arguments: limit is an integer in tau2's schema; tau2 failed on the text.
        record("[telecom]bills_1[sample_0]", [
            telecom, user("What are my last three bills? Customer id C1001."),
            call("get_bills_for_customer", {"customer_id": "C1001", "limit": "3"}, "I fetch the bills."),
            native_result("get_bills_for_customer", {"customer_id": "C1001", "limit": "3"},
                          "Error: slice indices must be integers or None or have an __index__ method"),
            call("get_bills_for_customer", {"customer_id": "C1001", "limit": 3}, "The limit is a number."),
            native_result("get_bills_for_customer", {"customer_id": "C1001", "limit": 3},
                          json.dumps([{"bill_id": "B1002", "status": "Paid"}, {"bill_id": "B1001", "status": "Paid"}])),
            call("respond", {"content": "Your bills B1002 and B1001 are both paid."}),
        ], success=True, partial=1.0),
        # A failing call; the agent asks the customer, who gives up.
        record("[airline]30[sample_1]", [
            airline, user("Cancel reservation XYZ789, please. I am mia_li_3668."),
            call("cancel_reservation", {"reservation_id": "XYZ789"}, "The customer asked to cancel XYZ789."),
            native_result("cancel_reservation", {"reservation_id": "XYZ789"}, "Error: Reservation XYZ789 not found"),
            call("respond", {"content": "I couldn't find reservation XYZ789. Could you check the code?"}),
        ], success=False, partial=0.0),
        # A <tool_call> whose JSON is not closed, the harness's format error, the corrected call.
        record("[airline]5[sample_4]", [
            airline, user("Hi, is my reservation still active? My user id is mia_li_3668."),
            assistant('<think>\nI look the user up.\n</think>\n<tool_call>\n{"name": "get_user_details", '
                      '"arguments": {"user_id": "mia_li_3668"}\n</tool_call>'),
            user("FORMAT ERROR. Write exactly one call: <tool_call>{\"name\": \"...\", \"arguments\": {...}}"
                 "</tool_call>."),
            call("get_user_details", {"user_id": "mia_li_3668"}, "Close the JSON object."),
            native_result("get_user_details", {"user_id": "mia_li_3668"}, MIA),
            call("get_reservation_details", {"reservation_id": "NO6JO3"}),
            native_result("get_reservation_details", {"reservation_id": "NO6JO3"}, NO6JO3),
            call("respond", {"content": "Your reservation NO6JO3 is active."}),
        ], success=True, partial=1.0),
        # Filler in the reasoning of a good call.
        record("[retail]40[sample_2]", [
            retail, user("Can you look up order #W2378156?"),
            call("get_order_details", {"order_id": "#W2378156"},
                 "Absolutely! I'd be happy to help. Great question! I look the order up."),
            native_result("get_order_details", {"order_id": "#W2378156"}, ORDER),
            call("respond", {"content": "Order #W2378156 was delivered."}),
        ], success=True, partial=1.0, key="messages"),
        # A failed episode whose grader (the pipeline keeps tau2's reward_info) failed only what the agent
        # told: the work was done, the last message missed the refund amount. done() follows it.
        record("[retail]40[sample_5]", [
            retail, user("I want to return the water bottle from order #W2378156 to my credit card."),
            call("get_order_details", {"order_id": "#W2378156"}, "I check the order."),
            native_result("get_order_details", {"order_id": "#W2378156"}, ORDER),
            call("return_delivered_order_items", {"order_id": "#W2378156", "item_ids": ["8310926033"],
                                                  "payment_method_id": "credit_card_9513926"}),
            native_result("return_delivered_order_items", {"order_id": "#W2378156", "item_ids": ["8310926033"],
                                                           "payment_method_id": "credit_card_9513926"},
                          json.dumps({"order_id": "#W2378156", "status": "return requested"})),
            call("respond", {"content": "Your return request for the water bottle is in."}),
            user("Okay."),
            call("done", {}),
        ], success=False, partial=0.5, extra={"reward_info": {
            "reward": 0.0, "reward_breakdown": {"DB": 1.0, "COMMUNICATE": 0.0},
            "communicate_checks": [{"info": "54.04", "met": False}]}}),
    ]


# The labels each episode must get from the default labelers: (step, failure mode), per the README's
# definitions. Steps count the assistant turns from 0 (done() is a step: the agent's own end).
EXPECTED: dict[str, list[tuple[int, str]]] = {
    "[airline]5[sample_0]": [],
    "[airline]9[sample_1]": [(0, "unknown_tool")],
    # the schema check finds the string amount; the failure is the arguments' (invalid_arguments, not tool_error)
    "[airline]14[sample_0]": [(0, "invalid_arguments")],
    "[retail]22[sample_0]": [(0, "tool_error")],
    # a known tool with good arguments failed twice; the second time the same call got the same result
    "[retail]31[sample_2]": [(0, "tool_error"), (1, "tool_error"), (1, "repeated_tool_call")],
    # the broken block narrows format_violation to malformed_tool_call
    "[airline]3[sample_0]": [(0, "malformed_tool_call")],
    # $212.50: neither a result's figure nor a sum, difference or product of two of them
    "[retail]40[sample_0]": [(1, "hallucinated_tool_output")],
    # service_premature_success (mode premature_success): the last message to the customer, before done()
    "[airline]18[sample_0]": [(2, "premature_success")],
    "[airline]21[sample_0]": [(0, "verbose_filler")],
    "[telecom]roaming_2[sample_0]": [],
    "[retail]22[sample_3]": [(0, "unknown_tool")],
    "[telecom]bills_1[sample_0]": [(0, "invalid_arguments")],
    "[airline]30[sample_1]": [(0, "tool_error")],
    "[airline]5[sample_4]": [(0, "malformed_tool_call")],
    "[retail]40[sample_2]": [(0, "verbose_filler")],
    # tool_wrong_answer (mode wrong_answer): only COMMUNICATE failed; the last message before done()
    "[retail]40[sample_5]": [(2, "wrong_answer")],
}
STEPS: dict[str, int] = {
    "[airline]5[sample_0]": 4, "[airline]9[sample_1]": 3, "[airline]14[sample_0]": 3, "[retail]22[sample_0]": 3,
    "[retail]31[sample_2]": 3, "[airline]3[sample_0]": 4, "[retail]40[sample_0]": 2, "[airline]18[sample_0]": 4,
    "[airline]21[sample_0]": 2,
    "[telecom]roaming_2[sample_0]": 5, "[retail]22[sample_3]": 3, "[telecom]bills_1[sample_0]": 3,
    "[airline]30[sample_1]": 2, "[airline]5[sample_4]": 4, "[retail]40[sample_2]": 2, "[retail]40[sample_5]": 4,
}


def main() -> None:
    DATA.mkdir(exist_ok=True)
    for name, episodes in (("slime_action.jsonl", legacy_episodes()), ("slime_native.jsonl", native_episodes())):
        (DATA / name).write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in episodes), encoding="utf-8")
    expected = {key: {"steps": STEPS[key], "labels": [list(pair) for pair in value]} for key, value in EXPECTED.items()}
    (DATA / "slime_expected.json").write_text(json.dumps(expected, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
