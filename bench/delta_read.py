"""``format("delta")`` without jars against Spark's own Parquet reader, on the same files.

    python bench/delta_read.py [--rows N] [--write-rows N] [--repeats R]
                               [--out bench/results/delta_read.json]

One local Delta table (written once by lakemark's sink, partitioned by ``p`` into 8 groups;
``--rows`` 80,000,000 gives ~1 GiB of Parquet). Each read is a full scan that touches every
column (``max`` of each plus ``count``), so column pruning cannot favour either side:

* ``spark.read.parquet`` on the table's live files (``basePath`` for the partition column):
  the peer;
* ``format("delta")`` on the default path (Spark's Parquet reader on deltalake's file list);
* ``format("delta")`` through lakemark's Python data source (``lakemark.reader=datasource``).

Reads take turns in an order that flips each repeat; the best of R is reported with every
sample. Writes: ``df.write.format("delta").save`` (under the default serving: lakemark's
Python data source; ``LAKEMARK_FORMAT_SERVING=patch``: the sink) against lakemark's sink
called directly (``write_target``), each to a fresh table, the same way.
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=80_000_000)
    parser.add_argument("--write-rows", type=int, default=10_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "delta_read.json"))
    args = parser.parse_args()

    from deltalake import DeltaTable
    from pyspark.sql import functions as F

    from lakemark.sinks import write_target
    from lakemark.spark import get_spark
    from lakemark.tables import READER_OPTION

    spark = get_spark("local[2]")
    work = Path(tempfile.mkdtemp(prefix="lm-delta-bench-"))
    table = str(work / "t")

    def frame(rows: int) -> Any:
        return spark.range(0, rows).selectExpr(
            "id", "id % 97 as k", "cast(id as double) * 1.5 as x",
            "concat('name-', id % 1000) as s", "id % 8 as p").repartition(8)

    start = time.time()
    write_target(spark, frame(args.rows), table, format="delta", partition_by=["p"])
    files = DeltaTable(table).file_uris()
    size = sum(os.path.getsize(f) for f in files)
    print(f"table: {len(files)} files, {size / 2**30:.2f} GiB, written in "
          f"{time.time() - start:.0f} s", file=sys.stderr)

    readers = {
        "spark_parquet": lambda: spark.read.option("basePath", table).parquet(*files),
        "delta_auto": lambda: spark.read.format("delta").load(table),
        "delta_datasource": lambda: (spark.read.format("delta")
                                     .option(READER_OPTION, "datasource").load(table)),
    }

    def scan(make: Any) -> tuple[float, list[Any]]:
        t0 = time.time()
        df = make()
        row = df.agg(*[F.max(c) for c in df.columns], F.count("*")).collect()[0]
        return time.time() - t0, list(row)

    samples: dict[str, list[float]] = {k: [] for k in readers}
    answers: dict[str, Any] = {}
    for rep in range(args.repeats):
        order = list(readers) if rep % 2 == 0 else list(reversed(readers))
        for name in order:
            took, answer = scan(readers[name])
            samples[name].append(round(took, 3))
            answers[name] = answer
            print(f"read {name}: {took:.2f} s", file=sys.stderr)
    assert len({json.dumps(a, default=str) for a in answers.values()}) == 1, answers
    best = {k: min(v) for k, v in samples.items()}

    writes: dict[str, list[float]] = {"sink": [], "format_delta": []}
    source = frame(args.write_rows).cache()
    source.count()
    for rep in range(args.repeats):
        order = list(writes) if rep % 2 == 0 else list(reversed(writes))
        for name in order:
            out = str(work / f"w-{name}-{rep}")
            t0 = time.time()
            if name == "sink":
                write_target(spark, source, out, format="delta", partition_by=["p"])
            else:
                source.write.format("delta").partitionBy("p").save(out)
            writes[name].append(round(time.time() - t0, 3))
            shutil.rmtree(out)
    source.unpersist()
    result = {
        "table": {"rows": args.rows, "files": len(files), "bytes": size, "partitions": 8},
        "read_s": samples, "read_best_s": best,
        "ratio_delta_auto_over_parquet_throughput":
            round(best["spark_parquet"] / best["delta_auto"], 3),
        "ratio_delta_datasource_over_parquet_throughput":
            round(best["spark_parquet"] / best["delta_datasource"], 3),
        "write_rows": args.write_rows, "write_s": writes,
        "ratio_format_delta_over_sink_write_throughput":
            round(min(writes["sink"]) / min(writes["format_delta"]), 3),
        "loadavg_at_end": [round(x, 2) for x in os.getloadavg()],
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": "python bench/delta_read.py " + " ".join(sys.argv[1:]),
        "spark": "local[2]",
    }
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
