"""Writing with Spark's own file writers: Delta data files through a staging folder (local
targets), and Parquet/JSON/CSV/ORC folders (local, or S3 when the S3A connector is present).

For Delta, Spark writes the DataFrame as Parquet into ``<table>/_lakemark_staging/<write id>/``
(a hidden folder, ignored by Delta and Spark readers), then each non-empty file is renamed into
the table under its Hive partition folder with a unique lakemark name, and its footer gives the
row count and statistics. Renames stay inside the table folder, so they are cheap and atomic on
a local (or shared POSIX) filesystem. The staging folder is removed whatever happens.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
import shutil
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from ..connect_compat import mark_batch
from ..errors import SinkError
from ._location import Target, data_file_name
from ._model import DataFile
from ._values import (
    delta_partition_value,
    file_stats,
    parse_folder_value,
    unescape_path_name,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["STAGING", "has_s3a", "spark_path", "spark_failure", "spark_errors",
           "write_delta_files", "write_folder"]

#: Hidden folder inside a Delta table where Spark writes before files are moved into place.
STAGING = "_lakemark_staging"
S3A_CLASS = "org.apache.hadoop.fs.s3a.S3AFileSystem"
_PART = re.compile(r"^part-(\d+)")


def spark_errors() -> tuple[type[BaseException], ...]:
    """The exception families a failed Spark action raises in the driver."""
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    return (PySparkException, Py4JError)


def spark_failure(target: Target, exc: BaseException) -> SinkError:
    """A SinkError for a failed Spark write naming the target and the root cause (a full
    disk, a read-only file system, …) dug out of Spark's error chain (:mod:`._spark_cause`)."""
    from ._spark_cause import spark_root_cause

    return SinkError(f"writing {target.root} failed: {spark_root_cause(exc)}",
                     target=target.root)


def has_s3a(spark: SparkSession) -> bool:
    """True if the JVM can load the S3A filesystem (Spark can write ``s3a://`` itself)."""
    try:
        jvm = spark.sparkContext._jvm
        if jvm is None:
            return False
        loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
        jvm.java.lang.Class.forName(S3A_CLASS, False, loader)
        return True
    except Exception:  # a ClassNotFoundException through Py4J, or no JVM (Spark Connect)
        return False


def spark_path(target: Target) -> str:
    """The path to give Spark: ``file://`` for local roots, ``s3a://`` for S3."""
    loc = target.location
    if loc.is_s3:
        key = loc.key.rstrip("/")
        return f"s3a://{loc.bucket}/{key}" if key else f"s3a://{loc.bucket}/"
    return "file://" + loc.root


@contextlib.contextmanager
def _micros_timestamps(spark: SparkSession) -> Iterator[None]:
    """Make Spark write INT64 microsecond timestamps (Delta's type), restoring the setting.

    The setting is session-wide while the write runs (Spark has no per-write option for it);
    lakemark's own sessions use this value anyway.
    """
    key = "spark.sql.parquet.outputTimestampType"
    before = spark.conf.get(key, None)
    if before == "TIMESTAMP_MICROS":
        yield
        return
    spark.conf.set(key, "TIMESTAMP_MICROS")
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, before)


def _partition_values(parts: Sequence[str], columns: Sequence[str], kinds: Mapping[str, str],
                      tz: dt.tzinfo, where: str) -> dict[str, str | None]:
    if len(parts) != len(columns):
        raise SinkError(f"unexpected folder layout in {where}: {'/'.join(parts)!r}")
    values: dict[str, str | None] = {}
    for part, column in zip(parts, columns):
        name, sep, raw = part.partition("=")
        if not sep or unescape_path_name(name) != column:
            raise SinkError(f"unexpected partition folder {part!r} in {where}")
        value = parse_folder_value(unescape_path_name(raw), kinds[column], tz)
        values[column] = delta_partition_value(value, kinds[column])
    return values


def _place(staging: str, root: str, write_id: str, columns: Sequence[str],
           kinds: Mapping[str, str], tz: dt.tzinfo, placed: list[str]) -> list[DataFile]:
    """Move the non-empty files Spark wrote into ``root``; their DataFiles."""
    import pyarrow.parquet as pq

    files: list[DataFile] = []
    for folder, _dirs, names in sorted(os.walk(staging)):
        rel_dir = os.path.relpath(folder, staging)
        parts = [] if rel_dir == "." else rel_dir.split(os.sep)
        for name in sorted(names):
            if name.startswith(("_", ".")):
                continue  # _SUCCESS, .crc checksums
            source = os.path.join(folder, name)
            values = _partition_values(parts, columns, kinds, tz, staging)
            metadata = pq.read_metadata(source)
            if metadata.num_rows == 0:
                continue  # Spark writes a schema-only file for an empty DataFrame
            match = _PART.match(name)
            suffix = name[name.index("."):] if "." in name else ".parquet"
            new_name = data_file_name(int(match.group(1)) if match else 0, write_id,
                                      f"{len(files):04d}{suffix}")
            relative = "/".join([*parts, new_name])
            destination = os.path.join(root, *parts, new_name)
            os.makedirs(os.path.dirname(destination), exist_ok=True)
            os.rename(source, destination)
            placed.append(relative)
            stat = os.stat(destination)
            files.append(DataFile(
                path=relative, size=stat.st_size, rows=metadata.num_rows,
                mtime_ms=stat.st_mtime_ns // 1_000_000, partition_values=values,
                stats=file_stats(metadata, kinds),
            ))
    return files


def write_delta_files(spark: SparkSession, df: DataFrame, target: Target, *, write_id: str,
                      partition_cols: Sequence[str], kinds: Mapping[str, str], tz: dt.tzinfo,
                      options: Mapping[str, str], placed: list[str]) -> list[DataFile]:
    """Spark writes ``df`` as Parquet into staging; the files are moved under the table root.

    ``placed`` receives each relative path as soon as its file is in place, so the caller can
    remove them if a later step fails. Local targets only.
    """
    staging_root = os.path.join(target.root, STAGING)
    staging = os.path.join(staging_root, write_id)
    try:
        with _micros_timestamps(spark):
            try:
                (df.write.mode("overwrite").partitionBy(*partition_cols).options(**options)
                 .option("mapreduce.fileoutputcommitter.marksuccessfuljobs", "true")
                 .parquet("file://" + staging))
            except spark_errors() as exc:
                raise spark_failure(target, exc) from exc
        if not os.path.exists(os.path.join(staging, "_SUCCESS")):
            # Without it, an empty listing could be mistaken for an empty DataFrame.
            raise SinkError(
                f"Spark reported writing {target.root}, but the driver does not see the files "
                "it wrote; local paths need a filesystem shared by the driver and executors"
            )
        try:
            return _place(staging, target.root, write_id, partition_cols, kinds, tz, placed)
        except OSError as exc:
            raise SinkError(f"moving written files into {target.root} failed: {exc}") from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        with contextlib.suppress(OSError):
            os.rmdir(staging_root)  # only when no other write is staging


def write_folder(spark: SparkSession, df: DataFrame, target: Target, *, format: str, mode: str,
                 partition_cols: Sequence[str], options: Mapping[str, str],
                 path: str | None = None) -> int:
    """Spark's own writer for a folder format (into ``path``, default the target); the number
    of rows written.

    The rows are counted by an observation on the written plan, so the DataFrame is computed
    once.
    """
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    observation = Observation(f"lakemark_write_{uuid.uuid4().hex}")
    observed = mark_batch(df).observe(observation, F.count(F.lit(1)).alias("rows"))
    try:
        (observed.write.mode(mode).partitionBy(*partition_cols).format(format)
         .options(**options).save(path or spark_path(target)))
        counted = observation.get
    except spark_errors() as exc:
        raise spark_failure(target, exc) from exc
    return int(counted.get("rows") or 0)
