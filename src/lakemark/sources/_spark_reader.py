"""Reading local files with Spark's own file sources (every format but avro).

The planned files are passed to ``DataFrameReader.load`` one by one (glob characters escaped,
so a file named ``a[1].json`` is that file and not a pattern), with ``basePath`` set to the
source root so Hive ``key=value`` folders become partition columns exactly as Spark infers them.
Only these files are read: Spark never lists the root. Reads of many small files are merged
into fewer partitions (``planning.splits``; ``spark.lakemark.mergeSmallFiles=false`` keeps
Spark's packing).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, ReadError
from ..planning.splits import (
    DEFAULT_MAX_PARTITION_BYTES,
    DEFAULT_OPEN_COST_BYTES,
    parse_byte_size,
    read_partitions,
)
from ..connect_compat import default_parallelism
from ..storage import parse_uri
from ._errors import describe, first_line, spark_errors
from ._options import ReadRequest
from ._partitions import Layout, _partition_keys, escape_glob, layout_of

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from ..planning.files import FileEntry

__all__ = ["MERGE_SMALL_FILES", "read_with_spark"]

#: Spark setting that turns off merging reads of many small files (``false``).
MERGE_SMALL_FILES = "spark.lakemark.mergeSmallFiles"


def read_with_spark(spark: SparkSession, request: ReadRequest, files: Sequence[FileEntry],
                    root: str, schema: Any) -> DataFrame:
    """A lazy DataFrame of ``files`` read by Spark's reader for ``request.format``.

    Schema inference (when ``schema`` is None) happens here and its failures are raised as
    ReadError; parse failures surface when the DataFrame is materialised.
    """
    layout = layout_of(root, files)  # ConfigError for a file outside the root
    partitions = _merged_partitions(spark, files)  # ConfigError for a bad setting
    paths = [escape_glob(parse_uri(entry.path).key) for entry in files]
    based = os.path.isdir(layout.root.key) and not request.flag("recursiveFileLookup")
    plain = [i for i, folder in enumerate(layout.folder_of) if "=" not in layout.folders[folder]]
    reader = _reader(spark, request, layout.root.key if based else None, schema)
    try:
        if based and 0 < len(plain) < len(paths):
            df = _mixed_read(spark, request, layout, paths, set(plain), schema)
        else:
            df = reader.load(paths)
    except spark_errors() as exc:
        described = describe(exc)
        file, reason = described if described else (None, first_line(exc))
        if file is None and schema is None and len(paths) > 1:
            failing = _first_failing(reader, paths)
            file = files[failing].path if failing is not None else None
        reason = f"file {file}: {reason}" if file else reason
        what = "infer the schema of" if schema is None else "read"
        raise ReadError(
            f"cannot {what} {len(paths)} {request.format} file(s) under {root}: {reason}"
        ) from None
    return df.coalesce(partitions) if partitions else df


def _reader(spark: SparkSession, request: ReadRequest, base: str | None, schema: Any) -> Any:
    """A fresh reader for ``request`` (PySpark's ``option`` changes the reader it is called
    on, so each read of a mixed layout gets its own)."""
    reader = spark.read.format(request.format).options(**request.options)
    if request.uses_mode:
        reader = reader.option("mode", request.mode)
    if base is not None:
        reader = reader.option("basePath", base)
    return reader.schema(schema) if schema is not None else reader


def _mixed_read(spark: SparkSession, request: ReadRequest, layout: Layout, paths: list[str],
                plain: set[int], schema: Any) -> DataFrame:
    """The rows of files partly in ``key=value`` folders and partly outside them (``plain``:
    their indexes), with null partition columns for the latter.

    Spark's partition discovery lists only the partition folders' files when the others sit
    beside them (at the root, or in folders with no ``key=value`` segment): read at once they
    would give no row. So the two groups are read apart with one data schema (inferred from
    every file, without partition folders, when ``schema`` is None) and unioned."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    if schema is None:
        schema = _reader(spark, request, None, None).load(paths).schema
    base = layout.root.key
    parted = _reader(spark, request, base, schema).load(
        [p for i, p in enumerate(paths) if i not in plain])
    keys = _partition_keys(layout.folders)
    fields = parted.schema.fields
    data = StructType([f for f in fields if f.name.lower() not in keys])
    rest = _reader(spark, request, base, data).load([p for i, p in enumerate(paths) if i in plain])
    quoted = ["`" + f.name.replace("`", "``") + "`" for f in fields]
    rest = rest.select(*[F.lit(None).cast(f.dataType).alias(f.name)
                         if f.name.lower() in keys else F.col(q)
                         for f, q in zip(fields, quoted, strict=True)])
    return parted.unionByName(rest)


#: How many files are tried one by one to name the one whose schema inference fails.
_MAX_FILES_TRIED = 100


def _first_failing(reader: Any, paths: Sequence[str]) -> int | None:
    """The index of the first of ``paths`` whose schema inference fails on its own (Spark's
    error for a FAILFAST read of many files does not say which file held the bad record)."""
    for index, path in enumerate(paths[:_MAX_FILES_TRIED]):
        try:
            reader.load(path)
        except spark_errors():
            return index
    return None


def _merged_partitions(spark: SparkSession, files: Sequence[FileEntry]) -> int | None:
    """The partition count to merge this read down to (None: keep Spark's packing)."""
    conf = spark.conf
    merge = (conf.get(MERGE_SMALL_FILES, None) or "true").strip().lower()
    if merge not in ("true", "false"):
        raise ConfigError(f"{MERGE_SMALL_FILES} must be true or false, not {merge!r}")
    if merge == "false":
        return None
    try:
        parallelism = int(conf.get("spark.sql.files.minPartitionNum", None) or 0)
    except ValueError:
        parallelism = 0
    return read_partitions(
        (entry.size for entry in files),
        parallelism=parallelism or default_parallelism(spark),
        max_partition_bytes=parse_byte_size(conf.get("spark.sql.files.maxPartitionBytes", None),
                                            DEFAULT_MAX_PARTITION_BYTES),
        open_cost_bytes=parse_byte_size(conf.get("spark.sql.files.openCostInBytes", None),
                                        DEFAULT_OPEN_COST_BYTES),
    )
