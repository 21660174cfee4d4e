"""MariaDB's error texts reworded as MySQL 8 writes them, where only the wording differs.

DBBench ran on MySQL 8, so agents trained for it read MySQL's texts. MariaDB reports the same
errors with a few different words; the ``mysql`` backend rewrites exactly these (and nothing
else) when it runs on MariaDB:

* ``... your MariaDB server version ...`` -> ``... your MySQL server version ...`` (1064);
* the clause of an unknown (1054) or ambiguous (1052) column: MariaDB names the statement
  part (``'SELECT'``, ``'WHERE'``, ``'ORDER BY'`` ...), MySQL the parser context
  (``'field list'``, ``'where clause'``, ``'order clause'`` ...);
* the statement time limit: MariaDB's ``1969 (70100) ... (max_statement_time exceeded)`` is
  MySQL's ``3024 (HY000) ... maximum statement execution time exceeded``.
"""

from __future__ import annotations

import re

__all__ = ["mysql8_text"]

_CLAUSES = {
    "SELECT": "field list",
    "INSERT INTO": "field list",
    "VALUES": "field list",
    "SET": "field list",
    "WHERE": "where clause",
    "ON": "on clause",
    "HAVING": "having clause",
    "ORDER BY": "order clause",
    "GROUP BY": "group statement",
}
_CLAUSE_NAMES = "|".join(_CLAUSES)
_UNKNOWN_COLUMN = re.compile(r"^(1054 \(42S22\): Unknown column '.*' in ')(" + _CLAUSE_NAMES + r")(')$", re.DOTALL)
_AMBIGUOUS = re.compile(r"^(1052 \(23000\): Column '.*' in )(" + _CLAUSE_NAMES + r")( is ambiguous)$", re.DOTALL)
_TIMEOUT = "1969 (70100): Query execution was interrupted (max_statement_time exceeded)"
_MYSQL_TIMEOUT = "3024 (HY000): Query execution was interrupted, maximum statement execution time exceeded"


def mysql8_text(text: str) -> str:
    """The MySQL 8 wording of a MariaDB error text (other texts come back unchanged).

    Example:
        >>> mysql8_text("1054 (42S22): Unknown column 'x' in 'WHERE'")
        "1054 (42S22): Unknown column 'x' in 'where clause'"
    """
    if text == _TIMEOUT:
        return _MYSQL_TIMEOUT
    text = text.replace("your MariaDB server version", "your MySQL server version", 1)
    match = _UNKNOWN_COLUMN.match(text) or _AMBIGUOUS.match(text)
    if match:
        return f"{match.group(1)}{_CLAUSES[match.group(2)]}{match.group(3)}"
    return text
