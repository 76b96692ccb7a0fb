"""Reading an Iceberg scan's data files in a Python worker with pyarrow, as the Delta source does.

The driver plans the files (:class:`lakemark.datasources.iceberg.IcebergReader`: snapshot,
pruning by pushed filters, no delete files); each task here opens its Parquet files through the
table's FileIO and reads the columns the scan needs. Columns are matched by Iceberg field id —
the id in the file's Parquet schema, else the table's name mapping (files added by name, as
lakemark's sink adds them) — so renamed columns read right; a column the file lacks is its
identity partition value when the file has one, else nulls; every batch is cast to the Spark
schema's Arrow types (:func:`lakemark.tables._delta_read.conform`).

Only top-level primitive columns are matched here: a scan whose schema has a struct, list or
map column is read by pyiceberg's own Arrow scan (:func:`read_tasks` decides), which also
matches nested fields by id.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ReadError

if TYPE_CHECKING:
    import pyarrow as pa
    from pyiceberg.io import FileIO
    from pyiceberg.schema import Schema
    from pyiceberg.table.metadata import TableMetadata

__all__ = ["BATCH_ROWS", "flat", "read_tasks"]

#: Rows per batch handed to Spark.
BATCH_ROWS = 64 * 1024


def flat(schema: Schema) -> bool:
    """Whether every top-level column of ``schema`` is a primitive (the pyarrow path reads it)."""
    return all(f.field_type.is_primitive for f in schema.fields)


def _identity_values(metadata: TableMetadata, data_file: Any) -> dict[int, Any]:
    """``{source field id: value}`` of the file's identity partition fields."""
    from pyiceberg.partitioning import PartitionSpec
    from pyiceberg.transforms import IdentityTransform

    spec: PartitionSpec | None = metadata.specs().get(data_file.spec_id)
    if spec is None or not spec.fields:
        return {}
    out: dict[int, Any] = {}
    for position, fld in enumerate(spec.fields):
        if isinstance(fld.transform, IdentityTransform):
            try:
                out[fld.source_id] = data_file.partition[position]
            except (IndexError, TypeError):
                continue
    return out


def _read_file(io: FileIO, metadata: TableMetadata, ids: dict[str, int], data_file: Any,
               out: pa.Schema) -> Iterator[pa.RecordBatch]:
    """One data file's rows as batches of ``out``."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyiceberg.io.pyarrow import pyarrow_to_schema

    from ..tables._delta_read import conform

    uri = str(data_file.file_path)
    with io.new_input(uri).open(seekable=True) as handle:
        parquet = pq.ParquetFile(handle, coerce_int96_timestamp_unit="us")
        physical = parquet.schema_arrow
        file_schema = pyarrow_to_schema(physical, metadata.name_mapping(),
                                        downcast_ns_timestamp_to_us=True,
                                        format_version=metadata.format_version)
        by_id = {f.field_id: a.name for a, f in zip(physical, file_schema.fields)}
        wanted = {name: by_id[fid] for name, fid in ids.items() if fid in by_id}
        constants: dict[str, Any] = {}
        partition = _identity_values(metadata, data_file)
        for name, fid in ids.items():
            if name not in wanted:
                constants[name] = partition.get(fid)
        columns = sorted(set(wanted.values()))
        if not columns:  # only partition values and nulls: one batch per row group's count
            rows = parquet.metadata.num_rows
            for start in range(0, rows, BATCH_ROWS):
                empty = pa.RecordBatch.from_pydict({})
                yield conform(empty, out, constants, uri, rows=min(BATCH_ROWS, rows - start))
            return
        for batch in parquet.iter_batches(batch_size=BATCH_ROWS, columns=columns,
                                          use_threads=False):
            if not batch.num_rows:
                continue
            named = pa.RecordBatch.from_arrays(
                [batch.column(batch.schema.get_field_index(p)) for p in wanted.values()],
                names=list(wanted))
            yield conform(named, out, constants, uri)


def read_tasks(metadata: TableMetadata, io: FileIO, schema: Schema, tasks: Sequence[Any],
               out: pa.Schema) -> Iterator[pa.RecordBatch]:
    """The rows of ``tasks`` (pyiceberg file scan tasks without delete files) as batches of
    ``out`` (module docstring)."""
    import pyarrow as pa

    if not flat(schema):
        from pyiceberg.expressions import AlwaysTrue
        from pyiceberg.io.pyarrow import ArrowScan

        scan = ArrowScan(metadata, io, schema, AlwaysTrue())
        for batch in scan.to_record_batches(tasks):
            if batch.num_rows:
                yield from pa.Table.from_batches([batch]).select(out.names).cast(
                    out).to_batches()
        return
    ids = {f.name: f.field_id for f in schema.fields if f.name in set(out.names)}
    for task in tasks:
        try:
            yield from _read_file(io, metadata, ids, task.file, out)
        except FileNotFoundError as exc:
            raise ReadError(f"data file {task.file.file_path} of an Iceberg table is missing: "
                            "was it expired or removed?") from exc
