"""Iceberg (issue 22): an incremental source run against a full read, and commit time.

    PYTHONPATH=src python bench/iceberg_incremental.py [--snapshots 1000] [--rows 1000]
                                                      [--new 10] [--repeats 3] [--cache DIR]
                                                      [--out bench/results/iceberg_incremental.json]

A local SQLite SQL catalog in a temporary folder (or in ``--cache DIR``, kept between runs: a
table built there by an earlier run with the same ``--snapshots`` and ``--rows`` is read again,
and the commit times reported are the ones measured when it was built). The table gets
``--snapshots`` appends of ``--rows`` rows each (one Parquet file per snapshot, written by
pyarrow), each committed exactly as lakemark's Iceberg sink commits a write, in one process:
open the table, the token check over its history, pyiceberg's ``add_files`` with the token
(``lakemark.appId`` / ``lakemark.appVersion``) and the write id in the snapshot summary, the
catalog commit (``lakemark.sinks._iceberg._commit``; Spark's part of a write is left out, since
it does not depend on the table's history). Every commit is timed, wall and CPU; the manifest
list of the last snapshot is counted (Iceberg merges manifests on append, so it stays short).

Then, in one warm Spark session, two reads of the finished table through
``Job.read_table(format="iceberg")`` take turns (order flipped each repeat), each followed by
an aggregate that touches every column (``max`` of each and ``count``):

* **incremental**: a job whose bookmark ends ``--new`` snapshots before the current one
  (1% of the table by default), run with the bookmark option ``pause`` so every repeat reads
  the same range;
* **full**: the same call with bookmarks disabled (the whole table at its current snapshot).

Each wall time covers the whole run: lease, planning (snapshot walk, manifests), the
manifest record, Spark's read and the aggregate, and the run's commit.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TARGET_RATIO = 20.0
TARGET_COMMIT_MS = 200.0


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def build(work: Path, snapshots: int, rows: int) -> tuple[str, dict[str, Any]]:
    """The table ``db.events`` with ``snapshots`` commits; the commit times (ms, wall and
    CPU) and the table's shape. Kept in ``work`` with its times: a finished table there is
    reused."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from lakemark.catalog._iceberg import load_iceberg_catalog, parse_table_name, \
        resolve_iceberg_catalog
    from lakemark.sinks import IdempotencyToken
    from lakemark.sinks._iceberg import APP_ID_KEY, APP_VERSION_KEY, WRITE_ID_KEY, _commit, \
        _open

    uri = f"sqlite:///{work / 'catalog.db'}"
    done = work / "commits.json"
    if done.exists():
        return uri, json.loads(done.read_text())
    shutil.rmtree(work, ignore_errors=True)
    catalog = load_iceberg_catalog(resolve_iceberg_catalog(uri, env={}))
    name = parse_table_name("db.events")
    location = (work / "warehouse" / "db.db" / "events").as_uri()
    data = work / "warehouse" / "db.db" / "events" / "data"
    data.mkdir(parents=True)
    schema = pa.schema([("id", pa.int64()), ("k", pa.int64()), ("x", pa.float64()),
                        ("s", pa.string())])
    names = pa.array([f"name-{j % 1000}" for j in range(rows)])
    wall: list[float] = []
    cpu: list[float] = []
    for i in range(snapshots):
        ids = pa.array(range(i * rows, (i + 1) * rows), pa.int64())
        batch = pa.table({"id": ids, "k": pa.compute.remainder(ids, 97),
                          "x": pa.compute.multiply(ids.cast(pa.float64()), 1.5), "s": names},
                         schema=schema)
        path = data / f"part-{i:05d}.parquet"
        pq.write_table(batch, path)
        write_id = f"w{i}"
        summary = {WRITE_ID_KEY: write_id, APP_ID_KEY: "bench/events",
                   APP_VERSION_KEY: str(i + 1)}
        t0, c0 = time.perf_counter(), time.process_time()
        current = _open(catalog, name)  # the sink opens the table first
        _commit(catalog, name, current, schema, location, [path.as_uri()], summary,
                IdempotencyToken("bench/events", i + 1), write_id)
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
        if (i + 1) % 100 == 0:
            print(f"{i + 1} commits, median of the last 100 {statistics.median(wall[-100:]):.0f}"
                  " ms", file=sys.stderr)
    table = _open(catalog, name)
    assert table is not None and table.current_snapshot() is not None
    built = {"wall_ms": [round(x, 1) for x in wall], "cpu_ms": [round(x, 1) for x in cpu],
             "manifests_in_last_list": len(table.current_snapshot().manifests(table.io)),
             "metadata_json_bytes": Path(table.metadata_location.removeprefix("file://"))
             .stat().st_size,
             "built_at": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
             "loadavg_while_building_end": [round(x, 2) for x in os.getloadavg()]}
    done.write_text(json.dumps(built) + "\n")
    return uri, built


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--snapshots", type=int, default=1000)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--new", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cache", help="keep the table in this folder and reuse it")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"
                                             / "iceberg_incremental.json"))
    args = parser.parse_args()
    load_start = [round(x, 2) for x in os.getloadavg()]
    work = Path(tempfile.mkdtemp(prefix="lm-iceberg-bench-"))
    table = Path(args.cache) / f"{args.snapshots}x{args.rows}" if args.cache else work / "t"
    try:
        result = run(table.resolve(), work, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result["machine"] = {"cpus": os.cpu_count(), "loadavg_at_start": load_start,
                         "loadavg_at_end": [round(x, 2) for x in os.getloadavg()]}
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "commit_ms_all"}, indent=2))


def run(table_dir: Path, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    from pyspark.sql import functions as F

    from lakemark import Job
    from lakemark.spark import get_spark
    from lakemark.sources.iceberg import open_table

    uri, built = build(table_dir, args.snapshots, args.rows)
    commit_ms, commit_cpu = built["wall_ms"], built["cpu_ms"]
    table = open_table("db.events", uri)
    ancestry = [s.snapshot_id for s in table.snapshots()]
    start_at = ancestry[-args.new - 1]
    state = f"sqlite:///{work / 'state.db'}"
    spark = get_spark("local[2]")
    # The bookmark: a committed run that ended at the snapshot --new before the current one.
    with Job("incremental", state=state, spark=spark) as job:
        job.track_source("events", {"kind": "table", "format": "iceberg"}, [],
                         {"kind": "iceberg", "table": "db.events", "snapshot_id": start_at})

    def measure(job_name: str, bookmark: str) -> tuple[float, float, int, int]:
        """(whole run s, of it read_table s — lakemark's part before Spark reads —, rows,
        files)."""
        t0 = time.perf_counter()
        with Job(job_name, state=state, spark=spark, bookmark=bookmark) as job:
            t1 = time.perf_counter()
            df = job.read_table("db.events", format="iceberg", ctx="events",
                                options={"iceberg_catalog": uri})
            planned = time.perf_counter() - t1
            row = df.agg(*[F.max(c) for c in df.columns], F.count("*").alias("n")).collect()[0]
            files = job.store.run_inputs(job.run_id)[0].manifest.planned_files or 0
        return time.perf_counter() - t0, planned, int(row["n"]), int(files)

    measure("warmup", "disable")  # JVM classes, Parquet reader code paths
    samples: dict[str, list[float]] = {"incremental": [], "full": []}
    read_table_s: dict[str, list[float]] = {"incremental": [], "full": []}
    counts: dict[str, tuple[int, int]] = {}
    for rep in range(args.repeats):
        order = ["incremental", "full"] if rep % 2 == 0 else ["full", "incremental"]
        for case in order:
            wall, planned, rows, files = measure(case, "pause" if case == "incremental"
                                                 else "disable")
            samples[case].append(round(wall, 4))
            read_table_s[case].append(round(planned, 4))
            counts[case] = (rows, files)
    inc, full = statistics.median(samples["incremental"]), statistics.median(samples["full"])
    tail = commit_ms[-100:]
    head = commit_ms[1:101]  # the first commit (a new table) is left out
    ratio = full / inc
    last_median = statistics.median(tail)
    return {
        "measured_at": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "status": "ok",
        "snapshots": args.snapshots,
        "rows_per_snapshot": args.rows,
        "new_snapshots": args.new,
        "repeats": args.repeats,
        "read_s": samples,
        "read_median_s": {"incremental": inc, "full": full},
        "read_table_s": read_table_s,
        "rows_read": {k: v[0] for k, v in counts.items()},
        "files_read": {k: v[1] for k, v in counts.items()},
        "ratio_full_over_incremental": round(ratio, 2),
        "commit_ms": {
            "first_100_median": round(statistics.median(head), 1),
            "last_100_median": round(last_median, 1),
            "last_100_p95": round(_percentile(tail, 0.95), 1),
            "last_100_max": round(max(tail), 1),
            "last_100_cpu_median": round(statistics.median(commit_cpu[-100:]), 1),
            "first_100_cpu_median": round(statistics.median(commit_cpu[1:101]), 1),
        },
        "manifests_in_last_list": built["manifests_in_last_list"],
        "metadata_json_bytes": built["metadata_json_bytes"],
        "table_built_at": built["built_at"],
        "loadavg_when_table_built": built["loadavg_while_building_end"],
        "commit_ms_all": [round(x, 1) for x in commit_ms],
        "meets_ratio_target": ratio >= TARGET_RATIO,
        "meets_commit_target": last_median <= TARGET_COMMIT_MS,
        "spark": f"local[2], pyspark {spark.version}",
        "command": "PYTHONPATH=src python bench/iceberg_incremental.py "
                   f"--snapshots {args.snapshots} --rows {args.rows} --new {args.new} "
                   f"--repeats {args.repeats}"
                   + (f" --cache {args.cache}" if args.cache else ""),
    }


if __name__ == "__main__":
    main()
