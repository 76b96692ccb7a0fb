"""Iceberg (issue 22): an incremental source run against a full read, and commit time.

    PYTHONPATH=src python bench/iceberg_incremental.py [--snapshots 1000] [--rows 50000]
                                                      [--new 10] [--repeats 3] [--cache DIR]
                                                      [--out bench/results/iceberg_incremental.json]

The table has the shape of the Delta source's benchmark (``bench/delta_incremental.py``):
``--snapshots`` appends of ``--rows`` rows each (one Parquet file per snapshot, written by
pyarrow; the same four columns), so the two ratios compare. It lives on a local SQLite SQL
catalog in a temporary folder (or in ``--cache DIR``, kept between runs: a table built there by
an earlier run with the same ``--snapshots`` and ``--rows`` is read again, and the commit times
reported are the ones measured when it was built). Each append is committed exactly as
lakemark's Iceberg sink commits a write, in one process: open the table, the token check over
its history, pyiceberg's ``add_files`` with the token (``lakemark.appId`` /
``lakemark.appVersion``) and the write id in the snapshot summary, the catalog commit
(``lakemark.sinks._iceberg._commit``; Spark's part of a write is left out, since it does not
depend on the table's history). Every commit is timed, wall and CPU; the manifest list of the
last snapshot is counted (Iceberg merges manifests on append, so it stays short).

Then, in one warm Spark session, four cases take turns (the order rotates each repeat), each
followed by the Delta benchmark's aggregate (``count`` and a ``sum`` per column, the string
column through its length):

* **incremental**: a ``Job`` whose bookmark ends ``--new`` snapshots before the current one
  (1% of the table by default), run with the bookmark option ``pause`` so every repeat reads
  the same range;
* **full**: the same ``Job`` with bookmarks disabled (the whole table at its current snapshot);
* **spark_incremental** / **spark_full**: the floor — the same aggregate over the same data
  files read by Spark's Parquet reader with the table's schema, no lakemark, no job.

Before each lakemark run the process's copies of parsed table metadata and manifest lists are
dropped: a real next run meets a new metadata file (the table has grown), while here every
repeat reads the same one. Each lakemark wall time covers the whole run: lease, planning
(snapshot walk, manifests), the manifest record, the DataFrame, Spark's read and the
aggregate, and the run's commit; of it ``read_table`` is split into lakemark's planning and the
DataFrame's construction. Ratios are given of medians and of bests (the Delta benchmark
reports bests).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import subprocess
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
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--new", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cache", help="keep the table in this folder and reuse it")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"
                                             / "iceberg_incremental.json"))
    args = parser.parse_args()
    # The code measured: the checkout's revision when the run starts (modules load then).
    args.code = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True,
                               text=True, cwd=Path(__file__).parent).stdout.strip() or None
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


CASES = ("incremental", "full", "spark_incremental", "spark_full")


def _aggregate(df: Any) -> Any:
    """The Delta benchmark's aggregate: a count and a sum touching every column."""
    from pyspark.sql import functions as F

    return df.agg(F.count("*").alias("n"), F.sum("id"), F.sum("k"), F.sum("x"),
                  F.sum(F.length("s"))).collect()[0]


def run(table_dir: Path, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    from pyiceberg.manifest import clear_manifest_cache

    import lakemark.sources.iceberg as iceberg_source
    from lakemark import Job
    from lakemark.catalog import _iceberg_reuse
    from lakemark.planning.iceberg import SnapshotRange
    from lakemark.spark import get_spark
    from lakemark.sources.iceberg import open_table, spark_schema, table_files

    uri, built = build(table_dir, args.snapshots, args.rows)
    commit_ms, commit_cpu = built["wall_ms"], built["cpu_ms"]
    table = open_table("db.events", uri)
    ancestry = [s.snapshot_id for s in table.snapshots()]
    start_at, through = ancestry[-args.new - 1], ancestry[-1]
    # The floor's file lists, planned once here (outside every timing) with pyiceberg.
    floor_files = {
        "spark_incremental": [f.path for f in table_files(table, SnapshotRange(
            "db.events", start_at, through, full=False, take=tuple(ancestry[-args.new:])))],
        "spark_full": [f.path for f in table_files(table, SnapshotRange(
            "db.events", None, through, full=True))]}
    schema = spark_schema(table, through)
    table_bytes = sum(Path(f.removeprefix("file://")).stat().st_size
                      for f in floor_files["spark_full"])
    state = f"sqlite:///{work / 'state.db'}"
    spark = get_spark("local[2]")
    # The bookmark: a committed run that ended at the snapshot --new before the current one.
    with Job("incremental", state=state, spark=spark) as job:
        job.track_source("events", {"kind": "table", "format": "iceberg"}, [],
                         {"kind": "iceberg", "table": "db.events", "snapshot_id": start_at})

    framing: list[float] = []
    frame_of = iceberg_source.read_files_of

    def timed_frame(*a: Any, **kw: Any) -> Any:  # the DataFrame's construction, by Spark
        t = time.perf_counter()
        try:
            return frame_of(*a, **kw)
        finally:
            framing.append(time.perf_counter() - t)

    iceberg_source.read_files_of = timed_frame  # type: ignore[assignment]

    def measure(case: str) -> dict[str, Any]:
        """One sample: the whole run's wall time, of it read_table (and of that the
        DataFrame), rows and files."""
        t0 = time.perf_counter()
        if case.startswith("spark_"):
            files = floor_files[case]
            df = spark.read.schema(schema).parquet(*files)
            framed = time.perf_counter() - t0
            row = _aggregate(df)
            return {"wall": time.perf_counter() - t0, "read_table": framed, "frame": framed,
                    "rows": int(row["n"]), "files": len(files)}
        bookmark = "pause" if case == "incremental" else "disable"
        # A next run finds a new metadata file: parse it, as that run would (not the copy this
        # process kept of the same file from the last repeat).
        _iceberg_reuse._cache.clear()
        clear_manifest_cache()
        t0 = time.perf_counter()
        with Job(case, state=state, spark=spark, bookmark=bookmark) as job:
            t1 = time.perf_counter()
            df = job.read_table("db.events", format="iceberg", ctx="events",
                                options={"iceberg_catalog": uri})
            planned = time.perf_counter() - t1
            row = _aggregate(df)
            n_files = job.store.run_inputs(job.run_id)[0].manifest.planned_files or 0
        return {"wall": time.perf_counter() - t0, "read_table": planned, "frame": framing[-1],
                "rows": int(row["n"]), "files": int(n_files)}

    measure("full")  # warm-up: JVM classes, Parquet reader code paths, the table's metadata
    samples: dict[str, list[float]] = {c: [] for c in CASES}
    read_table_s: dict[str, list[float]] = {c: [] for c in CASES}
    frame_s: dict[str, list[float]] = {c: [] for c in CASES}
    counts: dict[str, tuple[int, int]] = {}
    for rep in range(args.repeats):
        order = CASES[rep % len(CASES):] + CASES[:rep % len(CASES)]
        for case in order:
            got = measure(case)
            samples[case].append(round(got["wall"], 4))
            read_table_s[case].append(round(got["read_table"], 4))
            frame_s[case].append(round(got["frame"], 4))
            counts[case] = (got["rows"], got["files"])
            print(f"{case}: {got['wall']:.3f} s (read_table {got['read_table']:.3f} s), "
                  f"load {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
    med = {c: statistics.median(v) for c, v in samples.items()}
    best = {c: min(v) for c, v in samples.items()}
    tail = commit_ms[-100:]
    head = commit_ms[1:101]  # the first commit (a new table) is left out
    ratio = med["full"] / med["incremental"]
    last_median = statistics.median(tail)
    return {
        "measured_at": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "status": "ok",
        "code": args.code,
        "snapshots": args.snapshots,
        "rows_per_snapshot": args.rows,
        "table_rows": args.snapshots * args.rows,
        "table_bytes": table_bytes,
        "new_snapshots": args.new,
        "repeats": args.repeats,
        "aggregate": "count(*), sum(id), sum(k), sum(x), sum(length(s))",
        "read_s": samples,
        "read_median_s": med,
        "read_best_s": best,
        "read_table_s": read_table_s,
        "read_table_median_s": {c: statistics.median(v) for c, v in read_table_s.items()},
        "dataframe_s": frame_s,
        "dataframe_median_s": {c: statistics.median(v) for c, v in frame_s.items()},
        "rows_read": {k: v[0] for k, v in counts.items()},
        "files_read": {k: v[1] for k, v in counts.items()},
        "ratio_full_over_incremental": round(ratio, 2),
        "ratio_best_full_over_best_incremental": round(best["full"] / best["incremental"], 2),
        "floor_ratio_full_over_incremental": round(
            med["spark_full"] / med["spark_incremental"], 2),
        "incremental_over_floor": round(med["incremental"] / med["spark_incremental"], 2),
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
