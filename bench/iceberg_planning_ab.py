"""Iceberg (issue 22): an incremental run's planning, this checkout's code against an earlier
revision's, interleaved.

    python bench/iceberg_planning_ab.py --table DIR [--before REV] [--pairs 4] [--samples 5]
                                        [--new 10] [--out bench/results/iceberg_planning_ab.json]

``DIR`` is a table built by ``bench/iceberg_incremental.py --cache`` (the folder holding its
``catalog.db``). ``REV``'s ``src`` is extracted with ``git archive`` into a temporary folder;
then ``--pairs`` times, one fresh process runs the earlier code and one this checkout's (the
order flips each pair), each timing ``--samples`` plannings of a run taking the last ``--new``
snapshots: open the table as ``read_iceberg`` does for a run continuing from a bookmark (the
process's parsed metadata dropped first, as a next run meets a new metadata file), list the
snapshots the planner needs, plan the range, find the range's data files, the Spark schema of
the pinned snapshot — lakemark's part of ``read_table`` before Spark builds the DataFrame.
Wall and CPU (this process) per sample; no Spark session.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

#: What each measuring process runs (argv: catalog URI, --new, samples); prints JSON.
CHILD = r"""
import inspect, json, sys, time
from lakemark.catalog import _iceberg_reuse
from lakemark.planning.iceberg import plan_snapshots
from lakemark.sources import iceberg as src
from pyiceberg.manifest import clear_manifest_cache

uri, new, samples = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ancestry = [s.snapshot_id for s in src.open_table("db.events", uri).snapshots()]
after, pinned = ancestry[-new - 1], ancestry[-1]
narrow = len(inspect.signature(src.snapshot_infos).parameters) > 1
out = {"wall_ms": [], "cpu_ms": [], "files": 0}
for _ in range(samples):
    _iceberg_reuse._cache.clear()
    clear_manifest_cache()
    w, c = time.perf_counter(), time.process_time()
    light = getattr(src, "open_light", None)  # as read_iceberg opens it, where the code has it
    table = (light and light("db.events", uri)) or src.open_table("db.events", uri)
    infos = src.snapshot_infos(table, pinned, after) if narrow else src.snapshot_infos(table)
    rng = plan_snapshots("db.events", infos, after, pinned)
    files = src.table_files(table, rng)
    src.spark_schema(table, rng.through)
    out["wall_ms"].append(round((time.perf_counter() - w) * 1000, 1))
    out["cpu_ms"].append(round((time.process_time() - c) * 1000, 1))
    out["files"] = len(files)
print(json.dumps(out))
"""


def _measure(src: Path, uri: str, new: int, samples: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    proc = subprocess.run([sys.executable, "-c", CHILD, uri, str(new), str(samples)],
                          env=env, capture_output=True, text=True, check=True,
                          cwd=tempfile.gettempdir())
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--table", required=True)
    parser.add_argument("--before", default="d85ee46")
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--new", type=int, default=10)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results"
                                             / "iceberg_planning_ab.json"))
    args = parser.parse_args()
    uri = f"sqlite:///{Path(args.table).resolve() / 'catalog.db'}"
    load_start = [round(x, 2) for x in os.getloadavg()]
    with tempfile.TemporaryDirectory(prefix="lm-ab-") as tmp:
        archive = subprocess.run(["git", "archive", args.before, "src"], cwd=ROOT,
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        sources = {"before": Path(tmp) / "src", "after": ROOT / "src"}
        got: dict[str, dict[str, list[float]]] = {k: {"wall_ms": [], "cpu_ms": []}
                                                  for k in sources}
        files: dict[str, int] = {}
        for pair in range(args.pairs):
            for case in (("before", "after") if pair % 2 == 0 else ("after", "before")):
                one = _measure(sources[case], uri, args.new, args.samples)
                got[case]["wall_ms"] += one["wall_ms"]
                got[case]["cpu_ms"] += one["cpu_ms"]
                files[case] = one["files"]
                print(case, one, file=sys.stderr, flush=True)
    med = {case: {k: statistics.median(v) for k, v in m.items()} for case, m in got.items()}
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                          capture_output=True, text=True).stdout.strip()
    doc = {"before": args.before, "after": head, "new_snapshots": args.new,
           "table": str(args.table), "files": files, "samples": got, "median": med,
           "ratio_before_over_after": {k: round(med["before"][k] / med["after"][k], 2)
                                       for k in ("wall_ms", "cpu_ms")},
           "loadavg_at_start": load_start,
           "loadavg_at_end": [round(x, 2) for x in os.getloadavg()],
           "command": "python bench/iceberg_planning_ab.py " + " ".join(sys.argv[1:])}
    Path(args.out).write_text(json.dumps(doc, indent=1) + "\n")
    print(json.dumps({k: doc[k] for k in ("median", "ratio_before_over_after", "files")}))


if __name__ == "__main__":
    main()
