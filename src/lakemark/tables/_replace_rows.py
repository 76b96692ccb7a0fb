"""Delta's ``replaceWhere`` on data columns: the rows a predicate selects are replaced.

The write reads the latest snapshot's files with Spark's Parquet reader (each row tagged with
its file; on S3 without the S3A connector, with lakemark's file-list reader, the file given as
a constant column), finds the files holding at least one row the predicate selects, and writes the
DataFrame together with the rows of those files the predicate does *not* select (false or
null: Delta keeps them). One commit then adds the new files and removes the touched ones, so
a reader sees the table before or after, never between. Files without a selected row are not
touched. Predicates over partition columns only take the cheaper path of
:mod:`._replace_where` (whole partitions, no reading).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from ..errors import SinkError
from ._delta_fast import _jvm_path
from ._delta_snapshot import DataFileRef, Snapshot, load_snapshot

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["replace_rows"]

_FILE = "__lakemark_file"


def _same(path: str) -> str:
    """A JVM file path in one spelling (Spark's ``_metadata.file_path`` is a URI)."""
    text = unquote(path)
    if text.startswith("file:"):
        return "/" + text[len("file:"):].lstrip("/")
    return text


def _files_frame(df: DataFrame, snapshot: Snapshot, refs: list[DataFileRef],
                 s3a: bool) -> tuple[DataFrame | None, dict[str, DataFileRef]]:
    """The rows of ``refs`` with the table's schema plus their file (``_FILE``), and the refs
    by the JVM path Spark reports."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    spark = df.sparkSession
    schema = snapshot.spark_schema()
    parts = set(snapshot.partition_columns)
    data = StructType([f for f in schema.fields if f.name not in parts])
    groups: dict[tuple[Any, ...], list[DataFileRef]] = defaultdict(list)
    for ref in refs:
        groups[ref.partition].append(ref)
    by_path: dict[str, DataFileRef] = {}
    frames = []
    for values, members in sorted(groups.items(), key=lambda kv: repr(kv[0])):
        paths = [_jvm_path(snapshot, ref, s3a) for ref in members]
        by_path.update({_same(p): ref for p, ref in zip(paths, members, strict=True)})
        given = dict(values)
        frame = spark.read.schema(data).parquet(*paths).select(
            *[F.lit(given.get(f.name)).cast(f.dataType).alias(f.name) if f.name in parts
              else F.col("`" + f.name.replace("`", "``") + "`") for f in schema.fields],
            F.col("_metadata.file_path").alias(_FILE))
        frames.append(frame)
    if not frames:
        return None, by_path
    out = frames[0]
    for frame in frames[1:]:
        out = out.unionByName(frame)
    return out, by_path


def _arrow_files_frame(df: DataFrame, snapshot: Snapshot, refs: list[DataFileRef]
                       ) -> tuple[DataFrame | None, dict[str, DataFileRef]]:
    """As :func:`_files_frame`, for S3 without S3A: the files read by lakemark's file-list
    data source (pyarrow on the executors), each file's log path a constant ``_FILE``."""
    from pyspark.sql.types import StringType, StructField, StructType

    from ._delta_files import read_file_list

    if not refs:
        return None, {}
    tagged = tuple(replace(ref, partition=ref.partition + ((_FILE, ref.path),)) for ref in refs)
    listed = replace(snapshot, files=tagged,
                     partition_columns=snapshot.partition_columns + (_FILE,))
    schema = StructType(snapshot.spark_schema().fields + [StructField(_FILE, StringType())])
    return read_file_list(df.sparkSession, listed, schema), {_same(r.path): r for r in refs}


def replace_rows(df: DataFrame, expr: str, path: str,
                 root: str) -> tuple[DataFrame, list[tuple[str, int]]]:
    """``(what to write, (path, size) of the files to remove)`` for ``replaceWhere`` ``expr``
    on the Delta table at ``path`` (its latest version; the sink checks at commit time that
    the removed files are still live)."""
    from pyspark.sql import functions as F

    from ..sinks._spark_writer import has_s3a

    spark = df.sparkSession
    s3 = path.lower().startswith(("s3://", "s3a://", "s3n://"))
    s3a = s3 and has_s3a(spark)
    snapshot = load_snapshot(path, {})

    def files_frame(refs: list[DataFileRef]) -> tuple[DataFrame | None,
                                                     dict[str, DataFileRef]]:
        if s3 and not s3a:
            return _arrow_files_frame(df, snapshot, refs)
        return _files_frame(df, snapshot, refs, s3a)

    everything, by_path = files_frame(list(snapshot.files))
    if everything is None:
        return df, []
    selected = F.expr(f"coalesce(({expr}), false)")
    touched_paths = [r[0] for r in everything.where(selected).select(_FILE).distinct().collect()]
    touched = []
    for jvm_path in touched_paths:
        ref = by_path.get(_same(jvm_path))
        if ref is None:
            raise SinkError(f"writing Delta table {root}: replaceWhere read a file that is not "
                            f"in the table's snapshot ({jvm_path}); nothing was written")
        touched.append(ref)
    if not touched:
        return df, []
    kept, _ = files_frame(touched)
    assert kept is not None
    kept = kept.where(~selected).drop(_FILE)
    table_columns = [f.name for f in snapshot.spark_schema().fields]
    if sorted(df.columns) != sorted(table_columns):
        raise SinkError(
            f"writing Delta table {root} with replaceWhere: the DataFrame's columns "
            f"({', '.join(df.columns)}) are not the table's ({', '.join(table_columns)}); "
            "nothing was written")
    return df.unionByName(kept), [(ref.path, ref.size) for ref in touched]
