"""MERGE of a batch of changes into a large partitioned Delta table: lakemark's merge against
deltalake's own ``merge`` and against rewriting the whole table, on the same data.

    python bench/merge.py [--rows 10000000] [--changes 100000] [--quick]
                          [--out bench/results/merge.json]

The table (``--rows``, default 10,000,000) has columns ``id, p, name, amount, updated_at`` and
is partitioned by ``p`` into 16 partitions of consecutive ids (as a table partitioned by day
is), written by lakemark's Delta sink in 64 files. The changes (``--changes``, default 100,000)
are 80% updates of existing keys and 20% inserts of new ones; as in most change feeds the
updated keys are recent ones (drawn at random from the newest 5% of ids) and the inserts are
new ids in the newest partition.

Each case starts from a fresh copy of the table and runs in its own Python process, so its
peak memory is its own: the driver's peak RSS (``ru_maxrss``) and, for the Spark cases, the
JVM's (``VmHWM`` of the gateway's process):

* ``lakemark``: ``write_target(..., merge_keys=["id"], order_by="updated_at")`` on the changes
  read by Spark (Spark checks the keys and keeps the latest version, deltalake merges);
* ``deltalake``: ``DeltaTable.merge`` (update-all / insert-all) on the changes read by pyarrow;
* ``rewrite``: Spark reads the whole table, replaces the changed rows and overwrites the table
  with lakemark's sink — what a job without merges has to do.

Reported: the time of each (without process and Spark start), the ratios, peak memory, and the
table's data files rewritten by each merge (``remove`` actions in its commit) against the files
that hold a changed key (read from the files themselves). The three results must agree (row
count, key count and sums). ``--quick`` runs 200,000 rows and 2,000 changes.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PARTITIONS, FILES, HOT, UPDATES = 16, 64, 0.05, 0.8


def _spark() -> Any:
    from lakemark.spark import get_spark

    return get_spark("local[2]", {"spark.sql.shuffle.partitions": "8"})


def _jvm_peak(spark: Any) -> int | None:
    """The JVM's peak RSS in bytes (``VmHWM``), when its process can be read."""
    proc = getattr(spark.sparkContext._gateway, "proc", None)
    try:
        for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (AttributeError, OSError):
        return None
    return None


def _driver_peak() -> int:
    """This process's peak RSS in bytes: ``VmHWM`` of its own address space (``ru_maxrss``
    would also count the parent's RSS at the fork, which Linux keeps across ``exec``)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def build(table: Path, changes: Path, rows: int, n_changes: int) -> dict[str, Any]:
    """Write the table (Spark + lakemark's sink) and the changes (one Parquet file)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from lakemark.sinks import write_target

    spark = _spark()
    frame = spark.range(0, rows, numPartitions=FILES).selectExpr(
        "id", f"cast(id * {PARTITIONS} div {rows} as int) as p",
        "concat('name-', id) as name", "cast(id % 10007 as double) / 7 as amount",
        "cast(0 as long) as updated_at")
    t0 = time.time()
    write_target(spark, frame, str(table), format="delta", partition_by=["p"])
    took = time.time() - t0
    spark.stop()
    rnd = np.random.default_rng(21)
    n_updates = int(n_changes * UPDATES)
    hot = max(int(rows * HOT), n_updates)
    updated = rnd.choice(np.arange(rows - hot, rows), size=n_updates, replace=False)
    inserted = np.arange(rows, rows + n_changes - n_updates)
    ids = np.concatenate([updated, inserted]).astype("int64")
    rnd.shuffle(ids)
    pq.write_table(pa.table({
        "id": ids,
        "p": np.minimum(ids * PARTITIONS // rows, PARTITIONS - 1).astype("int32"),
        "name": pa.array([f"changed-{i}" for i in ids]),
        "amount": rnd.random(len(ids)) * 1000,
        "updated_at": np.full(len(ids), 1, dtype="int64"),
    }), changes)
    return {"write_s": round(took, 3), "updates": n_updates,
            "inserts": n_changes - n_updates}


def files_holding(table: Path, changes: Path) -> tuple[int, int]:
    """(data files of the table, those holding at least one changed key), read from the files."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq
    from deltalake import DeltaTable

    keys = pq.read_table(changes, columns=["id"]).column("id")
    uris = DeltaTable(str(table)).file_uris()
    hit = sum(1 for uri in uris
              if pc.any(pc.is_in(pq.read_table(uri, columns=["id"]).column("id"),
                                 value_set=keys)).as_py())
    return len(uris), hit


def commit_actions(table: Path, version: int) -> dict[str, int]:
    """Counts of the actions in one commit of the table's log."""
    log = table / "_delta_log" / f"{version:020d}.json"
    out: dict[str, int] = {}
    for line in log.read_text().splitlines():
        for kind in json.loads(line):
            out[kind] = out.get(kind, 0) + 1
    return out


def checksum(table: Path) -> dict[str, Any]:
    """Rows, distinct keys and sums of the table: the three cases must agree."""
    import pyarrow.compute as pc
    from deltalake import DeltaTable

    data = DeltaTable(str(table)).to_pyarrow_dataset().to_table(columns=["id", "amount", "p"])
    return {"rows": data.num_rows,
            "keys": pc.count_distinct(data.column("id")).as_py(),
            "id_sum": pc.sum(data.column("id")).as_py(),
            "amount_sum": round(pc.sum(data.column("amount")).as_py(), 3),
            "p_sum": pc.sum(data.column("p")).as_py()}


# -- the cases, each in its own process ------------------------------------------------------
def case_lakemark(table: Path, changes: Path) -> dict[str, Any]:
    from lakemark.sinks import write_target

    spark = _spark()
    df = spark.read.parquet(str(changes))
    t0 = time.time()
    result = write_target(spark, df, str(table), format="delta", merge_keys=["id"],
                          order_by="updated_at")
    took = time.time() - t0
    out = {"seconds": round(took, 3), "version": result.table_version,
           "driver_peak_rss": _driver_peak(), "jvm_peak_rss": _jvm_peak(spark)}
    t0 = time.time()
    df.toArrow()  # what collecting the input costs (again, after the merge: a warm JVM)
    out["input_to_arrow_again_s"] = round(time.time() - t0, 3)
    spark.stop()
    return out


def case_deltalake(table: Path, changes: Path) -> dict[str, Any]:
    import pyarrow.parquet as pq
    from deltalake import DeltaTable

    t0 = time.time()
    source = pq.read_table(changes)
    dt = DeltaTable(str(table))
    (dt.merge(source, "t.id = s.id", source_alias="s", target_alias="t")
     .when_matched_update_all().when_not_matched_insert_all().execute())
    took = time.time() - t0
    return {"seconds": round(took, 3), "version": DeltaTable(str(table)).version(),
            "driver_peak_rss": _driver_peak(), "jvm_peak_rss": None}


def case_rewrite(table: Path, changes: Path) -> dict[str, Any]:
    from deltalake import DeltaTable

    from lakemark.sinks import write_target

    spark = _spark()
    t0 = time.time()
    files = DeltaTable(str(table)).file_uris()
    current = spark.read.option("basePath", str(table)).parquet(*files)
    update = spark.read.parquet(str(changes)).select(*current.columns)
    whole = current.join(update.select("id"), "id", "left_anti").select(*current.columns) \
        .unionByName(update)
    result = write_target(spark, whole, str(table), format="delta", mode="overwrite")
    took = time.time() - t0
    out = {"seconds": round(took, 3), "version": result.table_version,
           "driver_peak_rss": _driver_peak(), "jvm_peak_rss": _jvm_peak(spark)}
    spark.stop()
    return out


CASES = {"lakemark": case_lakemark, "deltalake": case_deltalake, "rewrite": case_rewrite}


def run_case(name: str, base: Path, work: Path, changes: Path) -> dict[str, Any]:
    table = work / f"t-{name}"
    shutil.copytree(base, table)
    proc = subprocess.run([sys.executable, __file__, "--case", name, "--table", str(table),
                           "--changes-file", str(changes)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"case {name} failed:\n{proc.stderr[-3000:]}")
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    actions = commit_actions(table, out["version"])
    out["files_removed"] = actions.get("remove", 0)
    out["files_added"] = actions.get("add", 0)
    out["change_data_files"] = actions.get("cdc", 0)
    out["checksum"] = checksum(table)
    shutil.rmtree(table)
    print(f"{name}: {out['seconds']:.1f} s, {out['files_removed']} files rewritten, driver "
          f"{out['driver_peak_rss'] / 2**20:.0f} MiB", file=sys.stderr)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--changes", type=int, default=100_000)
    parser.add_argument("--quick", action="store_true", help="200,000 rows, 2,000 changes")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "merge.json"))
    parser.add_argument("--case", choices=sorted(CASES), help=argparse.SUPPRESS)
    parser.add_argument("--table", help=argparse.SUPPRESS)
    parser.add_argument("--changes-file", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        print(json.dumps(CASES[args.case](Path(args.table), Path(args.changes_file))))
        return
    if args.quick:
        args.rows, args.changes = 200_000, 2_000
    work = Path(tempfile.mkdtemp(prefix="lm-merge-bench-"))
    try:
        base, changes = work / "base", work / "changes.parquet"
        built = build(base, changes, args.rows, args.changes)
        files, holding = files_holding(base, changes)
        size = sum(f.stat().st_size for f in base.rglob("*.parquet"))
        print(f"table: {files} files, {size / 2**20:.0f} MiB; {holding} hold a changed key",
              file=sys.stderr)
        cases = {name: run_case(name, base, work, changes) for name in CASES}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sums = {json.dumps(c["checksum"], sort_keys=True) for c in cases.values()}
    assert len(sums) == 1, {k: c["checksum"] for k, c in cases.items()}
    lm = cases["lakemark"]["seconds"]
    result = {
        "table": {"rows": args.rows, "partitions": PARTITIONS, "files": files, "bytes": size,
                  "write_s": built["write_s"]},
        "changes": {"rows": args.changes, "updates": built["updates"],
                    "inserts": built["inserts"], "hot_fraction_of_keys": HOT},
        "files_holding_changed_keys": holding,
        "cases": cases,
        "ratio_rewrite_over_lakemark_time": round(cases["rewrite"]["seconds"] / lm, 3),
        "ratio_deltalake_over_lakemark_time": round(cases["deltalake"]["seconds"] / lm, 3),
        "driver_peak_rss_under_2gib": all(c["driver_peak_rss"] < 2 * 2**30
                                          for c in cases.values()),
        "only_files_with_changed_keys_rewritten":
            cases["lakemark"]["files_removed"] == holding,
        "loadavg_at_end": [round(x, 2) for x in os.getloadavg()],
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": "python bench/merge.py " + " ".join(sys.argv[1:]),
        "spark": "local[2]",
    }
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
