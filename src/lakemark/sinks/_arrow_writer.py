"""Writing a DataFrame's files on the executors with pyarrow (the path for object stores the
Spark classpath cannot write, e.g. S3 without the S3A connector).

Each Spark task receives its rows as Arrow record batches (``DataFrame.mapInArrow``), splits
them by partition values, writes each partition's rows straight to its final place under the
target (through the ``pyarrow.fs`` filesystem rebuilt from the shipped, secret-free settings),
and returns one small row per file it wrote: relative path, size, row count, modification time,
Delta partition values and, for Delta, the statistics from the file's own footer. The driver
only collects those rows; no data passes through it.

File names carry the write id, the task's partition number and its attempt number, so a retried
or speculative attempt never overwrites another attempt's file, and only the files of attempts
whose result Spark kept are committed. A task that fails deletes the files it wrote.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import time
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from functools import partial
from typing import TYPE_CHECKING, Any

from ._location import data_file_name, writer_filesystem
from ._model import DataFile
from ._values import delta_partition_value, escape_path_name, file_stats, folder_value, zone

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.fs as pafs
    from pyspark.sql import DataFrame

__all__ = ["ArrowWriteSpec", "RESULT_DDL", "write_task", "run_arrow_write"]

#: What each task returns per file written.
RESULT_DDL = ("path string, size long, rows long, mtime long, partition_values string, "
              "stats string")

MAX_OPEN_FILES = 32
ROW_GROUP_ROWS = 128 * 1024
ROW_GROUP_BYTES = 32 * 1024 * 1024
TASK_BUFFER_BYTES = 128 * 1024 * 1024

_PARQUET_CODECS = {"snappy", "gzip", "zstd", "lz4", "brotli", "none", "uncompressed"}
_TEXT_CODECS = {"none", "uncompressed", "gzip"}


@dataclass(frozen=True)
class ArrowWriteSpec:
    """Everything a task needs to write its files (picklable; no secrets)."""

    fs_config: dict[str, Any]
    root: str  # pyarrow.fs path of the target root
    write_id: str
    format: str  # parquet | json | csv
    partition_cols: tuple[str, ...]
    kinds: tuple[tuple[str, str], ...]  # column → kind, for every column
    session_tz: str
    delta_stats: bool = False
    compression: str = "snappy"
    csv_header: bool = False
    csv_delimiter: str = ","

    @property
    def extension(self) -> str:
        codec = self.compression.lower()
        if self.format == "parquet":
            return ".parquet" if codec in ("none", "uncompressed") else f".{codec}.parquet"
        return f".{self.format}" + (".gz" if codec == "gzip" else "")


class _OpenFile:
    """One output file of a task: buffers batches into row groups and writes them."""

    def __init__(self, spec: ArrowWriteSpec, fs: pafs.FileSystem, relative: str,
                 schema: pa.Schema, partition_values: dict[str, str | None]) -> None:

        self.spec = spec
        self.fs = fs
        self.relative = relative
        self.path = f"{spec.root.rstrip('/')}/{relative}"
        self.schema = schema
        self.partition_values = partition_values
        self.rows = 0
        self.pending: list[pa.Table] = []
        self.pending_rows = 0
        self.pending_bytes = 0
        self.metadata: list[Any] = []
        codec = spec.compression.lower()
        self.compressed_text = spec.format != "parquet" and codec == "gzip"
        if fs.type_name == "local":  # object stores need no folders; a local disk does
            fs.create_dir(self.path.rsplit("/", 1)[0], recursive=True)
        self.stream = fs.open_output_stream(
            self.path, compression="gzip" if self.compressed_text else None)
        self.writer: Any = None
        if spec.format == "parquet":
            import pyarrow.parquet as pq

            self.writer = pq.ParquetWriter(
                self.stream, schema,
                compression="NONE" if codec in ("none", "uncompressed") else codec,
                metadata_collector=self.metadata,
            )
        elif spec.format == "csv":
            import pyarrow.csv as pacsv

            options = pacsv.WriteOptions(include_header=spec.csv_header,
                                         delimiter=spec.csv_delimiter)
            self.writer = pacsv.CSVWriter(self.stream, schema, write_options=options)

    def add(self, table: pa.Table) -> None:
        self.pending.append(table)
        self.pending_rows += table.num_rows
        self.pending_bytes += table.nbytes
        if self.pending_rows >= ROW_GROUP_ROWS or self.pending_bytes >= ROW_GROUP_BYTES:
            self.flush()

    def flush(self) -> None:
        import pyarrow as pa

        if not self.pending:
            return
        table = pa.concat_tables(self.pending)
        self.pending, self.pending_rows, self.pending_bytes = [], 0, 0
        if self.spec.format == "json":
            self.stream.write(_json_lines(table, zone(self.spec.session_tz)))
        else:
            self.writer.write_table(table)
        self.rows += table.num_rows

    def close(self) -> dict[str, Any]:
        """Finish the file; the result row for the driver."""
        self.flush()
        if self.writer is not None:
            self.writer.close()
        size = None if self.compressed_text else self.stream.tell()
        self.stream.close()
        if size is None:
            size = self.fs.get_file_info(self.path).size
        stats = None
        if self.spec.delta_stats and self.metadata:
            stats = file_stats(self.metadata[0], dict(self.spec.kinds))
        return {
            "path": self.relative,
            "size": int(size or 0),
            "rows": self.rows,
            "mtime": int(time.time() * 1000),
            "partition_values": json.dumps(self.partition_values),
            "stats": stats,
        }

    def abort(self) -> None:
        try:
            self.stream.close()
        except Exception:
            pass


def _json_value(value: Any, tz: dt.tzinfo) -> Any:
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(tz)
        text = value.isoformat()
        return text[:-6] + "Z" if text.endswith("+00:00") else text
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, Decimal):
        number = float(value)
        return number if Decimal(repr(number)) == value else str(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dict):
        return {k: _json_value(v, tz) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_value(v, tz) for v in value]
    return value


def _json_lines(table: pa.Table, tz: dt.tzinfo) -> bytes:
    """JSON Lines as Spark writes them: one object per row, null fields left out."""
    lines = []
    for row in table.to_pylist(maps_as_pydicts="lossy"):
        clean = {k: _json_value(v, tz) for k, v in row.items() if v is not None}
        lines.append(json.dumps(clean, ensure_ascii=False, separators=(",", ":")))
    return ("\n".join(lines) + "\n").encode("utf-8") if lines else b""


def _split(table: pa.Table, columns: tuple[str, ...]) -> Iterator[tuple[tuple[Any, ...], pa.Table]]:
    """``table``'s rows grouped by the values of ``columns``."""
    import numpy as np
    import pyarrow as pa

    if not columns:
        yield (), table
        return
    keys = table.select(list(columns)).append_column(
        "__lm_row", pa.array(np.arange(table.num_rows, dtype=np.int64)))
    grouped = keys.group_by(list(columns), use_threads=False).aggregate([("__lm_row", "list")])
    rows = grouped.column("__lm_row_list")
    data = table.drop_columns(list(columns))
    for i in range(grouped.num_rows):
        values = tuple(grouped.column(c)[i].as_py() for c in columns)
        if grouped.num_rows == 1:
            yield values, data
        else:
            yield values, data.take(rows[i].values)


def write_task(spec: ArrowWriteSpec, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The ``mapInArrow`` function: write this task's rows, yield one result row per file."""
    import pyarrow as pa
    from pyspark import TaskContext

    context = TaskContext.get()
    task = context.partitionId() if context is not None else 0
    attempt = context.attemptNumber() if context is not None else 0
    fs = writer_filesystem(spec.fs_config)
    kinds = dict(spec.kinds)
    tz = zone(spec.session_tz)
    open_files: OrderedDict[tuple[str | None, ...], _OpenFile] = OrderedDict()
    created: list[_OpenFile] = []
    results: list[dict[str, Any]] = []
    buffered = 0

    def close(key: tuple[str | None, ...]) -> None:
        results.append(open_files.pop(key).close())

    try:
        for batch in batches:
            if batch.num_rows == 0:
                continue
            table = pa.Table.from_batches([batch])
            for values, part in _split(table, spec.partition_cols):
                delta_values = tuple(delta_partition_value(v, kinds[c])
                                     for c, v in zip(spec.partition_cols, values))
                handle = open_files.get(delta_values)
                if handle is None:
                    if len(open_files) >= MAX_OPEN_FILES:
                        close(next(iter(open_files)))
                    folders = "".join(
                        f"{escape_path_name(c)}={escape_path_name(folder_value(v, kinds[c], tz))}/"
                        for c, v in zip(spec.partition_cols, values)
                    )
                    name = data_file_name(task, spec.write_id,
                                          f"a{attempt}-{len(created):03d}{spec.extension}")
                    handle = _OpenFile(spec, fs, folders + name, part.schema,
                                       dict(zip(spec.partition_cols, delta_values)))
                    open_files[delta_values] = handle
                    created.append(handle)
                else:
                    open_files.move_to_end(delta_values)
                handle.add(part)
                buffered += part.nbytes
            if buffered > TASK_BUFFER_BYTES:
                for handle in open_files.values():
                    handle.flush()
                buffered = 0
        while open_files:
            close(next(iter(open_files)))
    except BaseException:
        for handle in created:
            handle.abort()
            try:
                fs.delete_file(handle.path)
            except OSError:
                pass
        raise
    if results:
        yield pa.RecordBatch.from_pylist(results, schema=_result_schema())


def _result_schema() -> pa.Schema:
    import pyarrow as pa

    return pa.schema([("path", pa.string()), ("size", pa.int64()), ("rows", pa.int64()),
                      ("mtime", pa.int64()), ("partition_values", pa.string()),
                      ("stats", pa.string())])


def run_arrow_write(df: DataFrame, spec: ArrowWriteSpec) -> list[DataFile]:
    """Run the distributed write; the files the kept task attempts wrote."""
    rows = df.mapInArrow(partial(write_task, spec), RESULT_DDL).collect()
    return [
        DataFile(path=r["path"], size=r["size"], rows=r["rows"], mtime_ms=r["mtime"],
                 partition_values=json.loads(r["partition_values"]), stats=r["stats"])
        for r in rows
    ]


def check_compression(format: str, codec: str) -> bool:
    """True if the Arrow writer supports ``codec`` for ``format``."""
    allowed = _PARQUET_CODECS if format == "parquet" else _TEXT_CODECS
    return codec.lower() in allowed
