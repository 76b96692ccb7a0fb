"""The fast read path: Spark's own Parquet reader on the snapshot's file list.

Where the JVM can open the files itself (local paths, or S3 with the S3A connector), a read of
``format("delta")`` from the Python driver is served by ``spark.read.parquet`` on exactly the
files of the snapshot deltalake resolved, with the table's schema: Spark's vectorized reader,
column pruning and row-group filter push-down, no Python on the executors. Partition columns
are added as constants per group of files that share partition values (Delta's partition
values come from the log, never from folder names), so this path is taken when the snapshot has
at most :data:`MAX_GROUPS` such groups; otherwise, and for S3 without S3A, the Python data
source (:mod:`._delta_source`) serves the read.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from ._delta_snapshot import DataFileRef, Snapshot, load_snapshot

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["MAX_GROUPS", "fast_read"]

#: Most groups of partition values read as a union of Parquet scans.
MAX_GROUPS = 64


def _jvm_path(snapshot: Snapshot, ref: DataFileRef, s3a: bool) -> str:
    uri = snapshot.file_uri(ref)
    if uri.startswith("s3://"):
        return "s3a://" + uri[len("s3://"):] if s3a else uri
    return "file://" + uri


def fast_read(spark: SparkSession, path: str, options: dict[str, str]) -> DataFrame | None:
    """The table at ``path`` read by Spark's Parquet reader, or None when this path does not
    apply (S3 without S3A, too many partition groups): the caller then uses the data source."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    from ..sinks._spark_writer import has_s3a

    s3 = path.lower().startswith(("s3://", "s3a://", "s3n://"))
    s3a = s3 and has_s3a(spark)
    if s3 and not s3a:
        return None
    snapshot = load_snapshot(path, options)
    schema = snapshot.spark_schema()
    parts = set(snapshot.partition_columns)
    data = StructType([f for f in schema.fields if f.name not in parts])
    groups: dict[tuple[Any, ...], list[str]] = defaultdict(list)
    for ref in snapshot.files:
        groups[ref.partition].append(_jvm_path(snapshot, ref, s3a))
    if len(groups) > MAX_GROUPS:
        return None
    frames = []
    for values, files in sorted(groups.items(), key=lambda kv: repr(kv[0])):
        frame = spark.read.schema(data).parquet(*files)
        given = dict(values)
        frame = frame.select(*[
            F.lit(given.get(f.name)).cast(f.dataType).alias(f.name) if f.name in parts
            else F.col("`" + f.name.replace("`", "``") + "`") for f in schema.fields])
        frames.append(frame)
    if not frames:
        return spark.createDataFrame([], schema)
    out = frames[0]
    for frame in frames[1:]:
        out = out.unionByName(frame)
    return out
