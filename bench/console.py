"""Scenario 17: the operator's console over a big store (issue 35).

    python bench/console.py [--jobs 1000] [--runs-per-job 100] [--big-run-files 100000]
                            [--repeat 5] [--out bench/results/console.json]

Generates an SQLite state store with ``--jobs`` jobs of ``--runs-per-job`` runs each (1,000 ×
100 = 100,000 runs; every 20th run FAILED; each run with a source plan, a sink plan with its
rows, two input files and a bookmark version) plus one run that took ``--big-run-files``
files. The tables are created by lakemark's own store (``SQLiteStore``: the real DDL and
indexes); the rows are then inserted in bulk, shaped as the store writes them — driving
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


def generate(path: Path, jobs: int, runs_per_job: int, big_run_files: int) -> dict[str, Any]:
    """Write the store; the names the timed calls use."""
    from lakemark.state.sqlite import SQLiteStore

    SQLiteStore(path).close()  # lakemark's tables and indexes
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("BEGIN")
    big_run = ""
    a_file = ""
    for j in range(jobs):
        name = f"job-{j:04d}"
        runs, plans, files, versions = [], [], [], []
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
            plans.append((rid, "sink0", json.dumps({"kind": "sink", "target": f"/lake/{name}",
                                                    "rows": 1000 + k, "status": "committed"})))
            for f in range(2):
                path_ = f"s3://bench/{name}/2026/{k:04d}/part-{f:05d}.json"
                files.append((rid, "src", path_, int(start * 1000), 4096 + f))
                a_file = a_file or path_
            versions.append((name, k, k, 0, rid, None, '{"src": {"high": 1}}', "commit", rid,
                             _iso(start + 20)))
        if j == 0:
            big_run = runs[-1][0]
            files.extend((big_run, "src", f"s3://bench/big/2026/part-{i:07d}.json",
                          1_700_000_000_000 + i, 1 << 20) for i in range(big_run_files))
        db.executemany("INSERT INTO runs (run_id, job_name, run, attempt, status, "
                       "bookmark_option, base_version, started_at, ended_at, error, host, pid, "
                       "generation) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", runs)
        db.executemany("INSERT INTO run_plans (run_id, ctx, plan_json) VALUES (?,?,?)", plans)
        db.executemany("INSERT INTO run_files (run_id, ctx, path, mtime, size) "
                       "VALUES (?,?,?,?,?)", files)
        db.executemany("INSERT INTO bookmark_versions (job_name, version, run, attempt, run_id, "
                       "previous_run_id, state_json, reason, made_by_run_id, created_at) "
                       "VALUES (?,?,?,?,?,?,?,?,?,?)", versions)
        last = versions[-1]
        db.execute("INSERT INTO jobs (job_name, version, run, attempt, run_id, previous_run_id, "
                   "state_json, reason, updated_at) VALUES (?,?,?,?,?,?,?,?,?)",
                   (name, last[1], last[2], 0, last[4], None, last[6], "commit", last[9]))
    db.execute("COMMIT")
    db.execute("ANALYZE")
    counts = {t: db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
              for t in ("jobs", "runs", "run_plans", "run_files", "bookmark_versions")}
    db.close()
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=1000)
    ap.add_argument("--runs-per-job", type=int, default=100)
    ap.add_argument("--big-run-files", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=str(BENCH / "results" / "console.json"))
    args = ap.parse_args(argv)
    load = list(os.getloadavg())
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "state.db"
        t = time.perf_counter()
        names = generate(db, args.jobs, args.runs_per_job, args.big_run_files)
        gen_s = time.perf_counter() - t
        timings = measure(f"sqlite:///{db}", names, args.repeat)
        size = db.stat().st_size
    worst = max(v["max_ms"] for v in timings.values())
    worst_median = max(v["median_ms"] for v in timings.values())
    doc = {
        "status": "ok", "measured_at": _iso(time.time()),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "loadavg_at_start": [round(x, 2) for x in load]},
        "store": "sqlite", "jobs": args.jobs, "runs": args.jobs * args.runs_per_job,
        "big_run_files": args.big_run_files, "rows": names["rows"], "store_bytes": size,
        "generate_s": round(gen_s, 1), "repeat": args.repeat, "target_ms": TARGET_MS,
        "calls": timings, "worst_median_ms": worst_median, "worst_max_ms": worst,
        "meets_target": worst_median <= TARGET_MS,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(doc, indent=2) + "\n")
    for label, v in timings.items():
        print(f"{v['median_ms']:8.1f} ms (max {v['max_ms']:7.1f})  {label}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
