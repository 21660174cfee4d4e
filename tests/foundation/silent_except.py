"""Find exception handlers that swallow an error without a word, and describe every handler.

A handler in ``prefbuild/`` must do one of these with the error it catches:

- re-raise it (or raise another error from it): **raised**;
- log it (``log.warning``/``logger.*``/``warnings.warn``) or print it at the CLI boundary: **logged**;
- use the caught error in what it returns or records (an error outcome, a tool result): **recorded**;
- or carry ``# handled: REASON`` on the ``except`` line (or on a comment line right below it)
  saying why dropping the error is the right fallback: **handled**.

``contextlib.suppress(...)`` swallows by construction, so it always needs the marker on its
``with`` line (or the comment line right above it). A broad catch (bare ``except:``,
``Exception``, ``BaseException``) that does not re-raise also needs the marker, to say why the
catch cannot be narrower, even when it logs or records.

Run ``python -m tests.foundation.silent_except`` to print the audit table of docs/errors.md.
"""

from __future__ import annotations

import ast
import io
import sys
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

MARKER = "# handled:"
BROAD = frozenset({"Exception", "BaseException"})
LOG_METHODS = frozenset({"debug", "info", "warning", "error", "exception", "critical", "warn"})
# Callables that put an error in front of the user at the CLI boundary (cli/errors.py, click).
REPORTERS = frozenset({"report", "secho", "echo"})
PACKAGE = Path(__file__).resolve().parents[2] / "prefbuild"


@dataclass(frozen=True)
class Handler:
    """One ``except`` clause or ``contextlib.suppress`` block and what it does with the error."""

    path: str
    line: int
    catches: str
    verdict: str  # raised | logged | recorded | handled | silent
    how: str
    broad: bool


def _comments(source: str) -> dict[int, str]:
    found: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            found[token.start[0]] = token.string
    return found


def _marker_reason(comments: dict[int, str], lines: list[int]) -> str | None:
    for line in lines:
        text = comments.get(line, "")
        if MARKER in text:
            reason = text.split(MARKER, 1)[1].strip()
            return reason or None
    return None


def _raised(body: list[ast.stmt]) -> str | None:
    for node in (n for stmt in body for n in ast.walk(stmt)):
        if isinstance(node, ast.Raise):
            if node.exc is None:
                return "re-raised"
            target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            return f"raises {ast.unparse(target)}"
    return None


def _logged(body: list[ast.stmt]) -> str | None:
    for node in (n for stmt in body for n in ast.walk(stmt)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in LOG_METHODS:
            owner = ast.unparse(func.value)
            if owner in {"log", "logger", "logging", "warnings"} or owner.endswith(("log", "logger")):
                return f"{owner}.{func.attr}"
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name in REPORTERS:
            return f"{name}() to the user"
    return None


def _recorded(handler: ast.ExceptHandler) -> str | None:
    if handler.name is None:
        return None
    for node in (n for stmt in handler.body for n in ast.walk(stmt)):
        if isinstance(node, ast.Name) and node.id == handler.name:
            return f"`{handler.name}` kept in the result"
    return None


def _type_names(node: ast.expr | None) -> set[str]:
    if node is None:
        return {"BaseException"}
    parts = node.elts if isinstance(node, ast.Tuple) else [node]
    return {ast.unparse(part).rsplit(".", 1)[-1] for part in parts}


def _suppress_call(item: ast.withitem) -> ast.Call | None:
    call = item.context_expr
    if isinstance(call, ast.Call) and ast.unparse(call.func) in {"contextlib.suppress", "suppress"}:
        return call
    return None


def _verdict(handler: ast.ExceptHandler, reason: str | None) -> tuple[str, str]:
    if raised := _raised(handler.body):
        return "raised", raised
    because = f"; {reason}" if reason else ""
    if logged := _logged(handler.body):
        return "logged", logged + because
    if recorded := _recorded(handler):
        return "recorded", recorded + because
    if reason:
        return "handled", reason
    return "silent", "no raise, log, use of the error or `# handled:` reason"


def _handler_lines(handler: ast.ExceptHandler) -> list[int]:
    """The ``except`` line and the comment-only lines between it and the first statement."""
    return list(range(handler.lineno, handler.body[0].lineno + 1))


def handlers_in(source: str, path: str = "<string>") -> Iterator[Handler]:
    """Every handler of ``source`` with its verdict.

    Args:
        source: Python source text.
        path: name used in the results.

    Returns:
        An iterator of ``Handler`` in source order.

    Example:
        >>> [h.verdict for h in handlers_in("try:\\n    x()\\nexcept KeyError:\\n    pass\\n")]
        ['silent']
    """
    tree = ast.parse(source)
    comments = _comments(source)
    found: list[Handler] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ExceptHandler):
            catches = ast.unparse(node.type) if node.type is not None else "everything (bare except)"
            broad = bool(_type_names(node.type) & BROAD)
            reason = _marker_reason(comments, _handler_lines(node))
            verdict, how = _verdict(node, reason)
            if broad and verdict != "raised" and not reason:
                verdict, how = "silent", f"broad catch ({how}) without a `# handled:` reason"
            found.append(Handler(path, node.lineno, catches, verdict, how, broad))
        elif isinstance(node, ast.With):
            for item in node.items:
                call = _suppress_call(item)
                if call is None:
                    continue
                catches = ", ".join(ast.unparse(arg) for arg in call.args)
                broad = bool({ast.unparse(arg).rsplit(".", 1)[-1] for arg in call.args} & BROAD)
                reason = _marker_reason(comments, [node.lineno, node.lineno - 1])
                verdict, how = ("handled", reason) if reason else ("silent", "suppress() without a `# handled:` reason")
                found.append(Handler(path, node.lineno, f"suppress({catches})", verdict, how, broad))
    return iter(sorted(found, key=lambda handler: handler.line))


def package_handlers(root: Path = PACKAGE) -> list[Handler]:
    """Every handler in every module under ``root`` (paths relative to the repository)."""
    found: list[Handler] = []
    for path in sorted(root.rglob("*.py")):
        found.extend(handlers_in(path.read_text(encoding="utf-8"), str(path.relative_to(root.parent))))
    return found


def markdown_table(found: list[Handler]) -> str:
    """The audit table: one row per handler."""
    rows = ["| where | catches | verdict | how |", "| --- | --- | --- | --- |"]
    for handler in found:
        how = handler.how.replace("|", "\\|")
        catches = handler.catches.replace("|", "\\|")
        rows.append(f"| `{handler.path}:{handler.line}` | `{catches}` | {handler.verdict} | {how} |")
    return "\n".join(rows)


if __name__ == "__main__":
    handlers = package_handlers()
    sys.stdout.write(markdown_table(handlers) + "\n")
