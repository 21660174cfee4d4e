"""SQL env emulation cost: agent statements through ``SqlSandbox`` vs the same SQL on bare SQLite.

Usage: ``python bench/sql_emulation_speed.py [--items 200] [--repeat 3]``

For generated DBBench items, each item's SELECT reference statement and a few agent-style
probes run through the sandbox (MySQL dialect rewrite, checks, MySQL functions, reply
formatting) and, as the reference, the same SQL text on a plain in-memory SQLite copy of the
table in the same process (fetch and ``repr`` only). Printed: statements, the time per statement of each path, and
the ratio sandbox / bare SQLite.
"""

from __future__ import annotations

import argparse
import contextlib
import sqlite3
import time

from prefbuild.envs.sql.engine import SqlSandbox
from prefbuild.envs.sql.env import SqlEnv
from prefbuild.envs.sql.generator import ident


def _probes(table: str, column: str) -> list[str]:
    name, col = ident(table), ident(column)
    return [
        f"SELECT * FROM {name} LIMIT 5",
        f"SELECT COUNT(*) FROM {name} WHERE {col} LIKE '%a%'",
        f"SELECT {col}, COUNT(*) FROM {name} GROUP BY {col} ORDER BY COUNT(*) DESC LIMIT 3",
        f"SELECT SUM({col} + 0) / COUNT(*) FROM {name}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    items = [task.payload for task in SqlEnv().tasks("dev", args.items, seed=0)]
    work = []
    for item in items:
        statements = [item.reference_sql or "", *_probes(item.table_name, item.columns[-1])]
        work.append((item, [sql for sql in statements if sql.startswith("SELECT")]))

    sandbox_s = bare_s = 0.0
    count = 0
    for _ in range(args.repeat):
        for item, statements in work:
            sandbox = SqlSandbox(item.table_name, item.columns, item.rows)
            bare = sqlite3.connect(":memory:")
            columns = ", ".join(f"{ident(name)} TEXT" for name in item.columns)
            bare.execute(f"CREATE TABLE {ident(item.table_name)} ({columns})")
            marks = ", ".join("?" for _ in item.columns)
            bare.executemany(f"INSERT INTO {ident(item.table_name)} VALUES ({marks})", item.rows)
            started = time.perf_counter()
            for sql in statements:
                sandbox.execute(sql)
            sandbox_s += time.perf_counter() - started
            started = time.perf_counter()
            for sql in statements:
                with contextlib.suppress(sqlite3.Error):
                    repr(bare.execute(sql).fetchall())
            bare_s += time.perf_counter() - started
            count += len(statements)
            sandbox.close()
            bare.close()
    print(f"{count} statements ({len(work)} items x {args.repeat})")
    print(f"sandbox:     {sandbox_s / count * 1e6:8.1f} us/statement")
    print(f"bare SQLite: {bare_s / count * 1e6:8.1f} us/statement")
    print(f"ratio sandbox / bare SQLite: {sandbox_s / bare_s:.2f}")


if __name__ == "__main__":
    main()
