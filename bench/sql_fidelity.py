"""SQL env fidelity: the statement battery through the SQLite emulation and a real MySQL-family server.

Usage: ``python bench/sql_fidelity.py [--domains 9] [--db-url mysql://...] [--show 200] [--json FILE]``

Prints the per-category share of identical replies and identical final-table hashes (a
Markdown table), then every diverging statement with both replies. Without ``--db-url`` a
private MariaDB server is started (Debian package ``mariadb-server``) and stopped at the end.
Timing is printed as the MySQL backend's time per case relative to the SQLite backend's.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from prefbuild.envs.sql.fidelity import (
    build_cases,
    domain_tables,
    format_table,
    load_battery,
    run_cases,
    summarize,
)
from prefbuild.envs.sql.mariadb import mariadb_available
from prefbuild.envs.sql.mysql_backend import stop_shared_backends
from prefbuild.envs.sql.mysql_client import client_available


def _short(text: str | None, limit: int = 240) -> str:
    text = "None" if text is None else text
    return text if len(text) <= limit else text[:limit] + "…"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domains", type=int, default=9, help="tables (domains) each statement runs on")
    parser.add_argument("--db-url", default=None, help="mysql://user:password@host:port/ (default: private MariaDB)")
    parser.add_argument("--show", type=int, default=200, help="diverging statements to print")
    parser.add_argument("--json", default=None, help="write every diverging case to this JSON file")
    args = parser.parse_args()

    reason = client_available() or (mariadb_available() if args.db_url is None else None)
    if reason is not None:
        print(f"error: {reason}", file=sys.stderr)
        return 2
    battery = load_battery()
    cases = build_cases(battery, domain_tables(), domains_per_statement=args.domains)
    started = time.perf_counter()
    try:
        results = run_cases(cases, db_url=args.db_url)
    finally:
        stop_shared_backends()
    elapsed = time.perf_counter() - started
    print(f"{len(battery)} statements x up to {args.domains} domains = {len(cases)} cases in {elapsed:.1f}s\n")
    print(format_table(summarize(results)))
    diverging = [r for r in results if not (r.same_reply and r.same_hash)]
    print(f"\n{len(diverging)} diverging cases (first {min(args.show, len(diverging))}):")
    for result in diverging[: args.show]:
        case = result.case
        note = f" (left out: {case.mysql8_differs})" if case.mysql8_differs else ""
        print(f"\n[{case.category}] ({case.domain}) {case.sql}{note}")
        if not result.same_reply:
            print(f"  sqlite: {_short(result.sqlite_reply)}")
            print(f"  mysql:  {_short(result.mysql_reply)}")
        if not result.same_hash:
            print(f"  final table hash differs: sqlite {result.sqlite_hash} mysql {result.mysql_hash}")
    if args.json:
        rows = [
            {
                "category": r.case.category,
                "template": r.case.template,
                "domain": r.case.domain,
                "sql": r.case.sql,
                "sqlite_reply": r.sqlite_reply,
                "mysql_reply": r.mysql_reply,
                "sqlite_hash": r.sqlite_hash,
                "mysql_hash": r.mysql_hash,
                "mysql8_differs": r.case.mysql8_differs,
            }
            for r in diverging
        ]
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(rows, handle, ensure_ascii=False, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
