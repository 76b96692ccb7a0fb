"""Scenario 4: planning over 1,000,000 files (pure planner, synthetic listing).

A listing of ``files`` entries (S3-style date-partitioned URIs, sizes, millisecond mtimes
spread over K earlier runs) is built in memory; the state is the one left by planning all but
the last ``new`` entries. Measured in a fresh process (so its peak RSS is the planner's own):
``plan_files`` time for N = new and N = 0, the time to build the entries (what a listing
allocates anyway), Python's traced peak during planning and the process's peak RSS.

Real files are not created: a million local files take minutes to write and several GB of
inodes; ``bench/planning_local.py`` measures listing + planning on 100,000 real files.
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any


def _worker(files: int, new: int, repeat: int) -> dict[str, Any]:
    from lakemark.planning import FileEntry, FileOptions, plan_files

    base = 1_760_000_000_000
    runs = 50
    per_run = max(1, (files - new) // runs)
    t0 = time.perf_counter()
    entries = []
    for i in range(files):
        day = i // 20_000
        mtime = base + (i // per_run) * 3_600_000 + (i % 997) if i < files - new else \
            base + (runs + 1) * 3_600_000 + (i % 997)
        entries.append(FileEntry(mtime, f"s3://bucket/events/date=2026-{1 + day // 28:02d}-"
                                         f"{1 + day % 28:02d}/part-{i:08d}.json", 4096 + i % 512))
    build_s = time.perf_counter() - t0
    old_now = base + runs * 3_600_000
    state = plan_files(None, entries[: files - new], old_now).next_state
    now = base + (runs + 2) * 3_600_000
    times_new, times_zero = [], []
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        plan = plan_files(state, entries, now, FileOptions())
        times_new.append(time.perf_counter() - t0)
        assert len(plan.files) == new, len(plan.files)
        t0 = time.perf_counter()
        plan0 = plan_files(plan.next_state, entries, now + 1, FileOptions())
        times_zero.append(time.perf_counter() - t0)
        assert len(plan0.files) == 0
    gc.collect()
    tracemalloc.start()
    plan_files(state, entries, now, FileOptions())
    _, traced = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    hwm = 0
    for line in Path(f"/proc/{os.getpid()}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            hwm = int(line.split()[1])
    plan_s = statistics.median(times_new)
    return {
        "files": files, "new_files": new, "repeat": repeat,
        "build_entries_s": round(build_s, 3),
        "plan_new_s": round(plan_s, 4),
        "plan_zero_new_s": round(statistics.median(times_zero), 4),
        "planning_traced_peak_mib": round(traced / 2**20, 1),
        "process_peak_rss_mib": round(hwm / 1024, 1),
        "target_s": 10, "target_mib": 1024,
        "meets_target": plan_s <= 10 and hwm / 1024 <= 1024,
        "note": ("synthetic FileEntry listing in memory; the process peak includes the 1M "
                 "entries themselves (what any listing holds); no Spark in the process"),
    }


def scenario(*, files: int, new: int, repeat: int) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, __file__, str(files), str(new), str(repeat)],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"scale worker failed:\n{proc.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


if __name__ == "__main__":
    print(json.dumps(_worker(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))))
