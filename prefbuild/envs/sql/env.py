"""The ``sql`` env: DBBench-compatible question answering over one table, on sandboxed SQLite.

An episode is one item. ``reset`` builds a fresh in-memory database holding the item's
table and returns ``description + "\\n" + add_description``. Actions are the strings of
``prefbuild.envs.sql.actions``: ``Operation: <sql>`` runs one statement and returns the raw
result (the next user turn); ``Answer:<text>`` ends the episode and is scored as the
benchmark scores it; ``Invalid: <why>`` ends it as "agent validation failed". After
``max_round`` operations (15, as shipped) the next action is final whatever it is, as in
the benchmark's loop (``step_budget`` = ``max_round`` + 1 turns): that turn's ``Final Answer:``
line counts even beside an operation (the protocol carries it in the action), and a mutation
table is hashed whatever ends the episode.

``step`` info keys: ``valid``, ``won``, ``sql_error``, ``executed_sql``, ``answer``,
``mutated``, ``status``, ``operations``, ``kind``, ``final``; final steps add ``expected``
(the label list, or the ``answer_md5`` of a mutation) and, for mutations, ``table_hash``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

from prefbuild.envs.base import Env, EnvTask, Protocol, StepResult
from prefbuild.envs.sql import actions
from prefbuild.envs.sql.backends import Sandbox, check_backend, open_sandbox, printed_table_hash
from prefbuild.envs.sql.engine import REPLY_LIMIT
from prefbuild.envs.sql.expert import ExpertPlan, answer_observed, plan_expert
from prefbuild.envs.sql.generator import canonical_split, generate_items
from prefbuild.envs.sql.grader import answers_match
from prefbuild.envs.sql.items import TASK_TYPES, SqlItem
from prefbuild.envs.sql.loader import InvalidItem, check_on_invalid_item, load_items, parse_item
from prefbuild.envs.sql.protocol import DBBenchProtocol
from prefbuild.envs.sql.repair import repair_statement
from prefbuild.records import SqlFacts, StepFacts, TaskInfo

MAX_ROUND = 15
STATUS_RUNNING = "running"
STATUS_COMPLETED = "completed"
STATUS_VALIDATION_FAILED = "agent validation failed"
STATUS_LIMIT = "task limit reached"


def answer_literal(label: Sequence[Any]) -> str:
    """The label list written so the benchmark's literal reading gives it back (``["a", "12.0"]``)."""
    parts = [json.dumps(value, ensure_ascii=False) if isinstance(value, str) else repr(value) for value in label]
    return "[" + ", ".join(parts) + "]"


def task_info(identifier: str, item: SqlItem, split: str, seed: int | None, source: str) -> TaskInfo:
    meta: dict[str, Any] = {
        "table_name": item.table_name,
        "kind": "mutation" if item.mutation else "query",
        "columns": len(item.columns),
        "rows": len(item.rows),
        "reference_sql": item.reference_sql,
        "source": source,
    }
    if item.mutation:
        meta["answer_md5"] = item.answer_md5
    else:
        meta["label"] = list(item.label)
    return TaskInfo(id=identifier, type=item.type, goal=item.description, split=split, seed=seed, meta=meta)


class SqlEnv(Env):
    """DBBench on SQLite.

    Options (the recipe's ``env.options``): ``data_file`` reads the benchmark's JSONL instead of
    generating items; ``max_round`` the operation budget (15 as shipped; the class default of
    the benchmark code is 5); ``timeout_s`` the time bound of one statement; ``reply_limit``
    the 800-character reply cap; ``backend`` where the table lives: ``sqlite`` (the embedded
    emulation, default) or ``mysql`` (a real server: ``db_url`` such as ``${DB_URL}``, or a
    private MariaDB that prefbuild starts on first use and stops at exit). Generated splits are
    ``train``, ``dev`` and ``test`` (``standard`` is read as ``test``); a data file is read whole,
    in file order, under any split.
    """

    name: ClassVar[str] = "sql"
    dialects: ClassVar[tuple[str, ...]] = ("mysql",)
    protocols: ClassVar[dict[str, type[Protocol]]] = {"dbbench": DBBenchProtocol}
    # What `prefbuild envs play sql` says a typed line must look like (an action, not a model turn).
    action_format: ClassVar[str] = (
        "one line 'Operation: <SQL statement>' to run SQL, or 'Answer: <final answer>' to answer "
        '(e.g. Operation: SELECT * FROM t; / Answer: ["x"]); anything else ends the episode, as in the benchmark'
    )

    def __init__(
        self,
        data_file: str | Path | None = None,
        *,
        max_round: int = MAX_ROUND,
        timeout_s: float = 2.0,
        reply_limit: int = REPLY_LIMIT,
        dialect: str | None = None,
        backend: str = "sqlite",
        db_url: str | None = None,
        on_invalid_item: str = "skip",
    ) -> None:
        if dialect not in (None, *self.dialects):
            raise ValueError(f"sql env: unknown dialect {dialect!r}; known: {', '.join(self.dialects)}")
        if max_round < 1:
            raise ValueError(f"sql env: max_round must be at least 1, got {max_round}")
        if timeout_s <= 0:
            raise ValueError(f"sql env: timeout_s must be positive, got {timeout_s}")
        check_backend(backend, db_url)
        self.backend = backend
        self.db_url = db_url
        self.data_file = Path(data_file) if data_file is not None else None
        self.max_round = max_round
        self.timeout_s = timeout_s
        self.reply_limit = reply_limit
        # Data-file items MySQL cannot build as written: skip | error | as_benchmark (loader docstring).
        self.on_invalid_item = check_on_invalid_item(on_invalid_item)
        self.invalid_items: list[InvalidItem] = []  # filled by tasks(); the manifest records the count
        self.expert_plan: ExpertPlan | None = None  # the episode's oracle plan (why there is no expert)
        self._item: SqlItem | None = None
        self._sandbox: Sandbox | None = None
        self._done = True
        self._won = False
        self._operations = 0
        self._executed: list[str] = []
        self._replies: set[str] = set()
        self._successful_queries = 0
        self._successful_mutations = 0
        self._reference_sql: str | None = None
        self._reference_reply: str | None = None
        self._initial_hash: str | None = None
        self._target_hash: str | None = None
        self._target_rows: list[tuple[Any, ...]] | None = None

    # -- tasks ----------------------------------------------------------------------------

    def tasks(self, split: str, n: int, seed: int, task_types: Sequence[str] | None = None) -> Iterator[EnvTask]:
        if task_types:
            unknown = [name for name in task_types if name not in TASK_TYPES]
            if unknown:
                raise ValueError(f"unknown sql task type(s) {', '.join(unknown)}; known: {', '.join(TASK_TYPES)}")
        if self.data_file is not None:
            yield from self._file_tasks(split, n, seed, task_types)
            return
        split_name = canonical_split(split)
        for identifier, item in generate_items(split_name, n, seed, task_types):
            yield EnvTask(info=task_info(identifier, item, split_name, seed, "generated"), payload=item)

    def _file_tasks(self, split: str, n: int, seed: int, task_types: Sequence[str] | None) -> Iterator[EnvTask]:
        assert self.data_file is not None
        produced = 0
        self.invalid_items.clear()
        items = load_items(self.data_file, on_invalid_item=self.on_invalid_item, invalid=self.invalid_items)
        for line, item in items:
            if produced >= n:
                return
            if task_types and item.type not in task_types:
                continue
            identifier = f"dbbench-{self.data_file.stem}-{line:04d}"
            yield EnvTask(info=task_info(identifier, item, split, seed, f"{self.data_file.name}:{line}"), payload=item)
            produced += 1
        if not produced and n > 0:  # an empty file, or every item skipped: no episode to play is an error
            of_types = f" of the task types {list(task_types)}" if task_types else ""
            skipped = f" ({len(self.invalid_items)} invalid, skipped)" if self.invalid_items else ""
            raise ValueError(f"{self.data_file}: no DBBench item{of_types} in it{skipped}")

    # -- episode --------------------------------------------------------------------------

    def reset(self, task: EnvTask) -> tuple[str, dict[str, Any]]:
        item = (
            task.payload
            if isinstance(task.payload, SqlItem)
            else parse_item(task.payload, source=task.info.id, as_benchmark=self.on_invalid_item == "as_benchmark")
        )
        if self._sandbox is not None:
            self._sandbox.close()
        self._item = item
        self._sandbox = self._new_sandbox(item)
        self._done = False
        self._won = False
        self._operations = 0
        self._executed = []
        self._replies = set()
        self._successful_queries = 0
        self._successful_mutations = 0
        self._initial_hash = self._current_hash()
        self._prepare_reference(item)
        info = {"task_id": task.info.id, "type": item.type, "max_round": self.max_round}
        if self.expert_plan is not None:
            info["expert"] = self.expert_plan.as_dict()
        return item.prompt, info

    # -- read-only view of the episode (the simulation's mistake maker reads it) ------------

    @property
    def item(self) -> SqlItem | None:
        """The current task item; None before ``reset``."""
        return self._item

    @property
    def finished(self) -> bool:
        return self._done

    @property
    def executed_statements(self) -> list[str]:
        """Every statement run so far in this episode, in order."""
        return list(self._executed)

    @property
    def successful_queries(self) -> int:
        return self._successful_queries

    @property
    def successful_mutations(self) -> int:
        return self._successful_mutations

    def new_sandbox(self, item: SqlItem) -> Sandbox:
        """A fresh database holding ``item``'s table, with this env's limits."""
        return self._new_sandbox(item)

    def _new_sandbox(self, item: SqlItem) -> Sandbox:
        return open_sandbox(
            item, backend=self.backend, db_url=self.db_url, timeout_s=self.timeout_s, reply_limit=self.reply_limit
        )

    def close(self) -> None:
        """Drop the episode's database (the ``mysql`` backend's server stays up for the next episode)."""
        if self._sandbox is not None:
            self._sandbox.close()
            self._sandbox = None

    def _prepare_reference(self, item: SqlItem) -> None:
        """Plan the expert on scratch copies (``expert.plan_expert``): its operation and expected reply."""
        plan = plan_expert(item, self._new_sandbox)
        self.expert_plan = plan
        self._reference_sql, self._reference_reply = plan.operation, plan.reply
        self._target_hash = plan.target_hash if item.mutation else item.answer_md5
        self._target_rows = list(plan.target_rows) if plan.target_rows is not None else None

    def step(self, action: str) -> StepResult:
        if self._done or self._item is None or self._sandbox is None:
            return _result("", 0.0, True, self._info(valid=False, kind="none", status="episode is over"))
        parsed = actions.parse_action(action)
        if self._operations >= self.max_round and parsed.kind != "answer":
            # AgentBench: the turn after the last allowed operation is final whatever its action
            # word; a Final Answer line in it still counts, and mutation tables are hashed anyway.
            if parsed.final_answer:
                return self._finish(parsed.final_answer, STATUS_COMPLETED, valid=True, kind="answer")
            return self._finish("", STATUS_LIMIT, valid=False, kind=parsed.kind, reason=parsed.text)
        if parsed.kind == "operation":
            return self._operate(parsed.text)
        if parsed.kind == "answer":
            return self._finish(parsed.text, STATUS_COMPLETED, valid=True, kind="answer")
        return self._finish("", STATUS_VALIDATION_FAILED, valid=False, kind="invalid", reason=parsed.text)

    @property
    def step_budget(self) -> int:
        """Agent turns one episode can take: ``max_round`` operations plus the final turn (AgentBench)."""
        return self.max_round + 1

    def _operate(self, sql: str) -> StepResult:
        assert self._sandbox is not None
        result = self._sandbox.execute(sql)
        self._operations += 1
        self._executed.append(sql)
        if result.error is None:
            self._replies.add(result.reply)
            if result.kind == "query":
                self._successful_queries += 1
            if result.mutated:
                self._successful_mutations += 1
        info = self._info(
            valid=result.error is None,
            kind="operation",
            status=STATUS_RUNNING,
            sql_error=result.error,
            executed_sql=sql,
            mutated=result.mutated,
        )
        info["statement"] = result.kind
        return _result(result.reply, 0.0, False, info)

    def _finish(self, answer: str, status: str, *, valid: bool, kind: str, reason: str | None = None) -> StepResult:
        item, sandbox = self._item, self._sandbox
        assert item is not None and sandbox is not None
        info = self._info(valid=valid, kind=kind, status=status, answer=answer)
        if item.mutation:
            current = printed_table_hash(sandbox)
            won = current is not None and current == self._target_hash
            info["expected"] = self._target_hash
            info["table_hash"] = current
        else:
            won = answers_match(answer, item.label)
            info["expected"] = list(item.label)
            # Could the agent have read its answer off a reply? False flags an unseen (guessed) answer.
            info["answer_in_observation"] = answer_observed(answer, sorted(self._replies)) if answer else None
        if reason is not None:
            info["reason"] = reason
        info["won"] = won
        info["final"] = True
        self._done, self._won = True, won
        return _result("", 1.0 if won else 0.0, True, info)

    def _info(
        self,
        *,
        valid: bool,
        kind: str,
        status: str,
        sql_error: str | None = None,
        executed_sql: str | None = None,
        answer: str | None = None,
        mutated: bool = False,
    ) -> dict[str, Any]:
        return {
            "valid": valid,
            "won": False,
            "sql_error": sql_error,
            "executed_sql": executed_sql,
            "answer": answer,
            "mutated": mutated,
            "status": status,
            "operations": self._operations,
            "kind": kind,
            "final": False,
        }

    # -- oracle, failures, progress ---------------------------------------------------------

    def _current_hash(self) -> str | None:
        if self._sandbox is None:
            return None
        return printed_table_hash(self._sandbox)

    def table_hash(self) -> str | None:
        """The episode's table hashed as the benchmark grades mutations (``[('<hex>',)]``), None if gone."""
        return self._current_hash()

    def _reference_seen(self) -> bool:
        return self._reference_reply is not None and self._reference_reply in self._replies

    def expert_action(self) -> str | None:
        """Run the reference SQL, then answer (the label for queries; ``[]`` once a mutation is done).

        A mutation table that was already changed is repaired toward the target rows
        (``repair.repair_statement``). There is no expert (None) for a mutation whose reference
        fails or does not reproduce ``answer_md5``, or whose table can no longer be repaired
        (``expert_plan.reason`` says why); the budget of ``max_round`` operations is respected.
        """
        item = self._item
        if self._done or item is None:
            return None
        if item.mutation:
            return self._mutation_expert(item)
        if self._reference_seen() or self._operations >= self.max_round or self._reference_sql is None:
            return actions.answer(" " + answer_literal(item.label))
        return actions.operation(self._reference_sql)

    def _mutation_expert(self, item: SqlItem) -> str | None:
        assert self._sandbox is not None
        done = actions.answer(" []")
        current = self._current_hash()
        if current == self._target_hash:
            return done
        if self._target_rows is None or self._operations >= self.max_round:
            return None
        if current == self._initial_hash and self._reference_sql is not None:
            return actions.operation(self._reference_sql)
        statement = repair_statement(
            item.table_name,
            item.columns,
            self._sandbox.table_rows(),
            self._target_rows,
            table_exists=self._sandbox.table_exists(),
        )
        return None if statement is None else actions.operation(statement)

    def progress(self) -> float | None:
        item = self._item
        if item is None:
            return None
        if item.mutation:
            return 1.0 if self._current_hash() == self._target_hash else 0.0
        if self._done:
            return 1.0 if self._won else (0.5 if self._reference_seen() else 0.0)
        return 0.5 if self._reference_seen() else 0.0


def _result(observation: str, reward: float, done: bool, info: dict[str, Any]) -> StepResult:
    """A ``StepResult`` whose typed facts carry what the env knows about the turn; ``info``
    keeps the display extras (status, operations used)."""
    kind = info.get("kind")
    sql = SqlFacts(
        turn=kind if kind in ("operation", "answer", "invalid") else None,
        statement=info.get("statement"),
        executed=info.get("executed_sql"),
        error=info.get("sql_error"),
        mutated=bool(info.get("mutated")) if kind == "operation" else None,
        answer=info.get("answer") if kind == "answer" else None,
        expected=info.get("expected"),
        table_hash=info.get("table_hash"),
        answer_seen=info.get("answer_in_observation") if kind == "answer" else None,
    )
    facts = StepFacts(
        won=bool(info.get("won")), final=bool(info.get("final")), stop=info.get("status") if done else None, sql=sql
    )
    extras = {key: info[key] for key in ("status", "operations", "reason") if key in info}
    return StepResult(observation, reward, done, extras, facts=facts, valid=info.get("valid"))
