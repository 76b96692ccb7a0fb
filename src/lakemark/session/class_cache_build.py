"""The class-data sharing archive's builder: a program of its own (``python -m
lakemark.session.class_cache_build PATH``), started in the background by :mod:`.class_cache` when a
Spark start finds no archive.

It starts Spark with the settings every lakemark session has (:func:`lakemark.spark.spark_settings`,
so the archive's class path matches) and runs a small read/write workload; it sits above the
session setup, which only asks :mod:`.class_cache` for the JVM options.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

__all__ = ["build"]


def build(path: Path) -> bool:
    """Run a small read/write workload with ``-XX:ArchiveClassesAtExit`` and move the archive
    to ``path``; True if it is there. Removes the builder's lock whatever happens."""
    lock = path.with_suffix(".lock")
    work = Path(tempfile.mkdtemp(prefix="lakemark-class-cache-"))
    partial = path.with_name(f"{path.stem}.{os.getpid()}.partial")
    try:
        _workload(work, partial)
        if partial.is_file() and partial.stat().st_size > 0:
            os.replace(partial, path)
        return path.is_file()
    finally:
        partial.unlink(missing_ok=True)
        lock.unlink(missing_ok=True)
        shutil.rmtree(work, ignore_errors=True)


def _workload(work: Path, partial: Path) -> None:
    from pyspark.core.context import SparkContext
    from pyspark.sql import SparkSession

    from ..spark import spark_settings

    # Submit arguments left in the environment (by `lakemark run`) would override the options
    # below and the JVM would write no archive.
    os.environ.pop("PYSPARK_SUBMIT_ARGS", None)
    master, settings = spark_settings("local[1]", {})
    settings["spark.driver.extraJavaOptions"] = (
        settings.get("spark.driver.extraJavaOptions", "")
        + f" -XX:ArchiveClassesAtExit={partial} -Xlog:cds=off -Xlog:cds+dynamic=off")
    builder = SparkSession.builder.appName("lakemark-class-cache").master(master)
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    gateway = SparkContext._gateway
    source = work / "in"
    source.mkdir()
    (source / "a.json").write_text('{"id": 1, "name": "a", "at": "2024-01-01T00:00:00Z"}\n')
    (source / "b.csv").write_text("id,name\n1,a\n")
    from ..planning import FileEntry
    from ..sinks import write_target
    from ..sources import read_files

    path = source / "a.json"
    entries = [FileEntry(int(path.stat().st_mtime * 1000), str(path), path.stat().st_size)]
    df = read_files(spark, entries, root=str(source), format="json")
    write_target(spark, df, str(work / "delta"), format="delta")
    write_target(spark, df, str(work / "parquet"), format="parquet")
    spark.read.option("header", "true").csv(str(source / "b.csv")).collect()
    spark.stop()
    proc = getattr(gateway, "proc", None)
    if gateway is not None:
        gateway.shutdown()
    if proc is not None:  # the JVM writes the archive as it exits
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=600)


if __name__ == "__main__":
    sys.exit(0 if build(Path(sys.argv[1])) else 1)
