"""What does the code sandbox cost per episode and per call?

Measured in one process, as ratios to a reference: a plain ``python -I -c pass`` subprocess
(the cheapest fresh interpreter the host can start).

* ``start``  a sandbox's first cell (bubblewrap, namespaces, seccomp, kernel start, one cell);
* ``cell``   one more cell in a warm sandbox (the notebook round trip);
* ``stateless`` one cell in stateless mode (a fresh sandbox per call).

Figures are printed, never asserted: timings on shared machines vary.

Usage: ``.venv/bin/python bench/code_sandbox.py [--repeats 20]``
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

import click

from prefbuild.envs.code.sandbox import CodeSandbox, SandboxLimits, namespaces_available


def _median_seconds(action, repeats: int) -> float:
    timings = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        timings.append(time.perf_counter() - start)
    return statistics.median(timings)


@click.command()
@click.option("--repeats", default=20, show_default=True)
def main(repeats: int) -> None:
    reason = namespaces_available()
    print(f"isolation: {'bubblewrap' if reason is None else 'none (' + reason + ')'}")
    limits = SandboxLimits()
    reference = _median_seconds(lambda: subprocess.run([sys.executable, "-I", "-c", "pass"], check=True), repeats)

    def start() -> None:
        with CodeSandbox(limits) as sandbox:
            sandbox.run("x = 1")

    warm = CodeSandbox(limits)
    warm.run("x = 0")
    cell = _median_seconds(lambda: warm.run("x += 1"), repeats)
    warm.close()
    stateless_box = CodeSandbox(limits, stateless=True)
    stateless = _median_seconds(lambda: stateless_box.run("x = 1"), repeats)
    stateless_box.close()
    started = _median_seconds(start, repeats)
    print(f"reference python -I -c pass: {reference * 1000:.1f} ms (1.00)")
    for name, value in (("start (first cell)", started), ("warm cell", cell), ("stateless cell", stateless)):
        print(f"{name:20s} {value * 1000:8.1f} ms  ({value / reference:.2f}x reference)")


if __name__ == "__main__":
    main()
