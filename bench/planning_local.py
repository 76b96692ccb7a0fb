"""Benchmark: plan one incremental run over 100,000 local files of which 1,000 are new.

Compares lakemark's listing + planning time against the raw listing of the same folder
(``os.scandir`` walk with one ``stat`` per file: the least any mtime-based planner must do), and
reports the driver's peak memory. Target (issue 8, scenario 1):
planning at most 1.3x the raw listing.

    python bench/planning_local.py [--files 100000] [--new 1000] [--repeat 5] [--out FILE]

Results are written as JSON (default ``bench/results/planning_local.json``).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import resource
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from lakemark.planning import FileOptions, plan_files
from lakemark.storage import list_files


def make_tree(root: Path, n: int, new: int) -> None:
    """n tiny files in 100 date folders; the last ``new`` get an mtime one hour later."""
    base = time.time() - 86_400
    for i in range(n):
        folder = root / f"day={i % 100:03d}"
        if i < 100:
            folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"part-{i:07d}.json"
        path.write_bytes(b'{"i": 1}\n')
        t = base + (3600 if i >= n - new else 0) + (i % 1000) / 1000.0
        os.utime(path, (t, t))


def raw_listing(root: Path) -> int:
    """os.scandir walk with a stat per file: the floor any mtime-based planner pays."""
    count = 0
    stack = [str(root)]
    while stack:
        with os.scandir(stack.pop()) as it:
            for entry in it:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                else:
                    st = entry.stat(follow_symlinks=False)
                    count += 1 if st.st_mtime_ns >= 0 else 0
    return count


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--new", type=int, default=1_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "planning_local.json"))
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="lakemark-bench-") as tmp:
        root = Path(tmp) / "src"
        make_tree(root, args.files, args.new)
        # The state after a run that took every old file: its high is before the new files.
        first = list_files(str(root))
        old_cut = min(e.mtime for e in first.files if e.path.endswith(tuple(
            f"part-{i:07d}.json" for i in range(args.files - args.new, args.files - args.new + 1)
        )))
        state = plan_files(None, first.files, now_ms=old_cut - 1).next_state

        raw_times, plan_times, list_times = [], [], []
        planned = 0
        for _ in range(args.repeat):
            gc.collect()
            t0 = time.perf_counter()
            n = raw_listing(root)
            raw_times.append(time.perf_counter() - t0)
            assert n == args.files
            gc.collect()
            t0 = time.perf_counter()
            listing = list_files(str(root))
            t1 = time.perf_counter()
            plan = plan_files(state, listing.entries, listing.started_ms, FileOptions())
            t2 = time.perf_counter()
            list_times.append(t1 - t0)
            plan_times.append(t2 - t0)
            planned = len(plan.files)
        assert planned == args.new, f"planned {planned}, expected {args.new}"

        tracemalloc.start()
        listing = list_files(str(root))
        plan_files(state, listing.entries, listing.started_ms, FileOptions())
        _, peak_py = tracemalloc.get_traced_memory()
        tracemalloc.stop()

    raw = statistics.median(raw_times)
    total = statistics.median(plan_times)
    result = {
        "benchmark": "planning_local",
        "files": args.files,
        "new_files": args.new,
        "repeat": args.repeat,
        "raw_listing_s": round(raw, 4),
        "lakemark_listing_s": round(statistics.median(list_times), 4),
        "lakemark_list_and_plan_s": round(total, 4),
        "ratio_to_raw_listing": round(total / raw, 3),
        "target_ratio": 1.3,
        "meets_target": total / raw <= 1.3,
        "planning_python_peak_mib": round(peak_py / 2**20, 1),
        "driver_max_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "machine": {"python": sys.version.split()[0], "platform": platform.platform(),
                    "cpus": os.cpu_count()},
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
