"""``python -m prefbuild``: the command line."""

from prefbuild.cli import main

main()
