"""``python -m prefbuild``: the command line."""

from prefbuild.console import run

run()
