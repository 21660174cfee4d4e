"""The console script: Ctrl-C while the command line is still being imported exits as a run does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

INTERRUPTED_IMPORT = """
import sys
class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == "prefbuild.cli.main":
            raise KeyboardInterrupt  # what Ctrl-C during the heavy imports raises
        return None
sys.meta_path.insert(0, Interrupt())
from prefbuild.console import run
run()
"""


def test_an_interrupt_while_importing_the_command_line_is_one_line_and_status_130() -> None:
    done = subprocess.run([sys.executable, "-c", INTERRUPTED_IMPORT, "label", "x.jsonl"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (130, "interrupted\n")


def test_the_console_script_runs_the_command_line() -> None:
    done = subprocess.run([sys.executable, "-m", "prefbuild", "--version"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("prefbuild, version")
