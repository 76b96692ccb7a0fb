"""``read_files``: validate the request, then hand it to Spark's readers or the Arrow reader."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..planning.files import FileEntry
from ..connect_compat import empty_frame
from ..storage import mapped_path, parse_uri
from ._arrow_reader import read_with_arrow
from ._errors import guard
from ._options import make_request, parse_schema
from ._spark_reader import read_with_spark

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from ._fetched import FetchedRecords

__all__ = ["read_files"]


def read_files(
    spark: SparkSession,
    files: Sequence[FileEntry],
    *,
    root: str,
    format: str,
    options: Mapping[str, str] | None = None,
    schema: Any = None,
    mode: str = "PERMISSIVE",
    records: FetchedRecords | None = None,
    file_column: str | None = None,
) -> DataFrame:
    """A DataFrame of exactly ``files`` (full paths or ``s3://`` URIs under ``root``).

    Hive ``key=value`` folders between ``root`` and a file become partition columns, as Spark
    infers them with ``basePath=root``. ``schema`` (a StructType or DDL string) skips schema
    inference; ``mode`` (PERMISSIVE, DROPMALFORMED or FAILFAST) says what to do with malformed
    json/csv/xml records. No files gives an empty DataFrame (with ``schema`` if given) without
    touching the source.

    Files of a bucket mapped to a local folder (``lakemark run --bucket-map``) are read from
    that folder. Local files other than Avro are read by Spark's own file sources; S3 objects,
    and Avro anywhere, by the Arrow reader on the executors (see the package documentation for what
    differs). Bad arguments raise ConfigError (FormatError for the format) before any I/O;
    schema inference failures raise ReadError here; read failures at action time (FAILFAST,
    corrupt files) are raised as ReadError by the returned DataFrame's actions.

    ``records``: records of these S3 objects fetched before in this run (:mod:`._fetched`),
    parsed instead of fetching the objects again (ignored where they do not apply).
    ``file_column``: a last column with each row's file (``input_file_name()`` for Spark's
    readers; the object's ``s3://`` URI on the Arrow path, where ``input_file_name()`` is
    empty).
    """
    from pyspark.sql.types import StructType

    request = make_request(format, mode, options, schema, root)
    struct = parse_schema(schema)
    entries = list(files)
    local_root = mapped_path(root)
    if local_root is not None:  # a bucket mapped to a local folder (storage._bucket_map)
        entries = [FileEntry(f.mtime, mapped_path(f.path) or f.path, f.size, f.offset)
                   for f in entries]
        root = local_root
    if not entries:
        # No Python worker for nothing to read (seconds per run): lakemark.spark.empty_frame
        empty = empty_frame(spark, struct if struct is not None else StructType([]))
        if file_column is not None:
            from pyspark.sql import functions as F

            empty = empty.withColumn(file_column, F.lit(None).cast("string"))
        return empty
    # An appended tail (an entry with an offset) is read by byte range: the Arrow path.
    if parse_uri(root).is_s3 or request.format == "avro" or any(e.offset for e in entries):
        df = read_with_arrow(spark, request, entries, root, struct, records=records,
                             file_column=file_column)
    else:
        df = read_with_spark(spark, request, entries, root, struct)
        if file_column is not None:
            from pyspark.sql import functions as F

            df = df.withColumn(file_column, F.input_file_name())
    return guard(df, request.format)
