"""The partition folder columns of an Iceberg write through the ``iceberg`` data source, with
pyarrow in the write task (the sink computes the same with Spark SQL:
:func:`lakemark.sinks._iceberg_partition.with_partition_folders`).

One folder column per partition field, with one value per Iceberg partition value, readable as
the sink writes it: identity (the value), ``day`` (a date), ``year`` (an int), ``month``
(``2024-05``), ``hour`` (``2024-05-01-13``), ``truncate`` (a prefix of a string or binary,
or the value rounded down to a multiple of the width; of a decimal, in units of its last
digit); a binary's folder value is its (truncated) bytes in lower-case hex. A type the
transform does not take (``hour`` of a date, ``truncate`` of a double, ``bucket``) is refused
naming the column and the transform. Days count from 1970-01-01 by floor division, so values
before 1970 fall in the right day, as Iceberg's transforms do. Each file then holds one value
per field, and pyiceberg's ``add_files`` reads the partition from the file's statistics.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

    from ..planning.partition_transforms import PartitionField

__all__ = ["folder_array", "folder_kind", "folder_name", "in_utc"]

_DAY = 86_400_000_000
_HOUR = 3_600_000_000


def folder_name(field: PartitionField, names: Sequence[str], taken: Sequence[str] = ()) -> str:
    """The folder column of ``field``, named as the sink names it."""
    suffix = "part" if field.transform == "identity" else field.transform
    name = f"{field.column}_{suffix}"
    return f"_lakemark_{name}" if name in names or name in taken else name


def folder_kind(field: PartitionField, source_kind: str) -> str:
    """The kind (:func:`lakemark.sinks._values.kind_of`) of the folder column's values."""
    if source_kind == "binary":  # hex: a folder name holds no raw bytes
        return "string"
    return {"identity": source_kind, "truncate": source_kind, "day": "date",
            "year": "integer"}.get(field.transform, "string")


def _floor(values: pa.Array, unit: int) -> tuple[Any, Any]:
    """``(values // unit, values % unit)`` by floor division, as numpy arrays (nulls as 0)."""
    import numpy as np
    import pyarrow as pa

    raw = values.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    return np.floor_divide(raw, unit), np.mod(raw, unit)


def _days(column: pa.Array) -> pa.Array:
    """Days since 1970-01-01 of a date or timestamp column (a date32 array)."""
    import pyarrow as pa

    if pa.types.is_date(column.type):
        return column.cast(pa.date32())
    micros = column.cast(pa.timestamp("us", tz=column.type.tz)).cast(pa.int64())
    days, _ = _floor(micros, _DAY)
    return pa.array(days.astype("int32"), type=pa.int32(), mask=column.is_null().to_numpy(
        zero_copy_only=False)).cast(pa.date32())


def _takes(transform: str, kind: pa.DataType) -> bool:
    """Whether Iceberg's ``transform`` applies to a column of arrow type ``kind``."""
    import pyarrow as pa

    t = pa.types
    if transform == "identity":
        return not t.is_nested(kind)
    if transform == "truncate":
        return (t.is_int32(kind) or t.is_int64(kind) or t.is_decimal(kind) or t.is_string(kind)
                or t.is_large_string(kind) or t.is_binary(kind) or t.is_large_binary(kind))
    if transform == "hour":
        return t.is_timestamp(kind)
    return transform in ("year", "month", "day") and (t.is_date32(kind) or t.is_timestamp(kind))


def _truncated_decimals(column: pa.Array, width: int) -> pa.Array:
    """Each decimal rounded down to a multiple of ``width`` units of its last digit."""
    import pyarrow as pa

    scale = column.type.scale
    out: list[Any] = []
    for value in column.to_pylist():
        if value is None:
            out.append(None)
            continue
        unscaled = int(value.scaleb(scale))
        out.append(type(value)(unscaled - unscaled % width).scaleb(-scale))
    return pa.array(out, type=column.type)


def folder_array(field: PartitionField, column: pa.Array) -> pa.Array:
    """The folder values of ``field`` for the rows of ``column`` (its source column); a
    ConfigError naming both for a type the transform does not take (Iceberg's rules)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..errors import ConfigError

    if not _takes(field.transform, column.type):
        raise ConfigError(f"partition field {field.text()}: column {field.column!r} is "
                          f"{column.type}, which the {field.transform} transform does not take")
    if pa.types.is_binary(column.type) or pa.types.is_large_binary(column.type):
        if field.transform == "truncate":
            column = pc.binary_slice(column, 0, int(field.width or 1))
        return pa.array([None if v is None else v.hex() for v in column.to_pylist()],
                        type=pa.string())
    if field.transform == "identity":
        return column
    nulls = column.is_null().to_numpy(zero_copy_only=False)
    if field.transform == "truncate":
        width = int(field.width or 1)
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            return pc.utf8_slice_codeunits(column, 0, width)
        if pa.types.is_decimal(column.type):
            return _truncated_decimals(column, width)
        _, rest = _floor(column, width)
        return pc.subtract(column, pa.array(rest, mask=nulls).cast(column.type))
    date = _days(column)
    if field.transform == "day":
        return date
    if field.transform == "year":
        return pc.year(date).cast(pa.int32())
    stamp = date.cast(pa.timestamp("s"))
    if field.transform == "month":
        return pc.strftime(stamp, format="%Y-%m")
    micros = column.cast(pa.timestamp("us", tz=column.type.tz)).cast(pa.int64())
    _, within = _floor(micros, _DAY)
    hours = pa.array((within // _HOUR).astype("int64"), mask=nulls)
    return pc.binary_join_element_wise(
        pc.strftime(stamp, format="%Y-%m-%d"),
        pc.utf8_lpad(hours.cast(pa.string()), width=2, padding="0"), "-")


def in_utc(batch: pa.RecordBatch) -> pa.RecordBatch:
    """``batch`` with every zoned timestamp column in UTC (the same instants)."""
    import pyarrow as pa

    if not any(pa.types.is_timestamp(t) and t.tz not in (None, "UTC") for t in batch.schema.types):
        return batch
    columns = [c.cast(pa.timestamp(c.type.unit, tz="UTC"))
               if pa.types.is_timestamp(c.type) and c.type.tz not in (None, "UTC") else c
               for c in batch.columns]
    return pa.RecordBatch.from_arrays(columns, names=batch.schema.names)
