# ruff: noqa: E501 - the model turns are written as a model wrote them, one string per turn
"""Scripted model turns and problems of the blind_tools1 set (code env), with the hand labels.

Each episode: its problem row (math ``problem``/``answer`` or stdin ``question``/``input_output``),
the assistant turns in order (the sandbox's tool results come from the real env when built),
and the hand labels ``(step, mode)`` decided from README's tool-env definitions.
"""

from __future__ import annotations

import json


def call(code: str, name: str = "code_interpreter", lead: str = "", **extra) -> str:
    """A Hermes tool call as a Qwen3-class model writes it."""
    arguments = {"code": code, **extra}
    body = json.dumps({"name": name, "arguments": arguments})
    return (lead + "\n\n" if lead else "") + f"<tool_call>\n{body}\n</tool_call>"


def raw_call(body: str, lead: str = "") -> str:
    """A tool call with a hand-written (possibly broken) JSON body."""
    return (lead + "\n\n" if lead else "") + f"<tool_call>\n{body}\n</tool_call>"


OVERLONG_LOOP = (
    "Wait, let me double-check the primes again. The primes start 2, 3, 5, 7, 11, 13, 17, 19, 23, 29, "
    "and the interpreter summed the first 100 of them. But maybe I should verify that 541 is the 100th "
    "prime, since if the list stopped at 523 or went on to 547 the sum would be off. Hmm, the code used "
    "a while loop that stops when the list has 100 elements, so the count is right. Let me re-verify "
    "the primality test: it checks divisors up to the square root, which is correct for n > 1. "
)
OVERLONG_PROGRAM = (
    "But wait, should I worry about large n? The loop goes up to n, which is fine for small inputs, but "
    "maybe I should loop only to the square root and count pairs. Then again, for a perfect square like 49 "
    "the root 7 must be counted once, not twice, so the simple loop is safer. Let me reconsider: the tests "
    "are small, so the direct loop is acceptable. Hmm, but what if n is zero? The statement says positive. "
)
MODERATE = (
    "Let me make sure the reasoning is sound before answering. The code counted every integer from 1 to "
    "1000 divisible by 7 using a direct loop, so there is no off-by-one issue at the boundaries: 7 is the "
    "first multiple and 994 = 7 * 142 is the last one not exceeding 1000. A quick check by hand agrees: "
    "floor(1000 / 7) = 142, because 7 * 142 = 994 and 7 * 143 = 1001 is already above 1000. "
)

# Each: id, row (problem file row without id), turns, labels [(step, mode)], note.
EPISODES: list[dict] = [
    dict(id="t01-divisors-clean", row={"problem": "Compute the sum of all positive divisors of 360.", "answer": "1170"},
         turns=[call("n = 360\nprint(sum(d for d in range(1, n + 1) if n % d == 0))",
                     lead="I'll sum the divisors of 360 directly."),
                "The sum of the positive divisors of 360 is $\\boxed{1170}$."],
         labels=[], note="clean: one call, correct answer"),
    dict(id="t02-primes-clean-braces", row={"problem": "How many primes are less than 1000?", "answer": "168"},
         turns=[call("sieve = {n: True for n in range(2, 1000)}\nfor p in range(2, 32):\n    if sieve[p]:\n"
                     "        for m in range(p * p, 1000, p):\n            sieve[m] = False\n"
                     "count = sum(sieve.values())\nprint(f\"primes below 1000: {count}\")",
                     lead="A sieve of Eratosthenes will count them."),
                "There are $\\boxed{168}$ primes less than 1000."],
         labels=[], note="hard negative: code with braces, quotes and an f-string in valid JSON"),
    dict(id="t03-syntax-error-fixed", row={"problem": "Find the remainder when $7^{2026}$ is divided by 13.", "answer": "4"},
         turns=[call("print(pow(7, 2026) % 13", lead="Let me compute this with Python."),
                call("print(pow(7, 2026, 13))", lead="I missed a parenthesis; fixing it."),
                "The remainder is $\\boxed{4}$."],
         labels=[(0, "tool_error")], note="SyntaxError once, then fixed"),
    dict(id="t04-malformed-json", row={"problem": "How many derangements are there of 7 objects?", "answer": "1854"},
         turns=[raw_call('{"name": "code_interpreter", "arguments": {"code": "from math import factorial\\n'
                         'print(sum((-1)**k * factorial(7) // factorial(k) for k in range(8)))"}',
                         lead="Use the inclusion-exclusion formula for derangements."),
                call("from math import factorial\nprint(sum((-1)**k * factorial(7) // factorial(k) for k in range(8)))"),
                "The number of derangements of 7 objects is $\\boxed{1854}$."],
         labels=[(0, "malformed_tool_call")], note="call JSON missing its closing brace, then the fixed call"),
    dict(id="t05-unknown-tool-python", row={"problem": "Compute $\\binom{20}{10}$.", "answer": "184756"},
         turns=[call("import math\nprint(math.comb(20, 10))", name="python", lead="Let me use Python."),
                call("import math\nprint(math.comb(20, 10))", lead="The tool is called code_interpreter."),
                "$\\binom{20}{10} = \\boxed{184756}$."],
         labels=[(0, "unknown_tool")], note="tool name 'python' does not exist; then the right tool"),
    dict(id="t06-wrong-arg-name", row={"problem": "How many lattice paths go from (0,0) to (6,4) using unit steps right or up?", "answer": "210"},
         turns=[raw_call(json.dumps({"name": "code_interpreter", "arguments": {"script": "import math\nprint(math.comb(10, 4))"}}),
                         lead="The count is C(10,4); let me compute it."),
                call("import math\nprint(math.comb(10, 4))"),
                "There are $\\boxed{210}$ lattice paths."],
         labels=[(0, "invalid_arguments")], note="'script' instead of the required 'code'"),
    dict(id="t07-code-as-list", row={"problem": "What is the larger root of $x^2 - 7x + 10 = 0$?", "answer": "5"},
         turns=[raw_call(json.dumps({"name": "code_interpreter", "arguments": {"code": ["import math", "d = 49 - 40", "print((7 + math.sqrt(d)) / 2)"]}})),
                call("import math\nd = 49 - 40\nprint((7 + math.sqrt(d)) / 2)", lead="The code must be one string."),
                "The larger root is $\\boxed{5}$."],
         labels=[(0, "invalid_arguments")], note="code given as a list of lines (wrong type)"),
    dict(id="t08-extra-arg", row={"problem": "If $2x + 3y = 12$ and $x - y = 1$, what is $x + y$?", "answer": "5"},
         turns=[call("x = (12 + 3) / 5\ny = x - 1\nprint(x, y, x + y)", lead="Solve the system: from x = y + 1, 2y + 2 + 3y = 12.", timeout=10),
                call("x = (12 + 3) / 5\ny = x - 1\nprint(x, y, x + y)"),
                "So $x = 3$, $y = 2$ and $x + y = \\boxed{5}$."],
         labels=[(0, "invalid_arguments")], note="extra 'timeout' argument (additionalProperties false)"),
    dict(id="t09-repeat-check", row={"problem": "Compute $\\frac12 + \\frac13 + \\frac16 + \\frac17$ as a reduced fraction.", "answer": "\\frac{8}{7}"},
         turns=[call("from fractions import Fraction as F\nprint(F(1, 2) + F(1, 3) + F(1, 6) + F(1, 7))"),
                call("from fractions import Fraction as F\nprint(F(1, 2) + F(1, 3) + F(1, 6) + F(1, 7))", lead="Let me double-check that."),
                "The sum is $\\boxed{8/7}$."],
         labels=[(1, "repeated_tool_call")], note="same call, same result; answer 8/7 equals the gold \\frac{8}{7}"),
    dict(id="t10-nameerror-same-code-new-result", row={"problem": "What are the last three digits of $2^{100}$?", "answer": "376"},
         turns=[call("print(total)", lead="Let me look at the value."),
                call("total = pow(2, 100, 1000)", lead="I have not defined it yet."),
                call("print(total)"),
                "The last three digits of $2^{100}$ are $\\boxed{376}$."],
         labels=[(0, "tool_error")], note="hard negative: print(total) again with a different result (NameError then 376)"),
    dict(id="t11-triple-repeat", row={"problem": "What is the sum of the digits of $2^{50}$?", "answer": "76"},
         turns=[call("print(sum(map(int, str(2**50))))"),
                call("print(sum(map(int, str(2**50))))", lead="Let me verify."),
                call("print(sum(map(int, str(2**50))))", lead="Let me verify once more to be safe."),
                "The digit sum is $\\boxed{76}$."],
         labels=[(1, "repeated_tool_call"), (2, "repeated_tool_call")], note="the same call three times"),
    dict(id="t12-no-tool-correct", row={"problem": "How many trailing zeros does $100!$ have?", "answer": "24"},
         turns=["Count the factors of 5: $\\lfloor 100/5 \\rfloor = 20$ and $\\lfloor 100/25 \\rfloor = 4$, so $100!$ ends in $\\boxed{24}$ zeros."],
         labels=[(0, "no_tool_use")], note="correct answer without any tool; code env is required by default"),
    dict(id="t13-no-tool-wrong", row={"problem": "Compute $\\gcd(1071, 462)$.", "answer": "21"},
         turns=["Using the Euclidean algorithm: 1071 = 2 * 462 + 147, 462 = 3 * 147 + 21, 147 = 3 * 42 + 21... so the gcd is $\\boxed{42}$."],
         labels=[(0, "no_tool_use"), (0, "wrong_answer")], note="no tool and a wrong answer"),
    dict(id="t14-off-by-one-wrong", row={"problem": "Let $F_1 = F_2 = 1$ and $F_{n+1} = F_n + F_{n-1}$. What is $F_{30}$?", "answer": "832040"},
         turns=[call("a, b = 0, 1\nfor _ in range(31):\n    a, b = b, a + b\nprint(a)"),
                "So $F_{30} = \\boxed{1346269}$."],
         labels=[(1, "wrong_answer")], note="loop runs once too many; the tool step itself is fine"),
    dict(id="t15-fake-response-after-call", row={"problem": "How many integers from 1 to 1000 are divisible by 3 or 5?", "answer": "467"},
         turns=[call("print(sum(1 for n in range(1, 1001) if n % 3 == 0 or n % 5 == 0))")
                + "\n<tool_response>\n466\n</tool_response>\nSo the answer is 466.",
                "The interpreter printed 467, so the count is $\\boxed{467}$."],
         labels=[(0, "hallucinated_tool_output")], note="model writes its own <tool_response> after the call; step 1 quotes the real result"),
    dict(id="t16-fake-response-no-call", row={"problem": "Compute $1^2 + 2^2 + \\cdots + 50^2$.", "answer": "42925"},
         turns=["Let me compute it.\n<tool_response>\n42925\n</tool_response>\nThe sum of squares is $\\boxed{42925}$."],
         labels=[(0, "hallucinated_tool_output"), (0, "no_tool_use")], note="invented tool output, no call made; answer correct"),
    dict(id="t17-quotes-unreturned", row={"problem": "Compute Euler's totient $\\varphi(1001)$.", "answer": "720"},
         turns=[call("print(1001 == 7 * 11 * 13)", lead="First factor 1001."),
                "The code printed 720, so $\\varphi(1001) = \\boxed{720}$."],
         labels=[(1, "hallucinated_tool_output")], note="the tool printed True; 720 was never returned"),
    dict(id="t18-quotes-real", row={"problem": "In how many ways can 3 people be chosen from 12?", "answer": "220"},
         turns=[call("import math\nprint(math.comb(12, 3))"),
                "The interpreter returned 220, so there are $\\boxed{220}$ ways."],
         labels=[], note="hard negative: quotes the real tool result"),
    dict(id="t19-def-then-expr", row={"problem": "What is the smallest prime greater than 1000?", "answer": "1009"},
         turns=[call("def is_prime(n):\n    if n < 2:\n        return False\n    i = 2\n    while i * i <= n:\n        if n % i == 0:\n"
                     "            return False\n        i += 1\n    return True", lead="Define a primality test first."),
                call("n = 1001\nwhile not is_prime(n):\n    n += 1\nn"),
                "The smallest prime greater than 1000 is $\\boxed{1009}$."],
         labels=[], note="clean: a silent definition call, then a trailing expression"),
    dict(id="t20-caught-exception", row={"problem": "What is the product of the roots of $3x^2 - 12x + 9 = 0$?", "answer": "3"},
         turns=[call("try:\n    r = 9 / 0\nexcept ZeroDivisionError as e:\n    print('caught error:', e)\nprint(9 / 3)",
                     lead="By Vieta the product is c/a; checking with a guard."),
                "By Vieta's formulas the product of the roots is $\\boxed{3}$."],
         labels=[], note="hard negative for tool_error: exception caught, output mentions an error"),
    dict(id="t21-overlong", row={"problem": "What is the sum of the first 100 prime numbers?", "answer": "24133"},
         turns=[call("primes = []\nn = 2\nwhile len(primes) < 100:\n    if all(n % p for p in primes if p * p <= n):\n"
                     "        primes.append(n)\n    n += 1\nprint(primes[-1], sum(primes))"),
                "The code printed 541 24133. " + OVERLONG_LOOP * 120 + "\nSo the sum of the first 100 primes is $\\boxed{24133}$."],
         labels=[(1, "overlong")], note="a degenerate re-checking loop of ~9,600 words before a correct answer"),
    dict(id="t22-moderate-length", row={"problem": "How many integers from 1 to 1000 are divisible by 7?", "answer": "142"},
         turns=[call("print(sum(1 for n in range(1, 1001) if n % 7 == 0))"),
                MODERATE + "\nThere are $\\boxed{142}$ such integers."],
         labels=[], note="hard negative: a somewhat verbose (~90 words) but short answer"),
    dict(id="t23-program-clean", row={"question": "Read an integer n from standard input and print the sum 1 + 2 + ... + n.",
                                      "input_output": [{"input": "3\n", "output": "6\n"}, {"input": "10\n", "output": "55\n"}, {"input": "1\n", "output": "1\n"}]},
         turns=[call("def solve(n):\n    return n * (n + 1) // 2\nprint(solve(3), solve(10), solve(1))", lead="Test the closed form first."),
                "```python\nn = int(input())\nprint(n * (n + 1) // 2)\n```"],
         labels=[], note="clean program"),
    dict(id="t24-program-wrong", row={"question": "Read a line of space-separated integers and print the maximum minus the minimum.",
                                      "input_output": [{"input": "3 1 4 1 5\n", "output": "4\n"}, {"input": "7\n", "output": "0\n"}, {"input": "-2 8\n", "output": "10\n"}]},
         turns=[call("nums = [3, 1, 4, 1, 5]\nprint(max(nums))"),
                "```python\nnums = list(map(int, input().split()))\nprint(max(nums))\n```"],
         labels=[(1, "wrong_answer")], note="prints the maximum only: fails the tests"),
    dict(id="t25-program-attrerror-fixed", row={"question": "Read a string and print it reversed.",
                                                "input_output": [{"input": "hello\n", "output": "olleh\n"}, {"input": "ab\n", "output": "ba\n"}]},
         turns=[call("s = 'hello'\nprint(s.reverse())"),
                call("print(s[::-1])", lead="Strings have no reverse(); use slicing."),
                "```python\ns = input()\nprint(s[::-1])\n```"],
         labels=[(0, "tool_error")], note="AttributeError then fixed; correct program"),
    dict(id="t26-unknown-then-malformed", row={"problem": "Compute $123456789 \\times 987654321$.", "answer": "121932631112635269"},
         turns=[raw_call(json.dumps({"name": "calculator", "arguments": {"expression": "123456789 * 987654321"}})),
                raw_call('{"name": "code_interpreter", "arguments": {"code": "print(123456789 * 987654321)"}',
                         lead="Only code_interpreter is available."),
                call("print(123456789 * 987654321)"),
                "The product is $\\boxed{121932631112635269}$."],
         labels=[(0, "unknown_tool"), (1, "malformed_tool_call")], note="calculator does not exist; then a call missing a brace; then fixed"),
    dict(id="t27-repeat-nonconsecutive", row={"problem": "What is the sum of the digits of $100!$?", "answer": "648"},
         turns=[call("import math\nprint(sum(int(c) for c in str(math.factorial(100))))"),
                call("import math\nprint(len(str(math.factorial(100))))", lead="How many digits does it have?"),
                call("import math\nprint(sum(int(c) for c in str(math.factorial(100))))", lead="Back to the digit sum to confirm."),
                "The digit sum of $100!$ is $\\boxed{648}$."],
         labels=[(2, "repeated_tool_call")], note="call A, call B, call A again with the same result"),
    dict(id="t28-stateful-same-code", row={"problem": "What is the sum of the first 20 odd positive integers?", "answer": "400"},
         turns=[call("acc = [2 * k + 1 for k in range(10)]"),
                call("print(sum(acc))"),
                call("acc.extend(2 * k + 1 for k in range(10, 20))", lead="That was only the first 10; add the rest."),
                call("print(sum(acc))"),
                "The sum of the first 20 odd numbers is $\\boxed{400}$."],
         labels=[], note="hard negative: print(sum(acc)) twice with different results (100, 400)"),
    dict(id="t29-program-no-tool", row={"question": "Read two integers a and b on one line and print their product.",
                                        "input_output": [{"input": "3 4\n", "output": "12\n"}, {"input": "-2 5\n", "output": "-10\n"}]},
         turns=["```python\na, b = map(int, input().split())\nprint(a * b)\n```"],
         labels=[(0, "no_tool_use")], note="correct program written without using the tool"),
    dict(id="t30-error-unfixed-wrong", row={"problem": "Compute $\\lfloor 10^6 \\sqrt{2} \\rfloor$.", "answer": "1414213"},
         turns=[call("import math\nprint(math.floor(math.sqrt(2) * 10**6)"),
                "The syntax error aside, $\\sqrt2 \\approx 1.4142136$, so the answer is $\\boxed{1414214}$."],
         labels=[(0, "tool_error"), (1, "wrong_answer")], note="SyntaxError never fixed; rounded instead of floored"),
    dict(id="t31-extra-language-arg", row={"problem": "Compute $2^{20}$.", "answer": "1048576"},
         turns=[call("print(2**20)", language="python"),
                call("print(2**20)"),
                "$2^{20} = \\boxed{1048576}$."],
         labels=[(0, "invalid_arguments")], note="extra 'language' argument; the fixed call is not a repeat (the first never ran)"),
    dict(id="t32-overlong-program", row={"question": "Read an integer n and print the number of its positive divisors.",
                                         "input_output": [{"input": "12\n", "output": "6\n"}, {"input": "1\n", "output": "1\n"}, {"input": "49\n", "output": "3\n"}]},
         turns=[call("def nd(n):\n    return sum(1 for d in range(1, n + 1) if n % d == 0)\nprint(nd(12), nd(1), nd(49))"),
                "The test printed 6 1 3, which matches. " + OVERLONG_PROGRAM * 150
                + "\n```python\nn = int(input())\nprint(sum(1 for d in range(1, n + 1) if n % d == 0))\n```"],
         labels=[(1, "overlong")], note="~8,000 words of circular re-checking before a correct program"),
]
