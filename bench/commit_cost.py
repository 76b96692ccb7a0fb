"""Scenario 5: commit cost over time (local disk).

Each run: a ``Job`` starts (lease), plans one new tiny file of its source (``job.plan_files``),
then the target Delta table gets one append committed with the run's idempotency token
(``deltalake`` ``CommitProperties(app_transactions=…)``, the commit protocol lakemark's Delta
sink uses, without Spark writing the Parquet file), then ``job.commit()``. Measured per run:
``job.commit()``, the Delta commit, and the time to open the Delta table
(``DeltaTable(path)`` + ``version()``). Reported as medians over a window of runs ending at
run 1, 100 and 1,000 (no Spark in the loop: it would add ~1 s per run and measure Spark).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any


def scenario(workroot: Path, *, runs: int, checkpoints: list[int],
             window: int = 10) -> dict[str, Any]:
    import pyarrow as pa
    from deltalake import CommitProperties, DeltaTable, Transaction, write_deltalake

    from lakemark import Job

    src = workroot / "src"
    src.mkdir(parents=True, exist_ok=True)
    table = str(workroot / "delta")
    state = f"sqlite:///{workroot / 'state.db'}"
    commit_s: list[float] = []
    delta_s: list[float] = []
    open_s: list[float] = []
    for r in range(1, runs + 1):
        (src / f"f-{r:06d}.json").write_bytes(b'{"id": %d}\n' % r)
        job = Job("bench-commit", state=state)
        job.start()
        plan = job.plan_files(str(src), ctx="src", max_band_ms=0)
        assert len(plan.files) >= 1
        data = pa.table({"id": pa.array([r], pa.int64()), "run": pa.array([r], pa.int64())})
        t0 = time.perf_counter()
        write_deltalake(table, data, mode="append", commit_properties=CommitProperties(
            app_transactions=[Transaction(app_id="bench-commit/target", version=r)]))
        delta_s.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        job.commit()
        commit_s.append(time.perf_counter() - t0)
        job._close()
        if r in checkpoints or r == runs:
            samples = []
            for _ in range(5):
                t0 = time.perf_counter()
                DeltaTable(table).version()
                samples.append(time.perf_counter() - t0)
            open_s.append(statistics.median(samples))
    at: dict[str, Any] = {}
    marks = [c for c in checkpoints if c <= runs]
    for i, c in enumerate(marks):
        lo = max(0, c - window)
        at[str(c)] = {
            "job_commit_median_ms": round(statistics.median(commit_s[lo:c]) * 1000, 2),
            "delta_commit_median_ms": round(statistics.median(delta_s[lo:c]) * 1000, 2),
            "job_plus_delta_commit_median_ms": round(statistics.median(
                [a + b for a, b in zip(commit_s[lo:c], delta_s[lo:c])]) * 1000, 2),
            "delta_table_open_ms": round(open_s[i] * 1000, 2),
        }
    last = at[str(marks[-1])]
    return {
        "runs": runs, "checkpoints": marks, "window_runs": window,
        "at_run": at,
        "target_commit_ms": 100, "target_open_ms": 1000,
        "meets_target": last["job_plus_delta_commit_median_ms"] <= 100
        and last["delta_table_open_ms"] <= 1000,
        "per_run_job_commit_ms": [round(x * 1000, 2) for x in commit_s],
        "per_run_delta_commit_ms": [round(x * 1000, 2) for x in delta_s],
    }
