"""No exception handler in prefbuild/ swallows an error without a word (issue 18).

Every ``except`` and ``contextlib.suppress`` must re-raise, log, keep the error in its result,
or say why dropping it is right with ``# handled: REASON`` (see docs/errors.md).
"""

from __future__ import annotations

import textwrap

import pytest

from tests.foundation.silent_except import handlers_in, markdown_table, package_handlers


def _verdicts(source: str) -> list[str]:
    return [handler.verdict for handler in handlers_in(textwrap.dedent(source))]


def test_every_handler_in_prefbuild_reports_or_says_why() -> None:
    found = package_handlers()
    assert len(found) > 200  # the walk really reads the package
    silent = [f"{h.path}:{h.line} except {h.catches}: {h.how}" for h in found if h.verdict == "silent"]
    assert not silent, "handlers that swallow an error without a word:\n" + "\n".join(silent)


@pytest.mark.parametrize(
    "source",
    [
        "try:\n    x()\nexcept KeyError:\n    pass\n",
        "for i in y:\n    try:\n        x()\n    except ValueError:\n        continue\n",
        "def f():\n    try:\n        x()\n    except OSError:\n        return None\n",
        "def f():\n    try:\n        x()\n    except:\n        ...\n",
        "try:\n    x()\nexcept (KeyError, ValueError) as error:\n    y = 1\n",
        "try:\n    x()\nexcept KeyError:  # the usual kind of comment\n    pass\n",
        # A broad catch needs its reason even when it logs or records the error.
        "try:\n    x()\nexcept Exception as error:\n    log.warning('%s', error)\n",
        "def f():\n    try:\n        x()\n    except BaseException as error:\n        return str(error)\n",
        "import contextlib\nwith contextlib.suppress(OSError):\n    x()\n",
        "from contextlib import suppress\nwith suppress(Exception):  # no marker\n    x()\n",
        # A marker without a reason is not a reason.
        "try:\n    x()\nexcept KeyError:  # handled:\n    pass\n",
    ],
)
def test_the_checker_flags_a_fresh_silent_handler(source: str) -> None:
    assert _verdicts(source) == ["silent"]


@pytest.mark.parametrize(
    ("source", "verdict"),
    [
        ("try:\n    x()\nexcept KeyError:\n    raise\n", "raised"),
        ("try:\n    x()\nexcept KeyError as e:\n    raise ValueError('k') from e\n", "raised"),
        ("try:\n    x()\nexcept Exception:\n    cleanup()\n    raise\n", "raised"),
        ("try:\n    x()\nexcept KeyError as error:\n    logger.warning('%s', error)\n", "logged"),
        ("import warnings\ntry:\n    x()\nexcept KeyError:\n    warnings.warn('gone')\n", "logged"),
        ("def f():\n    try:\n        x()\n    except KeyError as e:\n        return f'bad: {e}'\n", "recorded"),
        ("try:\n    x()\nexcept KeyError:  # handled: an absent key means the default\n    pass\n", "handled"),
        ("try:\n    x()\nexcept KeyError:\n    # handled: an absent key means the default\n    y = 0\n", "handled"),
        ("try:\n    x()\nexcept Exception as e:  # handled: boundary: a plug-in\n    log.warning('%s', e)\n", "logged"),
        ("import contextlib\nwith contextlib.suppress(OSError):  # handled: already gone\n    x()\n", "handled"),
        ("import contextlib\n# handled: already gone\nwith contextlib.suppress(OSError):\n    x()\n", "handled"),
    ],
)
def test_the_checker_accepts_handlers_that_report_or_say_why(source: str, verdict: str) -> None:
    assert _verdicts(source) == [verdict]


def test_a_marker_in_the_try_body_does_not_excuse_the_handler() -> None:
    source = "try:\n    x()  # handled: not here\nexcept KeyError:\n    pass\n"
    assert _verdicts(source) == ["silent"]


def test_the_audit_table_has_one_row_per_handler() -> None:
    found = list(handlers_in("try:\n    x()\nexcept KeyError:  # handled: a | b\n    pass\n", "m.py"))
    table = markdown_table(found).splitlines()
    assert len(table) == 3
    assert table[2] == "| `m.py:3` | `KeyError` | handled | a \\| b |"
