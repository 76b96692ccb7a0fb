"""Reading local files with Spark's own file sources (every format but avro).

The planned files are passed to ``DataFrameReader.load`` one by one (glob characters escaped,
so a file named ``a[1].json`` is that file and not a pattern), with ``basePath`` set to the
source root so Hive ``key=value`` folders become partition columns exactly as Spark infers them.
Only these files are read: Spark never lists the root.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ReadError
from ..storage import parse_uri
from ._errors import describe, first_line, spark_errors
from ._options import ReadRequest
from ._partitions import escape_glob, layout_of

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from ..planning.files import FileEntry

__all__ = ["read_with_spark"]


def read_with_spark(spark: SparkSession, request: ReadRequest, files: Sequence[FileEntry],
                    root: str, schema: Any) -> DataFrame:
    """A lazy DataFrame of ``files`` read by Spark's reader for ``request.format``.

    Schema inference (when ``schema`` is None) happens here and its failures are raised as
    ReadError; parse failures surface when the DataFrame is materialised.
    """
    layout = layout_of(root, files)  # ConfigError for a file outside the root
    paths = [escape_glob(parse_uri(entry.path).key) for entry in files]
    reader = spark.read.format(request.format).options(**request.options)
    if request.uses_mode:
        reader = reader.option("mode", request.mode)
    if os.path.isdir(layout.root.key) and not request.flag("recursiveFileLookup"):
        reader = reader.option("basePath", layout.root.key)
    if schema is not None:
        reader = reader.schema(schema)
    try:
        return reader.load(paths)
    except spark_errors() as exc:
        described = describe(exc)
        file, reason = described if described else (None, first_line(exc))
        reason = f"file {file}: {reason}" if file else reason
        what = "infer the schema of" if schema is None else "read"
        raise ReadError(
            f"cannot {what} {len(paths)} {request.format} file(s) under {root}: {reason}"
        ) from None
