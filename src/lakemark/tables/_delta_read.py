"""Reading a Delta snapshot's files on the executors, and pruning files by filters.

The driver groups the snapshot's live files into tasks (balanced by size); each task opens its
files with pyarrow (local disk, or S3 through ``pyarrow.fs`` with the endpoint shipped in the
snapshot: no S3A connector), adds the partition columns as constants, casts every batch to the
table's schema (columns a file lacks, e.g. added later by ``mergeSchema``, come out as nulls)
and yields Arrow record batches to Spark.

Filters Spark pushes down prune whole files: by their partition values (exact) and by the
min/max statistics of the log (numbers, dates, timestamps). Spark still evaluates every filter
on the rows, so pruning can only save work, never change the answer.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ReadError

if TYPE_CHECKING:
    import pyarrow as pa

    from ._delta_snapshot import DataFileRef, Snapshot

__all__ = ["FileTask", "conform", "may_match", "plan_tasks", "read_files"]

#: Bytes of Parquet per task, before there are enough tasks to keep every core busy.
TARGET_TASK_BYTES = 128 * 1024 * 1024
BATCH_ROWS = 64 * 1024


@dataclass(frozen=True)
class FileTask:
    """The files one Spark task reads (an ``InputPartition``)."""

    value: int
    files: tuple[DataFileRef, ...]


def plan_tasks(files: Sequence[DataFileRef], parallelism: int) -> list[FileTask]:
    """Files grouped into tasks: at least ``parallelism`` tasks when there are that many
    files, none much bigger than :data:`TARGET_TASK_BYTES`, sizes balanced (largest first
    onto the lightest task)."""
    if not files:
        return []
    total = sum(max(f.size, 1) for f in files)
    count = max(min(len(files), max(parallelism, 1)), -(-total // TARGET_TASK_BYTES))
    count = min(count, len(files))
    heap = [(0, i) for i in range(count)]
    groups: list[list[DataFileRef]] = [[] for _ in range(count)]
    for ref in sorted(files, key=lambda f: (-f.size, f.path)):
        load, index = heapq.heappop(heap)
        groups[index].append(ref)
        heapq.heappush(heap, (load + max(ref.size, 1), index))
    return [FileTask(i, tuple(g)) for i, g in enumerate(groups) if g]


# ----------------------------------------------------------------------------- pruning

def _compare(op: str, left: Any, right: Any) -> bool:
    """``left op right``; True (may match) when the values cannot be compared."""
    try:
        if op == "=":
            return bool(left == right)
        if op == "<":
            return bool(left < right)
        if op == "<=":
            return bool(left <= right)
        if op == ">":
            return bool(left > right)
        if op == ">=":
            return bool(left >= right)
    except TypeError:
        return True
    return True


_OPS = {"EqualTo": "=", "EqualNullSafe": "=", "GreaterThan": ">", "GreaterThanOrEqual": ">=",
        "LessThan": "<", "LessThanOrEqual": "<="}
_STATS_TYPES = (int, float)


def _column(flt: Any) -> str | None:
    attribute = getattr(flt, "attribute", None)
    if not attribute or len(attribute) != 1:
        return None  # nested fields are never pruned on
    return str(attribute[0])


def may_match(flt: Any, ref: DataFileRef, partitions: frozenset[str]) -> bool:
    """Whether ``ref`` may hold a row for which the pushed filter ``flt`` is true."""
    kind = type(flt).__name__
    if kind == "Not":
        child = flt.child
        name = _column(child)
        if name in partitions and type(child).__name__ in ("EqualTo", "In", "IsNull",
                                                            "IsNotNull"):
            return not may_match(child, ref, partitions)
        return True
    name = _column(flt)
    if name is None:
        return True
    if name in partitions:
        value = dict(ref.partition).get(name)
        if kind == "IsNull":
            return value is None
        if kind == "IsNotNull":
            return value is not None
        if kind == "In":
            return value is not None and any(_compare("=", value, v) for v in flt.value)
        if kind in _OPS:
            if value is None:
                return kind == "EqualNullSafe" and flt.value is None
            return _compare(_OPS[kind], value, flt.value)
        return True
    low, high = dict(ref.minimum).get(name), dict(ref.maximum).get(name)
    if low is None or high is None or not isinstance(low, _STATS_TYPES) \
            or isinstance(low, bool):
        return True  # strings are truncated in stats; no pruning on them
    value = getattr(flt, "value", None)
    if kind == "EqualTo":
        return _compare("<=", low, value) and _compare(">=", high, value)
    if kind == "In":
        return any(_compare("<=", low, v) and _compare(">=", high, v) for v in flt.value)
    if kind == "GreaterThan":
        return _compare(">", high, value)
    if kind == "GreaterThanOrEqual":
        return _compare(">=", high, value)
    if kind == "LessThan":
        return _compare("<", low, value)
    if kind == "LessThanOrEqual":
        return _compare("<=", low, value)
    return True


def prune(files: Sequence[DataFileRef], filters: Sequence[Any],
          partitions: Sequence[str]) -> list[DataFileRef]:
    """The files that may hold rows matching every filter (their AND)."""
    names = frozenset(partitions)
    return [f for f in files if all(may_match(flt, f, names) for flt in filters)]


# --------------------------------------------------------------------------- executors

def _constant(value: Any, typ: pa.DataType, rows: int) -> pa.Array:
    import pyarrow as pa

    if value is None:
        return pa.nulls(rows, typ)
    return pa.repeat(pa.scalar(value, typ), rows)


def conform(batch: pa.RecordBatch, schema: pa.Schema, partition: dict[str, Any],
            uri: str, rows: int | None = None) -> pa.RecordBatch:
    """``batch`` (a file's columns) as a batch of ``schema``: partition constants added,
    missing columns null, types cast to the table's (``rows``: the count when ``batch`` has
    no columns). Shared with the Iceberg data source's reader."""
    import pyarrow as pa

    count = batch.num_rows if rows is None else rows
    columns = []
    for fld in schema:
        if fld.name in partition:
            columns.append(_constant(partition[fld.name], fld.type, count))
            continue
        index = batch.schema.get_field_index(fld.name)
        if index < 0:
            columns.append(pa.nulls(count, fld.type))
            continue
        column = batch.column(index)
        if column.type != fld.type:
            try:
                column = column.cast(fld.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                raise ReadError(f"{uri}: column {fld.name} of type {column.type} cannot be "
                                f"read as the table's {fld.type}: {exc}") from exc
        columns.append(column)
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def read_files(snapshot: Snapshot, task: FileTask, schema: pa.Schema
               ) -> Iterator[pa.RecordBatch]:
    """The rows of ``task``'s files as batches of ``schema`` (runs on an executor)."""
    import pyarrow.parquet as pq

    from ..storage import arrow_filesystem_from_config, arrow_path

    fs = arrow_filesystem_from_config(snapshot.fs_config)
    names = set(schema.names) - set(snapshot.partition_columns)
    for ref in task.files:
        uri = snapshot.file_uri(ref)
        partition = dict(ref.partition)
        try:
            with fs.open_input_file(arrow_path(uri)) as handle:
                # INT96 (Spark's default timestamp type) as microseconds, Spark's precision:
                # as nanoseconds, dates past 2262 or before 1677 would overflow
                parquet = pq.ParquetFile(handle, coerce_int96_timestamp_unit="us")
                present = [n for n in parquet.schema_arrow.names if n in names]
                for batch in parquet.iter_batches(batch_size=BATCH_ROWS, columns=present,
                                                  use_threads=False):
                    yield conform(batch, schema, partition, uri)
        except FileNotFoundError as exc:
            raise ReadError(f"data file {uri} of Delta table {snapshot.root} (version "
                            f"{snapshot.version}) is missing: was the table vacuumed?") from exc
        except OSError as exc:
            raise ReadError(f"cannot read {uri} of Delta table {snapshot.root}: {exc}") from exc
