"""Write the chat tool-log fixtures of ``data/`` (see README.md): one file per shape, and
``expected.json`` with the labels each episode must get, written from the README's labeler
definitions before the importer existed.

    PYTHONPATH=. .venv/bin/python tests/chatimport/build.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"

WEATHER = {
    "name": "get_weather",
    "description": "Current weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name."},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city"],
    },
}
FORECAST = {
    "name": "get_forecast",
    "description": "Daily forecast for a city.",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name."},
            "days": {"type": "integer", "minimum": 1, "maximum": 7},
        },
        "required": ["city", "days"],
    },
}
RUN_PYTHON = {
    "name": "code_interpreter",
    "description": "Run Python 3 code and return its output.",
    "parameters": {
        "type": "object",
        "properties": {"code": {"type": "string"}},
        "required": ["code"],
    },
}
# The OpenAI chat-completions ``tools`` parameter: {"type": "function", "function": {...}}.
OPENAI_TOOLS = [{"type": "function", "function": WEATHER}, {"type": "function", "function": FORECAST}]
SYSTEM = "You are a weather assistant. Use the tools to answer."
PARIS = json.dumps({"temperature": 18, "unit": "celsius", "condition": "cloudy"})
OSLO = json.dumps({"temperature": 4, "unit": "celsius", "condition": "snow"})


def call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    """An OpenAI tool call; ``arguments`` a JSON string as the API sends it (or an object, as some servers do)."""
    encoded = arguments if isinstance(arguments, str | dict) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": encoded}}


def asks(content: str | None, *calls: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "tool_calls": list(calls)}


def result(call_id: str, content: str, name: str | None = None) -> dict[str, Any]:
    message = {"role": "tool", "tool_call_id": call_id, "content": content}
    if name is not None:
        message["name"] = name
    return message


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def says(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def openai_episodes() -> list[dict[str, Any]]:
    system = {"role": "system", "content": SYSTEM}
    return [
        {"id": "oa-clean", "success": True, "tools": OPENAI_TOOLS, "messages": [
            system, user("What is the weather in Paris?"),
            asks(None, call("call_a1", "get_weather", '{"city": "Paris"}')),
            result("call_a1", PARIS, "get_weather"),
            says("It is 18 °C and cloudy in Paris."),
        ]},
        {"id": "oa-unknown-tool", "success": True, "tools": OPENAI_TOOLS, "messages": [
            system, user("What is the weather in Oslo right now?"),
            asks(None, call("call_b1", "get_current_conditions", '{"city": "Oslo"}')),
            result("call_b1", "Error: unknown tool 'get_current_conditions'"),
            asks(None, call("call_b2", "get_weather", '{"city": "Oslo"}')),
            result("call_b2", OSLO),
            says("It is 4 °C with snow in Oslo."),
        ]},
        {"id": "oa-bad-arguments", "success": True, "tools": OPENAI_TOOLS, "messages": [
            system, user("Give me the forecast for Oslo for the next three days."),
            asks("Checking the forecast.", call("call_c1", "get_forecast", '{"city": "Oslo", "days": "three"}')),
            result("call_c1", "Error: argument 'days': 'three' is not of type 'integer'"),
            asks(None, call("call_c2", "get_forecast", '{"city": "Oslo", "days": 3}')),
            result("call_c2", json.dumps({"forecast": ["snow", "snow", "sun"]})),
            says("Snow on the next two days, then sun."),
        ]},
        {"id": "oa-tool-error", "success": True, "tools": OPENAI_TOOLS, "messages": [
            system, user("What is the weather in Atlantis?"),
            asks(None, call("call_d1", "get_weather", '{"city": "Atlantis"}')),
            result("call_d1", json.dumps({"error": "city not found: Atlantis"})),
            says("I found no weather data for Atlantis; it may not be a real city."),
        ]},
        {"id": "oa-repeated-call", "success": True, "tools": OPENAI_TOOLS, "messages": [
            system, user("Is it cloudy in Paris?"),
            asks(None, call("call_e1", "get_weather", '{"city": "Paris"}')),
            result("call_e1", PARIS),
            asks(None, call("call_e2", "get_weather", '{"city": "Paris"}')),
            result("call_e2", PARIS),
            says("Yes, it is cloudy in Paris."),
        ]},
        # Parallel calls in one turn, their results in the other order (matched by id); arguments of the
        # second call as an object, as some OpenAI-compatible servers write them; content as text parts.
        {"id": "oa-parallel", "reward": 1.0, "model": "gpt-4o-mini", "tools": OPENAI_TOOLS, "messages": [
            {"role": "system", "content": [{"type": "text", "text": SYSTEM}]},
            {"role": "user", "content": [{"type": "text", "text": "Compare Paris and Oslo right now."}]},
            asks("", call("call_f1", "get_weather", '{"city": "Paris"}'),
                 call("call_f2", "get_weather", {"city": "Oslo"})),
            result("call_f2", OSLO), result("call_f1", PARIS),
            says("Paris is 18 °C and cloudy; Oslo is 4 °C with snow."),
        ]},
        # Two questions from the user in one conversation, the second answered without a tool.
        {"id": "oa-two-questions", "success": True, "tools": OPENAI_TOOLS, "messages": [
            system, user("Weather in Paris?"),
            asks(None, call("call_g1", "get_weather", '{"city": "Paris", "unit": "celsius"}')),
            result("call_g1", PARIS),
            says("18 °C and cloudy."),
            user("Thanks. Is that warmer than 10 °C?"),
            says("Yes, 18 °C is 8 degrees warmer than 10 °C."),
        ]},
        # Filler around a good call: the style strategy pairs it with a concise turn making the same call.
        {"id": "oa-verbose", "success": True, "tools": OPENAI_TOOLS, "messages": [
            system, user("What is the weather in Paris?"),
            asks("Certainly! I'd be happy to help you with that. Great question! I hope this helps.",
                 call("call_v1", "get_weather", '{"city": "Paris"}')),
            result("call_v1", PARIS),
            says("It is 18 °C and cloudy in Paris."),
        ]},
        # An env hint: the code env, where a turn without a call is the final answer, graded by the log.
        {"id": "oa-code-wrong", "env": "code", "success": False,
         "tools": [{"type": "function", "function": RUN_PYTHON}], "messages": [
            {"role": "system", "content": "Solve the problem. Use the code_interpreter tool."},
            user("What is 17 * 23?"),
            asks(None, call("call_h1", "code_interpreter", '{"code": "print(17 * 23)"}')),
            result("call_h1", "391\n"),
            says("The answer is \\boxed{381}."),
        ]},
    ]


# Qwen3's chat template writes the tools into the system prompt (tools_in_prompt) like this.
QWEN_TOOLS = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
    + "\n".join(json.dumps(tool) for tool in OPENAI_TOOLS)
    + "\n</tools>\n\nFor each function call, return a json object with function name and arguments within "
    '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n'
    "</tool_call>"
)


def hermes_call(name: str, arguments: dict[str, Any], before: str = "") -> str:
    """A Hermes / Qwen3 turn with one call, as the template renders an assistant tool call."""
    text = f"{before}\n" if before else ""
    return says(text + f'<tool_call>\n{{"name": "{name}", "arguments": {json.dumps(arguments)}}}\n</tool_call>')


def response(content: str) -> dict[str, Any]:
    """A tool result as Qwen3's template shows it: a user turn wrapping it in <tool_response>."""
    return user(f"<tool_response>\n{content}\n</tool_response>")


def hermes_episodes() -> list[dict[str, Any]]:
    system = {"role": "system", "content": f"{SYSTEM}\n\n{QWEN_TOOLS}"}
    return [
        {"id": "he-clean", "success": True, "messages": [
            system, user("What is the weather in Paris?"),
            hermes_call("get_weather", {"city": "Paris"}),
            response(PARIS),
            says("It is 18 °C and cloudy in Paris."),
        ]},
        # Qwen3 thinking, the tool result as a role-"tool" message (as passed to the chat template); no outcome.
        {"id": "he-think", "messages": [
            system, user("Forecast for Oslo, two days?"),
            hermes_call("get_forecast", {"city": "Oslo", "days": 2}, "<think>\nThe user wants two days.\n</think>"),
            {"role": "tool", "content": json.dumps({"forecast": ["snow", "sun"]})},
            says("<think>\nTwo entries.\n</think>\n\nSnow tomorrow, then sun."),
        ]},
        {"id": "he-malformed", "success": True, "messages": [
            system, user("What is the weather in Paris?"),
            says('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}\n</tool_call>'),
            user("No executable tool calls found. Please call a tool instead"),
            hermes_call("get_weather", {"city": "Paris"}),
            response(PARIS),
            says("It is 18 °C and cloudy in Paris."),
        ]},
        {"id": "he-hallucinated", "success": True, "messages": [
            system, user("What is the weather in Oslo?"),
            says('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>\n'
                 '<tool_response>\n{"temperature": 25, "condition": "sunny"}\n</tool_response>'),
            response(OSLO),
            says("It is 4 °C with snow in Oslo."),
        ]},
        # The tools only in the system prompt: the arguments are checked against its schemas here.
        {"id": "he-bad-arguments", "success": True, "messages": [
            system, user("Forecast for Oslo for ten days?"),
            hermes_call("get_forecast", {"city": "Oslo", "days": 10}),
            response("Error: days must be between 1 and 7"),
            hermes_call("get_forecast", {"city": "Oslo", "days": 7}),
            response(json.dumps({"forecast": ["snow"] * 7})),
            says("Snow for the whole week; the forecast only covers seven days."),
        ]},
        # Hermes text calls with the tools given as a ``tools`` list (a request log) and role-"tool" results.
        {"id": "he-unknown-tool", "success": True, "tools": OPENAI_TOOLS, "messages": [
            {"role": "system", "content": SYSTEM}, user("Weather in Paris, please."),
            hermes_call("search_web", {"query": "weather Paris"}),
            {"role": "tool", "content": "Error: unknown tool 'search_web'"},
            hermes_call("get_weather", {"city": "Paris"}),
            {"role": "tool", "content": PARIS},
            says("It is 18 °C and cloudy in Paris."),
        ]},
    ]


def function_call(name: str, arguments: dict[str, Any]) -> dict[str, str]:
    """LLaMA-Factory's ``function_call`` turn: the call as JSON text."""
    return {"from": "function_call", "value": json.dumps({"name": name, "arguments": arguments})}


def observation(content: str) -> dict[str, str]:
    return {"from": "observation", "value": content}


def human(text: str) -> dict[str, str]:
    return {"from": "human", "value": text}


def gpt(text: str) -> dict[str, str]:
    return {"from": "gpt", "value": text}


def sharegpt_episodes() -> list[dict[str, Any]]:
    # LLaMA-Factory's ``tools`` column: JSON text of a list of function definitions (no "type" wrapper).
    tools = json.dumps([WEATHER, FORECAST])
    return [
        {"id": "sg-clean", "success": True, "system": SYSTEM, "tools": tools, "conversations": [
            human("What is the weather in Paris?"),
            function_call("get_weather", {"city": "Paris"}),
            observation(PARIS),
            gpt("It is 18 °C and cloudy in Paris."),
        ]},
        {"id": "sg-two-questions", "success": True, "system": SYSTEM, "tools": tools, "conversations": [
            human("Weather in Paris?"),
            function_call("get_weather", {"city": "Paris"}),
            observation(PARIS),
            gpt("18 °C and cloudy."),
            human("And the forecast for Oslo for two days?"),
            function_call("get_forecast", {"city": "Oslo", "days": 2}),
            observation(json.dumps({"forecast": ["snow", "sun"]})),
            gpt("Snow tomorrow, then sun."),
        ]},
        {"id": "sg-bad-arguments", "success": True, "system": SYSTEM, "tools": tools, "conversations": [
            human("Forecast for Oslo?"),
            function_call("get_forecast", {"city": "Oslo"}),
            observation("Error: missing required argument 'days'"),
            function_call("get_forecast", {"city": "Oslo", "days": 1}),
            observation(json.dumps({"forecast": ["snow"]})),
            gpt("Snow tomorrow in Oslo."),
        ]},
        {"id": "sg-tool-error", "success": True, "system": SYSTEM, "tools": tools, "conversations": [
            human("What is the weather in Paris?"),
            function_call("get_weather", {"city": "Paris"}),
            observation("Traceback (most recent call last):\n  File \"weather.py\", line 12, in get_weather\n"
                        "TimeoutError: upstream service timed out"),
            function_call("get_weather", {"city": "Paris", "unit": "celsius"}),
            observation(PARIS),
            gpt("It is 18 °C and cloudy in Paris."),
        ]},
        {"id": "sg-repeated-call", "success": True, "system": SYSTEM, "tools": tools, "conversations": [
            human("Is it snowing in Oslo?"),
            function_call("get_weather", {"city": "Oslo"}),
            observation(OSLO),
            function_call("get_weather", {"city": "Oslo"}),
            observation(OSLO),
            gpt("Yes, it is snowing in Oslo."),
        ]},
    ]


# The labels each episode must get from the default labelers: (step, failure mode), per the README's
# definitions. Steps count the assistant turns (a function_call or gpt turn) from 0.
EXPECTED: dict[str, list[tuple[int, str]]] = {
    "oa-clean": [],
    "oa-unknown-tool": [(0, "unknown_tool")],
    "oa-bad-arguments": [(0, "invalid_arguments")],
    "oa-tool-error": [(0, "tool_error")],
    "oa-repeated-call": [(1, "repeated_tool_call")],
    "oa-parallel": [],
    "oa-two-questions": [],
    "oa-verbose": [(0, "verbose_filler")],
    # tool_wrong_answer (mode wrong_answer): the final answer of a failed code episode; it narrows premature_success
    "oa-code-wrong": [(1, "wrong_answer")],
    "he-clean": [],
    "he-think": [],
    "he-malformed": [(0, "malformed_tool_call")],
    "he-hallucinated": [(0, "hallucinated_tool_output")],
    "he-unknown-tool": [(0, "unknown_tool")],
    "he-bad-arguments": [(0, "invalid_arguments")],
    "sg-clean": [],
    "sg-two-questions": [],
    "sg-bad-arguments": [(0, "invalid_arguments")],
    "sg-tool-error": [(0, "tool_error")],
    "sg-repeated-call": [(1, "repeated_tool_call")],
}
# How many steps (assistant turns after the prompt) each episode has.
STEPS: dict[str, int] = {
    "oa-clean": 2, "oa-unknown-tool": 3, "oa-bad-arguments": 3, "oa-tool-error": 2, "oa-repeated-call": 3,
    "oa-parallel": 2, "oa-two-questions": 3, "oa-verbose": 2, "oa-code-wrong": 2,
    "he-clean": 2, "he-think": 2, "he-malformed": 3, "he-hallucinated": 2, "he-bad-arguments": 3,
    "he-unknown-tool": 3,
    "sg-clean": 2, "sg-two-questions": 4, "sg-bad-arguments": 3, "sg-tool-error": 3, "sg-repeated-call": 3,
}


def main() -> None:
    DATA.mkdir(exist_ok=True)
    for name, episodes in (("openai.jsonl", openai_episodes()), ("hermes.jsonl", hermes_episodes())):
        (DATA / name).write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in episodes), encoding="utf-8")
    # LLaMA-Factory ships its datasets as one JSON array (glaive_toolcall_en_demo.json).
    (DATA / "sharegpt.json").write_text(json.dumps(sharegpt_episodes(), indent=2, ensure_ascii=False) + "\n",
                                        encoding="utf-8")
    expected = {key: {"steps": STEPS[key], "labels": [list(pair) for pair in value]} for key, value in EXPECTED.items()}
    (DATA / "expected.json").write_text(json.dumps(expected, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
