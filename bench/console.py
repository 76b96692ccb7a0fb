"""Scenario 17: the operator's console over a big store (issue 35).

    python bench/console.py [--jobs 1000] [--runs-per-job 100] [--big-run-files 100000]
                            [--repeat 5] [--store sqlite|postgres] [--pg-url URL]
                            [--out FILE]

Generates an SQLite state store with ``--jobs`` jobs of ``--runs-per-job`` runs each (1,000 ×
100 = 100,000 runs; every 20th run FAILED; each run with a source plan, a sink plan with its
rows, two input files and a bookmark version) plus one run that took ``--big-run-files``
files; every 10th run set a file aside, every 25th changed the tracked schema. The tables are
created by lakemark's own store (SQLite, or a throw-away schema of PostgreSQL with ``--store
postgres``: the real DDL and indexes); the rows are then inserted in bulk, shaped as the store
writes them — driving
100,000 runs through ``begin_run``/``commit_run`` would measure the commit path
(bench/state_retention.py does that), not the console.

Then opens the store read-only as ``lakemark ui`` does and times each page and API call of the
console app in process (Starlette's TestClient: the server's time to answer, no network), one
unmeasured call first, then ``--repeat`` timed calls: median and max. Target: ≤ 300 ms each.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from datetime import datetime, UTC
from pathlib import Path
from typing import Any

BENCH = Path(__file__).parent
T0 = datetime(2026, 1, 1, tzinfo=UTC).timestamp()
TARGET_MS = 300.0


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds").replace(
        "+00:00", "Z")


class _Writer:
    """Bulk rows into the store's own tables: SQLite's executemany, PostgreSQL's COPY."""

    def __init__(self, url: str) -> None:
        self.url = url
        if url.startswith("sqlite:///"):
            self.db: Any = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)
            self.db.execute("BEGIN")
            self.pg = False
        else:
            import psycopg

            from lakemark.state.postgres import PostgresStore

            conninfo, schema = PostgresStore._parse(url)
            self.db = psycopg.connect(conninfo)
            self.db.execute(f"SET search_path TO {schema}")
            self.pg = True

    def insert(self, table: str, columns: str, rows: list[tuple[Any, ...]]) -> None:
        if not rows:
            return
        if self.pg:
            with self.db.cursor().copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        else:
            marks = ",".join("?" * len(rows[0]))
            self.db.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", rows)

    def finish(self) -> dict[str, int]:
        if self.pg:  # ANALYZE committed too: statistics are rolled back with an open transaction
            self.db.commit()
            self.db.execute("ANALYZE")
            self.db.commit()
        else:
            self.db.execute("COMMIT")
            self.db.execute("ANALYZE")
        counts = {t: self.db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                  for t in ("jobs", "runs", "run_plans", "run_files", "bookmark_versions",
                            "quarantine", "source_schemas")}
        self.db.close()
        return counts


def generate(url: str, jobs: int, runs_per_job: int, big_run_files: int) -> dict[str, Any]:
    """Write the store at ``url`` (its tables made by lakemark's own store first); the names
    the timed calls use."""
    from lakemark.state import open_store

    open_store(url).close()  # lakemark's tables and indexes
    out = _Writer(url)
    big_run = ""
    a_file = ""
    for j in range(jobs):
        name = f"job-{j:04d}"
        runs, plans, files, versions, aside, schemas = [], [], [], [], [], []
        for k in range(1, runs_per_job + 1):
            rid = "jr_" + uuid.uuid4().hex
            start = T0 + (k * jobs + j) * 3.0
            failed = k % 20 == 0
            runs.append((rid, name, k, 0, "FAILED" if failed else "SUCCEEDED", "enable", k,
                         _iso(start), _iso(start + 20 + (k % 7)),
                         "S3 read failed: 503 SlowDown" if failed else None, "bench-host", 1,
                         k))
            plans.append((rid, "src", json.dumps({"source": f"s3://bench/{name}/",
                                                  "planned_files": 2})))
            plans.append((rid, "sink0", json.dumps({
                "kind": "sink", "target": f"/lake/{name}", "format": "delta", "rows": 1000 + k,
                "status": "committed", "token": {"app_id": name, "version": k},
                "table_version": k})))
            for f in range(2):
                path_ = f"s3://bench/{name}/2026/{k:04d}/part-{f:05d}.json"
                files.append((rid, "src", path_, int(start * 1000), 4096 + f))
                a_file = a_file or path_
            if k % 10 == 0:  # a file set aside every 10th run, a schema change every 25th
                aside.append((name, "src", f"s3://bench/{name}/2026/{k:04d}/bad.json", 10,
                              int(start * 1000), "truncated gzip", rid, "quarantined", None,
                              _iso(start + 20)))
            if k % 25 == 1:
                fields = [{"name": f"c{c}", "type": "string"} for c in range(5 + k // 25)]
                schemas.append((name, "src", 1 + k // 25, json.dumps(fields),
                                json.dumps([{"column": fields[-1]["name"], "change": "added",
                                             "type": "string"}]), rid, "new columns",
                                _iso(start + 20)))
            versions.append((name, k, k, 0, rid, None, '{"src": {"high": 1}}', "commit", rid,
                             _iso(start + 20)))
        if j == 0:
            big_run = runs[-1][0]
            files.extend((big_run, "src", f"s3://bench/big/2026/part-{i:07d}.json",
                          1_700_000_000_000 + i, 1 << 20) for i in range(big_run_files))
        out.insert("runs", "run_id, job_name, run, attempt, status, bookmark_option, "
                   "base_version, started_at, ended_at, error, host, pid, generation", runs)
        out.insert("run_plans", "run_id, ctx, plan_json", plans)
        out.insert("run_files", "run_id, ctx, path, mtime, size", files)
        out.insert("bookmark_versions", "job_name, version, run, attempt, run_id, "
                   "previous_run_id, state_json, reason, made_by_run_id, created_at", versions)
        out.insert("quarantine", "job_name, ctx, path, size, mtime, reason, run_id, status, "
                   "retried_by, updated_at", aside)
        out.insert("source_schemas", "job_name, ctx, version, schema_json, changes_json, "
                   "run_id, reason, created_at", schemas)
        last = versions[-1]
        out.insert("jobs", "job_name, version, run, attempt, run_id, previous_run_id, "
                   "state_json, reason, updated_at",
                   [(name, last[1], last[2], 0, last[4], None, last[6], "commit", last[9])])
    counts = out.finish()
    return {"big_run": big_run, "a_file": a_file, "rows": counts,
            "mid_job": f"job-{jobs // 2:04d}", "small_run": runs[0][0]}


def calls(names: dict[str, Any]) -> dict[str, str]:
    """What a person (or a script) asks the console: label -> URL."""
    big, job, small = names["big_run"], names["mid_job"], names["small_run"]
    return {
        "page: jobs (1,000, sorted by name, 200 shown)": "/",
        "page: jobs, filtered and sorted": "/?q=job-09&status=FAILED&sort=duration",
        "page: job (runs, charts, bookmarks)": f"/job?name={job}",
        "page: run (100,000 files, first page)": f"/run?id={big}",
        "page: run (100,000 files, last page)": f"/run?id={big}&offset=99900",
        "page: run (100,000 files, substring search)": f"/run?id={big}&q=part-00999",
        "page: run (2 files)": f"/run?id={small}",
        "page: search, exact path across all runs": f"/search?q={names['a_file']}",
        "page: search, glob across all runs": f"/search?q=s3://bench/{job}/*/part-00001.json",
        "api: /api/jobs": "/api/jobs",
        "api: /api/runs": f"/api/runs?job={job}",
        "api: /api/bookmarks": f"/api/bookmarks?job={job}",
        "api: /api/run": f"/api/run?id={big}",
        "api: /api/run/files (glob, 100,000 files)": f"/api/run/files?id={big}&q=*/part-009*",
        "api: /api/files (one job)": f"/api/files?q=part-00001.json&job={job}",
        "page: schema (4 versions)": f"/jobs/{job}/schema",
        "api: /api/io (sources, sinks, tokens)": f"/api/io?job={job}",
        "api: /api/schema": f"/api/schema?job={job}",
    }


def measure(url: str, names: dict[str, Any], repeat: int) -> dict[str, Any]:
    from starlette.testclient import TestClient

    from lakemark.console.app import create_app
    from lakemark.state import open_store

    store = open_store(url, read_only=True)
    client = TestClient(create_app(store))
    out = {}
    for label, path in calls(names).items():
        assert client.get(path).status_code == 200, path  # unmeasured first call
        samples = []
        for _ in range(repeat):
            t = time.perf_counter()
            r = client.get(path)
            samples.append((time.perf_counter() - t) * 1000)
            assert r.status_code == 200, path
        out[label] = {"path": path, "median_ms": round(statistics.median(samples), 1),
                      "max_ms": round(max(samples), 1), "bytes": len(r.content)}
    store.close()
    return out


def _store_bytes(url: str) -> int:
    if url.startswith("sqlite:///"):
        return Path(url.removeprefix("sqlite:///")).stat().st_size
    import psycopg

    from lakemark.state.postgres import PostgresStore

    conninfo, schema = PostgresStore._parse(url)
    with psycopg.connect(conninfo) as db:
        row = db.execute("SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                         "JOIN pg_namespace n ON n.oid = c.relnamespace "
                         "WHERE n.nspname = %s AND c.relkind = 'r'", (schema,)).fetchone()
    return int(row[0])


def _drop_schema(url: str) -> None:
    import psycopg
    from psycopg import sql

    from lakemark.state.postgres import PostgresStore

    conninfo, schema = PostgresStore._parse(url)
    with psycopg.connect(conninfo, autocommit=True) as db:
        db.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=1000)
    ap.add_argument("--runs-per-job", type=int, default=100)
    ap.add_argument("--big-run-files", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--store", choices=("sqlite", "postgres"), default="sqlite",
                    help="postgres: a throw-away schema in --pg-url's database")
    ap.add_argument("--pg-url", default="postgresql://postgres@127.0.0.1:5432/test")
    ap.add_argument("--out", default=None,
                    help="default: bench/results/console.json (console_postgres.json)")
    args = ap.parse_args(argv)
    out_path = args.out or str(BENCH / "results" / ("console.json" if args.store == "sqlite"
                                                    else "console_postgres.json"))
    load = list(os.getloadavg())
    with tempfile.TemporaryDirectory() as tmp:
        if args.store == "sqlite":
            url = f"sqlite:///{Path(tmp) / 'state.db'}"
        else:
            url = f"{args.pg_url}?schema=lm_bench_console_{uuid.uuid4().hex[:8]}"
        try:
            t = time.perf_counter()
            names = generate(url, args.jobs, args.runs_per_job, args.big_run_files)
            gen_s = time.perf_counter() - t
            timings = measure(url, names, args.repeat)
            size = _store_bytes(url)
        finally:
            if args.store == "postgres":
                _drop_schema(url)
    worst = max(v["max_ms"] for v in timings.values())
    worst_median = max(v["median_ms"] for v in timings.values())
    doc = {
        "status": "ok", "measured_at": _iso(time.time()),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "loadavg_at_start": [round(x, 2) for x in load]},
        "store": args.store, "jobs": args.jobs, "runs": args.jobs * args.runs_per_job,
        "big_run_files": args.big_run_files, "rows": names["rows"], "store_bytes": size,
        "generate_s": round(gen_s, 1), "repeat": args.repeat, "target_ms": TARGET_MS,
        "calls": timings, "worst_median_ms": worst_median, "worst_max_ms": worst,
        "meets_target": worst_median <= TARGET_MS,
    }
    Path(out_path).parent.mkdir(parents=True, exist_ok=True)
    Path(out_path).write_text(json.dumps(doc, indent=2) + "\n")
    for label, v in timings.items():
        print(f"{v['median_ms']:8.1f} ms (max {v['max_ms']:7.1f})  {label}")
    print(f"wrote {out_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
