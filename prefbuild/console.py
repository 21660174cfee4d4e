"""The ``prefbuild`` console script and ``python -m prefbuild``: the command line, whose start-up
(importing it) exits on Ctrl-C as a run does, ``interrupted`` and status 130, without a traceback."""

from __future__ import annotations

import sys


def run() -> None:
    """Import the command line and run it; an interrupt while importing exits 130."""
    try:
        from prefbuild.cli.main import main
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        raise SystemExit(130) from None
    main()
