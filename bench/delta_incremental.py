"""Delta tables as incremental sources (``Job.read_table``): an incremental run against a full
re-read, and planning time against the table's history length.

    python bench/delta_incremental.py [--commits 1000] [--rows-per-commit 50000]
                                      [--increment 10] [--history 100,1000] [--repeats 3]
                                      [--plan-samples 11]
                                      [--out bench/results/delta_incremental.json]

One local Delta table written by deltalake, one commit per append of ``--rows-per-commit`` rows
(deltalake writes a checkpoint every 100 commits, as by default). A *run* is a whole ``Job``:
start, ``read_table`` with a ctx, an aggregate touching every column (``count`` and a ``sum``
per column), commit.

* **incremental**: the bookmark stands ``--increment`` commits behind the table's latest
  version (1% of 1,000), so the run takes those commits (each read from its commit file by
  version number) — the bookmark is rewound to that point before each repeat;
* **full**: the ctx reset, so the run reads the snapshot at the latest version (what a job
  without a table source would do every time).

Planning time: the ``read_table`` call alone (plan, record, DataFrame built; no Spark action)
of an incremental run taking ``--increment`` commits, with the table at each history length of
``--history`` (measured as the table grows), and of it the part before Spark builds the
DataFrame (check the bookmark's commit file, pin the latest version by probing commit files,
read the range's commit files, record the manifest; no snapshot is loaded — each sample's
manifest says so, ``table_state: carried``, and the result lists it). Runs: best of
``--repeats`` with every sample; planning: median of ``--plan-samples`` (at least 5).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))


def _batch(start: int, rows: int) -> Any:
    import numpy as np
    import pyarrow as pa

    ids = np.arange(start, start + rows, dtype=np.int64)
    return pa.table({"id": ids, "k": ids % 97, "x": ids.astype(np.float64) * 1.5,
                     "s": pa.array([f"name-{i % 1000}" for i in range(rows)])})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--commits", type=int, default=1000)
    parser.add_argument("--rows-per-commit", type=int, default=50_000)
    parser.add_argument("--increment", type=int, default=10)
    parser.add_argument("--history", default="100,1000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--plan-samples", type=int, default=11)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"
                                             / "delta_incremental.json"))
    args = parser.parse_args()

    from deltalake import write_deltalake
    from pyspark.sql import functions as F

    from lakemark import Job
    from lakemark.spark import get_spark
    from lakemark.state import open_store

    spark = get_spark("local[2]")
    work = Path(tempfile.mkdtemp(prefix="lm-delta-incr-"))
    table = str(work / "t")
    state = f"sqlite:///{work}/state.db"
    history = sorted({int(h) for h in args.history.split(",")} | {args.commits})
    written = 0
    write_s = 0.0

    def grow_to(commits: int) -> None:
        nonlocal written, write_s
        start = time.perf_counter()
        while written < commits:
            write_deltalake(table, _batch(written * args.rows_per_commit,
                                          args.rows_per_commit), mode="append")
            written += 1
        write_s += time.perf_counter() - start

    def mark_behind(job_name: str) -> str:
        """A successful run whose bookmark stands ``increment`` commits behind the end."""
        with Job(job_name, state=state, spark=spark) as job:
            job.read_table(table, ctx="src", options={"startingVersion": "latest"})
            return job.run_id

    def rewind(job_name: str, run_id: str) -> None:
        store = open_store(state)
        store.rewind(job_name, run_id)
        store.close()

    from lakemark.tables import _delta_files

    building: list[float] = []
    build_frame = _delta_files.read_file_list

    def timed_build(*a: Any, **kw: Any) -> Any:  # the DataFrame's construction, by Spark
        start = time.perf_counter()
        try:
            return build_frame(*a, **kw)
        finally:
            building.append(time.perf_counter() - start)

    _delta_files.read_file_list = timed_build  # type: ignore[assignment]

    def plan_once(job_name: str) -> tuple[float, float, str]:
        """(the read_table call, of which the part lakemark plans: before Spark builds
        the DataFrame, and how the table state was had: carried or loaded)."""
        with Job(job_name, state=state, spark=spark) as job:
            start = time.perf_counter()
            job.read_table(table, ctx="src")
            took = time.perf_counter() - start
            run_id = job.run_id
            job.end_without_commit()
        store = open_store(state)
        how = next(str(i.plan.get("table_state")) for i in store.run_inputs(run_id)
                   if i.ctx == "src")
        store.close()
        return took, took - building[-1], how

    def aggregate(df: Any) -> list[Any]:
        return df.agg(F.count("*"), F.sum("id"), F.sum("k"), F.sum("x"),
                      F.sum(F.length("s"))).collect()

    planning: dict[str, Any] = {}
    marks: dict[int, str] = {}
    for n in history:
        grow_to(n - args.increment)
        name = f"plan-{n}"
        marks[n] = mark_behind(name)
        grow_to(n)
        samples, plans, how = [], [], set()
        for _ in range(max(args.plan_samples, 5)):
            total, plan, state_how = plan_once(name)
            samples.append(round(total, 4))
            plans.append(round(plan, 4))
            how.add(state_how)
        planning[str(n)] = {"samples_s": samples, "median_s": statistics.median(samples),
                            "best_s": min(samples), "plan_samples_s": plans,
                            "plan_median_s": statistics.median(plans),
                            "table_state": sorted(how)}
        print(f"history {n}: planning {planning[str(n)]}", flush=True)

    # The run comparison on the table at --commits commits; its mark was set above.
    name = f"plan-{args.commits}"
    runs: dict[str, list[float]] = {"incremental": [], "full": []}
    rows: dict[str, int] = {}
    for repeat in range(args.repeats):
        for mode in (("incremental", "full") if repeat % 2 == 0 else ("full", "incremental")):
            if mode == "incremental":
                rewind(name, marks[args.commits])
            else:
                store = open_store(state)
                store.reset(name, "src")
                store.close()
            start = time.perf_counter()
            with Job(name, state=state, spark=spark) as job:
                out = aggregate(job.read_table(table, ctx="src"))
            runs[mode].append(round(time.perf_counter() - start, 3))
            rows[mode] = int(out[0][0])
            print(f"{mode}: {runs[mode][-1]} s, {rows[mode]} rows", flush=True)
    best = {mode: min(v) for mode, v in runs.items()}
    size = sum(f.stat().st_size for f in Path(table).glob("*.parquet"))
    doc = {
        "table": {"commits": args.commits, "rows_per_commit": args.rows_per_commit,
                  "rows": args.commits * args.rows_per_commit, "bytes": size,
                  "checkpoints": sorted(p.name for p in (Path(table) / "_delta_log")
                                        .glob("*.checkpoint.parquet"))[-3:],
                  "write_s": round(write_s, 1)},
        "increment_commits": args.increment,
        "rows_read": rows,
        "run_s": runs,
        "run_best_s": best,
        "ratio_full_over_incremental": round(best["full"] / best["incremental"], 1),
        "planning": planning,
        "planning_ratio_last_over_first": round(
            planning[str(history[-1])]["median_s"] / planning[str(history[0])]["median_s"], 2),
        "plan_ratio_last_over_first": round(
            planning[str(history[-1])]["plan_median_s"]
            / planning[str(history[0])]["plan_median_s"], 2),
        "spark": f"Spark {spark.version}, local[2]",
        "loadavg_at_end": [round(x, 1) for x in os.getloadavg()],
        "command": "python bench/delta_incremental.py " + " ".join(sys.argv[1:]),
    }
    Path(args.out).write_text(json.dumps(doc, indent=1) + "\n")
    print(json.dumps({k: doc[k] for k in ("run_best_s", "ratio_full_over_incremental",
                                          "planning_ratio_last_over_first",
                                          "plan_ratio_last_over_first")}))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
