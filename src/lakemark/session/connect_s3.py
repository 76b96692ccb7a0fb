"""A script's plain-format ``s3://`` reads and writes over Spark Connect (docs/connect.md).

In a classic session without the S3A connector, :mod:`lakemark.spark_io` serves
``spark.read.json("s3://…")``, ``df.write.partitionBy("d").parquet("s3://…")`` and the other
plain formats (csv, orc, text, xml, avro, …) with lakemark's own read path
(``sources.read_files``: listing with the S3 API, the Arrow reader on the executors) and folder
sink (``sinks.write_target``). Both run over Connect as they are (DataFrame operations and
``mapInArrow``; no RDD, no JVM in this process), so Connect's reader and writer, whose
``json``/``csv``/``parquet``/``orc``/``text``/``xml`` all end in ``load``/``save``, hand such
paths to the same two functions of :mod:`lakemark.spark_io`: the same rows, partition
columns, save modes and errors as a classic session.

The client cannot ask the server's JVM whether it has S3A, so over Connect lakemark always
serves ``s3://``/``s3a://``/``s3n://`` paths of the plain formats itself (the server
``lakemark server start`` runs has no S3A). A path in a bucket mapped to a local folder
(``lakemark run --bucket-map``) is handed to Spark as that folder, as in classic mode.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["s3_load", "s3_save"]


def _schema(text: str) -> Any:
    """Connect's reader keeps a schema as a JSON or DDL string ("" for none)."""
    if not text:
        return None
    if text.lstrip().startswith("{"):
        from pyspark.sql.types import StructType

        return StructType.fromJson(json.loads(text))
    return text


def s3_load(reader: Any, path: Any) -> DataFrame | None:
    """The frame of ``reader.load(path)`` (format, schema and options already set on the
    Connect ``reader``) when ``path`` is ``s3://`` or in a mapped bucket, else None (Spark's
    own read)."""
    from ..spark_io import _mapped, _read, is_s3_path

    local = _mapped(path)
    fmt = str(reader._format or "parquet").strip().lower()  # Spark's default source
    if local != path:  # a mapped bucket: Spark reads the local folder
        return reader.load(local)  # type: ignore[no-any-return]
    if not is_s3_path(path):
        return None
    paths = [path] if isinstance(path, str) else list(path)
    return _read(reader._client, paths, fmt, dict(reader._options), _schema(reader._schema))


def s3_save(writer: Any, path: Any) -> tuple[bool, Any]:
    """``(True, None)`` after writing as ``writer.save(path)`` (format, mode, options and
    ``partitionBy`` already set on the Connect ``writer``) when ``path`` is ``s3://``; else
    ``(False, the path to give Spark's own write)``: a mapped bucket's local folder, or
    ``path`` itself."""
    from pyspark.sql.connect.dataframe import DataFrame as ConnectFrame

    from ..spark_io import _mapped, _write, is_s3_path

    local = _mapped(path)
    if local != path or not isinstance(path, str) or not is_s3_path(path):
        return False, local
    write = writer._write
    fmt = str(write.source or "parquet")  # Spark's default source
    _write(ConnectFrame(writer._df, writer._spark), path, fmt, write.mode,
           list(write.partitioning_cols or ()), dict(write.options))
    return True, None
