"""Reading a chosen list of a Delta table's files, each with its own constant columns.

The table source (``Job.read_table``) reads not a whole snapshot but the files a range of
commits added (or, for the change data feed, its ``cdc``, added and removed files), each file
with constant values for some columns: its partition values, and for a change feed
``_commit_version``, ``_commit_timestamp`` and ``_change_type`` (a ``cdc`` file carries
``_change_type`` in its rows instead). The files are given as a :class:`Snapshot` whose
``DataFileRef.partition`` holds each file's constants.

As for ``format("delta")`` reads: Spark's Parquet reader on the file list where the JVM can
open the files (one scan per group of files sharing constants, at most :data:`MAX_GROUPS`),
else lakemark's Python data source (pyarrow on the executors; ``s3://`` without S3A), which
gets the file list in an option.
"""

from __future__ import annotations

import base64
import pickle
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import DataSource, DataSourceReader

from ._delta_snapshot import Snapshot

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

__all__ = ["FILES_SOURCE", "MAX_GROUPS", "read_file_list"]

#: Most groups of files sharing constants read as a union of Parquet scans.
MAX_GROUPS = 64
#: The name the file-list data source is registered under.
FILES_SOURCE = "lakemark_delta_files"
_OPTION = "lakemark.snapshot"


def _jvm_path(snapshot: Snapshot, path_uri: str, s3a: bool) -> str:
    if path_uri.startswith("s3://"):
        return "s3a://" + path_uri[len("s3://"):] if s3a else path_uri
    return "file://" + path_uri


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _parquet_union(spark: SparkSession, snapshot: Snapshot, schema: StructType,
                   s3a: bool) -> DataFrame | None:
    """The files read by Spark's Parquet reader, or None when there are too many groups."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    groups: dict[tuple[Any, ...], list[str]] = defaultdict(list)
    for ref in snapshot.files:
        groups[ref.partition].append(_jvm_path(snapshot, snapshot.file_uri(ref), s3a))
    if len(groups) > MAX_GROUPS:
        return None
    always = set(snapshot.partition_columns)
    frames = []
    for values, files in sorted(groups.items(), key=lambda kv: repr(kv[0])):
        given = dict(values)
        constant = always | set(given)
        data = StructType([f for f in schema.fields if f.name not in constant])
        frame = spark.read.schema(data).parquet(*files)
        frames.append(frame.select(*[
            F.lit(given.get(f.name)).cast(f.dataType).alias(f.name) if f.name in constant
            else F.col(_quoted(f.name)) for f in schema.fields]))
    out = frames[0]
    for frame in frames[1:]:
        out = out.unionByName(frame)
    return out


def read_file_list(spark: SparkSession, snapshot: Snapshot, schema: StructType) -> DataFrame:
    """A DataFrame of ``schema`` holding the rows of ``snapshot.files``: each file's columns,
    with ``DataFileRef.partition`` (and every column of ``snapshot.partition_columns``) as
    constants. No files: an empty frame and no Spark job."""
    from ..sinks._spark_writer import has_s3a

    if not snapshot.files:
        return spark.createDataFrame([], schema)
    s3 = snapshot.root.startswith("s3://")
    s3a = s3 and has_s3a(spark)
    if not s3 or s3a:
        frame = _parquet_union(spark, snapshot, schema, s3a)
        if frame is not None:
            return frame
    spark.dataSource.register(DeltaFilesSource)
    encoded = base64.b64encode(pickle.dumps(snapshot)).decode("ascii")
    return spark.read.format(FILES_SOURCE).schema(schema).option(_OPTION, encoded).load()


class DeltaFilesSource(DataSource):  # type: ignore[misc]
    """A given list of a Delta table's files (pickled in an option), read with pyarrow."""

    @classmethod
    def name(cls) -> str:
        return FILES_SOURCE

    def schema(self) -> StructType:
        from ..errors import ConfigError

        raise ConfigError(f"format {FILES_SOURCE!r} is lakemark's own and needs a schema")

    def reader(self, schema: StructType) -> DataSourceReader:
        from ._delta_source import DeltaReader

        snapshot = pickle.loads(base64.b64decode(self.options[_OPTION]))
        return DeltaReader(snapshot, schema)
