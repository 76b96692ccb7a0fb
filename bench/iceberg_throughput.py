"""Scenario iceberg_throughput (issue 22): lakemark's Iceberg target against its Delta target
on the same JSON input.

Both runs are the same job but for the target: ``Job.read_files(format="json", ctx=…)`` →
``job.write(format="delta")`` into a new Delta table, or ``job.write("db.t_<n>",
format="iceberg")`` into a new table of a SQLite SQL catalog (Spark writes the Parquet files,
pyiceberg commits them). Both get the same schema (no inference pass) and run in one local
session, warmed by one unmeasured run of each. They then run in back-to-back pairs (order
alternating); the claim is the median over pairs of Delta time / Iceberg time, i.e. Iceberg's
throughput as a multiple of Delta's (each pair shares the machine's load of the moment); the
best run of each is reported too.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from gen import SCHEMA_DDL, write_batch  # noqa: E402

TARGET_RATIO = 0.9


def scenario(workroot: Path, *, total_mib: int, file_mib: float, repeat: int,
             spark: Any, warmup: bool = True) -> dict[str, Any]:
    from lakemark import Job

    src = workroot / "src"
    rows_per_file = max(1, int(file_mib * 2**20 / 175))  # ~175 bytes per row
    files = max(1, int(total_mib / file_mib))
    t0 = time.perf_counter()
    size = 0
    for b in range(0, files, 16):
        size += write_batch(src, b // 16, min(16, files - b), rows=rows_per_file, layout="flat")
    gen_s = time.perf_counter() - t0
    catalog = f"sqlite:///{workroot / 'iceberg' / 'catalog.db'}"
    (workroot / "iceberg").mkdir()
    state = f"sqlite:///{workroot / 'state.db'}"

    delta_s: list[float] = []
    iceberg_s: list[float] = []

    def delta(r: int) -> None:
        target = workroot / f"delta-{r}"
        t0 = time.perf_counter()
        with Job(f"bench-ice-tp-delta-{r}", state=state, spark=spark) as job:
            df = job.read_files(str(src), format="json", ctx="src", schema=SCHEMA_DDL)
            result = job.write(df, str(target), format="delta", ctx="delta")
        delta_s.append(time.perf_counter() - t0)
        assert result.rows == files * rows_per_file, result
        shutil.rmtree(target, ignore_errors=True)

    def iceberg(r: int) -> None:
        from pyiceberg.catalog.sql import SqlCatalog

        table = f"db.t_{r + 1}"  # -1 is the warm-up
        t0 = time.perf_counter()
        with Job(f"bench-ice-tp-iceberg-{r}", state=state, spark=spark) as job:
            df = job.read_files(str(src), format="json", ctx="src", schema=SCHEMA_DDL)
            result = job.write(df, table, format="iceberg", ctx="iceberg",
                               iceberg_catalog=catalog)
        iceberg_s.append(time.perf_counter() - t0)
        assert result.rows == files * rows_per_file, result
        # the table holds what was written, as a reader sees it (outside the timed part)
        cat = SqlCatalog("lakemark", uri=catalog,
                         warehouse=(workroot / "iceberg" / "warehouse").as_uri())
        snap = cat.load_table(table).current_snapshot()
        assert snap is not None
        assert int(snap.summary.additional_properties["total-records"]) == result.rows
        cat.drop_table(table)
        shutil.rmtree(workroot / "iceberg" / "warehouse" / "db.db" / f"t_{r + 1}",
                      ignore_errors=True)

    if warmup:
        delta(-1)
        iceberg(-1)
        delta_s.clear()
        iceberg_s.clear()
    loads = []
    for r in range(repeat):  # back-to-back pairs, the order alternating
        loads.append([round(x, 2) for x in os.getloadavg()])
        first, second = (delta, iceberg) if r % 2 == 0 else (iceberg, delta)
        first(r)
        second(r)

    mib = size / 2**20
    best_delta, best_ice = min(delta_s), min(iceberg_s)
    pairs = [d / i for d, i in zip(delta_s, iceberg_s)]
    ratio = statistics.median(pairs)
    return {
        "input_files": files, "input_mib": round(mib, 1), "rows": files * rows_per_file,
        "generate_s": round(gen_s, 2), "repeat": repeat, "warmup_runs": int(warmup),
        "lakemark_json_to_delta_s": [round(x, 3) for x in delta_s],
        "lakemark_json_to_iceberg_s": [round(x, 3) for x in iceberg_s],
        "delta_mib_per_s": round(mib / best_delta, 2),
        "iceberg_mib_per_s": round(mib / best_ice, 2),
        "ratio_best_iceberg_to_best_delta": round(best_delta / best_ice, 3),
        "pair_ratios": [round(x, 3) for x in pairs],
        "ratio_iceberg_to_delta_throughput": round(ratio, 3),
        "ratio_basis": "median over back-to-back pairs of Delta time / Iceberg time",
        "loadavg_before_each_pair": loads,
        "catalog": "SQLite SQL catalog (pyiceberg), local warehouse",
        "target_ratio": TARGET_RATIO,
        "meets_target": ratio >= TARGET_RATIO,
    }
