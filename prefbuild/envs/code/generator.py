"""Procedural problems for the ``code`` env, so it runs offline and deterministically.

Each family draws its parameters from a seeded ``random.Random``, computes the answer on
the host and writes a reference program that prints the same answer when run in the
sandbox (the expert's tool call). Programming problems come with stdin/stdout tests
computed from their reference solution.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Iterator, Sequence
from fractions import Fraction

from prefbuild.envs.code.problems import CodeProblem, IOTests

Family = Callable[[random.Random], tuple[str, str, str]]  # (prompt, answer, reference program)


def _fraction_text(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"\\frac{{{value.numerator}}}{{{value.denominator}}}"


def arithmetic(rng: random.Random) -> tuple[str, str, str]:
    a, b, c, d = (rng.randint(12, 999) for _ in range(4))
    e = rng.randint(2, 40)
    value = Fraction(a * b - c, 1) + Fraction(d, e)
    prompt = (
        f"Compute the exact value of ${a} \\times {b} - {c} + \\frac{{{d}}}{{{e}}}$. Give it as a reduced fraction."
    )
    reference = f"from fractions import Fraction\nprint(Fraction({a} * {b} - {c}) + Fraction({d}, {e}))"
    return prompt, _fraction_text(value), reference


def number_theory(rng: random.Random) -> tuple[str, str, str]:
    variant = rng.randrange(3)
    if variant == 0:
        n = rng.randint(200, 5000)
        answer = sum(d for d in range(1, n + 1) if n % d == 0)
        prompt = f"What is the sum of all positive divisors of {n}?"
        reference = f"n = {n}\nprint(sum(d for d in range(1, n + 1) if n % d == 0))"
    elif variant == 1:
        base, exponent, modulus = rng.randint(2, 99), rng.randint(100, 10**6), rng.randint(7, 9973)
        answer = pow(base, exponent, modulus)
        prompt = f"Find the remainder when ${base}^{{{exponent}}}$ is divided by {modulus}."
        reference = f"print(pow({base}, {exponent}, {modulus}))"
    else:
        limit = rng.randint(100, 3000)
        answer = sum(1 for k in range(2, limit + 1) if all(k % p for p in range(2, math.isqrt(k) + 1)))
        prompt = f"How many prime numbers are less than or equal to {limit}?"
        reference = (
            "import math\n"
            f"print(sum(1 for k in range(2, {limit} + 1) if all(k % p for p in range(2, math.isqrt(k) + 1))))"
        )
    return prompt, str(answer), reference


def combinatorics(rng: random.Random) -> tuple[str, str, str]:
    variant = rng.randrange(3)
    if variant == 0:
        n = rng.randint(8, 30)
        k = rng.randint(2, n - 2)
        prompt = f"In how many ways can a committee of {k} people be chosen from {n} people?"
        return prompt, str(math.comb(n, k)), f"import math\nprint(math.comb({n}, {k}))"
    if variant == 1:
        n = rng.randint(4, 12)
        derangements = [1, 0]
        for size in range(2, n + 1):
            derangements.append((size - 1) * (derangements[-1] + derangements[-2]))
        prompt = f"How many permutations of {n} distinct letters leave no letter in its original position?"
        reference = (
            f"d = [1, 0]\nfor size in range(2, {n} + 1):\n    d.append((size - 1) * (d[-1] + d[-2]))\nprint(d[{n}])"
        )
        return prompt, str(derangements[n]), reference
    width, height = rng.randint(3, 12), rng.randint(3, 12)
    prompt = (
        f"A path on a grid moves only right or up, one unit at a time. How many such paths go from (0, 0) to "
        f"({width}, {height})?"
    )
    return prompt, str(math.comb(width + height, width)), f"import math\nprint(math.comb({width + height}, {width}))"


def algebra(rng: random.Random) -> tuple[str, str, str]:
    variant = rng.randrange(2)
    if variant == 0:
        r1, r2 = rng.randint(-30, 30), rng.randint(-30, 30)
        lead = rng.randint(1, 5)
        b, c = -lead * (r1 + r2), lead * r1 * r2
        prompt = (
            f"Find the sum of the squares of the roots of ${lead}x^2 + ({b})x + ({c}) = 0$ (roots counted with "
            "multiplicity)."
        )
        reference = (
            "import sympy\nx = sympy.symbols('x')\n"
            f"roots = sympy.roots({lead}*x**2 + ({b})*x + ({c}), x)\n"
            "print(sum(root**2 * count for root, count in roots.items()))"
        )
        return prompt, str(r1 * r1 + r2 * r2), reference
    x, y = rng.randint(-20, 20), rng.randint(-20, 20)
    a, b, c, d = (rng.choice([k for k in range(-9, 10) if k]) for _ in range(4))
    while a * d - b * c == 0:
        d = rng.choice([k for k in range(-9, 10) if k])
    e, f = a * x + b * y, c * x + d * y
    prompt = f"Solve the system ${a}x + ({b})y = {e}$ and ${c}x + ({d})y = {f}$. What is $x \\cdot y$?"
    reference = (
        "from fractions import Fraction\n"
        f"a, b, c, d, e, f = {a}, {b}, {c}, {d}, {e}, {f}\n"
        "det = a * d - b * c\n"
        "x = Fraction(e * d - b * f, det)\ny = Fraction(a * f - e * c, det)\nprint(x * y)"
    )
    return prompt, str(x * y), reference


PROGRAM_TEMPLATES: tuple[tuple[str, str, Callable[[list[int]], str]], ...] = (
    (
        "sum of the even numbers",
        "import sys\nnumbers = list(map(int, sys.stdin.read().split()))[1:]\n"
        "print(sum(v for v in numbers if v % 2 == 0))",
        lambda values: str(sum(v for v in values if v % 2 == 0)),
    ),
    (
        "largest difference between two of the numbers",
        "import sys\nnumbers = list(map(int, sys.stdin.read().split()))[1:]\nprint(max(numbers) - min(numbers))",
        lambda values: str(max(values) - min(values)),
    ),
    (
        "numbers sorted in increasing order, separated by spaces",
        "import sys\nnumbers = list(map(int, sys.stdin.read().split()))[1:]\nprint(*sorted(numbers))",
        lambda values: " ".join(map(str, sorted(values))),
    ),
    (
        "length of the longest strictly increasing run of consecutive numbers",
        "import sys\nnumbers = list(map(int, sys.stdin.read().split()))[1:]\nbest = run = 1\n"
        "for previous, current in zip(numbers, numbers[1:]):\n    run = run + 1 if current > previous else 1\n"
        "    best = max(best, run)\nprint(best)",
        lambda values: str(_longest_run(values)),
    ),
)


def _longest_run(values: list[int]) -> int:
    best = run = 1
    for previous, current in itertools.pairwise(values):
        run = run + 1 if current > previous else 1
        best = max(best, run)
    return best


def program_problem(rng: random.Random) -> tuple[str, IOTests, str]:
    """A stdin/stdout programming problem: its statement, tests and reference solution."""
    what, solution, expected = rng.choice(PROGRAM_TEMPLATES)
    prompt = (
        "Write a Python program that reads from standard input a first line with an integer n and a second line "
        f"with n integers, and prints the {what}.\n\nExample input:\n3\n4 -1 6\n\nGive the complete program in a "
        "```python code block in your final answer."
    )
    inputs: list[str] = []
    outputs: list[str] = []
    for _ in range(4):
        values = [rng.randint(-50, 50) for _ in range(rng.randint(1, 12))]
        inputs.append(f"{len(values)}\n{' '.join(map(str, values))}\n")
        outputs.append(expected(values) + "\n")
    return prompt, IOTests(inputs=inputs, outputs=outputs), solution


MATH_FAMILIES: dict[str, Family] = {
    "arithmetic": arithmetic,
    "number_theory": number_theory,
    "combinatorics": combinatorics,
    "algebra": algebra,
}
TASK_TYPES: tuple[str, ...] = (*MATH_FAMILIES, "programs")
SPLIT_OFFSETS = {"train": 0, "dev": 1_000_003, "test": 2_000_003}


def generate_problems(split: str, n: int, seed: int, task_types: Sequence[str] | None = None) -> Iterator[CodeProblem]:
    """``n`` problems cycling through ``task_types`` (all families by default), deterministically.

    Args:
        split: ``train``, ``dev`` or ``test`` (disjoint random streams).
        n: How many problems.
        seed: The run's seed.
        task_types: Families to draw from; see ``TASK_TYPES``.

    Returns:
        An iterator of ``CodeProblem`` with answers (math) or tests (programs) and reference programs.

    Example:
        >>> [p.category for p in generate_problems("test", 3, 0, ["algebra", "programs"])]
        ['algebra', 'programs', 'algebra']
    """
    if split not in SPLIT_OFFSETS:
        raise ValueError(f"unknown split {split!r} for generated code problems; known: {', '.join(SPLIT_OFFSETS)}")
    families = list(task_types or TASK_TYPES)
    unknown = [name for name in families if name not in TASK_TYPES]
    if unknown:
        raise ValueError(f"unknown code task type(s) {', '.join(unknown)}; known: {', '.join(TASK_TYPES)}")
    for index in range(n):
        family = families[index % len(families)]
        rng = random.Random(f"code/{split}/{seed}/{index}")
        identifier = f"code-{split}-{seed}-{index:05d}"
        if family == "programs":
            prompt, tests, solution = program_problem(rng)
            yield CodeProblem(
                id=identifier, kind="code", category=family, prompt=prompt, tests=tests, reference=solution
            )
        else:
            prompt, answer, reference = MATH_FAMILIES[family](rng)
            yield CodeProblem(
                id=identifier, kind="math", category=family, prompt=prompt, answer=answer, reference=reference
            )
