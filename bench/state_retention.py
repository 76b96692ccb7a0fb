"""Scenario 10: state size and commit time over 100,000 runs, retention on vs off.

    python bench/state_retention.py [--runs N] [--files F] [--url URL] [--out FILE]

A job runs every 5 minutes (simulated: the store's row stamps advance 5 minutes per run, so
100,000 runs span ~347 days) and takes ``--files`` new files per run. Each run drives the state
store's API as ``Job`` does — ``begin_run`` (lease), ``record_plan`` of one file source (a plan
shaped like ``Job``'s manifest and every file by name), the sink's intent and its result, then
``commit_run`` — without Spark, which would add a second per run and measure Spark.

Two modes on fresh stores: **on** (the automatic policy: keep 30 days and at least the last
100 runs, pruned after every 10th commit) and **off** (``store.retention = None``: nothing is
ever deleted, as before). At each checkpoint: the state's size (SQLite: the database file plus
its WAL after a checkpoint; PostgreSQL: ``pg_total_relation_size`` of the schema's tables), the
rows of each table, and ``commit_run`` times (p50/p99/max) over the runs since the previous
checkpoint. Result: ``bench/results/state_retention.json`` (``bench/report.py`` section 10).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import sys
import tempfile
import time
from datetime import datetime, UTC
from pathlib import Path
from typing import Any

BENCH = Path(__file__).parent
T0 = datetime(2026, 1, 1, tzinfo=UTC).timestamp()
CADENCE_S = 300.0  # a run every 5 minutes
TABLES = ("runs", "run_plans", "run_files", "bookmark_versions")


class Stamp:
    """The simulated time the store stamps on rows."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> str:
        return datetime.fromtimestamp(self.now, UTC).isoformat(
            timespec="milliseconds").replace("+00:00", "Z")


def _pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def _vacuum(url: str) -> None:
    """PostgreSQL: what autovacuum does (this test server runs with autovacuum off): make the
    space of deleted rows reusable. Outside the store's connection (VACUUM needs autocommit)."""
    import psycopg
    from urllib.parse import parse_qs, urlsplit

    parts = urlsplit(url)
    schema = parse_qs(parts.query)["schema"][0]
    with psycopg.connect(host=parts.hostname, port=parts.port or 5432,
                         dbname=parts.path.lstrip("/"), user=parts.username,
                         autocommit=True) as conn:
        for table in (*TABLES, "jobs", "leases"):
            conn.execute(f'VACUUM "{schema}"."{table}"')


def _size(store: Any, url: str, db_path: Path | None) -> int:
    if db_path is not None:
        store._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # noqa: SLF001
        wal = Path(str(db_path) + "-wal")
        return db_path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
    return int(sum(store._q.execute(  # noqa: SLF001
        "SELECT pg_total_relation_size((quote_ident(?) || '.' || quote_ident(?))::regclass)",
        (store.schema, t)).fetchone()[0] for t in (*TABLES, "jobs", "leases", "meta")))


def _rows(store: Any) -> dict[str, int]:
    return {t: int(store._q.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0])  # noqa: SLF001
            for t in TABLES}


def one_mode(mode: str, url: str, runs: int, files: int, checkpoints: list[int],
             keep_days: float, vacuum_every: int = 0) -> dict[str, Any]:
    from lakemark.planning import FileEntry
    from lakemark.planning.retention import RetentionPolicy
    from lakemark.state import open_store

    store: Any = open_store(url)
    db_path = Path(url.removeprefix("sqlite:///")) if url.startswith("sqlite:") else None
    stamp = Stamp()
    store._stamp = stamp  # noqa: SLF001
    store.retention = RetentionPolicy(keep_days=keep_days) if mode == "on" else None
    host, pid = socket.gethostname(), os.getpid()
    commit_s: list[float] = []
    run_s: list[float] = []
    marks: dict[str, Any] = {}
    started = time.perf_counter()
    for n in range(1, runs + 1):
        stamp.now = T0 + n * CADENCE_S
        t_run = time.perf_counter()
        record = store.begin_run("bench-retention", "enable", host=host, pid=pid,
                                 lease_timeout_s=3600)
        mtime = int(stamp.now * 1000)
        entries = [FileEntry(path=f"s3://landing/orders/dt=2026-01-01/part-{n:07d}-{i:04d}.json",
                             mtime=mtime, size=4096 + i) for i in range(files)]
        store.record_plan(record.run_id, "orders", {
            "kind": "files", "source": "s3://landing/orders", "format": "json",
            "bookmark_option": "enable",
            "options": {"recurse": True, "exclusions": [], "maxBand": 900_000,
                        "maxFilesInBand": None, "boundedFiles": None, "boundedSize": None},
            "listed_at_ms": mtime, "listed_files": files,
            "listing": {"mode": "full", "start_after": {}, "incremental": False, "requests": 1},
            "planned_files": files, "planned_bytes": sum(e.size for e in entries),
            "pending_files": 0, "previous_state": {"kind": "files", "high": mtime - 300_000},
            "next_state": {"kind": "files", "high": mtime}, "replay": {"case": "first-attempt"},
        }, entries)
        sink = {"kind": "sink", "ctx": "orders_table", "target": "/lake/orders", "format": "delta",
                "mode": "append", "partition_by": [], "status": "writing",
                "token": {"app_id": "bench-retention/orders_table", "version": record.run},
                "token_source": "automatic"}
        store.record_plan(record.run_id, "sink:orders_table", sink, [])
        sink.update(status="committed", rows=files * 10, files=1, bytes=65536, skipped=False,
                    table_version=n)
        store.record_plan(record.run_id, "sink:orders_table", sink, [])
        t0 = time.perf_counter()
        store.commit_run(record.run_id, {"orders": {"kind": "files", "source":
                                                    "s3://landing/orders", "high": mtime}},
                         update_bookmark=True)
        t1 = time.perf_counter()
        commit_s.append(t1 - t0)
        run_s.append(t1 - t_run)
        if vacuum_every and n % vacuum_every == 0:
            _vacuum(url)
        if n in checkpoints:
            window = commit_s[-(n - max([c for c in checkpoints if c < n], default=0)):]
            runs_window = run_s[-len(window):]
            marks[str(n)] = {
                "state_bytes": _size(store, url, db_path),
                "rows": _rows(store),
                "commit_ms": {"p50": round(1000 * statistics.median(window), 3),
                              "p99": round(1000 * _pct(window, 0.99), 3),
                              "max": round(1000 * max(window), 3)},
                "run_ms_p50": round(1000 * statistics.median(runs_window), 3),
                "elapsed_s": round(time.perf_counter() - started, 1),
                "simulated_days": round(n * CADENCE_S / 86_400, 1),
            }
            print(f"{mode} {n:>7,}: {marks[str(n)]}", file=sys.stderr, flush=True)
    store.close()
    return {"mode": mode, "at_run": marks}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--runs", type=int, default=100_000)
    ap.add_argument("--files", type=int, default=20, help="new files per run (default 20)")
    ap.add_argument("--url", default=None,
                    help="a state URL prefix: postgresql://… (a fresh schema per mode) or none "
                         "for fresh SQLite files in a temporary folder")
    ap.add_argument("--modes", default="on,off")
    ap.add_argument("--vacuum-every", type=int, default=0, metavar="N",
                    help="PostgreSQL: VACUUM the tables every N runs, as autovacuum would")
    ap.add_argument("--keep-days", type=float, default=30.0,
                    help="the policy's keep_days (default 30, the automatic default)")
    ap.add_argument("--out", default=str(BENCH / "results" / "state_retention.json"))
    args = ap.parse_args()
    marks = (1_000, 5_000, 10_000, 25_000, 50_000, 75_000, 100_000) if args.runs > 10_000 \
        else tuple(args.runs * k // 4 for k in range(1, 5))
    checkpoints = sorted({c for c in (*marks, args.runs) if 0 < c <= args.runs})
    load = [round(x, 2) for x in os.getloadavg()]
    results = {}
    with tempfile.TemporaryDirectory(prefix="lm-retention-") as tmp:
        for mode in args.modes.split(","):
            if args.url:
                sep = "&" if "?" in args.url else "?"
                url = f"{args.url}{sep}schema=lm_bench_retention_{mode}_{os.getpid()}"
            else:
                url = f"sqlite:///{tmp}/state-{mode}.db"
            results[mode] = one_mode(mode, url, args.runs, args.files, checkpoints,
                                     args.keep_days, args.vacuum_every)
            if args.url:
                _drop_schema(url)
    doc = {
        "status": "ok",
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"python": sys.version.split()[0], "platform": platform.platform(),
                    "cpus": os.cpu_count(), "loadavg_at_start": load},
        "store": "postgresql" if args.url else "sqlite (file, WAL)",
        "runs": args.runs, "files_per_run": args.files, "cadence_s": CADENCE_S,
        "policy_on": {"keep_days": args.keep_days, "keep_runs": 100, "prune_every_commits": 10},
        "checkpoints": checkpoints,
        "vacuum_every_runs": args.vacuum_every or None,
        "modes": results,
        "command": "python bench/state_retention.py " + " ".join(sys.argv[1:]),
    }
    Path(args.out).write_text(json.dumps(doc, indent=2) + "\n")
    print(f"wrote {args.out}", file=sys.stderr)


def _drop_schema(url: str) -> None:
    import psycopg
    from urllib.parse import parse_qs, urlsplit

    parts = urlsplit(url)
    schema = parse_qs(parts.query)["schema"][0]
    with psycopg.connect(host=parts.hostname, port=parts.port or 5432,
                         dbname=parts.path.lstrip("/"), user=parts.username,
                         autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


if __name__ == "__main__":
    main()
