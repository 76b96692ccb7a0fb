"""Rows of a tracked read made by Python on the executors (the XML and Avro tracked reads).

A tracked XML or Avro read decides per record what fits its tracked column and what goes to
the rescued data, which is easiest where each record is decoded anyway: in a Python task
(``DataFrame.mapInArrow``), as the Arrow reader does for Avro and S3 (``_arrow_reader``).
:func:`python_rows` is that scaffold: the planned files spread over tasks by size, a
*row maker* (a picklable object with a ``batches(fs, path, uri)`` method yielding Arrow
tables of the requested schema) run on each file, and the source's partition columns
(``key=value`` folders under the root, typed as Spark types them) joined on. Files of a
bucket mapped to a local folder (``--bucket-map``) are read from the folder, as
:func:`~._read.read_files` does.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import ReadError
from ..planning.files import FileEntry
from ..storage import arrow_filesystem_from_config, arrow_fs_config, mapped_path

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.fs as pafs
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

__all__ = ["RowMaker", "python_rows", "file_uri"]

_FOLDER = "__lm_folder"
_PART = "__lm_part_"


class RowMaker(Protocol):
    """What a task runs on each of its files (must pickle: it is shipped to the executors)."""

    def batches(self, fs: pafs.FileSystem, path: str, uri: str) -> Iterator[pa.Table]:
        """The rows of one file, as Arrow tables of the frame's schema."""
        ...


def file_uri(path: str) -> str:
    """A file's path as Spark's ``input_file_name()`` gives it (``file:///…`` for local
    paths, the URI itself otherwise)."""
    if "://" in path or not path.startswith("/"):
        return path
    return PurePosixPath(path).as_uri()


def _task(maker: RowMaker, fs_config: dict[str, Any],
          batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    import numpy as np
    import pyarrow as pa

    fs = arrow_filesystem_from_config(fs_config)
    for batch in batches:
        for path, uri, folder in zip(batch.column("path").to_pylist(),
                                     batch.column("uri").to_pylist(),
                                     batch.column("folder").to_pylist()):
            try:
                for table in maker.batches(fs, path, uri):
                    if table.num_rows == 0:
                        continue
                    table = table.append_column(
                        _FOLDER, pa.array(np.full(table.num_rows, folder, dtype=np.int32)))
                    yield from table.to_batches()
            except ReadError:
                raise
            except Exception as exc:
                raise ReadError(f"cannot read {uri}: {type(exc).__name__}: {exc}") from None


def python_rows(spark: SparkSession, files: Sequence[FileEntry], root: str,
                schema: StructType, maker: RowMaker, *,
                recursive: bool = False) -> tuple[DataFrame, list[str]]:
    """The rows ``maker`` makes of ``files`` (columns of ``schema``), then the partition
    columns; and the partition column names. A partition column replaces a data column of
    the same name (case-insensitively), as in Spark."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from ._arrow_reader import _files_frame
    from ._partitions import discover_partitions, layout_of

    entries = list(files)
    local_root = mapped_path(root)
    if local_root is not None:
        entries = [FileEntry(f.mtime, mapped_path(f.path) or f.path, f.size, f.offset)
                   for f in entries]
        root = local_root
    layout = layout_of(root, entries)
    values: list[tuple[Any, ...]] = []
    if recursive:
        partitions = T.StructType([])
    else:
        partitions, values = discover_partitions(spark, layout, None)
    out = T.StructType([*schema.fields, T.StructField(_FOLDER, T.IntegerType(), False)])
    df = _files_frame(spark, entries, layout).mapInArrow(
        partial(_task, maker, arrow_fs_config(root)), out)
    names = [p.name for p in partitions.fields]
    if not names:
        return df.drop(_FOLDER), []
    part_schema = T.StructType(
        [T.StructField(_FOLDER, T.IntegerType(), False)]
        + [T.StructField(f"{_PART}{i}", f.dataType, True) for i, f in enumerate(partitions.fields)])
    folders = spark.createDataFrame(values, part_schema)
    df = df.join(F.broadcast(folders), on=_FOLDER, how="left")
    lowered = {n.lower() for n in names}
    columns = [F.col(_quote(f.name)) for f in schema.fields if f.name.lower() not in lowered]
    columns += [F.col(f"{_PART}{i}").alias(n) for i, n in enumerate(names)]
    return df.select(*columns), names


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"
