"""The ``prefbuild`` command line: argument parsing and display over ``prefbuild.api``."""

from prefbuild.cli.main import main

__all__ = ["main"]
