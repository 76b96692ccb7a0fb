"""Cost of a tracked-schema JSON read (issue 23) against the reads it replaces.

On the same local JSON Lines files (``--mib`` MiB, default 256, rows like
``{"id", "code", "name", "amount", "ok", "tags"}`` with 0.1 % of ``code`` values not numbers),
each timed on a warm session, materialised with the ``noop`` sink, median of ``--repeat``:

* ``schema_given``: ``spark.read.schema(S).json(files)`` — the plain read with a known schema
  (no inference, values that do not fit become null silently): the peer for the overhead;
* ``inferred``: ``spark.read.json(files)`` — today's untracked read (infers, then reads);
* ``tracked``: lakemark's tracked read of a later run (``sources/_json_tracked.py``): the scan
  of the text for untracked keys (``scan``) + Spark's JSON reader with the tracked schema, a
  corrupt-record column, the ``_rescued_data`` column and the observed counts (``frame``);
* ``tracked_no_rescue``: the same tracked read with ``--no-rescued-data`` (no rescued-data
  column; the corrupt-record column and the counts stay): the peer for the column's overhead.

Wall time is noisy on a shared machine, so the JVM's CPU time (user + system, from
``/proc/<pid>/stat``) is reported per read as well.

With ``--csv-data DIR``, the same four reads of CSV files (a header and the JSON rows' flat
columns, generated into DIR when it is empty) are timed in the same rounds: ``csv_inferred``
is ``spark.read.csv(header, inferSchema)``, ``csv_tracked`` a later run of a tracked CSV
source (``sources/_csv_tracked.py``: the header, then the frame with its observed counts).

The warm-up reads one file. ``--data DIR`` reuses the files of an earlier run (generated into
DIR when it is empty), so a large size is generated once.

Writes ``bench/results/schema_rescue.json``. Usage:
``PYTHONPATH=src python bench/schema_rescue.py [--mib N] [--repeat R] [--data DIR]
[--csv-data DIR]``
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any


def generate(folder: Path, mib: int) -> list[Path]:
    rnd = random.Random(23)
    files = []
    per_file = 32 * 1024 * 1024
    total = 0
    index = 0
    while total < mib * 1024 * 1024:
        path = folder / f"part-{index:04d}.json"
        with path.open("w") as out:
            size = 0
            while size < per_file and total + size < mib * 1024 * 1024:
                row = {"id": index * 10_000_000 + size, "code": rnd.randint(0, 1000),
                       "name": f"name-{rnd.randint(0, 10**6)}", "amount": rnd.random() * 100,
                       "ok": rnd.random() < 0.5, "tags": ["a", "b"][: rnd.randint(0, 2)]}
                if rnd.random() < 0.001:
                    row["code"] = f"X{row['code']}"
                line = json.dumps(row) + "\n"
                out.write(line)
                size += len(line)
        total += size
        files.append(path)
        index += 1
    return files


def generate_csv(folder: Path, mib: int) -> list[Path]:
    """CSV files with a header and the JSON rows' flat columns (``tags`` left out), 0.1 % of
    ``code`` values not numbers."""
    rnd = random.Random(23)
    files = []
    per_file = 32 * 1024 * 1024
    total = 0
    index = 0
    header = "id,code,name,amount,ok\n"
    while total < mib * 1024 * 1024:
        path = folder / f"part-{index:04d}.csv"
        with path.open("w") as out:
            out.write(header)
            size = len(header)
            lines = []
            while size < per_file and total + size < mib * 1024 * 1024:
                code: object = rnd.randint(0, 1000)
                if rnd.random() < 0.001:
                    code = f"X{code}"
                line = (f"{index * 10_000_000 + size},{code},name-{rnd.randint(0, 10**6)},"
                        f"{rnd.random() * 100},{'true' if rnd.random() < 0.5 else 'false'}\n")
                lines.append(line)
                size += len(line)
            out.write("".join(lines))
        total += size
        files.append(path)
        index += 1
    return files


def timed(action) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def csv_reads(spark: Any, root: Path, files: list[Path]) -> list[tuple[str, Any]]:
    """The CSV reads to time, on ``files`` (with a header): a plain read with a given schema,
    today's untracked read (``inferSchema``: a pass to infer, then the read), the tracked read
    of a later run (the header, then the frame with ``_rescued_data`` and its observed counts)
    and the same without the rescued-data column."""
    from pyspark.sql import Observation
    from pyspark.sql.types import StructType

    from lakemark.planning.files import FileEntry
    from lakemark.sources._csv_tracked import header_of, typed_frame
    from lakemark.sources._options import make_request

    paths = [str(p) for p in files]
    entries = [FileEntry(int(p.stat().st_mtime * 1000), str(p), p.stat().st_size)
               for p in files]
    schema = StructType.fromDDL("id bigint, code bigint, name string, amount double, "
                                "ok boolean")
    options = {"header": "true"}
    request = make_request("csv", "PERMISSIVE", options, None, str(root))

    def noop(df: Any) -> None:
        df.write.format("noop").mode("overwrite").save()

    def schema_given() -> None:
        noop(spark.read.options(**options).schema(schema).csv(paths))

    def inferred() -> None:
        noop(spark.read.options(**options, inferSchema="true").csv(paths))

    def tracked(rescued: str | None = "_rescued_data") -> None:
        header, _ = header_of(spark, request, entries, str(root))
        observation = Observation(f"bench{time.perf_counter_ns()}")
        frame = typed_frame(spark, request, entries, str(root), schema, header,
                            rescued_column=rescued, rescue_new=True, file_key="_file_path",
                            corrupt_key="_corrupt_record", observation=observation)
        noop(frame)
        assert observation.get["v:code"] > 0

    return [("csv_schema_given", schema_given), ("csv_inferred", inferred),
            ("csv_tracked", tracked), ("csv_tracked_no_rescue", lambda: tracked(None))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--csv-data", type=Path, default=None,
                        help="also time the CSV reads, on CSV files in this folder "
                             "(generated there, --mib MiB, when it has none)")
    args = parser.parse_args()
    from lakemark.planning.files import FileEntry
    from lakemark.sources._options import make_request
    from pyspark.sql import Observation

    from lakemark.sources._json_tracked import scan_keys, typed_frame
    from lakemark.spark import get_spark

    spark = get_spark("local[2]", {"spark.sql.shuffle.partitions": "4"})
    with tempfile.TemporaryDirectory(prefix="lakemark-bench-rescue-") as tmp:
        root = args.data or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        files = sorted(root.glob("part-*.json")) or generate(root, args.mib)
        paths = [str(p) for p in files]
        entries = [FileEntry(int(p.stat().st_mtime * 1000), str(p), p.stat().st_size)
                   for p in files]
        from pyspark.sql.types import StructType

        # code is a number: the 0.1 % "X…" values do not fit and are rescued.
        schema = StructType.fromDDL("amount double, code bigint, id bigint, name string, "
                                    "ok boolean, tags array<string>")
        request = make_request("json", "PERMISSIVE", {}, None, str(root))

        def schema_given(paths: list[str] = paths) -> None:
            spark.read.schema(schema).json(paths).write.format("noop").mode("overwrite").save()

        def inferred() -> None:
            spark.read.json(paths).write.format("noop").mode("overwrite").save()

        parts: dict[str, list[float]] = {"scan": [], "frame": []}

        def tracked(rescued: str | None = "_rescued_data",
                    entries: list[FileEntry] = entries) -> None:
            start = time.perf_counter()
            scan_keys(spark, request, entries, str(root), schema)
            if rescued:
                parts["scan"].append(time.perf_counter() - start)
            start = time.perf_counter()
            observation = Observation(f"bench{time.perf_counter_ns()}")
            frame, _ = typed_frame(spark, request, entries, str(root), schema, [],
                                   rescued_column=rescued, file_key="_file_path",
                                   corrupt_key="_corrupt_record", observation=observation)
            frame.write.format("noop").mode("overwrite").save()
            assert observation.get["v:code"] > 0
            if rescued:
                parts["frame"].append(time.perf_counter() - start)

        def tracked_no_rescue() -> None:
            tracked(None)

        reads = [("schema_given", schema_given), ("inferred", inferred), ("tracked", tracked),
                 ("tracked_no_rescue", tracked_no_rescue)]
        csv_files: list[Path] = []
        if args.csv_data is not None:
            args.csv_data.mkdir(parents=True, exist_ok=True)
            csv_files = (sorted(args.csv_data.glob("part-*.csv"))
                         or generate_csv(args.csv_data, args.mib))
            reads += csv_reads(spark, args.csv_data, csv_files)

        pid = int(spark._jvm.java.lang.ProcessHandle.current().pid())  # noqa: SLF001

        def cpu() -> float:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

        schema_given(paths[:1])  # warm-up, on one file
        tracked(entries=entries[:1])
        tracked(None, entries[:1])
        if csv_files:
            warm = csv_reads(spark, args.csv_data, csv_files[:1])
            for _, action in warm:
                action()
        parts["scan"].clear()
        parts["frame"].clear()
        load = list(os.getloadavg())
        times: dict[str, list[float]] = {name: [] for name, _ in reads}
        cpus: dict[str, list[float]] = {k: [] for k in times}
        for _ in range(args.repeat):
            for name, action in reads:
                before = cpu()
                times[name].append(timed(action))
                cpus[name].append(cpu() - before)
        medians = {k: statistics.median(v) for k, v in times.items()}
        cpu_medians = {k: statistics.median(v) for k, v in cpus.items()}
        bytes_read = sum(p.stat().st_size for p in files)
    csv_result = {}
    if csv_files:
        csv_result = {"csv": {
            "mib": round(sum(p.stat().st_size for p in csv_files) / 2**20, 1),
            "files": len(csv_files),
            "tracked_over_inferred": medians["csv_tracked"] / medians["csv_inferred"],
            "tracked_cpu_over_inferred": (cpu_medians["csv_tracked"]
                                          / cpu_medians["csv_inferred"]),
            "rescue_overhead": medians["csv_tracked"] / medians["csv_tracked_no_rescue"],
            "rescue_cpu_overhead": (cpu_medians["csv_tracked"]
                                    / cpu_medians["csv_tracked_no_rescue"]),
            "tracked_over_schema_given": medians["csv_tracked"] / medians["csv_schema_given"],
            "tracked_cpu_over_schema_given": (cpu_medians["csv_tracked"]
                                              / cpu_medians["csv_schema_given"]),
        }}
    result = {
        "scenario": "schema_rescue", "mib": round(bytes_read / 2**20, 1), "files": len(files),
        "repeat": args.repeat, "load": load, "load_at_end": list(os.getloadavg()),
        "seconds": times,
        "median_seconds": medians, "cpu_seconds": cpus, "median_cpu_seconds": cpu_medians,
        "tracked_parts_seconds": parts,
        "tracked_cpu_over_schema_given": cpu_medians["tracked"] / cpu_medians["schema_given"],
        "tracked_over_schema_given": medians["tracked"] / medians["schema_given"],
        "tracked_over_inferred": medians["tracked"] / medians["inferred"],
        "tracked_cpu_over_inferred": cpu_medians["tracked"] / cpu_medians["inferred"],
        "rescue_overhead": medians["tracked"] / medians["tracked_no_rescue"],
        "rescue_cpu_overhead": cpu_medians["tracked"] / cpu_medians["tracked_no_rescue"],
        **csv_result,
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    out = Path(__file__).parent / "results" / "schema_rescue.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    spark.stop()


if __name__ == "__main__":
    main()
