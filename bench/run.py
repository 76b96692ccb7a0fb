"""Run lakemark's benchmarks side by side with their peers; results go to JSON files.

    python bench/run.py [SCENARIO ...|all] [--quick] [--out DIR] [--big]

Scenarios (one JSON file each, ``<out>/<name>.json``):

  incremental  1. one incremental run after K earlier runs: lakemark vs Spark's file source
                  (Trigger.AvailableNow + checkpoint), full re-read and the floor
  throughput   2. JSON → Delta with lakemark vs plain spark.read.json → write.parquet
  s3_listing   3. ListObjectsV2 calls to plan N new keys among M on moto_server
  scale        4. planning over 1,000,000 files (pure planner)
  commit       5. job.commit() + Delta commit latency and table-open time over 1,000 runs
  events       6. S3 events stage 1 and put-to-commit latency (bench/s3_events.py)
  lineage      7. lineage analyzer: scripts analysed per second
  iceberg_throughput  16. JSON → lakemark's Iceberg target vs its Delta target, interleaved
                  (LAKEMARK_BENCH_MIB sets the input size, 1024 by default)

``--quick`` shrinks every scenario to a smoke test (CI runs it; no timing claims). ``--big``
adds M=100,000 to scenario 1. ``python bench/report.py`` turns the JSON into bench/README.md
and PNG plots.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any
from collections.abc import Callable

BENCH = Path(__file__).parent
sys.path.insert(0, str(BENCH))

SCENARIOS = ("incremental", "throughput", "s3_listing", "scale", "commit", "events", "lineage",
             "iceberg_throughput")


def _machine() -> dict[str, Any]:
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    return {"python": sys.version.split()[0], "platform": platform.platform(),
            "cpus": os.cpu_count(), "loadavg_at_start": [round(x, 2) for x in load]}


_SPARK: Any = None


def _spark() -> Any:
    global _SPARK
    if _SPARK is None:
        from incremental import spark_session

        _SPARK = spark_session()
    return _SPARK


def run_incremental(tmp: Path, quick: bool, big: bool) -> dict[str, Any]:
    import incremental

    if quick:
        return {"sizes": [incremental.scenario(tmp / "m", files=40, runs=2, new=10, rows=5,
                                                fresh=False, band_ms=incremental.QUICK_BAND_MS,
                                                repeats=1)]}
    sizes = [incremental.scenario(tmp / "m10k", files=10_000, runs=50, new=1_000, rows=20,
                                  fresh=True)]
    if big:
        sizes.append(incremental.scenario(tmp / "m100k", files=100_000, runs=50, new=1_000,
                                          rows=5, fresh=True))
    return {"sizes": sizes}


def run_throughput(tmp: Path, quick: bool, big: bool) -> dict[str, Any]:
    import throughput

    if quick:
        return throughput.scenario(tmp, total_mib=2, file_mib=0.25, repeat=1, spark=_spark(),
                                   warmup=False)
    return throughput.scenario(tmp, total_mib=1024, file_mib=8, repeat=5, spark=_spark())


def run_iceberg_throughput(tmp: Path, quick: bool, big: bool) -> dict[str, Any]:
    import iceberg_throughput

    if quick:
        return iceberg_throughput.scenario(tmp, total_mib=2, file_mib=0.25, repeat=1,
                                           spark=_spark(), warmup=False)
    mib = int(os.environ.get("LAKEMARK_BENCH_MIB", "1024"))
    return iceberg_throughput.scenario(tmp, total_mib=mib, file_mib=8, repeat=5, spark=_spark())


def run_s3_listing(tmp: Path, quick: bool, big: bool) -> dict[str, Any]:
    import s3_listing

    if quick:
        return s3_listing.scenario(existing=1_200, new=150, per_day=500)
    return s3_listing.scenario(existing=10_000, new=1_000)


def run_scale(tmp: Path, quick: bool, big: bool) -> dict[str, Any]:
    import scale

    if quick:
        return scale.scenario(files=20_000, new=100, repeat=1)
    return scale.scenario(files=1_000_000, new=1_000, repeat=5)


def run_commit(tmp: Path, quick: bool, big: bool) -> dict[str, Any]:
    import commit_cost

    if quick:
        return commit_cost.scenario(tmp, runs=12, checkpoints=[1, 10], window=5)
    return commit_cost.scenario(tmp, runs=1_000, checkpoints=[1, 100, 1000], window=20)


def run_events(tmp: Path, quick: bool, big: bool) -> dict[str, Any]:
    import others

    if quick:  # s3_events.py needs ~80 s even for a few events (SQS long polls): not in CI
        return others.committed_events()
    return others.events(tmp / "s3_events.json", events=1000, trials=5)


def run_lineage(tmp: Path, quick: bool, big: bool) -> dict[str, Any]:
    import others

    return others.lineage(repeat=2 if quick else 50)


RUNNERS: dict[str, Callable[[Path, bool, bool], dict[str, Any]]] = {
    "incremental": run_incremental, "throughput": run_throughput,
    "iceberg_throughput": run_iceberg_throughput, "s3_listing": run_s3_listing,
    "scale": run_scale, "commit": run_commit, "events": run_events, "lineage": run_lineage,
}


def _compile_lakemark() -> None:
    """Byte-compile lakemark as an installed package is, so runs in fresh processes do not
    compile its modules again on import (an editable install under PYTHONDONTWRITEBYTECODE
    would, and that cost would land inside the measured runs)."""
    import compileall

    import lakemark

    compileall.compile_dir(str(Path(lakemark.__file__).parent), quiet=1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenarios", nargs="*", default=["all"],
                    help=f"any of {', '.join(SCENARIOS)}, or all")
    ap.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test")
    ap.add_argument("--big", action="store_true", help="also M=100,000 in scenario 1")
    ap.add_argument("--out", default=str(BENCH / "results"), help="directory for the JSON")
    args = ap.parse_args(argv)
    names = list(SCENARIOS) if "all" in args.scenarios else args.scenarios
    unknown = [n for n in names if n not in RUNNERS]
    if unknown:
        ap.error(f"unknown scenario(s): {', '.join(unknown)}")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    _compile_lakemark()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    failed = []
    for name in names:
        tmp = Path(tempfile.mkdtemp(prefix=f"lakemark-bench-{name}-"))
        started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        machine = _machine()
        t0 = time.perf_counter()
        print(f"== {name} ({'quick' if args.quick else 'full'}) ...", flush=True)
        try:
            result = RUNNERS[name](tmp, args.quick, args.big)
            status = "ok"
        except Exception:  # a failed scenario is reported, the others still run
            traceback.print_exc()
            result, status = {"error": traceback.format_exc(limit=3)}, "failed"
            failed.append(name)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        doc = {"scenario": name, **result, "status": status, "quick": args.quick,
               "elapsed_s": round(time.perf_counter() - t0, 2), "measured_at": started,
               "machine": machine}
        (out / f"{name}.json").write_text(json.dumps(doc, indent=2) + "\n")
        print(f"   {name}: {status} in {doc['elapsed_s']} s -> {out / (name + '.json')}",
              flush=True)
    if _SPARK is not None:
        _SPARK.stop()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
