"""The DBBench-compatible ``sql`` env: a question about one table, answered with SQL on sandboxed SQLite."""

from prefbuild.envs.sql.actions import SqlAction, parse_action
from prefbuild.envs.sql.grader import answers_match, mutation_correct, parse_answer, printed_hash, table_hash
from prefbuild.envs.sql.items import MUTATION_TYPES, QUERY_TYPES, TASK_TYPES, SqlItem

__all__ = [
    "MUTATION_TYPES",
    "QUERY_TYPES",
    "TASK_TYPES",
    "SqlAction",
    "SqlItem",
    "answers_match",
    "mutation_correct",
    "parse_action",
    "parse_answer",
    "printed_hash",
    "table_hash",
]
