"""``format("delta")`` / ``format("iceberg")``: the reader/writer wrapper (``patch``) against
lakemark's Python data sources (``datasource``), side by side in one session.

    python bench/format_serving.py [--rows N] [--repeats R]
                                   [--out bench/results/format_serving.json]

One local Delta table (partitioned by ``p`` into 8 groups) and one unpartitioned Iceberg table
(SQLite catalog in a temporary folder) of ``--rows`` rows, written once. Each read is a full
scan that touches every column (``max`` of each plus ``count``). Each write writes the same
cached DataFrame to a fresh Delta table (``partitionBy("p")``) or appends it to a fresh
Iceberg table. ``LAKEMARK_FORMAT_SERVING`` is switched between the two settings for each
measurement (lakemark reads it on every call), in an order that flips each repeat; the best
of R is reported with every sample, and the ratio datasource / patch of throughput.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SETTINGS = ("patch", "datasource")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"
                                             / "format_serving.json"))
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="lm-serving-bench-"))
    os.environ["LAKEMARK_ICEBERG_CATALOG"] = f"sqlite:///{work / 'catalog.db'}"
    os.environ["LAKEMARK_ICEBERG_WAREHOUSE"] = str(work / "warehouse")
    os.environ["LAKEMARK_FORMAT_SERVING"] = "patch"
    from pyspark.sql import functions as F

    from lakemark.spark import get_spark

    spark = get_spark("local[2]")
    source = spark.range(0, args.rows).selectExpr(
        "id", "id % 97 as k", "cast(id as double) * 1.5 as x",
        "concat('name-', id % 1000) as s", "id % 8 as p").repartition(8).cache()
    source.count()
    delta = str(work / "delta")
    source.write.format("delta").partitionBy("p").save(delta)
    source.write.format("iceberg").mode("append").save("bench.t")
    size = sum(f.stat().st_size for f in Path(delta).rglob("*.parquet"))

    def scan(fmt: str, name: str) -> tuple[float, list[Any]]:
        t0 = time.time()
        df = spark.read.format(fmt).load(name)
        row = df.agg(*[F.max(c) for c in df.columns], F.count("*")).collect()[0]
        return time.time() - t0, list(row)

    def write(fmt: str, rep: int, setting: str) -> float:
        t0 = time.time()
        if fmt == "delta":
            source.write.format("delta").partitionBy("p").save(str(work / f"w-{rep}-{setting}"))
        else:
            source.write.format("iceberg").mode("append").save(f"bench.w_{rep}_{setting}")
        return time.time() - t0

    samples: dict[str, dict[str, list[float]]] = {}
    answers: dict[str, Any] = {}
    for rep in range(args.repeats):
        order = SETTINGS if rep % 2 == 0 else tuple(reversed(SETTINGS))
        for setting in order:
            os.environ["LAKEMARK_FORMAT_SERVING"] = setting
            for fmt, name in (("delta", delta), ("iceberg", "bench.t")):
                took, answer = scan(fmt, name)
                samples.setdefault(f"{fmt}_read", {}).setdefault(setting, []).append(
                    round(took, 3))
                answers[f"{fmt}-{setting}"] = answer
                print(f"{fmt} read {setting}: {took:.2f} s", file=sys.stderr)
                took = write(fmt, rep, setting)
                samples.setdefault(f"{fmt}_write", {}).setdefault(setting, []).append(
                    round(took, 3))
                print(f"{fmt} write {setting}: {took:.2f} s", file=sys.stderr)
    assert len({json.dumps(a, default=str) for a in answers.values()}) == 1, answers
    ratios = {k: round(min(v["patch"]) / min(v["datasource"]), 3) for k, v in samples.items()}
    result = {
        "rows": args.rows, "delta_parquet_bytes": size, "samples_s": samples,
        "ratio_datasource_over_patch_throughput": ratios,
        "loadavg_at_end": [round(x, 2) for x in os.getloadavg()],
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": "python bench/format_serving.py " + " ".join(sys.argv[1:]),
        "spark": "local[2]",
    }
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))
    spark.stop()
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
