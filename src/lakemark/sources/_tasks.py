"""What each Spark task of the Arrow read path runs (through ``DataFrame.mapInArrow``).

A task receives rows ``(path, uri, folder, start, end)`` naming its files and their planned
byte ranges (a text file is read only in ``[start, end)``: as planned, however it grew since;
``start`` > 0 for an appended tail), opens each with the
``pyarrow.fs`` filesystem rebuilt from the shipped, secret-free settings, and yields Arrow
record batches:

* parquet / orc / avro: the data columns, converted to the Spark schema's Arrow types (columns
  matched by name, case-insensitively; missing columns null), plus the file's folder index;
* json / csv / xml / text: one string per record (see ``_records``) and the folder index.
  Spark's own parsers turn the records into columns.

With ``with_file`` each row also carries its file's URI (FAILFAST names the file; a file
column was asked for; a run's records fetched once keep their objects' URIs, ``_fetched``).

Any failure is raised as :class:`~lakemark.errors.ReadError` naming the file.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..errors import ReadError
from ..storage import arrow_filesystem_from_config
from ._avro import avro_batches
from ._inspect_depth import record_depth_problem
from ._records import csv_records, json_records, text_records, xml_records, xml_text

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.fs as pafs

__all__ = ["TaskSpec", "read_task", "RECORD", "FOLDER", "FILE", "BINARY_FORMATS"]

RECORD = "__lakemark_record"
FOLDER = "__lakemark_folder"
FILE = "__lakemark_file"

BINARY_FORMATS = frozenset({"parquet", "orc", "avro"})
RECORDS_PER_BATCH = 8192
ROWS_PER_BATCH = 64 * 1024


@dataclass(frozen=True)
class TaskSpec:
    """Everything a task needs (picklable; no secrets)."""

    fs_config: dict[str, Any]
    format: str
    #: Binary formats: the Arrow schema of the data columns to produce.
    schema: Any = None
    #: Record formats: the record-splitting options, by lower-case name.
    options: tuple[tuple[str, str], ...] = ()
    with_file: bool = False
    avro_fix: bool = False

    def option(self, name: str, default: str | None = None) -> str | None:
        return dict(self.options).get(name.lower(), default)

    def flag(self, name: str) -> bool:
        return (self.option(name) or "").strip().lower() == "true"


def _decode(data: bytes, spec: TaskSpec) -> str:
    """The file's text. Bytes that are not of its encoding fail the read (the run sets the
    file aside, naming the place) rather than being replaced by U+FFFD: data silently
    changed (issue 31; local files are checked before the read, ``_inspect``)."""
    if spec.format == "text":
        return data.decode("utf-8")
    encoding = spec.option("encoding") or spec.option("charset") or None
    if spec.format == "xml":  # a BOM or the XML declaration says, as in Spark's reader
        return xml_text(data, encoding, errors="replace")
    return data.decode(encoding or "utf-8")


def _records(text: str, spec: TaskSpec) -> Iterator[str]:
    line_sep = spec.option("lineSep") or None
    if spec.format == "json":
        return json_records(text, multiline=spec.flag("multiLine"), line_sep=line_sep)
    if spec.format == "csv":
        return csv_records(
            text,
            header=spec.flag("header"),
            multiline=spec.flag("multiLine"),
            quote=spec.option("quote", '"') or "",
            escape=spec.option("escape", "\\") or "",
            comment=spec.option("comment") or None,
            line_sep=line_sep,
        )
    if spec.format == "xml":
        return xml_records(text, spec.option("rowTag") or "",
                           any_prefix=spec.flag("ignoreNamespace"))
    return text_records(text, wholetext=spec.flag("wholetext"), line_sep=line_sep)


#: Endings pyarrow's ``compression="detect"`` decompresses: such a file is read whole.
_COMPRESSED = (".gz", ".bz2", ".br", ".lz4", ".zst")


def _planned_bytes(fs: pafs.FileSystem, path: str, start: int, end: int) -> bytes:
    """The bytes ``[start, end)`` of an uncompressed file: what was planned, however the file
    grew since (a compressed file is decompressed whole; the run's size check covers it)."""
    if path.lower().endswith(_COMPRESSED) or end <= 0:
        with fs.open_input_stream(path, compression="detect") as stream:
            return bytes(stream.read())
    with fs.open_input_file(path) as handle:
        return bytes(handle.read_at(max(end - start, 0), start))


def _record_batches(fs: pafs.FileSystem, path: str, spec: TaskSpec, start: int = 0,
                    end: int = 0) -> Iterator[pa.Table]:
    import pyarrow as pa

    data = _planned_bytes(fs, path, start, end)
    if start:  # an appended tail: no header line in it
        spec = replace(spec, options=tuple((k, v) for k, v in spec.options if k != "header"))
    chunk: list[str] = []
    deep = spec.format in ("json", "xml")  # the driver does not read S3 objects first
    for record in _records(_decode(data, spec), spec):
        problem = record_depth_problem(record, spec.format, spec.option("rowTag") or "") \
            if deep else None
        if problem is not None:  # fails the read of this file: the run sets it aside
            raise ValueError(problem)
        chunk.append(record)
        if len(chunk) >= RECORDS_PER_BATCH:
            yield pa.table({RECORD: pa.array(chunk, pa.string())})
            chunk = []
    if chunk:
        yield pa.table({RECORD: pa.array(chunk, pa.string())})


def _conform(data: Any, schema: pa.Schema, uri: str) -> pa.Table:
    """``data`` (a table or batch) with exactly ``schema``'s columns and types."""
    import pyarrow as pa
    import pyarrow.types as pat

    names = data.schema.names
    exact = {n: i for i, n in enumerate(names)}
    folded: dict[str, int] = {}
    for i, n in enumerate(names):
        folded.setdefault(n.lower(), i)
    columns = []
    for target in schema:
        index = exact.get(target.name, folded.get(target.name.lower()))
        if index is None:
            columns.append(pa.nulls(data.num_rows, target.type))
            continue
        column = data.column(index)
        if not column.type.equals(target.type):
            unsafe = pat.is_timestamp(column.type) and pat.is_timestamp(target.type)
            try:
                column = column.cast(target.type, safe=not unsafe)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
                raise ReadError(
                    f"cannot read column {target.name!r} of {uri} ({column.type}) as "
                    f"{target.type}: {exc}"
                ) from None
        columns.append(column)
    return pa.Table.from_arrays(columns, schema=schema)


def _wanted(available: list[str], schema: pa.Schema) -> list[str]:
    """The file's columns the schema asks for (exact name, else case-insensitive)."""
    exact = set(available)
    folded = {n.lower(): n for n in reversed(available)}
    out = []
    for name in schema.names:
        found = name if name in exact else folded.get(name.lower())
        if found is not None and found not in out:
            out.append(found)
    return out


def _binary_batches(fs: pafs.FileSystem, path: str, uri: str, spec: TaskSpec
                    ) -> Iterator[pa.Table]:
    schema = spec.schema
    if spec.format == "parquet":
        import pyarrow.parquet as pq

        with fs.open_input_file(path) as handle:
            # INT96 (Spark's default) as microseconds: no overflow past 2262
            parquet = pq.ParquetFile(handle, coerce_int96_timestamp_unit="us")
            columns = _wanted(parquet.schema_arrow.names, schema)
            for batch in parquet.iter_batches(batch_size=ROWS_PER_BATCH, columns=columns):
                yield _conform(batch, schema, uri)
    elif spec.format == "orc":
        import pyarrow.orc as orc

        with fs.open_input_file(path) as handle:
            reader = orc.ORCFile(handle)
            columns = _wanted(reader.schema.names, schema)
            for stripe in range(reader.nstripes):
                yield _conform(reader.read_stripe(stripe, columns=columns), schema, uri)
    else:
        with fs.open_input_file(path) as handle:
            for table in avro_batches(handle, schema, spec.avro_fix):
                yield _conform(table, schema, uri)


def _read_file(fs: pafs.FileSystem, path: str, uri: str, spec: TaskSpec, start: int = 0,
               end: int = 0) -> Iterator[pa.Table]:
    if spec.format in BINARY_FORMATS:
        return _binary_batches(fs, path, uri, spec)
    return _record_batches(fs, path, spec, start, end)


def read_task(spec: TaskSpec, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The ``mapInArrow`` function: this task's files, as record batches."""
    import numpy as np
    import pyarrow as pa

    fs = arrow_filesystem_from_config(spec.fs_config)
    for batch in batches:
        paths = batch.column("path").to_pylist()
        uris = batch.column("uri").to_pylist()
        folders = batch.column("folder").to_pylist()
        names = batch.schema.names
        starts = batch.column("start").to_pylist() if "start" in names else [0] * len(paths)
        ends = batch.column("end").to_pylist() if "end" in names else [0] * len(paths)
        for path, uri, folder, start, end in zip(paths, uris, folders, starts, ends):
            try:
                for table in _read_file(fs, path, uri, spec, start, end):
                    if table.num_rows == 0:
                        continue
                    table = table.append_column(
                        FOLDER, pa.array(np.full(table.num_rows, folder, dtype=np.int32)))
                    if spec.with_file:
                        table = table.append_column(
                            FILE, pa.array([uri] * table.num_rows, pa.string()))
                    yield from table.to_batches()
            except ReadError:
                raise
            except Exception as exc:
                raise ReadError(
                    f"cannot read {spec.format} file {uri}: {type(exc).__name__}: {exc}"
                ) from None
